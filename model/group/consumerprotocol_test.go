package group

import (
	"slices"
	"testing"
	"time"

	"kafkasim/model/group/consumergroup"
	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// dealer deals a group's partitions round robin over its members, sorted
// by id: enough to see the consumer protocol through the shard.
type dealer struct{}

func (dealer) Name() string { return "uniform" }

func (dealer) Assign(members []consumergroup.MemberSpec, counts map[string]int32) map[string][]proto.TopicPartition {
	out := map[string][]proto.TopicPartition{}
	for _, m := range members {
		out[m.MemberID] = nil
	}
	i := 0
	for p := int32(0); p < counts["orders"]; p++ {
		id := members[i%len(members)].MemberID
		out[id] = append(out[id], proto.TopicPartition{Topic: "orders", Partition: p})
		i++
	}
	return out
}

func consumerHeartbeat(member string, epoch int32, owned []proto.TopicPartition) *proto.ConsumerGroupHeartbeatRequest {
	req := &proto.ConsumerGroupHeartbeatRequest{CorrelationID: next(), GroupID: "g", MemberID: member, MemberEpoch: epoch,
		RebalanceTimeout: -1, OwnedPartitions: owned, OwnedSent: owned != nil}
	if epoch == 0 {
		req.SubscribedTopicNames, req.RebalanceTimeout, req.OwnedSent = []string{"orders"}, 30*time.Second, true
	}
	return req
}

// A consumer group through the shard: a join is answered once its records
// are committed; a second member's join moves a partition, granted only
// once the first member released it; commits are checked against member
// epochs (STALE_MEMBER_EPOCH, or accepted with no-generation-fencing); and
// a new coordinator loads the group from the log, its members' sessions
// running again.
func TestConsumerProtocolThroughTheShard(t *testing.T) {
	for _, noFencing := range []bool{false, true} {
		cfg := DefaultConfig()
		cfg.Consumer = NewConsumerProtocol(ConsumerProtocolConfig{SessionTimeout: 45 * time.Second, HeartbeatInterval: 5 * time.Second,
			Assignors: []consumergroup.Assignor{dealer{}}, NoGenerationFencing: noFencing})
		f := newFake(t, cfg)
		f.topicCounts = map[string]int32{"orders": 2}
		f.Lead(1)
		const c1, c2 = sim.NodeID(101), sim.NodeID(102)
		if got := f.Request(c1, consumerHeartbeat("m1", 0, nil)); len(got) != 0 {
			t.Fatalf("a join answered before its records committed: %+v", got)
		}
		n := len(f.Sent)
		f.Commit()
		r1 := answer[*proto.ConsumerGroupHeartbeatResponse](t, f.To(c1, n))
		if r1.Error != proto.None || r1.MemberID != "m1" || r1.MemberEpoch != 1 || len(r1.Assignment) != 2 {
			t.Fatalf("m1's join: %+v", r1)
		}
		f.Request(c2, consumerHeartbeat("m2", 0, nil))
		n = len(f.Sent)
		f.Commit()
		r2 := answer[*proto.ConsumerGroupHeartbeatResponse](t, f.To(c2, n))
		if r2.Error != proto.None || r2.MemberEpoch != 2 || len(r2.Assignment) != 0 {
			t.Fatalf("m2 must wait for m1 to release its partition: %+v", r2)
		}
		// m1 learns it must give orders-1 up, still at epoch 1.
		f.Request(c1, consumerHeartbeat("m1", 1, tps(0, 1)))
		n = len(f.Sent)
		f.Commit()
		if r := answer[*proto.ConsumerGroupHeartbeatResponse](t, f.To(c1, n)); !r.HasAssignment || len(r.Assignment) != 1 || r.MemberEpoch != 1 {
			t.Fatalf("m1 told to revoke: %+v", r)
		}
		// Its commit at epoch 1 is still current.
		commit := func(member string, epoch int32) proto.ErrorCode {
			n := len(f.Sent)
			f.Request(c1, commitReq(member, epoch, 7))
			f.Commit()
			if got := f.To(c1, n); len(got) > 0 {
				return got[0].(*proto.OffsetCommitResponse).Partitions[0].Error
			}
			return proto.None
		}
		if code := commit("m1", 1); code != proto.None {
			t.Fatalf("m1's commit at its current epoch: %v", code)
		}
		f.Request(c1, consumerHeartbeat("m1", 1, tps(0)))
		n = len(f.Sent)
		f.Commit()
		if r := answer[*proto.ConsumerGroupHeartbeatResponse](t, f.To(c1, n)); r.MemberEpoch != 2 {
			t.Fatalf("m1, having released orders-1, moves to epoch 2: %+v", r)
		}
		f.Request(c2, consumerHeartbeat("m2", 2, []proto.TopicPartition{}))
		n = len(f.Sent)
		f.Commit()
		if r := answer[*proto.ConsumerGroupHeartbeatResponse](t, f.To(c2, n)); len(r.Assignment) != 1 || r.Assignment[0].Partition != 1 {
			t.Fatalf("m2 gets orders-1 once m1 released it: %+v", r)
		}
		code := commit("m1", 1) // m1 moved on to epoch 2
		if want := proto.StaleMemberEpoch; noFencing {
			if code != proto.None {
				t.Fatalf("with no-generation-fencing a stale epoch's commit is accepted, got %v", code)
			}
		} else if code != want {
			t.Fatalf("a commit at a stale member epoch: %v, want %v", code, want)
		}
		// A new coordinator loads the group.
		tp := metadata.TopicPartition{Topic: Topic, Partition: 0}
		f.C.OnResign(tp, 2)
		f.C = newCoordinator(f.C.cfg, f)
		f.Lead(3)
		cg := f.C.shards[0].consumer.(*consumerGroups)
		d := cg.Describe()
		if len(d) != 1 || d[0].GroupEpoch != 2 || len(d[0].Members) != 2 {
			t.Fatalf("the loaded consumer group: %+v", d)
		}
		// m2 goes on heartbeating, m1 does not: m1's session ends.
		for range 10 {
			f.Advance(5 * time.Second)
			f.Request(c2, consumerHeartbeat("m2", 2, tps(1)))
			f.Commit()
		}
		if d := cg.Describe(); len(d) != 1 || len(d[0].Members) != 1 || d[0].Members[0].MemberID != "m2" {
			t.Fatalf("after m1's session timed out: %+v", d)
		}
	}
}

// loadAuditor records what each load told the auditor members own.
type loadAuditor struct {
	revertAuditor
	owned []map[string][]proto.TopicPartition
}

func (a *loadAuditor) GroupLoaded(_, _, _ int32, _ string, _ int32, _ map[string]string, owned map[string][]proto.TopicPartition) {
	a.owned = append(a.owned, owned)
}

// A load tells the auditor what each consumer-protocol member owns by the
// coordinator's account: its assigned partitions and those pending its
// revocation, which it still owns until it acknowledges releasing them
// (the audit's group-partition-single-owner takes a partition missing
// from both, after a __consumer_offsets loss, as a grant the coordinator
// forgot).
func TestConsumerProtocolLoadAuditsOwnedPartitions(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Consumer = NewConsumerProtocol(ConsumerProtocolConfig{SessionTimeout: 45 * time.Second, HeartbeatInterval: 5 * time.Second,
		Assignors: []consumergroup.Assignor{dealer{}}})
	rec := &loadAuditor{}
	cfg.Audit = rec
	f := newFake(t, cfg)
	f.topicCounts = map[string]int32{"orders": 2}
	f.Lead(1)
	const c1, c2 = sim.NodeID(101), sim.NodeID(102)
	f.Request(c1, consumerHeartbeat("m1", 0, nil))
	f.Commit()
	f.Request(c2, consumerHeartbeat("m2", 0, nil))
	f.Commit()
	// m1 is told to give orders-1 up; it has not acknowledged yet.
	n := len(f.Sent)
	f.Request(c1, consumerHeartbeat("m1", 1, tps(0, 1)))
	f.Commit()
	if r := answer[*proto.ConsumerGroupHeartbeatResponse](t, f.To(c1, n)); len(r.Assignment) != 1 {
		t.Fatalf("m1 told to revoke: %+v", r)
	}
	rec.owned = nil
	f.C.OnResign(metadata.TopicPartition{Topic: Topic, Partition: 0}, 2)
	f.C = newCoordinator(f.C.cfg, f)
	f.Lead(3)
	if len(rec.owned) != 1 {
		t.Fatalf("loads audited: %v, want one", rec.owned)
	}
	got := rec.owned[0]
	if len(got) != 2 || !slices.Equal(got["m1"], tps(0, 1)) || len(got["m2"]) != 0 {
		t.Fatalf("owned by the load's account: %v, want m1 [orders-0 orders-1] (orders-1 pending revocation), m2 none", got)
	}
}
