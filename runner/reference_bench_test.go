package runner

import (
	"os"
	"testing"

	"kafkasim/internal/gctune"
	"kafkasim/internal/hugeheap"
	"kafkasim/scenarios"
)

// BenchmarkReferenceLoadRun runs the reference load
// (docs/examples/reference-load.yaml: 5 brokers, 12 partitions, 2,000
// records/s with acks=all, a broker crashed about every 15 s, one simulated
// minute and its settle) as `kafkasim run` does up to its run store: the
// simulation, the convergence wait, the final reads and every check. Its
// events/s is summary.json's events_per_second, the figure the target of a
// million events a second on one core is about (run it with -cpu 1). Like
// the command, it runs with the collector's policy (internal/gctune, unless
// GOGC is set) and the heap marked for huge pages (internal/hugeheap).
func BenchmarkReferenceLoadRun(b *testing.B) {
	if os.Getenv("GOGC") == "" {
		defer gctune.Start()()
	}
	if _, _, err := hugeheap.Reserve(); err != nil {
		b.Fatal(err)
	}
	s, err := scenarios.LoadFile("../docs/examples/reference-load.yaml")
	if err != nil {
		b.Fatal(err)
	}
	var events uint64
	var simSeconds float64
	for range b.N {
		res, err := Run(s, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if res.Verdict != Pass {
			b.Fatalf("verdict %s: %s", res.Verdict, res.CrashDetail)
		}
		events += res.Events
		simSeconds += res.SimTime.Seconds()
	}
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(events)/secs, "events/s")
	b.ReportMetric(simSeconds/secs, "sim-s/s")
	b.ReportMetric(float64(events)/float64(b.N), "events/run")
}
