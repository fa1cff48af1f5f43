package cluster

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"kafkasim/model/broker"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// A controlled shutdown ends as Kafka's BrokerServer.shutdown does: the
// replica fetchers, the metadata publishers, the scheduler and the request
// handlers stop before LogManager.shutdown flushes every log and writes the
// clean-shutdown marker. Nothing may write to a partition log after that
// flush: the write would sit in page cache only behind a marker that says
// the logs were closed cleanly, and a later power loss would undo it (fuzz
// seed 602490 truncated a follower that way).
func TestNoPartitionLogWriteAfterTheFinalFlush(t *testing.T) {
	const brokers = 3
	for seed := uint64(1); seed <= 4; seed++ {
		var schedule []plannedFault
		// Shut a broker down every few seconds, in turn, while producers
		// keep every follower fetching.
		for i := 0; i < 9; i++ {
			target := BrokerName(int32(i%brokers + 1))
			if i%3 == 2 {
				target = "leader(orders-0)"
			}
			schedule = append(schedule, plannedFault{At: time.Duration(4+3*i)*time.Second + time.Duration(seed*97)*time.Millisecond,
				Fault: sim.Fault{Kind: sim.FaultShutdown, Target: target, For: 500 * time.Millisecond}})
		}
		var (
			flushed  = map[int32]*logSnapshot{}
			checked  int
			problems []string
		)
		wl := workload{
			seed: seed, controllers: 1, brokers: brokers,
			topic:     TopicSpec{Name: "orders", Partitions: 3, ReplicationFactor: 3, MinInsyncReplicas: 2},
			acks:      proto.AcksAll,
			producers: 2, rate: 200, keys: 20, readers: 1,
			schedule:   schedule,
			faultPhase: 35 * time.Second,
			adversary: func(c *Cluster) func() {
				w := c.World
				return func() {
					for b := int32(1); b <= brokers; b++ {
						id := c.BrokerNode(b)
						if s := flushed[b]; s != nil {
							if w.Incarnation(id) != s.incarnation {
								// The process has just exited: the disk is as
								// it left it, before any restart reads it.
								for _, d := range s.diff(w.Disk(id)) {
									problems = append(problems, fmt.Sprintf("  %s, exited at %v: %s", BrokerName(b), w.Now(), d))
								}
								checked++
								delete(flushed, b)
							}
							continue
						}
						if n := c.Broker(b); n != nil && n.State() == broker.StateShuttingDown {
							flushed[b] = snapshotLogs(w.Disk(id), w.Incarnation(id))
						}
					}
				}
			},
		}
		if _, err := wl.run(); err != nil {
			t.Fatal(err)
		}
		if checked == 0 {
			t.Fatalf("seed %d: no controlled shutdown reached its final flush", seed)
		}
		t.Logf("seed %d: %d controlled shutdowns checked from their final flush to their exit", seed, checked)
		if len(problems) > 0 {
			t.Fatalf("seed %d: partition logs written after the final flush of a controlled shutdown:\n%s",
				seed, strings.Join(problems, "\n"))
		}
	}
}

// logSnapshot is what a broker's partition directories held (page cache) when
// its final flush was issued.
type logSnapshot struct {
	incarnation uint32
	files       map[string][]byte
}

// partitionFiles lists the files of every partition directory (data/<tp>/...),
// leaving out the broker-wide checkpoints directly under data/.
func partitionFiles(d *sim.Disk) []string {
	var out []string
	for _, name := range d.List(dataDirPrefix) {
		if strings.Contains(strings.TrimPrefix(name, dataDirPrefix), "/") {
			out = append(out, name)
		}
	}
	return out
}

const dataDirPrefix = "data/"

func snapshotLogs(d *sim.Disk, incarnation uint32) *logSnapshot {
	s := &logSnapshot{incarnation: incarnation, files: map[string][]byte{}}
	for _, name := range partitionFiles(d) {
		data, _ := d.ReadFile(name)
		s.files[name] = data
	}
	return s
}

func (s *logSnapshot) diff(d *sim.Disk) []string {
	var out []string
	now := map[string]bool{}
	for _, name := range partitionFiles(d) {
		now[name] = true
		data, _ := d.ReadFile(name)
		before, ok := s.files[name]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s: created (%d bytes)", name, len(data)))
		case !bytes.Equal(before, data):
			out = append(out, fmt.Sprintf("%s: %d bytes at the flush, %d at exit", name, len(before), len(data)))
		}
	}
	for name := range s.files { // kafkasim:orderless: sorted below
		if !now[name] {
			out = append(out, fmt.Sprintf("%s: removed", name))
		}
	}
	sort.Strings(out)
	return out
}
