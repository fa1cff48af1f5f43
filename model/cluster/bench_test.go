package cluster

import (
	"testing"
	"time"
)

// BenchmarkIdleClusterHour runs a 3-controller, 5-broker cluster with one
// topic for one simulated hour of heartbeats, metadata fetches and check
// quorum, and reports events per wall second and simulated seconds per wall
// second.
func BenchmarkIdleClusterHour(b *testing.B) {
	var events uint64
	for range b.N {
		cfg := DefaultConfig(1)
		cfg.Controllers, cfg.Brokers = 3, 5
		cfg.Topics = []TopicSpec{{Name: "orders", Partitions: 6, ReplicationFactor: 3, MinInsyncReplicas: 2}}
		c, err := Build(cfg)
		if err != nil {
			b.Fatal(err)
		}
		c.World.Start()
		c.World.RunUntil(time.Hour)
		if ok, why := c.ControlPlaneConverged(); !ok {
			b.Fatalf("idle cluster not converged: %s", why)
		}
		events += c.World.Steps()
	}
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(events)/secs, "events/s")
	b.ReportMetric(float64(b.N)*time.Hour.Seconds()/secs, "sim-s/s")
	b.ReportMetric(float64(events)/float64(b.N), "events/run")
}
