package cluster

import (
	"strings"
	"testing"
	"time"

	"kafkasim/checker"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// Losses Kafka permits show up where it permits them, as permitted.

func TestAcks1LosesAcknowledgedWritesOnLeaderCrash(t *testing.T) {
	lost := 0
	for seed := uint64(1); seed <= 3; seed++ {
		wl := workload{seed: seed, topic: TopicSpec{Name: "orders", Partitions: 1, ReplicationFactor: 3, MinInsyncReplicas: 2},
			acks: proto.AcksLeader, producers: 2, rate: 1000, keys: 10, readers: 1}
		for i := 0; i < 6; i++ {
			wl.schedule = append(wl.schedule, plannedFault{At: time.Duration(5+5*i) * time.Second,
				Fault: sim.Fault{Kind: sim.FaultCrash, Target: "leader(orders-0)", For: 2 * time.Second}})
		}
		run, err := wl.run()
		if err != nil {
			t.Fatal(err)
		}
		if run.report.Violations > 0 || len(run.c.Audit.Violations()) > 0 {
			t.Fatalf("seed %d: acks=1 losses are permitted, not violations:\n%s%v", seed, run.report.Summary(), run.c.Audit.Violations())
		}
		lost += run.report.Count(checker.LostAckedWrite)
		if a, ok := run.report.Anomaly(checker.LostAckedWrite); ok && a.Verdict != checker.Permitted {
			t.Fatalf("seed %d: want permitted, got %+v", seed, a)
		}
	}
	if lost == 0 {
		t.Fatal("six leader crashes under 2000 writes/s with acks=1 should lose some acknowledged writes")
	}
}

func TestPowerLossOfEveryReplicaAndTheFlushPolicy(t *testing.T) {
	for _, flushEach := range []bool{false, true} {
		wl := workload{seed: 5, topic: TopicSpec{Name: "orders", Partitions: 2, ReplicationFactor: 3, MinInsyncReplicas: 2},
			acks: proto.AcksAll, idempotence: true, producers: 2, rate: 300, keys: 10, readers: 1,
			schedule: []plannedFault{{At: 20 * time.Second, Fault: sim.Fault{Kind: sim.FaultPowerLoss, Target: "role(broker)", For: 5 * time.Second}}}}
		if flushEach {
			wl.topic.Configs = map[string]string{"flush.messages": "1"}
		}
		run, err := wl.run()
		if err != nil {
			t.Fatal(err)
		}
		lost := run.report.Count(checker.LostAckedWrite)
		t.Logf("flush.messages=1: %v: acked %d, lost %d, losses %v", flushEach, run.report.Stats.Acked, lost, run.c.Audit.Losses())
		if run.report.Violations > 0 || len(run.c.Audit.Violations()) > 0 {
			t.Fatalf("flush each %v: %s %v", flushEach, run.report.Summary(), run.c.Audit.Violations())
		}
		if !flushEach && lost == 0 {
			t.Fatal("with the default flush policy a power loss of every replica loses the acknowledged writes still in page cache")
		}
		if flushEach && lost != 0 {
			t.Fatal("with flush.messages=1 every acknowledged write was fsynced: a power loss loses none")
		}
		// Every broker restarts from the producer-state snapshot its
		// recovery took at the log end, which keeps each producer's last
		// batch only: a retry of an earlier in-flight batch whose answer
		// the power loss lost is answered OUT_OF_ORDER_SEQUENCE_NUMBER, and
		// the producer bumps its epoch and writes it again. Kafka does the
		// same; the duplicate is permitted only over a batch the audit saw
		// forgotten so.
		for _, a := range run.report.Anomalies {
			if a.Type == checker.Duplicate && (a.Verdict != checker.Permitted || !strings.Contains(a.Because, "OUT_OF_ORDER_SEQUENCE_NUMBER")) {
				t.Fatalf("flush each %v: duplicate %+v, want permitted as a batch the leader's producer state forgot", flushEach, a)
			}
		}
	}
}

func TestUncleanElectionLossIsPermittedOnlyWhenEnabled(t *testing.T) {
	// One replica falls out of the ISR, the others die: only with unclean
	// election enabled does the stale replica lead, and lose data.
	for _, unclean := range []bool{true, false} {
		wl := workload{seed: 9, brokers: 3, topic: TopicSpec{Name: "orders", Assignment: [][]int32{{1, 2, 3}}, MinInsyncReplicas: 1},
			acks: proto.AcksAll, idempotence: true, producers: 1, rate: 200, keys: 5, readers: 1, unclean: unclean,
			schedule: []plannedFault{
				{At: 5 * time.Second, Fault: sim.Fault{Kind: sim.FaultIsolate, Target: "broker-3", For: 50 * time.Second}},
				{At: 50 * time.Second, Fault: sim.Fault{Kind: sim.FaultPowerLoss, Target: "broker-1", For: 60 * time.Second}},
				{At: 50 * time.Second, Fault: sim.Fault{Kind: sim.FaultPowerLoss, Target: "broker-2", For: 60 * time.Second}},
			}, faultPhase: 80 * time.Second}
		wl.tweak = func(cfg *Config) {
			// Flush every message: the only way to lose data here is the
			// election itself.
			cfg.Data.Log.FlushIntervalMessages = 1
		}
		run, err := wl.run()
		if err != nil {
			t.Fatal(err)
		}
		causes := map[string]int{}
		for _, l := range run.c.Audit.Losses() {
			causes[l.Cause]++
		}
		t.Logf("unclean=%v: %v; losses %v", unclean, run.report.Summary(), causes)
		if run.report.Violations > 0 || len(run.c.Audit.Violations()) > 0 {
			t.Fatalf("unclean=%v: %s %v", unclean, run.report.Summary(), run.c.Audit.Violations())
		}
		if unclean && causes["unclean-election"] == 0 {
			t.Fatal("with unclean election enabled, the stale replica leads and committed data is lost")
		}
		if !unclean && causes["unclean-election"] != 0 {
			t.Fatal("with unclean election disabled nothing is lost to an election")
		}
	}
}
