package cluster

import (
	"slices"
	"testing"
	"time"

	"kafkasim/model/broker"
	"kafkasim/model/metadata"
	"kafkasim/model/proto"
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
func (p *probeClient) ask(w *sim.World, to sim.NodeID, m sim.Message) sim.Message {
	n := len(p.got)
	p.env.Send(to, m)
	w.RunFor(time.Second)
	if len(p.got) == n {
		return nil
	}
	return p.last()
}

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

func TestAlterPartitionValidation(t *testing.T) {
	for _, bug := range []bool{false, true} {
		cfg := DefaultConfig(3)
		cfg.Topics = []TopicSpec{{Name: "t", Partitions: 1, ReplicationFactor: 3, MinInsyncReplicas: 2}}
		if bug {
			cfg.Bugs = []string{BugStaleAlterPartition}
		}
		c, probe := settledCluster(t, cfg)
		w := c.World
		_, active := c.ActiveController()
		p := c.Metadata().Partition(metadata.TopicPartition{Topic: "t", Partition: 0}).Clone()
		leader := p.Leader
		var follower int32
		for _, r := range p.Replicas {
			if r != leader {
				follower = r
				break
			}
		}
		epochOf := func(b int32) int64 { return c.Metadata().Brokers[b].Epoch }
		isr := func(ids ...int32) []proto.ReplicaState {
			var out []proto.ReplicaState
			for _, id := range ids {
				out = append(out, proto.ReplicaState{BrokerID: id, BrokerEpoch: epochOf(id)})
			}
			return out
		}
		alter := func(from int32, fromEpoch int64, item proto.AlterPartitionItem) *proto.AlterPartitionResponse {
			item.Topic, item.Partition = "t", 0
			m := probe.ask(w, active, &proto.AlterPartitionRequest{CorrelationID: uint64(len(probe.got) + 1), BrokerID: from, BrokerEpoch: fromEpoch, Partitions: []proto.AlterPartitionItem{item}})
			r, ok := m.(*proto.AlterPartitionResponse)
			if !ok {
				t.Fatalf("no AlterPartition answer: %v", m)
			}
			return r
		}
		cur := func() *metadata.Partition {
			return c.Metadata().Partition(metadata.TopicPartition{Topic: "t", Partition: 0})
		}

		// A valid shrink.
		r := alter(leader, epochOf(leader), proto.AlterPartitionItem{LeaderEpoch: cur().LeaderEpoch, PartitionEpoch: cur().PartitionEpoch, NewISR: isr(leader, follower)})
		if r.Partitions[0].Error != proto.None || len(cur().ISR) != 2 || cur().PartitionEpoch != p.PartitionEpoch+1 || cur().LeaderEpoch != p.LeaderEpoch {
			t.Fatalf("valid shrink: %+v, now %s", r.Partitions[0], cur())
		}
		checks := []struct {
			name string
			from int32
			ep   int64
			item proto.AlterPartitionItem
			top  proto.ErrorCode
			want proto.ErrorCode
		}{
			{"stale sender epoch", leader, epochOf(leader) - 1, proto.AlterPartitionItem{LeaderEpoch: cur().LeaderEpoch, PartitionEpoch: cur().PartitionEpoch, NewISR: isr(leader)}, proto.StaleBrokerEpoch, 0},
			{"stale partition epoch", leader, epochOf(leader), proto.AlterPartitionItem{LeaderEpoch: cur().LeaderEpoch, PartitionEpoch: cur().PartitionEpoch - 1, NewISR: isr(leader)}, proto.None, proto.InvalidUpdateVersion},
			{"stale leader epoch", leader, epochOf(leader), proto.AlterPartitionItem{LeaderEpoch: cur().LeaderEpoch - 1, PartitionEpoch: cur().PartitionEpoch, NewISR: isr(leader)}, proto.None, proto.FencedLeaderEpoch},
			{"not the leader", follower, epochOf(follower), proto.AlterPartitionItem{LeaderEpoch: cur().LeaderEpoch, PartitionEpoch: cur().PartitionEpoch, NewISR: isr(follower)}, proto.None, proto.InvalidRequest},
			{"ISR without the leader", leader, epochOf(leader), proto.AlterPartitionItem{LeaderEpoch: cur().LeaderEpoch, PartitionEpoch: cur().PartitionEpoch, NewISR: isr(follower)}, proto.None, proto.InvalidRequest},
		}
		for _, ch := range checks {
			r := alter(ch.from, ch.ep, ch.item)
			if r.Error != ch.top || (ch.top == proto.None && r.Partitions[0].Error != ch.want) {
				t.Errorf("%s: got %s/%v", ch.name, r.Error, r.Partitions)
			}
		}
		// KIP-903: the follower restarts with an empty disk and registers
		// again; an expansion that names its old broker epoch is stale.
		oldEpoch := epochOf(follower)
		fid := c.BrokerNode(follower)
		w.InjectFault(sim.Fault{Kind: sim.FaultDisk, Disk: sim.DiskWipe, Target: w.Name(fid)})
		w.RunFor(10 * time.Second) // its old session expires, so it may register again
		w.Restart(fid)
		w.RunFor(5 * time.Second)
		if epochOf(follower) == oldEpoch || c.Broker(follower).State() != broker.StateRunning {
			t.Fatalf("the wiped follower should have re-registered: %s", describe(c))
		}
		stale := []proto.ReplicaState{{BrokerID: leader, BrokerEpoch: epochOf(leader)}, {BrokerID: follower, BrokerEpoch: oldEpoch}}
		r = alter(leader, epochOf(leader), proto.AlterPartitionItem{LeaderEpoch: cur().LeaderEpoch, PartitionEpoch: cur().PartitionEpoch, NewISR: stale})
		got := r.Partitions[0].Error
		if !bug && got != proto.IneligibleReplica {
			t.Fatalf("an ISR member seen at an older broker epoch is ineligible (KIP-903): got %s", got)
		}
		if bug && (got != proto.None || !slices.Contains(cur().ISR, follower)) {
			t.Fatalf("with stale-alter-partition on the stale expansion is accepted: got %s, now %s", got, cur())
		}
	}
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
	// A clean restart keeps it eligible.
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
