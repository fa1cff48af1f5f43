package consumergroup

import (
	"slices"
	"testing"
	"time"

	"kafkasim/model/proto"
)

func TestValidateRequest(t *testing.T) {
	env := testEnv(topics{"t0": 2})
	mod := func(f func(r *proto.ConsumerGroupHeartbeatRequest)) *proto.ConsumerGroupHeartbeatRequest {
		r := joinReq("a", "t0")
		f(r)
		return r
	}
	cases := []struct {
		name string
		req  *proto.ConsumerGroupHeartbeatRequest
		want proto.ErrorCode
	}{
		{"join", joinReq("a", "t0"), proto.None},
		{"join without member id", joinReq("", "t0"), proto.None},
		{"no group id", mod(func(r *proto.ConsumerGroupHeartbeatRequest) { r.GroupID = "" }), proto.InvalidRequest},
		{"join without rebalance timeout", mod(func(r *proto.ConsumerGroupHeartbeatRequest) { r.RebalanceTimeout = -1 }), proto.InvalidRequest},
		{"join owning partitions", mod(func(r *proto.ConsumerGroupHeartbeatRequest) { r.OwnedPartitions = []proto.TopicPartition{tp("t0", 0)} }), proto.InvalidRequest},
		{"join without owned list", mod(func(r *proto.ConsumerGroupHeartbeatRequest) { r.OwnedSent = false }), proto.InvalidRequest},
		{"join without subscription", mod(func(r *proto.ConsumerGroupHeartbeatRequest) { r.SubscribedTopicNames = nil }), proto.InvalidRequest},
		{"heartbeat without member id", hbReq("", 3), proto.InvalidRequest},
		{"leave without member id", &proto.ConsumerGroupHeartbeatRequest{GroupID: "g", MemberEpoch: -1}, proto.InvalidRequest},
		{"static leave without instance id", &proto.ConsumerGroupHeartbeatRequest{GroupID: "g", MemberID: "a", MemberEpoch: -2}, proto.InvalidRequest},
		{"epoch below -2", &proto.ConsumerGroupHeartbeatRequest{GroupID: "g", MemberID: "a", MemberEpoch: -3}, proto.InvalidRequest},
		{"known assignor", mod(func(r *proto.ConsumerGroupHeartbeatRequest) { r.ServerAssignor = "range" }), proto.None},
		{"unknown assignor", mod(func(r *proto.ConsumerGroupHeartbeatRequest) { r.ServerAssignor = "sticky" }), proto.UnsupportedAssignor},
	}
	for _, c := range cases {
		if got, _ := validateRequest(env, c.req); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestJoinCreatesGroupAndAssigns(t *testing.T) {
	g, env := New("g"), testEnv(topics{"t0": 2})
	res := apply(t, g, g.Heartbeat(env, joinReq("a", "t0")))
	// newConsumerGroupMemberSubscriptionRecord, the epoch record, the
	// target of the member and the assignment epoch, the member's
	// current assignment.
	if got, want := recordTypes(res.Records), []int16{5, 3, 7, 6, 8}; !slices.Equal(got, want) {
		t.Fatalf("records %v, want %v", got, want)
	}
	r := res.Response
	want := []proto.TopicPartition{tp("t0", 0), tp("t0", 1)}
	if r.Error != proto.None || r.MemberID != "a" || r.MemberEpoch != 1 || !r.HasAssignment || !slices.Equal(r.Assignment, want) || r.HeartbeatInterval != DefaultHeartbeatInterval {
		t.Fatalf("response %+v", r)
	}
	if g.GroupEpoch() != 1 || g.AssignmentEpoch() != 1 || g.State() != StateStable {
		t.Fatalf("group epoch %d assignment epoch %d state %s", g.GroupEpoch(), g.AssignmentEpoch(), g.State())
	}
	if !slices.Contains(res.Timers, Timer{Kind: SessionTimeout, MemberID: "a", After: DefaultSessionTimeout}) {
		t.Fatalf("timers %+v: no session timeout", res.Timers)
	}
	// A heartbeat that changes nothing writes nothing and sends no
	// assignment.
	res = apply(t, g, g.Heartbeat(env, hbReq("a", 1, want...)))
	if len(res.Records) != 0 || res.Response.HasAssignment || res.Response.MemberEpoch != 1 {
		t.Fatalf("idle heartbeat: records %v response %+v", recordTypes(res.Records), res.Response)
	}
	// A member id the coordinator makes up when the join has none.
	res = apply(t, g, g.Heartbeat(env, joinReq("", "t0")))
	if id := res.Response.MemberID; len(id) != 22 || g.Member(id) == nil {
		t.Fatalf("generated member id %q", id)
	}
}

// The revocation comes before the grant: b waits (UNRELEASED_PARTITIONS)
// until a reports it no longer owns t0-1.
func TestRevokeBeforeGrant(t *testing.T) {
	g, env := New("g"), testEnv(topics{"t0": 2})
	apply(t, g, g.Heartbeat(env, joinReq("a", "t0")))
	all := []proto.TopicPartition{tp("t0", 0), tp("t0", 1)}

	res := apply(t, g, g.Heartbeat(env, joinReq("b", "t0")))
	if g.GroupEpoch() != 2 || g.AssignmentEpoch() != 2 {
		t.Fatalf("epochs %d/%d after the second join", g.GroupEpoch(), g.AssignmentEpoch())
	}
	if r := res.Response; r.MemberEpoch != 2 || !r.HasAssignment || len(r.Assignment) != 0 || g.Member("b").State != UnreleasedPartitions {
		t.Fatalf("b: response %+v state %v", r, g.Member("b").State)
	}
	if g.State() != StateReconciling {
		t.Fatalf("state %s", g.State())
	}

	// a is told to revoke t0-1 and stays at epoch 1 until it does.
	res = apply(t, g, g.Heartbeat(env, hbReq("a", 1, all...)))
	a := g.Member("a")
	if r := res.Response; r.MemberEpoch != 1 || !slices.Equal(r.Assignment, all[:1]) || a.State != UnrevokedPartitions || !slices.Equal(a.PendingRevocation, all[1:]) {
		t.Fatalf("a: response %+v member %+v", r, a)
	}
	if !slices.Contains(res.Timers, Timer{Kind: RebalanceTimeout, MemberID: "a", After: 5 * time.Minute, MemberEpoch: 1}) {
		t.Fatalf("no rebalance timeout in %+v", res.Timers)
	}
	// b still waits while a owns t0-1.
	res = apply(t, g, g.Heartbeat(env, hbReq("b", 2)))
	if res.Response.HasAssignment || g.Member("b").State != UnreleasedPartitions {
		t.Fatalf("b granted before a released: %+v", res.Response)
	}
	// a still reports t0-1: nothing moves.
	res = apply(t, g, g.Heartbeat(env, hbReq("a", 1, all...)))
	if len(res.Records) != 0 || res.Response.MemberEpoch != 1 {
		t.Fatalf("a still owning: %v %+v", recordTypes(res.Records), res.Response)
	}
	// a releases t0-1: it moves to epoch 2 and its rebalance timeout goes.
	res = apply(t, g, g.Heartbeat(env, hbReq("a", 1, all[:1]...)))
	if a := g.Member("a"); res.Response.MemberEpoch != 2 || a.State != Stable || len(a.PendingRevocation) != 0 {
		t.Fatalf("a after releasing: %+v %+v", res.Response, a)
	}
	if !slices.Contains(res.Timers, Timer{Kind: RebalanceTimeout, MemberID: "a", Cancel: true}) {
		t.Fatalf("rebalance timeout not cancelled: %+v", res.Timers)
	}
	// Now b gets t0-1.
	res = apply(t, g, g.Heartbeat(env, hbReq("b", 2)))
	if r := res.Response; !r.HasAssignment || !slices.Equal(r.Assignment, all[1:]) || g.Member("b").State != Stable || g.State() != StateStable {
		t.Fatalf("b: %+v, group %s", r, g.State())
	}
}

func TestGrantBeforeReleaseGrantsAtOnce(t *testing.T) {
	g, env := New("g"), testEnv(topics{"t0": 2})
	env.Config.GrantBeforeRelease = true
	apply(t, g, g.Heartbeat(env, joinReq("a", "t0")))
	res := apply(t, g, g.Heartbeat(env, joinReq("b", "t0")))
	if r := res.Response; !slices.Equal(r.Assignment, []proto.TopicPartition{tp("t0", 1)}) {
		t.Fatalf("with the bug b gets t0-1 while a holds it: %+v", r)
	}
}

func TestReconcileTransitions(t *testing.T) {
	p0, p1, p2 := tp("t", 0), tp("t", 1), tp("t", 2)
	set := func(tps ...proto.TopicPartition) []proto.TopicPartition { return normalize(tps) }
	member := func(state MemberState, epoch int32, assigned, pending []proto.TopicPartition) *Member {
		m := newMember("m")
		m.State, m.MemberEpoch, m.PreviousMemberEpoch, m.Assigned, m.PendingRevocation = state, epoch, epoch-1, assigned, pending
		return m
	}
	type want struct {
		state             MemberState
		epoch, prev       int32
		assigned, pending []proto.TopicPartition
		fenced            bool
	}
	cases := []struct {
		name   string
		m      *Member
		target []proto.TopicPartition
		held   map[proto.TopicPartition]int32
		owned  []proto.TopicPartition
		sent   bool
		want   want
	}{
		{"stable at the target epoch stays", member(Stable, 5, set(p0), nil), set(p0, p1), nil, set(p0), true,
			want{Stable, 5, 4, set(p0), nil, false}},
		{"stable, new epoch, free partitions: granted", member(Stable, 4, set(p0), nil), set(p0, p1), nil, set(p0), true,
			want{Stable, 5, 4, set(p0, p1), nil, false}},
		{"stable, new epoch, revocation owned: unrevoked at its epoch", member(Stable, 4, set(p0, p1), nil), set(p0), nil, set(p0, p1), true,
			want{UnrevokedPartitions, 4, 4, set(p0), set(p1), false}},
		{"stable, revocation already released: straight to the target", member(Stable, 4, set(p0, p1), nil), set(p0), nil, set(p0), true,
			want{Stable, 5, 4, set(p0), nil, false}},
		{"stable, owned not sent counts as owning", member(Stable, 4, set(p0, p1), nil), set(p0), nil, nil, false,
			want{UnrevokedPartitions, 4, 4, set(p0), set(p1), false}},
		{"stable, new partition held by another: unreleased", member(Stable, 4, set(p0), nil), set(p0, p1), map[proto.TopicPartition]int32{p1: 3}, set(p0), true,
			want{UnreleasedPartitions, 5, 4, set(p0), nil, false}},
		{"stable, one free one held: the free one granted, unreleased", member(Stable, 4, nil, nil), set(p1, p2), map[proto.TopicPartition]int32{p1: 3}, nil, true,
			want{UnreleasedPartitions, 5, 4, set(p2), nil, false}},
		{"unrevoked, still owning: no change", member(UnrevokedPartitions, 4, set(p0), set(p1)), set(p0), map[proto.TopicPartition]int32{p1: 4}, set(p0, p1), true,
			want{UnrevokedPartitions, 4, 3, set(p0), set(p1), false}},
		{"unrevoked, released: to the target", member(UnrevokedPartitions, 4, set(p0), set(p1)), set(p0), map[proto.TopicPartition]int32{p0: 4, p1: 4}, set(p0), true,
			want{Stable, 5, 4, set(p0), nil, false}},
		{"unrevoked, released, own revoked partition back in target is not unreleased", member(UnrevokedPartitions, 4, set(p0), set(p1)), set(p0, p1), map[proto.TopicPartition]int32{p0: 4, p1: 4}, set(p0), true,
			want{Stable, 5, 4, set(p0, p1), nil, false}},
		{"unreleased, partition released: granted", member(UnreleasedPartitions, 5, set(p0), nil), set(p0, p1), map[proto.TopicPartition]int32{p0: 5}, set(p0), true,
			want{Stable, 5, 5, set(p0, p1), nil, false}},
		{"unreleased, still held: no change but epoch", member(UnreleasedPartitions, 5, set(p0), nil), set(p0, p1), map[proto.TopicPartition]int32{p0: 5, p1: 4}, set(p0), true,
			want{UnreleasedPartitions, 5, 5, set(p0), nil, false}},
		{"unknown state owning partitions: fenced", member(UnknownState, 4, set(p0), nil), set(p0), nil, set(p0), true,
			want{UnknownState, 4, 3, set(p0), nil, true}},
		{"unknown state owning nothing: starts over at the target", member(UnknownState, 4, set(p0), nil), set(p0), nil, nil, true,
			want{Stable, 5, 4, set(p0), nil, false}},
	}
	for _, c := range cases {
		targetEpoch := int32(5)
		got, fenced := reconcile(c.m, reconciliation{targetEpoch: targetEpoch, target: c.target, held: c.held, owned: c.owned, ownedSent: c.sent})
		if fenced != c.want.fenced || got.State != c.want.state || got.MemberEpoch != c.want.epoch || got.PreviousMemberEpoch != c.want.prev ||
			!slices.Equal(got.Assigned, c.want.assigned) || !slices.Equal(got.PendingRevocation, c.want.pending) {
			t.Errorf("%s: got %v epoch %d/%d assigned %v pending %v fenced %v, want %+v", c.name, got.State, got.MemberEpoch,
				got.PreviousMemberEpoch, got.Assigned, got.PendingRevocation, fenced, c.want)
		}
	}
}

func TestCheckMemberEpoch(t *testing.T) {
	m := &Member{MemberID: "a", MemberEpoch: 5, PreviousMemberEpoch: 4, Assigned: []proto.TopicPartition{tp("t", 0), tp("t", 1)}}
	cases := []struct {
		name  string
		epoch int32
		owned []proto.TopicPartition
		sent  bool
		want  proto.ErrorCode
	}{
		{"current epoch", 5, nil, false, proto.None},
		{"greater epoch", 6, nil, true, proto.FencedMemberEpoch},
		{"previous epoch, owning a subset", 4, []proto.TopicPartition{tp("t", 1)}, true, proto.None},
		{"previous epoch, owning nothing", 4, []proto.TopicPartition{}, true, proto.None},
		{"previous epoch, owning more", 4, []proto.TopicPartition{tp("t", 2)}, true, proto.FencedMemberEpoch},
		{"previous epoch, owned not sent", 4, nil, false, proto.FencedMemberEpoch},
		{"older epoch", 3, []proto.TopicPartition{}, true, proto.FencedMemberEpoch},
	}
	for _, c := range cases {
		req := &proto.ConsumerGroupHeartbeatRequest{MemberEpoch: c.epoch, OwnedPartitions: c.owned, OwnedSent: c.sent}
		if got, _ := checkMemberEpoch(m, req); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestHeartbeatErrors(t *testing.T) {
	env := testEnv(topics{"t0": 2})
	if r := New("g").Heartbeat(env, hbReq("a", 1)).Response; r.Error != proto.GroupIDNotFound {
		t.Fatalf("heartbeat to no group: %v", r.Error)
	}
	g := New("g")
	apply(t, g, g.Heartbeat(env, joinReq("a", "t0")))
	if r := g.Heartbeat(env, hbReq("zz", 1)).Response; r.Error != proto.UnknownMemberID {
		t.Fatalf("unknown member: %v", r.Error)
	}
	// A lost response: a comes back with epoch 0... and is fenced, as
	// Kafka does when its previous epoch is not 0.
	apply(t, g, g.Heartbeat(env, joinReq("b", "t0")))
	apply(t, g, g.Heartbeat(env, hbReq("a", 1)))
	apply(t, g, g.Heartbeat(env, hbReq("a", 1, tp("t0", 0))))
	if m := g.Member("a"); m.MemberEpoch != 2 || m.PreviousMemberEpoch != 1 {
		t.Fatalf("a: %+v", m)
	}
	if r := g.Heartbeat(env, hbReq("a", 1, tp("t0", 0))).Response; r.Error != proto.None || r.MemberEpoch != 2 {
		t.Fatalf("previous epoch with a subset: %+v", r)
	}
	if r := g.Heartbeat(env, joinReq("a", "t0")).Response; r.Error != proto.FencedMemberEpoch {
		t.Fatalf("rejoin at epoch 0 over a live member: %v", r.Error)
	}
	env.Config.MaxSize = 2
	if r := g.Heartbeat(env, joinReq("c", "t0")).Response; r.Error != proto.GroupMaxSizeReached {
		t.Fatalf("third member of a group of at most 2: %v", r.Error)
	}
	if r := g.Heartbeat(env, hbReq("a", 2, tp("t0", 0))).Response; r.Error != proto.None {
		t.Fatalf("a member of a full group: %v", r.Error)
	}
}

func TestLeaveAndTimers(t *testing.T) {
	g, env := New("g"), testEnv(topics{"t0": 2})
	apply(t, g, g.Heartbeat(env, joinReq("a", "t0")))
	apply(t, g, g.Heartbeat(env, joinReq("b", "t0")))
	res := apply(t, g, g.Heartbeat(env, &proto.ConsumerGroupHeartbeatRequest{GroupID: "g", MemberID: "b", MemberEpoch: -1}))
	if got, want := recordTypes(res.Records), []int16{-8, -7, -5, 3}; !slices.Equal(got, want) {
		t.Fatalf("leave records %v, want %v", got, want)
	}
	if r := res.Response; r.Error != proto.None || r.MemberEpoch != -1 || r.MemberID != "b" || g.Member("b") != nil || g.GroupEpoch() != 3 || g.State() != StateAssigning {
		t.Fatalf("after leave: %+v epoch %d state %s", r, g.GroupEpoch(), g.State())
	}
	if !slices.Contains(res.Timers, Timer{Kind: SessionTimeout, MemberID: "b", Cancel: true}) {
		t.Fatalf("leave keeps the session timeout: %+v", res.Timers)
	}
	if r := g.Heartbeat(env, &proto.ConsumerGroupHeartbeatRequest{GroupID: "g", MemberID: "b", MemberEpoch: -1}).Response; r.Error != proto.UnknownMemberID {
		t.Fatalf("second leave: %v", r.Error)
	}
	// A rebalance timeout set for an epoch the member has left does
	// nothing; a session timeout fences.
	if res := g.OnTimer(env, Timer{Kind: RebalanceTimeout, MemberID: "a", MemberEpoch: 0}); len(res.Records) != 0 {
		t.Fatalf("stale rebalance timeout fenced: %v", recordTypes(res.Records))
	}
	if res := g.OnTimer(env, Timer{Kind: RebalanceTimeout, MemberID: "a", MemberEpoch: g.Member("a").MemberEpoch}); len(res.Records) == 0 {
		t.Fatal("rebalance timeout at the member's epoch did not fence")
	}
	res = apply(t, g, g.OnTimer(env, Timer{Kind: SessionTimeout, MemberID: "a"}))
	if g.Member("a") != nil || g.State() != StateEmpty || g.GroupEpoch() != 4 {
		t.Fatalf("session timeout: members %v epoch %d state %s", g.MemberIDs(), g.GroupEpoch(), g.State())
	}
	if res := g.OnTimer(env, Timer{Kind: SessionTimeout, MemberID: "a"}); len(res.Records) != 0 {
		t.Fatal("a session timeout of a member gone wrote records")
	}
}

func TestStaticMembership(t *testing.T) {
	g, env := New("g"), testEnv(topics{"t0": 2})
	static := func(r *proto.ConsumerGroupHeartbeatRequest) *proto.ConsumerGroupHeartbeatRequest {
		r.InstanceID = "i-1"
		return r
	}
	apply(t, g, g.Heartbeat(env, static(joinReq("a", "t0"))))
	apply(t, g, g.Heartbeat(env, joinReq("b", "t0")))
	apply(t, g, g.Heartbeat(env, static(hbReq("a", 1, tp("t0", 0), tp("t0", 1)))))
	apply(t, g, g.Heartbeat(env, static(hbReq("a", 1, tp("t0", 0)))))
	epoch := g.GroupEpoch()

	// Another process with the instance id while a is active.
	if r := g.Heartbeat(env, static(joinReq("c", "t0"))).Response; r.Error != proto.UnreleasedInstanceID {
		t.Fatalf("join over an active static member: %v", r.Error)
	}
	if r := g.Heartbeat(env, static(hbReq("c", 2))).Response; r.Error != proto.FencedInstanceID {
		t.Fatalf("heartbeat of another member id for the instance: %v", r.Error)
	}
	// a leaves for a while: kept at epoch -2 with its partitions, no bump.
	res := apply(t, g, g.Heartbeat(env, static(&proto.ConsumerGroupHeartbeatRequest{GroupID: "g", MemberID: "a", MemberEpoch: -2})))
	if got := recordTypes(res.Records); !slices.Equal(got, []int16{8}) || res.Response.MemberEpoch != -2 || len(res.Timers) != 0 {
		t.Fatalf("static leave: records %v response %+v timers %v", got, res.Response, res.Timers)
	}
	if a := g.Member("a"); a == nil || a.MemberEpoch != -2 || !slices.Equal(a.Assigned, []proto.TopicPartition{tp("t0", 0)}) || g.GroupEpoch() != epoch {
		t.Fatalf("a after static leave: %+v, group epoch %d", a, g.GroupEpoch())
	}
	// c takes the instance id: a's records go, c starts from a's
	// assignment, and the group epoch does not move.
	res = apply(t, g, g.Heartbeat(env, static(joinReq("c", "t0"))))
	if got, want := recordTypes(res.Records)[:6], []int16{-8, -7, -5, 5, 7, 8}; !slices.Equal(got, want) {
		t.Fatalf("replacement records %v, want %v first", recordTypes(res.Records), want)
	}
	if r := res.Response; r.Error != proto.None || r.MemberID != "c" || !slices.Equal(r.Assignment, []proto.TopicPartition{tp("t0", 0)}) || g.Member("a") != nil || g.GroupEpoch() != epoch {
		t.Fatalf("replacement: %+v, members %v, group epoch %d", r, g.MemberIDs(), g.GroupEpoch())
	}
	// The departed member's timers find nothing.
	if res := g.OnTimer(env, Timer{Kind: SessionTimeout, MemberID: "a"}); len(res.Records) != 0 {
		t.Fatal("a's session timeout fenced after its replacement")
	}
	if r := g.Heartbeat(env, &proto.ConsumerGroupHeartbeatRequest{GroupID: "g", MemberID: "zz", MemberEpoch: -2, InstanceID: "i-9"}).Response; r.Error != proto.UnknownMemberID {
		t.Fatalf("static leave of an unknown instance: %v", r.Error)
	}
}

func TestMetadataChangesBumpTheGroupEpoch(t *testing.T) {
	ts := topics{"t0": 1}
	g, env := New("g"), testEnv(ts)
	// Subscribing to a topic that does not exist yet: nothing to assign.
	res := apply(t, g, g.Heartbeat(env, joinReq("a", "t0", "later")))
	if !slices.Equal(res.Response.Assignment, []proto.TopicPartition{tp("t0", 0)}) {
		t.Fatalf("assignment %v", res.Response.Assignment)
	}
	res = apply(t, g, g.Heartbeat(env, hbReq("a", 1, tp("t0", 0))))
	if len(res.Records) != 0 {
		t.Fatalf("no change wrote %v", recordTypes(res.Records))
	}
	ts["later"] = 2
	res = apply(t, g, g.Heartbeat(env, hbReq("a", 1)))
	if g.GroupEpoch() != 2 || !slices.Equal(res.Response.Assignment, []proto.TopicPartition{tp("later", 0), tp("later", 1), tp("t0", 0)}) {
		t.Fatalf("topic created: epoch %d assignment %v", g.GroupEpoch(), res.Response.Assignment)
	}
	ts["t0"] = 2
	apply(t, g, g.Heartbeat(env, hbReq("a", 2)))
	if g.GroupEpoch() != 3 || !containsTP(g.Member("a").Assigned, tp("t0", 1)) {
		t.Fatalf("partitions added: epoch %d member %+v", g.GroupEpoch(), g.Member("a"))
	}
}

func TestServerAssignorChoice(t *testing.T) {
	env := testEnv(topics{"t0": 1})
	members := []*Member{{ServerAssignor: "range"}, {ServerAssignor: "range"}, {ServerAssignor: "uniform"}, {}}
	if got := preferredAssignor(members, env.Config.Assignors).Name(); got != "range" {
		t.Fatalf("most asked: %s", got)
	}
	if got := preferredAssignor([]*Member{{}}, env.Config.Assignors).Name(); got != "uniform" {
		t.Fatalf("default: %s", got)
	}
	if got := preferredAssignor([]*Member{{ServerAssignor: "uniform"}, {ServerAssignor: "range"}}, env.Config.Assignors).Name(); got != "range" {
		t.Fatalf("tie: %s", got)
	}
}
