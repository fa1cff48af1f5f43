package cluster

import (
	"testing"
	"time"

	"kafkasim/checker"
	"kafkasim/model/audit"
	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// The bug zoo's data-plane switches: for each, a fault schedule (or a
// god-view adversary) under which the bug breaks a guarantee, and the same
// run with the bug off, which must break nothing.

type bugCase struct {
	bug string
	wl  workload
	// broke reports whether the run shows the bug's damage.
	broke func(run workloadRun) bool
}

func (bc bugCase) check(t *testing.T) {
	t.Helper()
	on := bc.wl
	on.bugs = []string{bc.bug}
	run, err := on.run()
	if err != nil {
		t.Fatal(err)
	}
	if !bc.broke(run) {
		t.Errorf("%s on: the schedule should break a guarantee; report:\n%s\naudit: %v\nlosses %v\n%s", bc.bug,
			run.report.Summary(), run.c.Audit.Violations(), run.c.Audit.Losses(), describe(run.c))
	}
	off := bc.wl
	run, err = off.run()
	if err != nil {
		t.Fatal(err)
	}
	if run.report.Violations > 0 || len(run.c.Audit.Violations()) > 0 {
		t.Errorf("%s off: the same schedule must break nothing; report:\n%s\naudit: %v\n%s", bc.bug,
			run.report.Summary(), run.c.Audit.Violations(), describe(run.c))
	}
}

func violated(run workloadRun, invariant string, anomalies ...string) bool {
	if invariant != "" && run.c.Audit.Count(invariant) > 0 {
		return true
	}
	for _, a := range anomalies {
		if an, ok := run.report.Anomaly(a); ok && an.Verdict == checker.Violation {
			return true
		}
	}
	return false
}

// no-strict-min-isr: the leader, cut off from both followers, keeps
// committing acks=1 writes with an ISR of one; the followers stay eligible
// (ELR); when the leader dies, an ELR member leads without those writes,
// which readers had already seen.
func TestBugNoStrictMinISR(t *testing.T) {
	bugCase{bug: BugNoStrictMinISR, wl: workload{seed: 21,
		topic: TopicSpec{Name: "orders", Assignment: [][]int32{{1, 2, 3}}, MinInsyncReplicas: 2},
		acks:  proto.AcksLeader, producers: 1, rate: 200, keys: 5, readers: 1, faultPhase: 90 * time.Second,
		schedule: []plannedFault{
			{At: 5 * time.Second, Fault: sim.Fault{Kind: sim.FaultPartition, Groups: [][]string{{"broker-1"}, {"broker-2", "broker-3"}}, For: 80 * time.Second}},
			{At: 60 * time.Second, Fault: sim.Fault{Kind: sim.FaultKill, Target: "broker-1", For: 40 * time.Second}},
		}},
		broke: func(run workloadRun) bool {
			return violated(run, audit.CommittedDataKept, checker.LostAckedWrite, checker.InconsistentOffsets)
		},
	}.check(t)
}

// isr-join-at-stale-hw (KAFKA-7128): after a leader change the new leader's
// high watermark lags; a follower that catches up only to it joins the ISR
// without writes acknowledged before the election. The follower fetches one
// batch at a time, so that it passes through that window.
func TestBugISRJoinAtStaleHW(t *testing.T) {
	wl := workload{seed: 22,
		topic: TopicSpec{Name: "orders", Assignment: [][]int32{{1, 2, 3}}, MinInsyncReplicas: 2},
		acks:  proto.AcksAll, idempotence: true, producers: 2, rate: 100, keys: 5, readers: 1, faultPhase: 90 * time.Second,
		// One batch per fetch: a catching-up follower steps through every
		// offset, so it passes the stale high watermark.
		tweak: func(cfg *Config) { cfg.Data.ReplicaFetchMaxBytes = 1 },
	}
	wl.adversary = isrJoinAdversary
	bugCase{bug: BugISRJoinAtStaleHW, wl: wl, broke: func(run workloadRun) bool {
		return violated(run, audit.AckedOnEveryISRMember, checker.LostAckedWrite)
	}}.check(t)
}

// hw-truncation (KIP-101): a follower that becomes a follower again
// truncates to its own high watermark, which lags the leader's; if it is then
// elected before it fetches the batches back, acknowledged writes are gone.
// Two quick leader changes by controlled shutdown: leadership moves to a
// replica, then away from it again, to the one that truncated.
func TestBugHWTruncation(t *testing.T) {
	wl := workload{seed: 23,
		topic: TopicSpec{Name: "orders", Assignment: [][]int32{{1, 2, 3}}, MinInsyncReplicas: 2},
		acks:  proto.AcksAll, idempotence: true, producers: 2, rate: 500, keys: 5, readers: 1, faultPhase: 60 * time.Second,
	}
	wl.adversary = func(c *Cluster) func() {
		phase := 0
		tp := metadata.TopicPartition{Topic: "orders", Partition: 0}
		first := int32(0)
		return func() {
			w := c.World
			im := c.Metadata()
			if im == nil || im.Partition(tp) == nil {
				return
			}
			p := im.Partition(tp)
			switch phase {
			case 0:
				if w.Now() > 10*time.Second && len(p.ISR) == 3 {
					first = p.Leader
					w.Shutdown(c.BrokerNode(first))
					phase = 1
				}
			case 1: // a new leader: the other follower becomes its follower (and,
				// with the bug, truncates). Cut it off from the new leader and
				// take the new leader away too.
				if p.Leader != first && p.Leader != metadata.NoLeader {
					second := p.Leader
					var third int32
					for _, r := range p.Replicas {
						if r != first && r != second {
							third = r
						}
					}
					w.CutOneWay([]sim.NodeID{c.BrokerNode(second)}, []sim.NodeID{c.BrokerNode(third)})
					w.Shutdown(c.BrokerNode(second))
					phase = 2
				}
			}
		}
	}
	bugCase{bug: BugHWTruncation, wl: wl, broke: func(run workloadRun) bool {
		return violated(run, audit.CommittedDataKept, checker.LostAckedWrite, checker.InconsistentOffsets)
	}}.check(t)
}

// producer-state-not-replicated: producers' retries after a leader crash are
// not recognised by the new leader, which never learned the producers' state
// from the batches it replicated: duplicates with enable.idempotence=true.
func TestBugProducerStateNotReplicated(t *testing.T) {
	wl := workload{seed: 24,
		topic: TopicSpec{Name: "orders", Partitions: 1, ReplicationFactor: 3, MinInsyncReplicas: 2},
		acks:  proto.AcksAll, idempotence: true, producers: 2, rate: 500, keys: 5, readers: 1,
	}
	for i := range 6 {
		wl.schedule = append(wl.schedule, plannedFault{At: time.Duration(5+5*i) * time.Second,
			Fault: sim.Fault{Kind: sim.FaultKill, Target: "leader(orders-0)", For: 2 * time.Second}})
	}
	bugCase{bug: BugProducerStateNotReplicated, wl: wl, broke: func(run workloadRun) bool {
		return violated(run, "", checker.Duplicate)
	}}.check(t)
}

// no-consumer-epoch-validation (KIP-320): after an unclean election the log
// is truncated under a reader; one that does not validate its position goes
// on where it was and silently skips the records written since at the
// truncated offsets.
func TestBugNoConsumerEpochValidation(t *testing.T) {
	bugCase{bug: BugNoConsumerEpochValidation, wl: workload{seed: 25, brokers: 3,
		topic: TopicSpec{Name: "orders", Assignment: [][]int32{{1, 2}}, MinInsyncReplicas: 1},
		acks:  proto.AcksAll, idempotence: true, producers: 1, rate: 200, keys: 5, readers: 2, unclean: true, faultPhase: 130 * time.Second,
		schedule: []plannedFault{
			{At: 5 * time.Second, Fault: sim.Fault{Kind: sim.FaultPartition, Groups: [][]string{{"broker-2"}, {"broker-1"}}, For: 50 * time.Second}},
			// The reader sleeps through the unclean election, and wakes when
			// the new leader's log has grown past its old position.
			{At: 48 * time.Second, Fault: sim.Fault{Kind: sim.FaultPause, Target: "c-0", For: 70 * time.Second}},
			{At: 50 * time.Second, Fault: sim.Fault{Kind: sim.FaultKill, Target: "broker-1", For: 100 * time.Second}},
		}},
		broke: func(run workloadRun) bool { return violated(run, "", checker.PollSkip) },
	}.check(t)
}

func isrJoinAdversary(c *Cluster) func() {
	phase := 0
	tp := metadata.TopicPartition{Topic: "orders", Partition: 0}
	var cut sim.CutID
	var staleHW int64
	a, b, cc := c.BrokerNode(1), c.BrokerNode(2), c.BrokerNode(3)
	return func() {
		w := c.World
		im := c.Metadata()
		if im == nil || im.Partition(tp) == nil {
			return
		}
		p := im.Partition(tp)
		switch phase {
		case 0: // broker-3 falls behind and out of the ISR
			if w.Now() > 5*time.Second {
				cut = w.Partition([]sim.NodeID{cc}, []sim.NodeID{a, b})
				phase = 1
			}
		case 1: // once it is out, the leader dies (kill: its page cache stays)
			if len(p.ISR) == 2 && p.Leader == 1 && w.Now() > 50*time.Second {
				w.Crash(a, false)
				phase = 2
			}
		case 2: // broker-2 leads with the high watermark it had as a follower,
			// a batch short of what the old leader acknowledged
			if p.Leader == 2 {
				if v := c.Broker(2).Partition(tp); v != nil {
					staleHW = v.HighWatermark()
					w.Heal(cut)
					phase = 3
				}
			}
		case 3: // broker-3, one batch per fetch, reaches that high watermark:
			// freeze it there (its fetches still reach the leader)
			if v := c.Broker(3).Partition(tp); v != nil && v.Log().LEO() >= staleHW {
				w.CutOneWay([]sim.NodeID{b}, []sim.NodeID{cc})
				phase = 4
			}
		}
	}
}
