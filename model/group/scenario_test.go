package group

import (
	"fmt"
	"testing"
	"time"

	"kafkasim/model/broker"
	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

const (
	session   = 10 * time.Second
	rebalance = 30 * time.Second
)

var corr uint64

func next() uint64 { corr++; return corr }

func joinReq(member, instance string) *proto.JoinGroupRequest {
	return &proto.JoinGroupRequest{CorrelationID: next(), GroupID: "g", SessionTimeout: session, RebalanceTimeout: rebalance,
		MemberID: member, GroupInstanceID: instance, ClientID: "consumer", ProtocolType: "consumer",
		Protocols: []proto.JoinGroupProtocol{{Name: "range", Subscription: proto.ConsumerSubscription{Topics: []string{"orders"}}}}}
}

func tps(ps ...int32) []proto.TopicPartition {
	var out []proto.TopicPartition
	for _, p := range ps {
		out = append(out, proto.TopicPartition{Topic: "orders", Partition: p})
	}
	return out
}

func commitReq(member string, generation int32, offset int64) *proto.OffsetCommitRequest {
	return &proto.OffsetCommitRequest{CorrelationID: next(), GroupID: "g", GenerationIDOrMemberEpoch: generation, MemberID: member,
		Partitions: []proto.OffsetCommitPartition{{TopicPartition: tps(0)[0], CommittedOffset: offset, CommittedLeaderEpoch: 2}}}
}

func fetchReq(stable bool) *proto.OffsetFetchRequest {
	return &proto.OffsetFetchRequest{CorrelationID: next(), GroupID: "g", MemberEpoch: -1, RequireStable: stable}
}

// stableGroup joins clients 101.. (n of them) to group g and syncs them,
// the leader assigning partition i to the i-th member; it returns the
// member ids (the leader first) and the generation.
func stableGroup(t *testing.T, f *fakeTopics, n int, instances ...string) ([]string, int32) {
	t.Helper()
	ids := make([]string, n)
	starts := make([]int, n)
	for i := range n {
		inst := ""
		if i < len(instances) {
			inst = instances[i]
		}
		if inst == "" {
			r := answer[*proto.JoinGroupResponse](t, f.Request(sim.NodeID(101+i), joinReq("", "")))
			if r.Error != proto.MemberIDRequired || r.MemberID == "" {
				t.Fatalf("a new member's first JoinGroup: %+v, want MEMBER_ID_REQUIRED with an id", r)
			}
			ids[i] = r.MemberID
			starts[i] = len(f.Sent)
			if got := f.Request(sim.NodeID(101+i), joinReq(ids[i], "")); len(got) != 0 {
				t.Fatalf("a join is parked until the join phase ends, got %+v", got)
			}
		} else if starts[i] = len(f.Sent); len(f.Request(sim.NodeID(101+i), joinReq("", inst))) != 0 {
			t.Fatal("a static member's join is parked")
		}
	}
	f.Advance(2 * f.C.cfg.GroupInitialRebalanceDelay) // all joined at once: the delay is extended once
	var gen int32
	for i := range n {
		r := answer[*proto.JoinGroupResponse](t, f.To(sim.NodeID(101+i), starts[i]))
		if r.Error != proto.None {
			t.Fatalf("member %d's JoinGroup: %+v", i, r)
		}
		ids[i], gen = r.MemberID, r.GenerationID
	}
	g := f.C.shards[0].groups["g"]
	if g.state != stateCompletingRebalance || g.leader != ids[0] {
		t.Fatalf("after the join phase the group is %v led by %q, want CompletingRebalance led by %q", g.state, g.leader, ids[0])
	}
	n1 := len(f.Sent)
	var assignments []proto.MemberAssignment
	for i, id := range ids {
		assignments = append(assignments, proto.MemberAssignment{MemberID: id, Partitions: tps(int32(i))})
	}
	for i := n - 1; i >= 0; i-- { // the followers first: they wait
		req := &proto.SyncGroupRequest{CorrelationID: next(), GroupID: "g", GenerationID: gen, MemberID: ids[i], GroupInstanceID: g.members[ids[i]].instanceID}
		if i == 0 {
			req.Assignments = assignments
		}
		if got := f.Request(sim.NodeID(101+i), req); len(got) != 0 {
			t.Fatalf("SyncGroup answered before the assignment was stored: %+v", got)
		}
	}
	f.Commit()
	for i := range n {
		r := answer[*proto.SyncGroupResponse](t, f.To(sim.NodeID(101+i), n1))
		if r.Error != proto.None || len(r.Partitions) != 1 || r.Partitions[0].Partition != int32(i) {
			t.Fatalf("member %d's SyncGroup: %+v", i, r)
		}
	}
	if g.state != stateStable {
		t.Fatalf("the group is %v after the sync, want Stable", g.state)
	}
	return ids, gen
}

func loaded(t *testing.T) *fakeTopics {
	f := newFake(t, DefaultConfig())
	f.Lead(1)
	if s := f.C.shards[0]; s == nil || s.state != shardActive {
		t.Fatal("the shard of an empty log should be loaded at once")
	}
	return f
}

// FindCoordinator for a group: while __consumer_offsets does not exist the
// broker asks for it (compacted, the configured partitions and replication
// factor) and answers COORDINATOR_NOT_AVAILABLE; then the leader of the
// group's partition; COORDINATOR_NOT_AVAILABLE when it has none. A
// transactional id's FindCoordinator is not the group coordinator's.
func TestFindCoordinator(t *testing.T) {
	cfg := DefaultConfig()
	cfg.OffsetsTopicReplicationFactor = 2
	f := newFake(t, cfg)
	f.C.cfg = cfg // 50 partitions
	f.NumPartitions = 0
	find := &proto.FindCoordinatorRequest{CorrelationID: 1, KeyType: proto.CoordinatorKeyGroup, Key: "group"}
	r := answer[*proto.FindCoordinatorResponse](t, f.Request(7, find))
	if r.Error != proto.CoordinatorNotAvailable || r.Node != sim.NoNode || len(f.Created) != 1 {
		t.Fatalf("before the topic exists: %+v, %d creations", r, len(f.Created))
	}
	if c := f.Created[0]; c.Name != Topic || c.NumPartitions != 50 || c.ReplicationFactor != 2 || c.Configs["cleanup.policy"] != "compact" {
		t.Errorf("the topic asked for: %+v", c)
	}
	f.NumPartitions = 50
	f.Leaders = map[int32]sim.NodeID{47: 33} // "group" hashes to 47 of 50
	r = answer[*proto.FindCoordinatorResponse](t, f.Request(7, find))
	if r.Error != proto.None || r.Node != 33 || r.CorrelationID != 1 || r.Key != "group" {
		t.Fatalf("after: %+v, want node 33", r)
	}
	f.Leaders = map[int32]sim.NodeID{}
	if r := answer[*proto.FindCoordinatorResponse](t, f.Request(7, find)); r.Error != proto.CoordinatorNotAvailable {
		t.Errorf("a partition without a leader: %+v", r)
	}
	if f.C.Handles(&proto.FindCoordinatorRequest{KeyType: proto.CoordinatorKeyTransaction}) {
		t.Error("the group coordinator takes a transactional id's FindCoordinator")
	}
}

// Three members join: each is first told MEMBER_ID_REQUIRED; the first
// join of the empty group waits group.initial.rebalance.delay.ms, extended
// while members keep joining; the generation goes to 1, the first member
// leads and alone learns the members; the followers' SyncGroups wait for
// the leader's, whose assignment is written and answered once committed.
func TestClassicJoinWithTheInitialDelayAndSync(t *testing.T) {
	f := loaded(t)
	r := answer[*proto.JoinGroupResponse](t, f.Request(101, joinReq("", "")))
	if r.Error != proto.MemberIDRequired || len(r.MemberID) != len("consumer-")+22 {
		t.Fatalf("first join: %+v", r)
	}
	f.Request(101, joinReq(r.MemberID, ""))
	f.Advance(2 * time.Second)
	var ids = []string{r.MemberID}
	for _, c := range []sim.NodeID{102, 103} {
		r := answer[*proto.JoinGroupResponse](t, f.Request(c, joinReq("", "")))
		if r.Error != proto.MemberIDRequired {
			t.Fatalf("a new member: %+v", r)
		}
		ids = append(ids, r.MemberID)
	}
	n0 := len(f.Sent)
	for i, c := range []sim.NodeID{102, 103} {
		f.Request(c, joinReq(ids[i+1], ""))
	}
	f.Advance(time.Second + 2*time.Second) // 5 s: the delay was extended at 3 s
	if got := f.To(101, n0); len(got) != 0 {
		t.Fatalf("the join phase ended at %v, before the extended delay: %+v", f.Clock, got)
	}
	f.Advance(time.Second) // 6 s
	for i, c := range []sim.NodeID{101, 102, 103} {
		r := answer[*proto.JoinGroupResponse](t, f.To(c, n0))
		if r.Error != proto.None || r.GenerationID != 1 || r.Leader != ids[0] || r.ProtocolName != "range" || r.MemberID != ids[i] {
			t.Errorf("member %d: %+v", i, r)
		}
		if (i == 0) != (len(r.Members) == 3) {
			t.Errorf("member %d learned %d members; only the leader learns them", i, len(r.Members))
		}
	}
	g := f.C.shards[0].groups["g"]
	n1 := len(f.Sent)
	for i := 2; i >= 0; i-- {
		req := &proto.SyncGroupRequest{CorrelationID: next(), GroupID: "g", GenerationID: 1, MemberID: ids[i]}
		if i == 0 {
			req.Assignments = []proto.MemberAssignment{{MemberID: ids[0], Partitions: tps(0)}, {MemberID: ids[1], Partitions: tps(1, 2)}}
		}
		if got := f.Request(sim.NodeID(101+i), req); len(got) != 0 {
			t.Fatalf("a SyncGroup answered before the assignment is committed: %+v", got)
		}
	}
	if len(f.Log(0).Batches) != 1 || g.state != stateCompletingRebalance {
		t.Fatalf("the leader's SyncGroup should write the group's metadata: %d batches, %v", len(f.Log(0).Batches), g.state)
	}
	f.Commit()
	want := [][]proto.TopicPartition{tps(0), tps(1, 2), nil}
	for i := range 3 {
		r := answer[*proto.SyncGroupResponse](t, f.To(sim.NodeID(101+i), n1))
		if r.Error != proto.None || len(r.Partitions) != len(want[i]) {
			t.Errorf("member %d's assignment: %+v, want %v", i, r, want[i])
		}
	}
	if g.state != stateStable {
		t.Errorf("the group is %v, want Stable", g.state)
	}
	// A stale or unknown SyncGroup.
	if r := answer[*proto.SyncGroupResponse](t, f.Request(101, &proto.SyncGroupRequest{GroupID: "g", GenerationID: 0, MemberID: ids[0]})); r.Error != proto.IllegalGeneration {
		t.Errorf("a stale SyncGroup: %v", r.Error)
	}
	if r := answer[*proto.SyncGroupResponse](t, f.Request(101, &proto.SyncGroupRequest{GroupID: "g", GenerationID: 1, MemberID: "x"})); r.Error != proto.UnknownMemberID {
		t.Errorf("an unknown member's SyncGroup: %v", r.Error)
	}
	// Session timeouts out of bounds.
	bad := joinReq("", "")
	bad.SessionTimeout = time.Second
	if r := answer[*proto.JoinGroupResponse](t, f.Request(104, bad)); r.Error != proto.InvalidSessionTimeout {
		t.Errorf("a 1 s session: %v", r.Error)
	}
}

func heartbeatAll(t *testing.T, f *fakeTopics, ids []string, gen int32, want proto.ErrorCode) {
	t.Helper()
	for i, id := range ids {
		r := answer[*proto.HeartbeatResponse](t, f.Request(sim.NodeID(101+i), &proto.HeartbeatRequest{CorrelationID: next(), GroupID: "g", GenerationID: gen, MemberID: id}))
		if r.Error != want {
			t.Fatalf("member %d's heartbeat: %v, want %v", i, r.Error, want)
		}
	}
}

// Heartbeats keep the members; a member that stops heartbeating is removed
// after its session timeout and the group rebalances: the others hear
// REBALANCE_IN_PROGRESS, rejoin, and get generation 2. A commit from
// generation 1 is then ILLEGAL_GENERATION (accepted with the bug
// no-generation-fencing), and one from an unknown member UNKNOWN_MEMBER_ID.
func TestSessionExpiryRebalancesAndFencesStaleCommits(t *testing.T) {
	for _, bug := range []bool{false, true} {
		cfg := DefaultConfig()
		cfg.Bugs.NoGenerationFencing = bug
		f := newFake(t, cfg)
		f.Lead(1)
		ids, gen := stableGroup(t, f, 3)
		for range 10 {
			f.Advance(3 * time.Second)
			heartbeatAll(t, f, ids, gen, proto.None)
		}
		g := f.C.shards[0].groups["g"]
		if g.state != stateStable || len(g.members) != 3 {
			t.Fatalf("heartbeating members are kept: %v with %d", g.state, len(g.members))
		}
		f.Advance(3 * time.Second)
		heartbeatAll(t, f, ids[:2], gen, proto.None)
		f.Advance(8 * time.Second) // member 3 is 11 s silent
		if len(g.members) != 2 || g.state != statePreparingRebalance {
			t.Fatalf("member 3's session expired: %d members, %v", len(g.members), g.state)
		}
		heartbeatAll(t, f, ids[:2], gen, proto.RebalanceInProgress)
		n := len(f.Sent)
		f.Request(101, joinReq(ids[0], ""))
		f.Request(102, joinReq(ids[1], ""))
		for i := range 2 {
			r := answer[*proto.JoinGroupResponse](t, f.To(sim.NodeID(101+i), n))
			if r.GenerationID != gen+1 || r.Error != proto.None {
				t.Fatalf("the rejoin: %+v, want generation %d", r, gen+1)
			}
		}
		// Generation 2 is CompletingRebalance: its own members' commits wait
		// for their assignment.
		if !bug {
			if r := answer[*proto.OffsetCommitResponse](t, f.Request(101, commitReq(ids[0], gen+1, 5))); r.Partitions[0].Error != proto.RebalanceInProgress {
				t.Errorf("a commit before the assignment: %v", r.Partitions[0].Error)
			}
		}
		f.Commit()
		stale := f.Request(101, commitReq(ids[0], gen, 7))
		unknown := f.Request(103, commitReq(ids[2], gen+1, 8))
		if !bug {
			if r := answer[*proto.OffsetCommitResponse](t, stale); r.Partitions[0].Error != proto.IllegalGeneration {
				t.Errorf("a stale generation's commit: %v", r.Partitions[0].Error)
			}
			if r := answer[*proto.OffsetCommitResponse](t, unknown); r.Partitions[0].Error != proto.UnknownMemberID {
				t.Errorf("an unknown member's commit: %v", r.Partitions[0].Error)
			}
			continue
		}
		if len(stale) != 0 || len(unknown) != 0 {
			t.Fatalf("with no-generation-fencing the commits are written and wait: %+v %+v", stale, unknown)
		}
		n = len(f.Sent)
		f.Commit()
		if r := answer[*proto.OffsetCommitResponse](t, f.To(101, n)); r.Partitions[0].Error != proto.None {
			t.Errorf("with no-generation-fencing a stale commit: %v", r.Partitions[0].Error)
		}
		if r := answer[*proto.OffsetFetchResponse](t, f.Request(9, fetchReq(false))); r.Partitions[0].CommittedOffset != 8 {
			t.Errorf("with no-generation-fencing the unknown member's commit is stored: %+v", r)
		}
	}
}

// A commit is answered once the high watermark passes it; meanwhile an
// OffsetFetch sees the committed state only, and one with RequireStable
// sees the latest but is answered once it is committed. An append refused
// at once takes its offsets back (NOT_LEADER_OR_FOLLOWER is
// NOT_COORDINATOR to the client); a write that times out is
// COORDINATOR_NOT_AVAILABLE and stays in the log, uncommitted.
func TestCommitsAnswerOnceCommittedAndFetchReadsCommittedState(t *testing.T) {
	f := loaded(t)
	simple := func(offset int64) *proto.OffsetCommitRequest { return commitReq("", -1, offset) }
	if got := f.Request(5, simple(10)); len(got) != 0 {
		t.Fatalf("a commit answered before the high watermark passed it: %+v", got)
	}
	if r := answer[*proto.OffsetFetchResponse](t, f.Request(9, fetchReq(false))); len(r.Partitions) != 0 {
		t.Fatalf("an uncommitted offset is visible: %+v", r)
	}
	n := len(f.Sent)
	f.Commit()
	if r := answer[*proto.OffsetCommitResponse](t, f.To(5, n)); r.Partitions[0].Error != proto.None {
		t.Fatalf("the commit: %+v", r)
	}
	f.Request(5, simple(20))
	r := answer[*proto.OffsetFetchResponse](t, f.Request(9, fetchReq(false)))
	if len(r.Partitions) != 1 || r.Partitions[0].CommittedOffset != 10 || r.Partitions[0].CommittedLeaderEpoch != 2 {
		t.Fatalf("the committed state: %+v, want 10", r)
	}
	if got := f.Request(9, fetchReq(true)); len(got) != 0 {
		t.Fatalf("a RequireStable fetch answered before the pending commit: %+v", got)
	}
	n = len(f.Sent)
	f.Commit()
	if r := answer[*proto.OffsetFetchResponse](t, f.To(9, n)); r.Partitions[0].CommittedOffset != 20 {
		t.Fatalf("the stable fetch: %+v, want 20", r)
	}
	// Refused at once: reverted.
	f.AppendErr = proto.NotLeaderOrFollower
	if r := answer[*proto.OffsetCommitResponse](t, f.Request(5, simple(30))); r.Partitions[0].Error != proto.NotCoordinator {
		t.Fatalf("a refused append: %+v", r)
	}
	f.AppendErr = proto.None
	if got := f.C.shards[0].offsets[offsetKey{"g", "orders", 0}]; got.Offset != 20 {
		t.Fatalf("the refused commit's offset stayed: %d", got.Offset)
	}
	// Timed out: not reverted, not visible until committed.
	f.Request(5, simple(40))
	n = len(f.Sent)
	f.FailAppends(proto.RequestTimedOut)
	if r := answer[*proto.OffsetCommitResponse](t, f.To(5, n)); r.Partitions[0].Error != proto.CoordinatorNotAvailable {
		t.Fatalf("a timed-out commit: %+v", r)
	}
	if r := answer[*proto.OffsetFetchResponse](t, f.Request(9, fetchReq(false))); r.Partitions[0].CommittedOffset != 20 {
		t.Fatalf("a timed-out commit is visible: %+v", r)
	}
	f.Request(5, simple(50))
	f.Commit()
	if r := answer[*proto.OffsetFetchResponse](t, f.Request(9, fetchReq(false))); r.Partitions[0].CommittedOffset != 50 {
		t.Fatalf("after a later commit: %+v", r)
	}
	// Partitions asked for that have nothing are -1.
	req := fetchReq(false)
	req.Partitions = tps(0, 3)
	if r := answer[*proto.OffsetFetchResponse](t, f.Request(9, req)); len(r.Partitions) != 2 || r.Partitions[1].CommittedOffset != -1 {
		t.Fatalf("a partition without an offset: %+v", r)
	}
}

// Resigning drops the shard (NOT_COORDINATOR; parked SyncGroups answered
// NOT_COORDINATOR); leading again loads it from the log in chunks
// (COORDINATOR_LOAD_IN_PROGRESS until done): the committed offsets and the
// Stable group come back, and every member's session timer restarts.
func TestResignAndLoad(t *testing.T) {
	f := loaded(t)
	ids, gen := stableGroup(t, f, 3)
	f.Request(101, commitReq(ids[0], gen, 42))
	f.Commit()
	tp := metadata.TopicPartition{Topic: Topic, Partition: 0}
	f.C.OnResign(tp, 2)
	if r := answer[*proto.HeartbeatResponse](t, f.Request(101, &proto.HeartbeatRequest{GroupID: "g", GenerationID: gen, MemberID: ids[0]})); r.Error != proto.NotCoordinator {
		t.Fatalf("after resigning: %v", r.Error)
	}
	// Another broker start leads it in epoch 3 (a new coordinator, the
	// same log).
	f.C = newCoordinator(f.C.cfg, f)
	f.Log(0).Epoch = 3
	f.C.OnBecomeLeader(tp, 3)
	if r := answer[*proto.OffsetFetchResponse](t, f.Request(9, fetchReq(false))); r.Error != proto.CoordinatorLoadInProgress {
		t.Fatalf("while loading: %+v", r)
	}
	// Three batches, two a read: a chunk per event.
	f.Advance(0)
	if s := f.C.shards[0]; s.state != shardActive || s.loadFrom != f.Log(0).LEO {
		t.Fatalf("the load: %v at %d of %d", s.state, s.loadFrom, f.Log(0).LEO)
	}
	r := answer[*proto.OffsetFetchResponse](t, f.Request(9, fetchReq(false)))
	if len(r.Partitions) != 1 || r.Partitions[0].CommittedOffset != 42 {
		t.Fatalf("the loaded offsets: %+v", r)
	}
	g := f.C.shards[0].groups["g"]
	if g.state != stateStable || g.generation != gen || g.leader != ids[0] || len(g.members) != 3 || len(g.members[ids[1]].assignment) != 1 {
		t.Fatalf("the loaded group: %v generation %d leader %q, %d members", g.state, g.generation, g.leader, len(g.members))
	}
	heartbeatAll(t, f, ids, gen, proto.None)
	f.Advance(5 * time.Second)
	heartbeatAll(t, f, ids[:2], gen, proto.None)
	f.Advance(6 * time.Second)
	if len(g.members) != 2 || g.state != statePreparingRebalance {
		t.Fatalf("a loaded member that does not heartbeat expires: %d members, %v", len(g.members), g.state)
	}
}

// A static member that rejoins with a new member id replaces its old one
// (fenced: FENCED_INSTANCE_ID) and, the group Stable and its protocol the
// same, gets its old assignment back without a rebalance, once the group's
// metadata with its new id is committed.
func TestStaticMemberRejoinsWithoutARebalance(t *testing.T) {
	f := loaded(t)
	ids, gen := stableGroup(t, f, 2, "", "instance-b")
	if got := f.Request(102, joinReq("", "instance-b")); len(got) != 0 {
		t.Fatalf("the rejoin is answered once its metadata is committed: %+v", got)
	}
	n := len(f.Sent)
	f.Commit()
	r := answer[*proto.JoinGroupResponse](t, f.To(102, n))
	if r.Error != proto.None || r.GenerationID != gen || r.MemberID == ids[1] || r.SkipAssignment {
		t.Fatalf("the static rejoin: %+v", r)
	}
	g := f.C.shards[0].groups["g"]
	if g.state != stateStable || g.generation != gen {
		t.Fatalf("the group rebalanced: %v generation %d", g.state, g.generation)
	}
	hb := &proto.HeartbeatRequest{GroupID: "g", GenerationID: gen, MemberID: ids[1], GroupInstanceID: "instance-b"}
	if r := answer[*proto.HeartbeatResponse](t, f.Request(102, hb)); r.Error != proto.FencedInstanceID {
		t.Errorf("the old member id: %v, want FENCED_INSTANCE_ID", r.Error)
	}
	s := answer[*proto.SyncGroupResponse](t, f.Request(102, &proto.SyncGroupRequest{GroupID: "g", GenerationID: gen, MemberID: r.MemberID, GroupInstanceID: "instance-b"}))
	if s.Error != proto.None || len(s.Partitions) != 1 || s.Partitions[0].Partition != 1 {
		t.Errorf("the static member's assignment: %+v, want its old one", s)
	}
	// Leaving does rebalance.
	lr := answer[*proto.LeaveGroupResponse](t, f.Request(102, &proto.LeaveGroupRequest{GroupID: "g", Members: []proto.LeaveGroupMember{{MemberID: r.MemberID, GroupInstanceID: "instance-b"}}}))
	if lr.Error != proto.None || len(lr.Members) != 1 || lr.Members[0].Error != proto.None || g.state != statePreparingRebalance {
		t.Errorf("a static member's LeaveGroup: %+v, the group %v", lr, g.state)
	}
}

// The log after compaction (the newest value of each key, and a
// tombstone's key gone) loads into the same state as the whole log.
func TestReplayAfterCompaction(t *testing.T) {
	f := loaded(t)
	ids, gen := stableGroup(t, f, 2)
	for i := range 5 {
		f.Request(101, commitReq(ids[0], gen, int64(10*i)))
	}
	f.Request(5, &proto.OffsetCommitRequest{GroupID: "other", GenerationIDOrMemberEpoch: -1,
		Partitions: []proto.OffsetCommitPartition{{TopicPartition: tps(3)[0], CommittedOffset: 9}}})
	f.Commit()
	// An offset deleted (as offset expiry or DeleteGroups would).
	f.C.shards[0].write([]shardRecord{{Key: encodeOffsetKey(offsetKey{"other", "orders", 3}), Tombstone: true}}, true, func(proto.ErrorCode) {})
	f.Commit()
	whole := snapshot(f.C.shards[0])

	l := f.Log(0)
	latest := map[string]int64{}
	for _, b := range l.Batches {
		b.EachRecord(func(_ int, off int64, key []byte, _ bool, _ []byte) { latest[string(key)] = off })
	}
	var compacted = l.Batches[:0:0]
	for _, b := range l.Batches {
		c := b.Compacted(func(off int64, key []byte, _ bool) bool { return latest[string(key)] == off })
		if c != nil {
			compacted = append(compacted, c)
		}
	}
	if len(compacted) >= len(l.Batches) {
		t.Fatalf("compaction removed nothing: %d batches", len(compacted))
	}
	l.Batches = compacted
	f.C = newCoordinator(f.C.cfg, f)
	f.Lead(2)
	if got := snapshot(f.C.shards[0]); got != whole {
		t.Fatalf("after compaction the load gives\n%s\nwant\n%s", got, whole)
	}
}

// snapshot prints a shard's offsets and groups.
func snapshot(s *shard) string {
	out := ""
	for _, g := range s.sortedGroups() {
		if g.state == stateEmpty && g.generation == 0 && len(s.latestKeys(g.id)) == 0 {
			continue // a simple group with nothing: nothing, as Kafka's cleanup would find it
		}
		out += fmt.Sprintf("%s %v gen %d leader %s:", g.id, g.state, g.generation, g.leader)
		for _, m := range g.allMembers() {
			out += " " + m.id
		}
		for _, k := range s.latestKeys(g.id) {
			out += fmt.Sprintf(" %s/%d=%d", k.Topic, k.Partition, s.offsets[k].Offset)
		}
		out += "\n"
	}
	return out
}

// A static member's rejoin is answered once, as Kafka's response future
// completes once: when a rebalance (here another member leaving) answers
// the parked JoinGroup with the next generation before the write of the
// rejoin's metadata fails, the failure reverts the member id but sends no
// second JoinGroupResponse (updateStaticMemberThenRebalanceOrCompleteJoin's
// responseFuture.complete is a no-op on a completed future).
func TestStaticRejoinIsAnsweredOnceWhenItsWriteFailsAfterARebalance(t *testing.T) {
	f := loaded(t)
	ids, gen := stableGroup(t, f, 2, "instance-a", "instance-b")
	n := len(f.Sent)
	if got := f.Request(101, joinReq("", "instance-a")); len(got) != 0 {
		t.Fatalf("the rejoin is answered once its metadata is committed: %+v", got)
	}
	// Its answer waits for the pending write, as any operation's.
	f.Request(102, &proto.LeaveGroupRequest{CorrelationID: next(), GroupID: "g",
		Members: []proto.LeaveGroupMember{{MemberID: ids[1], GroupInstanceID: "instance-b"}}})
	r := answer[*proto.JoinGroupResponse](t, f.To(101, n))
	if r.Error != proto.None || r.GenerationID != gen+1 || r.MemberID == ids[0] {
		t.Fatalf("the rebalance's answer to the rejoin: %+v", r)
	}
	f.FailAppends(proto.RequestTimedOut)
	if got := f.To(101, n); len(got) != 1 {
		t.Fatalf("one JoinGroup, %d answers: %+v", len(got), got)
	}
}

// newLeaderWithCommitAboveItsHighWatermark: a commit of 10 is committed
// and one of 20 written but not yet committed when the coordinator resigns;
// a new one, leader in epoch 3, loads the log.
func newLeaderWithCommitAboveItsHighWatermark(t *testing.T) *fakeTopics {
	t.Helper()
	f := loaded(t)
	f.Request(5, commitReq("", -1, 10))
	f.Commit()
	f.Request(5, commitReq("", -1, 20)) // in the log, not yet committed
	tp := metadata.TopicPartition{Topic: Topic, Partition: 0}
	f.C.OnResign(tp, 3)
	f.C = newCoordinator(f.C.cfg, f)
	f.Lead(3)
	return f
}

// A new leader loads commits its log holds above its high watermark as
// uncommitted (the previous leader answered them once its followers had
// them, this broker's high watermark not yet raised). Once the high
// watermark passes them they are committed — whether or not the
// coordinator writes again: Kafka's CoordinatorRuntime hears the advance
// from the partition (HighWatermarkListener). A member that committed its
// last offsets and has nothing more to commit sees them.
func TestLoadedCommitsAboveTheHighWatermarkBecomeVisibleWhenItPasses(t *testing.T) {
	f := newLeaderWithCommitAboveItsHighWatermark(t)
	tp := metadata.TopicPartition{Topic: Topic, Partition: 0}
	if r := answer[*proto.OffsetFetchResponse](t, f.Request(9, fetchReq(false))); len(r.Partitions) != 1 || r.Partitions[0].CommittedOffset != 10 {
		t.Fatalf("after the load: %+v, want 10 (20 lies above the high watermark)", r)
	}
	l := f.Log(0)
	l.HW = l.LEO
	var hl broker.HighWatermarkListener = f.C
	hl.OnHighWatermark(tp, 2, l.HW) // of an older leader epoch: not this shard's
	if r := answer[*proto.OffsetFetchResponse](t, f.Request(9, fetchReq(false))); r.Partitions[0].CommittedOffset != 10 {
		t.Fatalf("after another epoch's high watermark: %+v, want 10", r)
	}
	hl.OnHighWatermark(tp, 3, l.HW)
	if r := answer[*proto.OffsetFetchResponse](t, f.Request(9, fetchReq(false))); r.Partitions[0].CommittedOffset != 20 {
		t.Fatalf("after the high watermark passed the loaded commit: %+v, want 20", r)
	}
}

// A consumer's OffsetFetch (RequireStable, as every Kafka 4 consumer sends
// it) on a new leader whose log holds a commit above its high watermark
// reads the latest state, and is answered only once the high watermark
// passes that commit (CoordinatorRuntime.waitForPendingWrites waits for
// the last written offset, which after a load is the log end): answered at
// once it would hand out an offset no replica but this one may keep; read
// from the committed view it would hand out the commit before, which the
// previous leader acknowledged as overwritten. Without the advance it
// fails at offsets.commit.timeout.ms with NOT_COORDINATOR
// (handleOffsetFetchException).
func TestStableFetchOnANewLeaderWaitsForTheLoadedCommitsAboveTheHighWatermark(t *testing.T) {
	f := newLeaderWithCommitAboveItsHighWatermark(t)
	tp := metadata.TopicPartition{Topic: Topic, Partition: 0}
	n := len(f.Sent)
	if got := f.Request(9, fetchReq(true)); len(got) != 0 {
		t.Fatalf("a stable fetch answered before the loaded commit above the high watermark is committed: %+v", got)
	}
	f.Advance(f.C.cfg.OffsetsCommitTimeout - time.Millisecond)
	if got := f.To(9, n); len(got) != 0 {
		t.Fatalf("answered before the write timeout: %+v", got)
	}
	f.Advance(time.Millisecond)
	if r := answer[*proto.OffsetFetchResponse](t, f.To(9, n)); r.Error != proto.NotCoordinator {
		t.Fatalf("a stable fetch whose wait timed out: %+v, want NOT_COORDINATOR", r)
	}
	n = len(f.Sent)
	f.Request(9, fetchReq(true))
	l := f.Log(0)
	l.HW = l.LEO
	f.C.OnHighWatermark(tp, 3, l.HW)
	if r := answer[*proto.OffsetFetchResponse](t, f.To(9, n)); r.Error != proto.None || len(r.Partitions) != 1 || r.Partitions[0].CommittedOffset != 20 {
		t.Fatalf("once the high watermark passed the loaded commit: %+v, want 20", r)
	}
	f.Advance(f.C.cfg.OffsetsCommitTimeout)
	if got := f.To(9, n); len(got) != 1 {
		t.Fatalf("the answered fetch's timeout must not answer it again: %+v", got)
	}
}

// A write that timed out stays in the log: a stable fetch after it waits
// for it to be committed (Kafka's lastWrittenOffset keeps it), and a
// resignation meanwhile answers NOT_COORDINATOR.
func TestStableFetchWaitsForAWriteThatTimedOut(t *testing.T) {
	f := loaded(t)
	f.Request(5, commitReq("", -1, 10))
	f.Commit()
	f.Request(5, commitReq("", -1, 20))
	f.FailAppends(proto.RequestTimedOut)
	n := len(f.Sent)
	if got := f.Request(9, fetchReq(true)); len(got) != 0 {
		t.Fatalf("a stable fetch answered before the timed-out write is committed: %+v", got)
	}
	f.Commit()
	f.C.OnHighWatermark(metadata.TopicPartition{Topic: Topic, Partition: 0}, 1, f.Log(0).HW)
	if r := answer[*proto.OffsetFetchResponse](t, f.To(9, n)); r.Partitions[0].CommittedOffset != 20 {
		t.Fatalf("the stable fetch once the timed-out write is committed: %+v, want 20", r)
	}
	f.Request(5, commitReq("", -1, 30))
	f.FailAppends(proto.RequestTimedOut)
	n = len(f.Sent)
	f.Request(9, fetchReq(true))
	f.C.OnResign(metadata.TopicPartition{Topic: Topic, Partition: 0}, 2)
	if r := answer[*proto.OffsetFetchResponse](t, f.To(9, n)); r.Error != proto.NotCoordinator {
		t.Fatalf("a stable fetch when the shard unloads: %+v, want NOT_COORDINATOR", r)
	}
}
