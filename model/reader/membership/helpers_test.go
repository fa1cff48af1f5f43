package membership

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"kafkasim/model/proto"
)

func tp(topic string, p int32) proto.TopicPartition {
	return proto.TopicPartition{Topic: topic, Partition: p}
}

func tps(ps ...proto.TopicPartition) []proto.TopicPartition { return ps }

func testConfig() Config {
	c := DefaultConfig("g")
	c.RebalanceTimeout = time.Minute
	return c
}

func newTestManager(cfg Config) *Manager {
	return NewManager(cfg, rand.New(rand.NewPCG(1, 2)), 0)
}

// ok is a successful response to req.
func ok(req *proto.ConsumerGroupHeartbeatRequest, epoch int32, assignment ...proto.TopicPartition) *proto.ConsumerGroupHeartbeatResponse {
	r := &proto.ConsumerGroupHeartbeatResponse{MemberID: req.MemberID, MemberEpoch: epoch, HeartbeatInterval: 5 * time.Second}
	if assignment != nil {
		r.Assignment, r.HasAssignment = assignment, true
	}
	return r
}

// okAssign is a successful response carrying an assignment, even empty.
func okAssign(req *proto.ConsumerGroupHeartbeatRequest, epoch int32, assignment []proto.TopicPartition) *proto.ConsumerGroupHeartbeatResponse {
	r := ok(req, epoch)
	r.Assignment, r.HasAssignment = assignment, true
	return r
}

func errResp(code proto.ErrorCode) *proto.ConsumerGroupHeartbeatResponse {
	return &proto.ConsumerGroupHeartbeatResponse{Error: code}
}

// mustSend asks for the heartbeat due now and fails without one.
func mustSend(t *testing.T, m *Manager, now time.Duration) *proto.ConsumerGroupHeartbeatRequest {
	t.Helper()
	req, _ := m.Heartbeat(now, true)
	if req == nil {
		t.Fatalf("no heartbeat at %v in state %v", now, m.State())
	}
	return req
}

func mustNotSend(t *testing.T, m *Manager, now time.Duration) time.Duration {
	t.Helper()
	req, wait := m.Heartbeat(now, true)
	if req != nil {
		t.Fatalf("unexpected heartbeat at %v in state %v: %+v", now, m.State(), req)
	}
	return wait
}

// oneAction drains the actions and expects exactly one, of kind.
func oneAction(t *testing.T, m *Manager, kind ActionKind, parts []proto.TopicPartition) Action {
	t.Helper()
	as := m.Actions()
	if len(as) != 1 || as[0].Kind != kind || !slices.Equal(as[0].Partitions, parts) {
		t.Fatalf("actions %+v, want one %v of %v", as, kind, parts)
	}
	return as[0]
}

func done(t *testing.T, m *Manager, a Action) {
	t.Helper()
	if err := m.ActionDone(a.Seq); err != nil {
		t.Fatal(err)
	}
}

func wantState(t *testing.T, m *Manager, s MemberState) {
	t.Helper()
	if m.State() != s {
		t.Fatalf("state %v, want %v", m.State(), s)
	}
}

// stableWith brings a new member to STABLE at epoch 1 owning parts; the
// time is 0 and the heartbeat timer restarted at 0.
func stableWith(t *testing.T, cfg Config, parts ...proto.TopicPartition) *Manager {
	t.Helper()
	m := newTestManager(cfg)
	m.Subscribe([]string{"t"})
	m.Poll(0)
	req := mustSend(t, m, 0)
	m.OnResponse(0, req, okAssign(req, 1, parts))
	done(t, m, oneAction(t, m, AssignPartitions, normalize(parts)))
	ack := mustSend(t, m, 0)
	m.OnResponse(0, ack, ok(ack, 1))
	wantState(t, m, Stable)
	if !slices.Equal(m.Owned(), normalize(parts)) {
		t.Fatalf("owned %v, want %v", m.Owned(), parts)
	}
	return m
}
