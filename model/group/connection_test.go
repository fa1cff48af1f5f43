package group

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"kafkasim/model/group/consumergroup"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// heldFixture: m1 (from c1) owns orders-0, m2 (from c2) is granted
// orders-1 at epoch 2 by a heartbeat whose answer waits for its write to
// commit; m2 then sends its leave and its rejoin behind it, and m1
// heartbeats.
func heldFixture(t *testing.T) (f *fakeTopics, c1, c2 sim.NodeID, held, leave, rejoin *proto.ConsumerGroupHeartbeatRequest) {
	cfg := DefaultConfig()
	cfg.Consumer = NewConsumerProtocol(ConsumerProtocolConfig{SessionTimeout: 45 * time.Second, HeartbeatInterval: 5 * time.Second,
		Assignors: []consumergroup.Assignor{dealer{}}})
	f = newFake(t, cfg)
	f.topicCounts = map[string]int32{"orders": 2}
	f.Lead(1)
	c1, c2 = sim.NodeID(101), sim.NodeID(102)
	f.Request(c1, consumerHeartbeat("m1", 0, nil))
	f.Commit()
	f.Request(c2, consumerHeartbeat("m2", 0, nil))
	f.Commit()
	// m1 releases orders-1 and is at epoch 2 with orders-0.
	f.Request(c1, consumerHeartbeat("m1", 1, tps(0)))
	f.Commit()
	// m2's heartbeat is granted orders-1; its answer waits.
	held = consumerHeartbeat("m2", 2, []proto.TopicPartition{})
	if got := f.Request(c2, held); len(got) != 0 {
		t.Fatalf("the grant answered before its write committed: %+v", got)
	}
	leave = consumerHeartbeat("m2", proto.LeaveGroupMemberEpoch, []proto.TopicPartition{})
	rejoin = consumerHeartbeat("m2", 0, nil)
	return f, c1, c2, held, leave, rejoin
}

// Kafka's SocketServer reads a connection's next request only once the
// answer to the one it read is sent: a leave and a rejoin pipelined behind
// a heartbeat whose answer waits for its write are served after that
// answer, in order. Until then m2 is a member holding orders-1, which m1
// is not granted.
func TestConsumerHeartbeatsOfAConnectionWaitForTheAnswerBefore(t *testing.T) {
	f, c1, c2, held, leave, rejoin := heldFixture(t)
	if got := f.Request(c2, leave); len(got) != 0 {
		t.Fatalf("the leave was served before the answer it follows: %+v", got)
	}
	f.Request(c2, rejoin)
	if e, ok := f.C.shards[0].consumer.MemberEpoch("g", "m2"); !ok || e != 2 {
		t.Fatalf("m2 at %d (present %v) before its pipelined leave was read; want still at epoch 2", e, ok)
	}
	n1 := len(f.Sent)
	f.Request(c1, consumerHeartbeat("m1", 2, tps(0)))
	n2 := len(f.Sent)
	f.Commit()
	if r := answer[*proto.ConsumerGroupHeartbeatResponse](t, f.To(c1, n1)); r.HasAssignment && len(r.Assignment) != 1 {
		t.Fatalf("m1 granted orders-1 while m2, whose leave is unread, owns it: %+v", r)
	}
	got := f.To(c2, n2)
	if r := answer[*proto.ConsumerGroupHeartbeatResponse](t, got); r.CorrelationID != held.CorrelationID || r.MemberEpoch != 2 || len(r.Assignment) != 1 {
		t.Fatalf("the held heartbeat's answer: %+v", r)
	}
	// The leave is read now, then (its answer sent) the rejoin.
	n := len(f.Sent)
	f.Advance(0)
	f.Commit()
	f.Advance(0)
	f.Commit()
	got = f.To(c2, n)
	if len(got) != 2 {
		t.Fatalf("want the leave's then the rejoin's answers, got %+v", got)
	}
	l, j := got[0].(*proto.ConsumerGroupHeartbeatResponse), got[1].(*proto.ConsumerGroupHeartbeatResponse)
	if l.CorrelationID != leave.CorrelationID || l.MemberEpoch != proto.LeaveGroupMemberEpoch || l.Error != proto.None {
		t.Fatalf("the leave's answer: %+v", l)
	}
	if j.CorrelationID != rejoin.CorrelationID || j.Error != proto.None || j.MemberEpoch <= 2 {
		t.Fatalf("the rejoin's answer: %+v", j)
	}
	if len(f.C.conns) != 0 {
		t.Fatalf("connections still muted: %+v", f.C.conns)
	}
}

// Another client's heartbeats, and a restarted process's (its correlation
// ids are of a new incarnation: a new connection), are not held; a reset
// connection drops what it held, unread.
func TestConsumerHeartbeatsHeldPerConnection(t *testing.T) {
	f, _, c2, _, leave, _ := heldFixture(t)
	restarted := consumerHeartbeat("m3", 0, nil)
	restarted.CorrelationID += proto.CorrelationBase(2)
	f.Request(c2, restarted)
	if _, ok := f.C.shards[0].consumer.MemberEpoch("g", "m3"); !ok {
		t.Fatalf("a restarted process's join waited behind its previous process's heartbeat")
	}
	f.Request(c2, leave)
	f.C.OnDisconnected(c2)
	n := len(f.Sent)
	f.Commit()
	f.Advance(time.Second)
	f.Commit()
	for _, m := range f.To(c2, n) {
		if r, ok := m.(*proto.ConsumerGroupHeartbeatResponse); ok && r.CorrelationID == leave.CorrelationID {
			t.Fatalf("a leave held on a reset connection was served: %+v", r)
		}
	}
	if _, ok := f.C.shards[0].consumer.MemberEpoch("g", "m2"); !ok {
		t.Fatalf("m2 left by a heartbeat its reset connection never delivered")
	}
}

// removalAuditor records the consumer-group member removals a coordinator
// reports.
type removalAuditor struct {
	revertAuditor
	removed []string
}

func (a *removalAuditor) ConsumerMemberRemoved(_, _, _ int32, group, member string, epoch int32) {
	a.removed = append(a.removed, group+"/"+member+"@"+strconv.Itoa(int(epoch)))
}

// A leave's removal reaches the auditor once its write is committed, with
// the epoch the member had: the claims of that membership end there.
func TestConsumerMemberRemovalAudited(t *testing.T) {
	f, _, c2, _, leave, _ := heldFixture(t)
	rec := &removalAuditor{}
	f.C.cfg.Audit = rec
	f.Request(c2, leave)
	f.Commit() // the held heartbeat's write; the leave is read next
	f.Advance(0)
	if len(rec.removed) != 0 {
		t.Fatalf("a removal audited before its write committed: %v", rec.removed)
	}
	f.Commit()
	if want := []string{"g/m2@2"}; !slices.Equal(rec.removed, want) {
		t.Fatalf("removals audited %v, want %v", rec.removed, want)
	}
}
