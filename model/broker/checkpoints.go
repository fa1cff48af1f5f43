package broker

import (
	"fmt"
	"strconv"
	"strings"

	"kafkasim/model/storage"
	"kafkasim/sim"
)

// The broker's log-directory checkpoints, in Kafka's text format ("0", a
// count, then "topic partition offset" lines): high watermarks every
// replica.high.watermark.checkpoint.interval.ms, recovery points and log
// start offsets every log.flush.offset.checkpoint.interval.ms, all written
// the safe way (temporary file, fsync, rename, fsync).

const (
	dataDir                = "data"
	hwCheckpointFile       = dataDir + "/replication-offset-checkpoint"
	recoveryCheckpointFile = dataDir + "/recovery-point-offset-checkpoint"
	logStartCheckpointFile = dataDir + "/log-start-offset-checkpoint"
)

func readOffsetCheckpoint(d sim.NodeDisk, file string) map[string]int64 {
	out := map[string]int64{}
	data, err := storage.ReadCheckpoint(d, file)
	if err != nil {
		return out
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) < 2 || lines[0] != "0" {
		return out
	}
	for _, l := range lines[2:] {
		f := strings.Fields(l)
		if len(f) != 3 {
			continue
		}
		off, err := strconv.ParseInt(f[2], 10, 64)
		if err == nil {
			out[f[0]+"-"+f[1]] = off
		}
	}
	return out
}

func (rm *replicaManager) writeOffsetCheckpoint(file string, value func(*partition) int64) {
	if rm.dirFailed {
		return
	}
	// "0", the count, then "topic partition value" a line (written with
	// strconv: a broker of hundreds of partitions writes these every few
	// seconds, and fmt's formatting of each line showed in profiles).
	n := 0
	lines := make([]byte, 0, 24*len(rm.order))
	for _, tp := range rm.order {
		p := rm.parts.get(tp)
		if p.log == nil {
			continue
		}
		lines = append(lines, tp.Topic...)
		lines = append(lines, ' ')
		lines = strconv.AppendInt(lines, int64(tp.Partition), 10)
		lines = append(lines, ' ')
		lines = strconv.AppendInt(lines, value(p), 10)
		lines = append(lines, '\n')
		n++
	}
	b := make([]byte, 0, len(lines)+16)
	b = append(b, "0\n"...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, '\n')
	b = append(b, lines...)
	if err := storage.WriteCheckpoint(rm.n.gate, file, b, nil); err != nil {
		rm.logDirFailed(fmt.Sprintf("checkpoint %s: %v", file, err))
	}
}

// logDirFailed ends the broker the way Kafka 4's does when a write to its log
// directory fails (disk full, I/O error): the directory goes offline, and
// since it also holds the metadata log ("Shutdown broker because the
// metadata log dir has failed") the broker halts — no controlled shutdown,
// no clean-shutdown file, so its next start counts as unclean.
func (rm *replicaManager) logDirFailed(why string) {
	rm.note("storage", "fatal: log directory failed: %s", why)
	// What the handler that failed still does writes nothing.
	rm.stopped, rm.dirFailed = true, true
	rm.n.env.Exit()
}

func (rm *replicaManager) tick(kind tickKind) {
	if rm.stopped {
		return // the scheduler is shut down: no retention, flush or checkpoint after the final ones
	}
	env := rm.n.env
	switch kind {
	case tickISRShrink:
		rm.shrinkISRs()
		env.After(rm.cfg.ReplicaLagTimeMax/2, rmTick{tickISRShrink})
	case tickHWCheckpoint:
		rm.writeOffsetCheckpoint(hwCheckpointFile, func(p *partition) int64 { return p.hw })
		env.After(rm.cfg.HWCheckpointInterval, rmTick{tickHWCheckpoint})
	case tickOffsetCheckpoint:
		rm.writeOffsetCheckpoint(recoveryCheckpointFile, func(p *partition) int64 { return p.log.RecoveryPoint })
		rm.writeOffsetCheckpoint(logStartCheckpointFile, func(p *partition) int64 { return p.log.LogStartOffset() })
		env.After(rm.cfg.OffsetCheckpointInterval, rmTick{tickOffsetCheckpoint})
	case tickFlush:
		for _, tp := range rm.order {
			if p := rm.parts.get(tp); p.log != nil {
				p.log.Flush()
			}
		}
		env.After(rm.cfg.FlushInterval, rmTick{tickFlush})
	case tickRetention:
		nowMs := env.Now().Milliseconds()
		for _, tp := range rm.order {
			p := rm.parts.get(tp)
			if p.log == nil {
				continue
			}
			p.log.Compact(p.hw)
			if n := p.log.DeleteOldSegments(p.hw, nowMs); n > 0 {
				rm.note("retention", "%s: deleted %d segments, log start offset %d", tp, n, p.log.LogStartOffset())
			}
		}
		env.After(rm.cfg.RetentionCheckInterval, rmTick{tickRetention})
	}
}

// shutdown is the final step of a clean shutdown, in the order of Kafka's
// BrokerServer.shutdown: the socket server stops processing requests, the
// metadata publishers and the scheduler stop, ReplicaManager.shutdown stops
// the replica fetchers, and only then LogManager.shutdown flushes every log
// and writes the checkpoints (the clean-shutdown marker follows). From here
// on nothing writes to a log: a write after the final flush would sit in page
// cache only, behind a marker saying the logs were closed cleanly, and a power
// loss would undo it.
func (rm *replicaManager) shutdown() {
	rm.stopped = true
	rm.resignCoordinators()
	// The fetchers are gone: a fetch answer or timeout still on its way
	// finds none and is dropped.
	rm.fetchers, rm.fetcherAt, rm.nodeShared = map[int32]*fetcher{}, nil, false
	for _, tp := range rm.order {
		if p := rm.parts.get(tp); p.log != nil {
			p.log.Flush()
			p.log.Close() // a producer-state snapshot at the log end
		}
	}
	rm.writeOffsetCheckpoint(hwCheckpointFile, func(p *partition) int64 { return p.hw })
	rm.writeOffsetCheckpoint(recoveryCheckpointFile, func(p *partition) int64 { return p.log.RecoveryPoint })
	rm.writeOffsetCheckpoint(logStartCheckpointFile, func(p *partition) int64 { return p.log.LogStartOffset() })
}
