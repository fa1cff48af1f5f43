package cluster

import (
	"fmt"
	"time"

	"kafkasim/model/audit"
	"kafkasim/model/reader"
	"kafkasim/sim"
)

// A classic static member fenced by its own coordinator's revert.
//
// A static member that rejoins a Stable group with a new member id gets
// its JoinGroup answer once the GroupMetadata record holding the new id
// commits. If that write fails (offsets.commit.timeout.ms passes with the
// followers not fetching, the leader resigns), Kafka puts the instance back
// under its old member id (GroupMetadataManager.updateStaticMemberThenRebalanceOrCompleteJoin,
// its appendFuture's failure branch, ClassicGroup.replaceStaticMember)
// without asking whether the group moved on meanwhile. It may have: a
// rebalance that completed while the write was pending (another member's
// session expiring) answered the parked JoinGroup with the new id in a new
// generation, and the member went on to SyncGroup or Heartbeat with it.
// The revert then fences it: replaceStaticMember answers its parked
// SyncGroup FENCED_INSTANCE_ID, and validateExistingMember answers
// whatever it sends next so, which Kafka's consumer takes as fatal
// (AbstractCoordinator.SyncGroupResponseHandler).

// revertedFence is what the god view grounds such a fence in: the
// coordinator that fenced the member had, at or before the fence and
// after the member was given its member id, put the member's
// group.instance.id back from that very member id to another.
func revertedFence(f reader.Fenced, coordinator int32, r audit.StaticRevert) bool {
	if f.JoinedAt < 0 || r.Coordinator.Broker != coordinator {
		return false
	}
	return r.InstanceID == f.InstanceID && r.Reverted == f.MemberID && r.Restored != f.MemberID &&
		f.JoinedAt <= r.At && r.At <= f.At
}

// fencedByRevert reports whether reader id, a classic member, stopped on
// FENCED_INSTANCE_ID that revertedFence explains, with what to say of it.
func (c *Cluster) fencedByRevert(id sim.NodeID, r *reader.Reader) (string, bool) {
	f, fenced := r.ClassicFenced()
	gid, b, ok := c.fenceGround(id, fenced, f)
	if !ok {
		return "", false
	}
	for _, rv := range c.Audit.StaticMemberReverts(gid) {
		if !revertedFence(f, b, rv) {
			continue
		}
		return fmt.Sprintf("%s stopped on %s: FENCED_INSTANCE_ID at %v, fatal in Kafka's consumer: %s gave it generation %d and member id %s at %v, "+
			"but at %v its coordinator %s put group %s's group.instance.id %s back under member id %s, the write that stored %s having failed; "+
			"Kafka reverts so whatever the group became meanwhile (GroupMetadataManager.updateStaticMemberThenRebalanceOrCompleteJoin, ClassicGroup.replaceStaticMember)",
			c.World.Name(id), f.API, time.Duration(f.At), c.World.Name(f.JoinedFrom), f.Generation, f.MemberID, time.Duration(f.JoinedAt),
			rv.At, rv.Coordinator, gid, f.InstanceID, rv.Restored, f.MemberID), true
	}
	return "", false
}
