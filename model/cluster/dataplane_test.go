package cluster

import (
	"kafkasim/checker/history"
	"testing"

	"pgregory.net/rapid"

	"kafkasim/model/proto"
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
