package reader_test

import (
	"strings"
	"testing"
	"time"

	"kafkasim/model/proto"
	"kafkasim/model/reader"
)

// A consumer-protocol static member whose coordinator now holds its
// group.instance.id under another member id (here another member took it
// over after a static leave, as a rolled-back load would hold the id the
// member replaced) is answered FENCED_INSTANCE_ID at its next heartbeat
// (throwIfInstanceIdIsFenced), which ends it; it keeps what the god view
// judges the fence by: when and from which coordinator, the member id and
// epoch the fenced heartbeat sent, and when and from whom its join came.
func TestConsumerFencedStaticMemberKeepsWhatItKnew(t *testing.T) {
	cfg := consumerMemberConfig("c-0", reader.CommitAfterProcessing)
	cfg.Group.GroupInstanceID = "c-0"
	b := newCGBroker(2, 5, false)
	gw := newCGWorld(b, cfg)
	gw.w.Start()
	gw.w.RunUntil(5 * time.Second)
	m := gw.member(0)
	if _, ok := m.ConsumerFenced(); ok {
		t.Fatal("fenced before any FENCED_INSTANCE_ID")
	}
	epoch, _ := m.MemberEpoch()
	_, _, memberID, _ := m.Group()
	if epoch <= 0 || memberID == "" {
		t.Fatalf("member at epoch %d as %q, want it in the group", epoch, memberID)
	}
	// The instance id leaves (epoch -2) and another member id takes it.
	b.apply(b.g.Heartbeat(b.cenv, &proto.ConsumerGroupHeartbeatRequest{GroupID: "g", MemberID: memberID, MemberEpoch: proto.LeaveGroupStaticMemberEpoch,
		InstanceID: "c-0", RebalanceTimeout: -1}))
	res := b.g.Heartbeat(b.cenv, &proto.ConsumerGroupHeartbeatRequest{GroupID: "g", MemberID: "other", MemberEpoch: 0, InstanceID: "c-0",
		RebalanceTimeout: time.Minute, SubscribedTopicNames: []string{"orders"}, ServerAssignor: "uniform", OwnedSent: true})
	if res.Response.Error != proto.None {
		t.Fatalf("replacement refused: %v", res.Response.Error)
	}
	b.apply(res)
	fencedAfter := gw.w.Now()
	gw.w.RunUntil(20 * time.Second)
	f, ok := m.ConsumerFenced()
	if !ok {
		t.Fatalf("not fenced; fatal %q", m.Fatal())
	}
	broker, _ := gw.w.Lookup("broker-1")
	if f.API != "ConsumerGroupHeartbeat" || f.InstanceID != "c-0" || f.Generation != epoch || f.MemberID != memberID ||
		f.Coordinator != broker || f.JoinedFrom != broker || f.At <= fencedAfter || f.JoinedAt < 0 || f.JoinedAt >= fencedAfter {
		t.Fatalf("fenced %+v; want a ConsumerGroupHeartbeat after %v from broker-1 of c-0 at epoch %d as %s, joined before", f, fencedAfter, epoch, memberID)
	}
	if !strings.HasPrefix(m.Fatal(), "ConsumerGroupHeartbeat: FENCED_INSTANCE_ID") {
		t.Fatalf("fatal %q", m.Fatal())
	}
	if _, ok := m.ClassicFenced(); ok {
		t.Fatal("a consumer-protocol member reports a classic fence")
	}
}
