package cluster

import (
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"kafkasim/history"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// With every bug off, acks=all, min ISR 2, RF 3 and no unclean election,
// crashes (with and without page cache), restarts, partitions (one-way too)
// and pauses never lose an acknowledged write, never show two readers
// different records at one offset, and break no god-view invariant. (Losses
// Kafka permits, such as a power loss of every replica holding unflushed
// data, are reported as such and are not failures.)
func TestDataPlaneSafetyUnderFaults(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		brokers := rapid.IntRange(3, 5).Draw(t, "brokers")
		wl := workload{
			seed:        rapid.Uint64().Draw(t, "seed"),
			controllers: 3,
			brokers:     brokers,
			topic:       TopicSpec{Name: "orders", Partitions: 3, ReplicationFactor: 3, MinInsyncReplicas: 2},
			acks:        proto.AcksAll,
			idempotence: true,
			producers:   2,
			rate:        100,
			keys:        20,
			readers:     2,
			schedule:    drawSchedule(t, 3, brokers),
		}
		run, err := wl.run()
		if err != nil {
			t.Fatal(err)
		}
		if v := run.c.Audit.Violations(); len(v) > 0 {
			t.Fatalf("invariant broke: %v\nschedule %s\n%s", v[0], formatSchedule(wl.schedule), describe(run.c))
		}
		if run.report.Violations > 0 {
			t.Fatalf("checker found violations:\n%s\nschedule %s\nlosses %v\n%s", run.report.Summary(), formatSchedule(wl.schedule), run.c.Audit.Losses(), describe(run.c))
		}
		if !run.final {
			t.Fatalf("final reads did not finish after the heal\nschedule %s\n%s", formatSchedule(wl.schedule), describe(run.c))
		}
		if run.report.Stats.Acked == 0 {
			t.Fatalf("nothing was acknowledged: the workload did not run\nschedule %s\nstats %+v\nerrors %v\n%s", formatSchedule(wl.schedule), run.report.Stats, sendErrors(run), describe(run.c))
		}
	})
}

// sendErrors counts the errors failed sends completed with, for messages.
func sendErrors(run workloadRun) map[string]int {
	out := map[string]int{}
	for _, op := range run.c.History.Ops() {
		if op.F == "send" && op.Type != history.Invoke && op.Type != history.OK {
			out[op.Type.String()+" "+op.Value.Error]++
		}
	}
	return out
}

// After the counterexample TestDataPlaneSafetyUnderFaults found (rapid),
// re-tuned three times: (0x4a717 → 0x4a79e) when a request timeout began to
// fail every request in flight on its connection at once, (→ 0x2c74, five
// brokers) when the producer began to expire batches in flight at
// delivery.timeout.ms and to resend a retry once it is the first of its
// partition's batches holding sequences, and (→ seed 1, four brokers, found
// by a rapid search for this very outcome and shrunk by hand) when the
// broker began to serve one request per connection at a time, so that two
// batches of one producer on one connection always reach the leader in
// order. A one-way partition (broker-1 to broker-2, 2 s to 3.19 s) drops the
// answers to the first fetches of orders-0's followers; they wait
// replica.socket.timeout.ms (30 s) for them, and orders-0, led by broker-1,
// commits nothing: the producers' batches expire. broker-1 crashes at
// 25.93 s; once its session expires (33.19 s) broker-2 leads orders-0 from
// offset 0, holding no state for the producers. p-0's batch of record 3096,
// sent 88 ms after the batch of record 3088 and in flight beside it, is
// taken at offset 0 (the leader takes any first sequence: Kafka 4.2, KIP-360;
// Kafka 4.5 refuses it, KAFKA-15591), and record 3088 lands after it (offset
// 589, after an epoch bump). A nonmonotonic send Kafka 4.2 permits, which the
// god view saw and the checker must call permitted, not a violation. (The
// property test flagged the first one because its checker was not told what
// the runner's is: the leader's appends from unknown producers.)
func TestFirstWriteToANeverWrittenPartitionMayReorderAsKafkaPermits(t *testing.T) {
	wl := workload{
		seed: 1, controllers: 3, brokers: 4,
		topic: TopicSpec{Name: "orders", Partitions: 3, ReplicationFactor: 3, MinInsyncReplicas: 2},
		acks:  proto.AcksAll, idempotence: true, producers: 2, rate: 100, keys: 20, readers: 2,
		schedule: []plannedFault{
			{At: 2 * time.Second, Fault: sim.Fault{Kind: sim.FaultPartition, Groups: [][]string{{"broker-1"}, {"broker-2"}}, OneWay: true, For: 1189 * time.Millisecond}},
			{At: 25931 * time.Millisecond, Fault: sim.Fault{Kind: sim.FaultCrash, Target: "leader(orders-0)", For: 15 * time.Second}},
		},
	}
	run, err := wl.run()
	if err != nil {
		t.Fatal(err)
	}
	if run.report.Violations > 0 || !run.final {
		t.Fatalf("violations %d, final reads done %v:\n%s", run.report.Violations, run.final, run.report.Summary())
	}
	permitted := false
	for _, a := range run.report.Anomalies {
		permitted = permitted || (a.Type == "nonmonotonic-send" && a.Verdict == "permitted" && strings.Contains(a.Because, "held no state"))
	}
	if !permitted {
		t.Fatalf("no permitted nonmonotonic-send: the schedule no longer leads to the reordering\n%s", run.report.Summary())
	}
}
