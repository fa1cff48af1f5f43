package cluster

import (
	"fmt"
	"time"

	"kafkasim/godview"
	"kafkasim/model/audit"
	"kafkasim/model/reader"
	"kafkasim/sim"
)

// A classic static member fenced for good after its coordinator rolled its
// group back.
//
// A classic coordinator knows a static member's member id from its group's
// GroupMetadata record. A static member that rejoins with a new member id
// while its group is rebalancing gets the id in its JoinGroup answer, but
// Kafka writes it only with the GroupMetadata record of the leader's
// SyncGroup (GroupMetadataManager.updateStaticMemberThenRebalanceOrCompleteJoin
// writes at once only in a Stable group); and a record written may still be
// lost (a power loss before the flush, an unclean election). A coordinator
// that then loads the group (GroupCoordinatorShard.replay) holds the
// instance id under an older member id, and answers the member's next
// JoinGroup, SyncGroup, Heartbeat or OffsetCommit FENCED_INSTANCE_ID
// (validateExistingMember, ClassicGroup.validateMember), which Kafka's
// consumer takes as fatal: the member stops, and with it the group it
// alone held up.

// rolledBackFence is what the god view grounds such a fence in: the
// coordinator that fenced the member had last loaded the group with the
// member's group.instance.id under another member id, and the member's
// last JoinGroup answer (its member id) is not one that load could hold:
// the load came after it, or another broker's coordinator gave it (a
// deposed one that had not yet heard it was, answering a join phase, which
// Kafka completes without a write).
func rolledBackFence(f reader.Fenced, load audit.GroupLoad, loaded bool) bool {
	if !loaded || f.JoinedAt < 0 || load.At > f.At {
		return false
	}
	held, ok := load.StaticMembers[f.InstanceID]
	if !ok || held == f.MemberID {
		return false
	}
	return f.JoinedAt < load.At || f.JoinedFrom != f.Coordinator
}

// A consumer-protocol static member fenced for good after its group's
// records were lost.
//
// A KIP-848 static member that rejoins (a restarted process, at member
// epoch 0 with a new member id) takes its instance id over from the member
// that left with epoch -2: GroupMetadataManager.replaceMember writes the
// new member id's records, and the coordinator answers only once they are
// committed (CoordinatorRuntime completes a write when the high watermark
// passes it). When the god view then saw committed records of the group's
// __consumer_offsets partition lost (every in-sync copy lost power before
// the flush policy wrote it, or an unclean election), a coordinator that
// loads the group holds the instance id under the member id before the
// replacement. The member's next heartbeat, at its epoch, is answered
// FENCED_INSTANCE_ID (getOrMaybeSubscribeStaticConsumerGroupMember,
// throwIfInstanceIdIsFenced), which ConsumerHeartbeatRequestManager.
// handleSpecificError takes as fatal: the member stops, and only a new
// consumer brings the instance id back.

// consumerRolledBackFence is the loss that grounds such a fence: the
// coordinator that fenced the member had last loaded the group with the
// member's group.instance.id under another member id, after the member
// joined (its join's records committed), and the god view saw committed
// records of the group's partition lost after the join and no later than
// the load. A load before the join, or no loss in between, is not a
// rollback: the coordinator's own state fenced the member.
func consumerRolledBackFence(f reader.Fenced, load audit.GroupLoad, loaded bool, losses []godview.Fact, partition string) (godview.Fact, bool) {
	if !loaded || f.JoinedAt < 0 || load.At > f.At || load.At <= f.JoinedAt {
		return godview.Fact{}, false
	}
	held, ok := load.StaticMembers[f.InstanceID]
	if !ok || held == f.MemberID {
		return godview.Fact{}, false
	}
	for _, fact := range losses {
		if fact.Kind == godview.Loss && fact.Partition == partition && int64(f.JoinedAt) < fact.At && fact.At <= int64(load.At) {
			return fact, true
		}
	}
	return godview.Fact{}, false
}

// consumerFencedByRollback reports whether reader id, a consumer-protocol
// member, stopped on FENCED_INSTANCE_ID that consumerRolledBackFence
// explains, with what to say of it.
func (c *Cluster) consumerFencedByRollback(id sim.NodeID, r *reader.Reader) (string, bool) {
	f, fenced := r.ConsumerFenced()
	gid, b, ok := c.fenceGround(id, fenced, f)
	if !ok {
		return "", false
	}
	load, loaded := c.Audit.LastGroupLoad(gid, b, f.At)
	partition := c.groupOffsetsPartition(gid).String()
	fact, ok := consumerRolledBackFence(f, load, loaded, c.Audit.Facts(), partition)
	if !ok {
		return "", false
	}
	cause := lossCause(fact)
	return fmt.Sprintf("%s stopped on %s: FENCED_INSTANCE_ID at %v, fatal in Kafka's consumer: it joined as member %s at %v (%s answered once its records were committed), "+
		"but %s offsets %d..%d were lost at %v (%s), and its coordinator %s loaded group %s at %v at group epoch %d with its group.instance.id %s under member id %s, "+
		"so its heartbeat at member epoch %d was fenced (throwIfInstanceIdIsFenced)",
		c.World.Name(id), f.API, time.Duration(f.At), f.MemberID, time.Duration(f.JoinedAt), c.World.Name(f.JoinedFrom),
		partition, fact.From, fact.To-1, time.Duration(fact.At), cause,
		load.Coordinator, gid, time.Duration(load.At), load.Generation, f.InstanceID, load.StaticMembers[f.InstanceID], f.Generation), true
}

// fencedByRollback reports whether reader id stopped on FENCED_INSTANCE_ID
// that rolledBackFence (a classic member) or consumerRolledBackFence (a
// consumer-protocol member) explains, with what to say of it.
func (c *Cluster) fencedByRollback(id sim.NodeID, r *reader.Reader) (string, bool) {
	if why, ok := c.consumerFencedByRollback(id, r); ok {
		return why, true
	}
	f, fenced := r.ClassicFenced()
	gid, b, ok := c.fenceGround(id, fenced, f)
	if !ok {
		return "", false
	}
	load, loaded := c.Audit.LastGroupLoad(gid, b, f.At)
	if !rolledBackFence(f, load, loaded) {
		return "", false
	}
	return fmt.Sprintf("%s stopped on %s: FENCED_INSTANCE_ID at %v, fatal in Kafka's consumer: %s gave it generation %d and member id %s at %v, "+
		"but its coordinator %s had loaded group %s at %v at generation %d, whose records hold its group.instance.id %s under member id %s: %s",
		c.World.Name(id), f.API, time.Duration(f.At), c.World.Name(f.JoinedFrom), f.Generation, f.MemberID, time.Duration(f.JoinedAt),
		load.Coordinator, gid, time.Duration(load.At), load.Generation, f.InstanceID, load.StaticMembers[f.InstanceID], c.whyNotLoaded(gid, f, load)), true
}

// whyNotLoaded says why the records a coordinator loaded did not hold a
// member's generation: lost (the god view saw the group's partition lose
// committed records between the join and the load), or never written
// where the coordinator loaded them.
func (c *Cluster) whyNotLoaded(gid string, f reader.Fenced, load audit.GroupLoad) string {
	partition := c.groupOffsetsPartition(gid).String()
	for _, fact := range c.Audit.Facts() {
		if fact.Kind == godview.Loss && fact.Partition == partition && int64(f.JoinedAt) < fact.At && fact.At <= int64(load.At) {
			cause := lossCause(fact)
			return fmt.Sprintf("%s offsets %d..%d were lost at %v (%s)", partition, fact.From, fact.To-1, time.Duration(fact.At), cause)
		}
	}
	return "Kafka answers a join phase before it writes anything, and writes a rebalancing group's new static member id only with its leader's SyncGroup " +
		"(GroupMetadataManager.completeClassicGroupJoin, updateStaticMemberThenRebalanceOrCompleteJoin); that write had not reached the log the coordinator loaded"
}

// fenceGround is what every fence rule starts from: the member's group and
// the broker id of the coordinator that fenced it; ok is false when the
// member was not fenced, without a god view, or when no broker fenced it.
func (c *Cluster) fenceGround(id sim.NodeID, fenced bool, f reader.Fenced) (gid string, broker int32, ok bool) {
	if !fenced || c.Audit == nil {
		return "", -1, false
	}
	broker = c.brokerOf(f.Coordinator)
	return c.readerGroup(id), broker, broker >= 0
}

// brokerOf is the broker id of a broker node (-1: not a broker).
func (c *Cluster) brokerOf(node sim.NodeID) int32 {
	for i, n := range c.Brokers {
		if n == node {
			return int32(i + 1)
		}
	}
	return -1
}
