package cluster

import (
	"slices"
	"testing"
	"time"

	"kafkasim/model/metadata"
	"kafkasim/sim"
)

// probeClient is a test node that sends controller requests and keeps the
// answers.
type probeClient struct {
	env sim.Env
	got []sim.Message
}

func (p *probeClient) Start(env sim.Env)                   { p.env = env }
func (p *probeClient) Deliver(_ sim.NodeID, m sim.Message) { p.got = append(p.got, m) }
func (p *probeClient) Fire(sim.Timer)                      {}
func (p *probeClient) last() sim.Message                   { return p.got[len(p.got)-1] }
func settledCluster(t *testing.T, cfg Config) (*Cluster, *probeClient) {
	t.Helper()
	c, err := Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	probe := &probeClient{}
	c.World.AddNode(sim.NodeSpec{Name: "probe", Role: "test", New: func() sim.Node { return probe }})
	c.World.Start()
	c.World.RunUntil(5 * time.Second)
	if ok, why := c.ControlPlaneConverged(); !ok {
		t.Fatalf("cluster did not settle: %s\n%s", why, describe(c))
	}
	return c, probe
}

func TestCleanAndUncleanRestartsAndELR(t *testing.T) {
	cfg := DefaultConfig(5)
	cfg.Topics = []TopicSpec{{Name: "t", Partitions: 1, ReplicationFactor: 3, MinInsyncReplicas: 3}}
	c, _ := settledCluster(t, cfg)
	w := c.World
	tp := metadata.TopicPartition{Topic: "t", Partition: 0}
	p := c.Metadata().Partition(tp)
	l := p.Leader
	// A clean shutdown of the leader: leadership moves first, then it stops,
	// and it is in the ELR (ISR 2 < min ISR 3).
	w.Shutdown(c.BrokerNode(l))
	w.RunFor(5 * time.Second)
	if w.State(c.BrokerNode(l)) != sim.Down {
		t.Fatalf("broker %d should have finished its controlled shutdown:\n%s", l, describe(c))
	}
	now := c.Metadata().Partition(tp)
	if now.Leader == l || slices.Contains(now.ISR, l) || !slices.Contains(now.ELR, l) {
		t.Fatalf("after a controlled shutdown: %s", now)
	}
	// A clean restart keeps it eligible. (It is kept from fetching from the
	// other brokers, or it would catch up, rejoin the ISR and empty the ELR.)
	others := []sim.NodeID{}
	for _, b := range c.Brokers {
		if b != c.BrokerNode(l) {
			others = append(others, b)
		}
	}
	w.Partition([]sim.NodeID{c.BrokerNode(l)}, others)
	w.Restart(c.BrokerNode(l))
	w.RunFor(5 * time.Second)
	if now = c.Metadata().Partition(tp); !slices.Contains(now.ELR, l) {
		t.Fatalf("a clean restart keeps the broker in the ELR: %s", now)
	}
	// An unclean one does not.
	w.Crash(c.BrokerNode(l), true)
	w.RunFor(time.Second)
	w.Restart(c.BrokerNode(l))
	w.RunFor(15 * time.Second)
	if now = c.Metadata().Partition(tp); slices.Contains(now.ELR, l) {
		t.Fatalf("an unclean restart removes the broker from the ELR (KIP-966): %s", now)
	}
	if v := c.Audit.Violations(); len(v) > 0 {
		t.Fatalf("violations: %v", v)
	}
}

func TestFencedBrokerIsUnfencedOnceItHeartbeatsAgain(t *testing.T) {
	c, _ := settledCluster(t, DefaultConfig(9))
	w := c.World
	b := c.BrokerNode(2)
	cut := w.Partition([]sim.NodeID{b}, c.Controllers)
	w.RunFor(12 * time.Second)
	if !c.Metadata().Brokers[2].Fenced {
		t.Fatal("a broker cut off from the controllers for longer than its session is fenced")
	}
	w.Heal(cut)
	w.RunFor(5 * time.Second)
	if c.Metadata().Brokers[2].Fenced {
		t.Fatal("once it heartbeats again it is unfenced")
	}
}
