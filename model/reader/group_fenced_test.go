package reader_test

import (
	"testing"
	"time"

	"kafkasim/model/proto"
	"kafkasim/model/reader"
)

// A static member's coordinator answering FENCED_INSTANCE_ID ends it, and
// the member keeps what the god view judges the fence by: the request,
// when and from which coordinator, and the generation and member id of its
// last JoinGroup answer, with when and from whom it came.
func TestFencedStaticMemberKeepsWhatItKnew(t *testing.T) {
	cfg := memberConfig("c-0", reader.CommitAfterProcessing)
	cfg.Group.GroupInstanceID = "c-0"
	gw := newGroupWorld(1, 3, cfg)
	gw.w.Start()
	gw.w.RunUntil(5 * time.Second)
	m := gw.member(0)
	if _, ok := m.ClassicFenced(); ok {
		t.Fatal("fenced before any FENCED_INSTANCE_ID")
	}
	_, generation, memberID, _ := m.Group()
	if generation != 1 || memberID != gw.b.static["c-0"] {
		t.Fatalf("member in generation %d as %q, want 1 as %q", generation, memberID, gw.b.static["c-0"])
	}
	fencedAfter := gw.w.Now()
	// A clock fault sets the member's clock ahead: what it keeps is in the
	// run's virtual time, which the god view's loads and losses are in.
	gw.w.Clock(gw.members[0]).Jump(gw.w.Now(), 100*time.Second)
	gw.b.heartbeatErr = []proto.ErrorCode{proto.FencedInstanceID}
	gw.w.RunUntil(15 * time.Second)
	f, ok := m.ClassicFenced()
	if !ok {
		t.Fatalf("not fenced; fatal %q", m.Fatal())
	}
	broker, _ := gw.w.Lookup("broker-1")
	if f.API != "Heartbeat" || f.InstanceID != "c-0" || f.Generation != 1 || f.MemberID != memberID ||
		f.Coordinator != broker || f.JoinedFrom != broker || f.At <= fencedAfter || f.At > gw.w.Now() || f.JoinedAt <= 0 || f.JoinedAt >= fencedAfter {
		t.Fatalf("fenced %+v; want a Heartbeat after %v from broker-1 of c-0 joined as %s in generation 1 before it", f, fencedAfter, memberID)
	}
	if m.Fatal() != "Heartbeat: FENCED_INSTANCE_ID" {
		t.Fatalf("fatal %q", m.Fatal())
	}
}
