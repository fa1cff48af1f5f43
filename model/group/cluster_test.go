package group_test

import (
	"testing"
	"time"

	"kafkasim/model/broker"
	"kafkasim/model/cluster"
	"kafkasim/model/group"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// member is a one-member classic group client driven by steps: it finds
// its coordinator (again after NOT_COORDINATOR and the like), then sends
// each step's request when the previous one is answered.
type member struct {
	t        *testing.T
	c        *cluster.Cluster
	env      sim.Env
	coord    sim.NodeID
	finds    []proto.ErrorCode
	steps    []func(m *member) sim.Message
	step     int
	answers  []sim.Message
	corr     uint64
	memberID string
	gen      int32
	// after is when the steps from the index on may run.
	after map[int]time.Duration
}

type retry struct{}

func (m *member) Start(env sim.Env) {
	m.env, m.coord = env, sim.NoNode
	env.After(5*time.Second, retry{})
}

func (m *member) Fire(sim.Timer) {
	if at, ok := m.after[m.step]; ok && m.c.World.Now() < at {
		m.env.After(at-m.c.World.Now(), retry{})
		return
	}
	m.corr++
	if m.coord == sim.NoNode {
		m.env.Send(m.c.BrokerNode(1), &proto.FindCoordinatorRequest{CorrelationID: m.corr, KeyType: proto.CoordinatorKeyGroup, Key: "g"})
		return
	}
	if m.step < len(m.steps) {
		m.env.Send(m.coord, m.steps[m.step](m))
	}
}

func (m *member) Deliver(from sim.NodeID, msg sim.Message) {
	again := func() { m.coord = sim.NoNode; m.env.After(500*time.Millisecond, retry{}) }
	var err proto.ErrorCode
	switch r := msg.(type) {
	case *sim.Disconnected:
		if r.Peer == m.coord {
			again()
		}
		return
	case *proto.FindCoordinatorResponse:
		m.finds = append(m.finds, r.Error)
		if r.Error != proto.None {
			again()
			return
		}
		m.coord = r.Node
		m.env.After(0, retry{})
		return
	case *proto.JoinGroupResponse:
		if r.CorrelationID != m.corr {
			return // a retry's duplicate
		}
		err = r.Error
		if r.Error == proto.MemberIDRequired || r.Error == proto.None {
			m.memberID, m.gen, err = r.MemberID, r.GenerationID, proto.None
		}
	case *proto.SyncGroupResponse:
		if r.CorrelationID != m.corr {
			return
		}
		err = r.Error
	case *proto.OffsetCommitResponse:
		if r.CorrelationID != m.corr {
			return
		}
		err = r.Partitions[0].Error
	case *proto.OffsetFetchResponse:
		if r.CorrelationID != m.corr {
			return
		}
		err = r.Error
	}
	switch err {
	case proto.NotCoordinator, proto.CoordinatorNotAvailable, proto.CoordinatorLoadInProgress:
		again()
		return
	}
	m.answers = append(m.answers, msg)
	m.step++
	m.env.After(0, retry{})
}

// A FindCoordinator before __consumer_offsets exists creates it (compacted,
// as configured) and is answered COORDINATOR_NOT_AVAILABLE; the retry finds
// the leader of the group's partition. The member joins (MEMBER_ID_REQUIRED
// first), syncs, commits; its coordinator broker then shuts down, and the
// new leader of the partition loads the commit and the group from its log.
func TestCoordinatorOnARealCluster(t *testing.T) {
	cfg := cluster.DefaultConfig(3)
	cfg.Controllers, cfg.Brokers = 1, 3
	gc := group.DefaultConfig()
	gc.OffsetsTopicNumPartitions, gc.OffsetsTopicReplicationFactor = 3, 3
	cfg.Data.Coordinators = []broker.CoordinatorSpec{group.Spec(gc)}
	c, err := cluster.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	join := func(m *member) sim.Message {
		return &proto.JoinGroupRequest{CorrelationID: m.corr, GroupID: "g", SessionTimeout: 45 * time.Second, RebalanceTimeout: 5 * time.Minute,
			MemberID: m.memberID, ClientID: "c1", ProtocolType: "consumer", Protocols: []proto.JoinGroupProtocol{{Name: "range"}}}
	}
	fetch := func(m *member) sim.Message {
		return &proto.OffsetFetchRequest{CorrelationID: m.corr, GroupID: "g", MemberEpoch: -1}
	}
	m := &member{t: t, c: c, steps: []func(*member) sim.Message{
		join, join,
		func(m *member) sim.Message {
			return &proto.SyncGroupRequest{CorrelationID: m.corr, GroupID: "g", GenerationID: m.gen, MemberID: m.memberID,
				Assignments: []proto.MemberAssignment{{MemberID: m.memberID, Partitions: []proto.TopicPartition{{Topic: "orders", Partition: 0}}}}}
		},
		func(m *member) sim.Message {
			return &proto.OffsetCommitRequest{CorrelationID: m.corr, GroupID: "g", GenerationIDOrMemberEpoch: m.gen, MemberID: m.memberID,
				Partitions: []proto.OffsetCommitPartition{{TopicPartition: proto.TopicPartition{Topic: "orders", Partition: 0}, CommittedOffset: 17, CommittedLeaderEpoch: -1}}}
		},
		fetch, fetch,
	}, after: map[int]time.Duration{5: 40 * time.Second}}
	c.World.AddNode(sim.NodeSpec{Name: "member", Role: "test", New: func() sim.Node { return m }})
	c.World.Start()
	c.World.RunUntil(25 * time.Second)
	if len(m.finds) < 2 || m.finds[0] != proto.CoordinatorNotAvailable || m.finds[len(m.finds)-1] != proto.None {
		t.Fatalf("FindCoordinator answers %v: first COORDINATOR_NOT_AVAILABLE, at last NONE", m.finds)
	}
	topic := c.Metadata().Topics[group.Topic]
	if topic == nil || len(topic.Partitions) != 3 || topic.Configs["cleanup.policy"] != "compact" {
		t.Fatalf("__consumer_offsets: %+v", topic)
	}
	if m.step != 5 {
		t.Fatalf("the member got %d answers by 25 s: %+v", m.step, m.answers)
	}
	if r := m.answers[1].(*proto.JoinGroupResponse); r.GenerationID != 1 || r.Leader != m.memberID || len(r.Members) != 1 {
		t.Errorf("the join: %+v", r)
	}
	if r := m.answers[4].(*proto.OffsetFetchResponse); len(r.Partitions) != 1 || r.Partitions[0].CommittedOffset != 17 {
		t.Errorf("the fetch: %+v", r)
	}
	// The coordinator's broker goes away; the next leader loads.
	var old int32
	for b := int32(1); b <= 3; b++ {
		if c.BrokerNode(b) == m.coord {
			old = b
		}
	}
	if !c.World.Shutdown(m.coord) {
		t.Fatalf("broker %d would not shut down", old)
	}
	c.World.RunUntil(60 * time.Second)
	if m.step != 6 || m.coord == c.BrokerNode(old) || m.coord == sim.NoNode {
		t.Fatalf("after broker %d shut down the member got %d answers, coordinator %v (state %v)", old, m.step, m.coord, c.World.State(c.BrokerNode(old)))
	}
	if r := m.answers[5].(*proto.OffsetFetchResponse); len(r.Partitions) != 1 || r.Partitions[0].CommittedOffset != 17 {
		t.Errorf("the fetch from the new coordinator: %+v", r)
	}
	for _, v := range c.Audit.Violations() {
		t.Errorf("the audit found a violation: %+v", v)
	}
}
