package cluster

import (
	"fmt"
	"kafkasim/sim"
	"testing"
	"time"
)

func describe(c *Cluster) string {
	s := fmt.Sprintf("t=%v steps=%d\n", c.World.Now(), c.World.Steps())
	for _, id := range c.Controllers {
		n := c.Controller(id)
		if n == nil {
			s += fmt.Sprintf("  %s down\n", c.World.Name(id))
			continue
		}
		r := n.Raft()
		s += fmt.Sprintf("  %s %s epoch=%d leader=%d hw=%d leo=%d active=%v\n", c.World.Name(id), r.Role(), r.Epoch(), r.Leader(), r.HighWatermark(), r.Log().EndOffset(), n.Active())
	}
	for i := range c.Brokers {
		b := c.Broker(int32(i + 1))
		if b == nil {
			s += fmt.Sprintf("  broker-%d down\n", i+1)
			continue
		}
		s += fmt.Sprintf("  broker-%d %s epoch=%d fenced=%v metadata=%d\n", i+1, b.State(), b.BrokerEpoch(), b.Fenced(), b.Image().Offset)
	}
	if im := c.Metadata(); im != nil {
		for _, p := range im.Partitions() {
			s += "  " + p.String() + "\n"
		}
	}
	for _, v := range c.Audit.Violations() {
		s += "  VIOLATION " + v.String() + "\n"
	}
	return s
}

func TestSmoke(t *testing.T) {
	cfg := DefaultConfig(1)
	cfg.Topics = []TopicSpec{{Name: "orders", Partitions: 3, ReplicationFactor: 3, MinInsyncReplicas: 2}}
	c, err := Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.World.Start()
	c.World.RunUntil(10 * time.Second)
	t.Log(describe(c))
}

func TestSmokeFaults(t *testing.T) {
	cfg := DefaultConfig(1)
	cfg.Topics = []TopicSpec{{Name: "orders", Partitions: 3, ReplicationFactor: 3, MinInsyncReplicas: 2}}
	c, err := Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w := c.World
	w.ScheduleFault(10*time.Second, sim.Fault{Kind: sim.FaultCrash, Target: "active-controller", For: 5 * time.Second})
	w.ScheduleFault(12*time.Second, sim.Fault{Kind: sim.FaultCrash, Target: "leader(orders-0)", For: 15 * time.Second})
	w.ScheduleFault(14*time.Second, sim.Fault{Kind: sim.FaultPartition, Groups: [][]string{{"broker-3"}, {"rest"}}, For: 12 * time.Second})
	w.Start()
	for _, at := range []time.Duration{10, 13, 20, 24, 30, 40} {
		w.RunUntil(at * time.Second)
		t.Log(describe(c))
	}
	for _, r := range w.FaultLog() {
		t.Log(r.At, r.Fault, r.Nodes, r.Skipped, r.Detail)
	}
}
