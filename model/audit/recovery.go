package audit

import (
	"kafkasim/model/metadata"
	"kafkasim/model/partlog"
	"kafkasim/model/record"
)

// Recoveries that lost data: a replica that came back shorter than what was
// committed (a power loss, a wiped or corrupt disk), which may later excuse
// that committed data's loss, and the lookups that ask what it lacks.

// ReplicaRecovered notes a replica whose log came back shorter than what was
// committed (or disagreeing with it) because recovery lost data: a power loss
// took its page cache, its disk was replaced or corrupt. Committed data from
// there on may now be lost, if no other copy survives.
func (a *Audit) ReplicaRecovered(broker int32, tp metadata.TopicPartition, log *partlog.Log, rec partlog.Recovery) {
	p := a.part(tp)
	check := p.check(broker)
	check.hw = min(check.hw, log.LEO())
	if epochCheckpointFlippedOn(a.w.Disk(a.brokerNode(broker)), tp) {
		p.epochCheckpointRead = true
	}
	stats := a.w.Disk(a.brokerNode(broker)).Stats()
	now := [3]uint64{stats.Wipes, stats.Corruptions, a.w.Disk(a.brokerNode(broker)).PowerLossesUndoing(log.Dir())}
	before, opened := p.diskFaults[broker]
	if p.diskFaults == nil {
		p.diskFaults = map[int32][3]uint64{}
	}
	p.diskFaults[broker] = now
	// Only a recovery that lost something makes a replica short: a power
	// loss that undid writes to its log (page cache gone), a wipe,
	// corruption, or a cut at recovery. A process killed or shut down
	// comes back with the log it left, which was already as long as it
	// was, and so does one whose power loss found its log all on disk
	// (flush.messages=1, or a replica out of sync that wrote nothing
	// since); calling it short would excuse, as a power loss, committed
	// data some other broker loses later (fuzz seed 204908: a wipe of
	// both in-sync replicas blamed on the power loss of the out-of-sync
	// one elected after them).
	lostData := now != before || rec.CorruptionReason != "" || rec.TruncatedAt >= 0
	diskCause := diskCauseOf(opened, before, now, rec)
	// Only such a recovery is compared with what was committed: the
	// replica's log is otherwise as it was.
	if lostData {
		if end := p.agreesUpTo(broker, log, a.headerFlipped(broker, log)); end < p.committedEnd() {
			if p.powerLossFrom < 0 || end < p.powerLossFrom {
				p.powerLossFrom = end
			}
			if p.shortSince == nil {
				p.shortSince = map[int32]shortRange{}
			}
			p.shortSince[broker] = shortRange{end: end, committedEnd: p.committedEnd()}
			if p.diskCause == nil {
				p.diskCause = map[int32]string{}
			}
			if diskCause != "" {
				p.diskCause[broker] = diskCause
			} else {
				delete(p.diskCause, broker)
			}
		}
	}
	a.openedAfterElection(tp, p, broker, log, lostData, diskCause)
}

// diskCauseOf is why a replica's recovery lost data from its disk, not only
// from its page cache: "disk-wipe" (the disk was replaced) or
// "disk-corruption" (recovery cut the log at a batch that failed its
// checks); "" otherwise. before and now are the broker's disk wipe,
// corruption and log-undoing power-loss counts when its replica was opened before
// (opened: it was) and now.
func diskCauseOf(opened bool, before, now [3]uint64, rec partlog.Recovery) string {
	switch {
	case opened && now[0] > before[0]:
		return CauseDiskWipe
	case rec.CorruptionReason != "" && (rec.CorruptionReason != record.ErrTruncated.Error() || (opened && now[1] > before[1])):
		// Recovery cut the log at a batch that failed its checks (not a
		// torn tail a power loss left): a bit flip or an unreadable range
		// took the batches from there on.
		return CauseDiskCorruption
	}
	return ""
}

// agreesUpTo is where broker's recovered log stops agreeing with what was
// committed: its end, or below it where it holds an older epoch's batch in
// place of a committed one. A power loss brings such a tail back when it
// undoes a truncation that never reached disk (Kafka does not fsync a
// truncation either): the writes a deposed leader took, never committed,
// stand again where the epochs after it committed theirs. A batch the log
// lacks below its end (below its start, or removed by compaction) is no
// disagreement, unless the log holds a header-flipped batch (flipped): a
// flipped base offset moves the log's end past what recovery kept, and the
// batches missing below it are what the corruption took.
func (p *partitionAudit) agreesUpTo(broker int32, log *partlog.Log, flipped bool) int64 {
	if i := p.firstDisagreement(broker, log, flipped); i < p.committed.Len() && p.committed.At(i).base < log.LEO() {
		return p.committed.At(i).base
	}
	return log.LEO()
}

// shortBelow reports whether a broker that lost page cache, and has not
// rejoined the ISR since, ends at or below offset.
func (p *partitionAudit) shortBelow(offset int64) bool {
	for _, r := range p.shortSince { // kafkasim:orderless: an existence test
		if r.end <= offset {
			return true
		}
	}
	return false
}

// shortRange is where a replica's log came back from a recovery that lost
// data: it ended at end (or stopped agreeing with what was committed
// there), when what was committed ended at committedEnd. The recovery can
// have taken only committed batches in [end, committedEnd): a batch
// committed later was never on that disk to lose.
type shortRange struct {
	end, committedEnd int64
}

// tookFromSomeone reports whether a recovery that lost data (see
// shortRange) took the committed batch at offset from a replica that has
// not rejoined the ISR since.
func (p *partitionAudit) tookFromSomeone(offset int64) bool {
	for _, r := range p.shortSince { // kafkasim:orderless: an existence test
		if r.end <= offset && offset < r.committedEnd {
			return true
		}
	}
	return false
}
