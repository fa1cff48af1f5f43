package runner

import (
	"strings"
	"testing"
	"time"

	"kafkasim/model/cluster"
	"kafkasim/scenarios"
)

// processorBenchYAML is a pipeline of two processors reading 6 partitions
// fed at 1,000 records/s, committing every 100 ms, with or without
// transactions (GUARANTEE).
const processorBenchYAML = `name: processor-bench
cluster: { controllers: 1, brokers: 3 }
topics:
  - { name: orders, partitions: 6, replication.factor: 3 }
  - { name: invoices, partitions: 6, replication.factor: 3 }
producers:
  - { name: p, topic: orders, rate: 1000/s, keys: 100 }
processors:
  - name: etl
    count: 2
    input: [orders]
    output: invoices
    processing: 0ms..0ms
    exactly-once: GUARANTEE
    commit-interval: 100ms
    config: { auto.offset.reset: earliest }
`

// BenchmarkProcessorPipeline runs the pipeline for one simulated minute,
// exactly-once and at-least-once, history recording included, and reports
// simulated seconds per wall second: what transactions cost the simulator
// (the ratio of the two is what docs/performance.md quotes).
func BenchmarkProcessorPipeline(b *testing.B) {
	for _, eos := range []string{"true", "false"} {
		name := map[string]string{"true": "exactly-once", "false": "at-least-once"}[eos]
		b.Run(name, func(b *testing.B) {
			s, err := scenarios.Parse("bench.yaml", []byte(strings.Replace(processorBenchYAML, "GUARANTEE", eos, 1)))
			if err != nil {
				b.Fatal(err)
			}
			var events uint64
			var simTime time.Duration
			for range b.N {
				c, err := cluster.Build(s.ClusterConfig())
				if err != nil {
					b.Fatal(err)
				}
				c.World.Start()
				c.World.RunUntil(time.Minute)
				events += c.World.Steps()
				simTime += c.World.Now()
				if c.History.Len() < 100_000 {
					b.Fatalf("only %d history operations: the pipeline did not run", c.History.Len())
				}
			}
			secs := b.Elapsed().Seconds()
			b.ReportMetric(simTime.Seconds()/secs, "sim-s/s")
			b.ReportMetric(float64(events)/secs, "events/s")
			b.ReportMetric(float64(events)/float64(b.N), "events/run")
		})
	}
}
