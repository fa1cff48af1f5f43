package broker_test

import (
	"testing"
	"time"

	"kafkasim/model/broker"
	"kafkasim/model/proto"
	"kafkasim/model/raft"
	"kafkasim/sim"
)

// lifecycleController is a scripted active controller: it tells the broker's
// metadata replica it leads, holds the first registration it gets and
// answers it only once a second registration (the restarted process's)
// came, then answers that one; heartbeats at another epoch than the last
// registration's are STALE_BROKER_EPOCH, as ClusterControlManager's
// checkBrokerEpoch has them.
type lifecycleController struct {
	env       sim.Env
	broker    sim.NodeID
	held      []*proto.BrokerRegistrationRequest
	epoch     int64 // the broker epoch of the last registration answered
	heartbeat []int64
}

type answerTimer struct {
	req   *proto.BrokerRegistrationRequest
	epoch int64
}

func (c *lifecycleController) Start(env sim.Env) { c.env = env }

func (c *lifecycleController) Deliver(from sim.NodeID, m sim.Message) {
	switch m := m.(type) {
	case *raft.FetchRequest:
		c.env.Send(from, &raft.BeginQuorumEpochRequest{LeaderID: c.env.ID(), Epoch: 1})
	case *proto.BrokerRegistrationRequest:
		c.broker = from
		c.held = append(c.held, m)
		if len(c.held) == 2 {
			// The previous process's registration commits at epoch 10, the
			// new one's at 12; the answers go out in that order.
			c.env.After(5*time.Millisecond, answerTimer{req: c.held[0], epoch: 10})
			c.env.After(10*time.Millisecond, answerTimer{req: c.held[1], epoch: 12})
		}
	case *proto.BrokerHeartbeatRequest:
		c.heartbeat = append(c.heartbeat, m.BrokerEpoch)
		resp := &proto.BrokerHeartbeatResponse{CorrelationID: m.CorrelationID, IsFenced: true, ControllerHint: sim.NoNode}
		if m.BrokerEpoch != c.epoch {
			resp.Error = proto.StaleBrokerEpoch
		}
		c.env.Send(from, resp)
	}
}

func (c *lifecycleController) Fire(t sim.Timer) {
	if t, ok := t.(answerTimer); ok {
		c.epoch = t.epoch
		c.env.Send(c.broker, &proto.BrokerRegistrationResponse{CorrelationID: t.req.CorrelationID, BrokerEpoch: t.epoch, ControllerHint: sim.NoNode})
	}
}

// A broker that crashed with its registration unanswered comes back and
// registers again; the controller commits the dead process's registration
// and answers it after the restart. Kafka sends that answer on the dead
// process's connection (the BrokerLifecycleManager's channel to the
// controller died with it), so the new process takes only its own answer:
// it heartbeats at the epoch of its own registration. Taking the old answer
// (both processes numbered their first request 1) left it heartbeating at a
// stale epoch for ever, "starting" (fuzz --groups seed 269509).
func TestRestartedBrokerIgnoresTheAnswerToItsPredecessorsRegistration(t *testing.T) {
	w := sim.NewWorld(sim.DefaultOptions(1))
	ctrl := &lifecycleController{}
	cid := w.AddNode(sim.NodeSpec{Name: "controller-1", Role: "controller", New: func() sim.Node { return ctrl }})
	bid := w.AddNode(sim.NodeSpec{Name: "broker-1", Role: "broker", New: broker.New(broker.DefaultConfig(1, []sim.NodeID{cid}))})
	w.Start()
	w.RunUntil(2 * time.Second)
	if len(ctrl.held) != 1 {
		t.Fatalf("the controller got %d registrations before the crash, want 1", len(ctrl.held))
	}
	w.Crash(bid, true)
	w.RunUntil(2500 * time.Millisecond)
	w.Restart(bid)
	w.RunUntil(6 * time.Second)

	if len(ctrl.held) != 2 {
		t.Fatalf("the controller got %d registrations, want 2 (one per process)", len(ctrl.held))
	}
	if ctrl.held[0].IncarnationID == ctrl.held[1].IncarnationID {
		t.Fatalf("both processes registered with incarnation id %d", ctrl.held[0].IncarnationID)
	}
	b := w.Node(bid).(*broker.Node)
	if got := b.BrokerEpoch(); got != 12 {
		t.Fatalf("the restarted broker holds broker epoch %d, want 12 (its own registration's, not its predecessor's 10)", got)
	}
	if len(ctrl.heartbeat) == 0 {
		t.Fatal("the restarted broker never heartbeat")
	}
	for _, e := range ctrl.heartbeat {
		if e != 12 {
			t.Fatalf("heartbeats at broker epochs %v, want all at 12", ctrl.heartbeat)
		}
	}
}
