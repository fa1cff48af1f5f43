package group

import (
	"testing"

	"kafkasim/model/proto"
)

// revertAuditor records the static member reverts a coordinator reports.
type revertAuditor struct {
	reverts [][3]string // instance id, reverted, restored
}

func (a *revertAuditor) GroupLoaded(int32, int32, int32, string, int32, map[string]string, map[string][]proto.TopicPartition) {
}
func (a *revertAuditor) GroupGenerationCommitted(int32, int32, int32, string, int32, int64) {}
func (a *revertAuditor) ConsumerMemberRemoved(int32, int32, int32, string, string, int32)   {}
func (a *revertAuditor) GroupOffsetCommitted(int32, int32, int32, string, string, int32, proto.TopicPartition, int64, int64) {
}
func (a *revertAuditor) StaticMemberReverted(_, _, _ int32, _, instanceID, reverted, restored string) {
	a.reverts = append(a.reverts, [3]string{instanceID, reverted, restored})
}

// A static member whose rejoin's write fails after a rebalance handed its
// new member id out in the next generation is fenced by the revert, as in
// Kafka (updateStaticMemberThenRebalanceOrCompleteJoin reverts whatever
// the group became; ClassicGroup.replaceStaticMember answers the new id's
// parked SyncGroup FENCED_INSTANCE_ID), and the coordinator tells the
// auditor, which the run's liveness verdict grounds the fence in.
func TestStaticRejoinRevertedAfterARebalanceFencesTheNewGeneration(t *testing.T) {
	f := loaded(t)
	rec := &revertAuditor{}
	f.C.cfg.Audit = rec
	ids, gen := stableGroup(t, f, 2, "instance-a", "instance-b")
	n := len(f.Sent)
	f.Request(101, joinReq("", "instance-a"))
	f.Request(102, &proto.LeaveGroupRequest{CorrelationID: next(), GroupID: "g",
		Members: []proto.LeaveGroupMember{{MemberID: ids[1], GroupInstanceID: "instance-b"}}})
	j := answer[*proto.JoinGroupResponse](t, f.To(101, n))
	if j.Error != proto.None || j.GenerationID != gen+1 || j.Leader != j.MemberID {
		t.Fatalf("the rebalance's answer to the rejoin: %+v", j)
	}
	n = len(f.Sent)
	sync := &proto.SyncGroupRequest{CorrelationID: next(), GroupID: "g", GenerationID: j.GenerationID, MemberID: j.MemberID,
		GroupInstanceID: "instance-a", Assignments: []proto.MemberAssignment{{MemberID: j.MemberID, Partitions: tps(0, 1)}}}
	if got := f.Request(101, sync); len(got) != 0 {
		t.Fatalf("the leader's SyncGroup is answered once its write commits: %+v", got)
	}
	if len(rec.reverts) != 0 {
		t.Fatalf("reverted before any write failed: %v", rec.reverts)
	}
	f.FailAppends(proto.RequestTimedOut)
	s := answer[*proto.SyncGroupResponse](t, f.To(101, n))
	if s.Error != proto.FencedInstanceID {
		t.Fatalf("the new generation's SyncGroup after the revert: %+v, want FENCED_INSTANCE_ID", s)
	}
	want := [3]string{"instance-a", j.MemberID, ids[0]}
	if len(rec.reverts) != 1 || rec.reverts[0] != want {
		t.Fatalf("audited reverts %v, want [%v]", rec.reverts, want)
	}
	g := f.C.shards[0].groups["g"]
	if g.staticMembers["instance-a"] != ids[0] {
		t.Errorf("instance-a is held under %s, want its old member id %s", g.staticMembers["instance-a"], ids[0])
	}
}
