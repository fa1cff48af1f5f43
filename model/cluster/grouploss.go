package cluster

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"kafkasim/godview"
	"kafkasim/model/audit"
	"kafkasim/model/group"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// A consumer group whose records on __consumer_offsets were lost.
//
// The coordinator knows a group only from its records: the broker that
// takes over the group's __consumer_offsets partition replays them
// (GroupCoordinatorShard.replay). When the god view saw a loss Kafka
// permits take them (every in-sync copy lost power before the flush
// policy wrote it, or an unclean election, or KIP-966's election of the
// last known leader, made a replica without them the leader), the new
// coordinator does not know the group. A KIP-848 member heartbeating at
// its member epoch is then answered GROUP_ID_NOT_FOUND
// (GroupMetadataManager.consumerGroupHeartbeat creates a group only for a
// member at epoch 0: getOrMaybeCreateConsumerGroup(groupId, memberEpoch ==
// 0)), which its client takes as fatal (AbstractHeartbeatRequestManager.
// onErrorResponse's default arm: handleFatalFailure, transitionToFatal; a
// member in FATAL state never joins again). Only the application, making a
// new consumer, brings the group back: Kafka does not heal it. A classic
// member is answered UNKNOWN_MEMBER_ID instead (classicGroupHeartbeat,
// classicGroupSync) and rejoins, so a classic group comes back by itself.

// groupRecordsLost is the loss that explains why a consumer-protocol member
// of the group whose records live on partition stopped on
// GROUP_ID_NOT_FOUND: a loss of partition that took it from offset 0 (every
// record it held, so every record the group had), after the member last
// joined (its join's records were committed by then) and no later than it
// stopped. joinedAt < 0 is a member that never joined: nothing of it was
// lost.
//
// Or the member joined after such a loss through a coordinator an unclean
// election had deposed (deposed true): a paused leader of the partition,
// back before it learned of the election, still ran the group and
// answered the join once its own high watermark passed the join's write —
// a write the new leader's log never holds (Kafka's deposed leader, its
// ISR shrunk to itself, acknowledges just so until the new epoch reaches
// it). Writes is the group's committed generation writes (every join
// makes one): each after the loss and no later than the stop is a deposed
// coordinator's, one of them no later than the join, so no log the
// partition's next coordinators load holds the group.
//
// joinedAt is when the member read its join's answer; the join itself is
// the group's generation write that answer waited for, at or before it
// (joinCommitted).
func groupRecordsLost(losses []godview.Fact, writes []audit.GenerationWrite, partition string, joinedAt, stoppedAt int64) (f godview.Fact, deposed, ok bool) {
	if joinedAt < 0 {
		return godview.Fact{}, false, false
	}
	joinedAt = joinCommitted(writes, joinedAt)
	var before *godview.Fact
	for i, f := range losses {
		if f.Kind != godview.Loss || f.Partition != partition || f.From != 0 || f.To <= 0 {
			continue
		}
		if joinedAt < f.At && f.At <= stoppedAt {
			return f, false, true
		}
		if f.At <= joinedAt && (before == nil || f.At >= before.At) {
			before = &losses[i]
		}
	}
	if before == nil {
		return godview.Fact{}, false, false
	}
	joinedThroughDeposed := false
	for _, w := range writes {
		if w.At <= before.At || w.At > stoppedAt {
			continue
		}
		if !w.Deposed {
			return godview.Fact{}, false, false
		}
		if w.At <= joinedAt {
			joinedThroughDeposed = true
		}
	}
	if !joinedThroughDeposed {
		return godview.Fact{}, false, false
	}
	return *before, true, true
}

// joinCommitted is when a member's join was on the log, the member having
// read its answer at answeredAt: the latest of the group's generation
// writes at or before answeredAt, or answeredAt without one. The
// coordinator answers a join only once its write committed
// (CoordinatorRuntime completes a write's response when the high
// watermark passes it), so the join's write is one of those and no later
// than this. The member may read the answer long after: a paused process
// reads what waited for it only when it resumes, by when its group's
// records may be lost — the member joined before the loss all the same.
func joinCommitted(writes []audit.GenerationWrite, answeredAt int64) int64 {
	at := answeredAt
	for _, w := range writes {
		if w.At <= answeredAt {
			at = w.At
		}
	}
	return at
}

// lostGroupMembers are gid's consumer-protocol members that stopped on
// GROUP_ID_NOT_FOUND after the god view saw the group's records lost
// (groupRecordsLost), with what to say of them.
func (c *Cluster) lostGroupMembers(gid string) (map[sim.NodeID]bool, string) {
	partition := c.groupOffsetsPartition(gid).String()
	var losses []godview.Fact
	var names []string
	var lost map[sim.NodeID]bool
	var because godview.Fact
	var joinedDeposed []string
	for _, id := range c.Readers {
		r := c.Reader(id)
		if r == nil || c.readerGroup(id) != gid {
			continue
		}
		code, at, joined, ok := r.ConsumerFatal()
		if !ok || code != proto.GroupIDNotFound {
			continue
		}
		if losses == nil {
			losses = c.Audit.Facts()
		}
		f, deposed, ok := groupRecordsLost(losses, c.Audit.GroupGenerationWrites(gid), partition, int64(joined), int64(at))
		if !ok {
			continue
		}
		if lost == nil {
			lost, because = map[sim.NodeID]bool{}, f
		}
		if deposed {
			joinedDeposed = append(joinedDeposed, c.World.Name(id))
		}
		lost[id] = true
		names = append(names, c.World.Name(id))
	}
	if len(lost) == 0 {
		return nil, ""
	}
	cause := lossCause(because)
	deposed := ""
	if len(joinedDeposed) > 0 {
		deposed = fmt.Sprintf(" (%s joined since through a coordinator an unclean election had deposed, whose writes of the group the new leader never holds)", strings.Join(joinedDeposed, ", "))
	}
	return lost, fmt.Sprintf("not judged: group %s: its records on %s were lost (offsets %d..%d, %s, at %v)%s, so its coordinator no longer knows it; %s stopped on GROUP_ID_NOT_FOUND as Kafka's consumer does, and only a new consumer would bring the group back",
		gid, partition, because.From, because.To-1, cause, time.Duration(because.At), deposed, strings.Join(names, ", "))
}

// groupHasOthers reports whether gid has a member outside lost: one that
// may still join, and with it bring the group back (its heartbeat at
// member epoch 0 creates it).
func (c *Cluster) groupHasOthers(gid string, lost map[sim.NodeID]bool) bool {
	return slices.ContainsFunc(c.Readers, func(id sim.NodeID) bool {
		if id == c.FinalReader || c.readerGroup(id) != gid || lost[id] {
			return false
		}
		// A member stopped for good (stoppedForGood) cannot bring the
		// group back either.
		if r := c.Reader(id); r != nil && c.stoppedForGood(id, r) {
			return false
		}
		return true
	})
}

// groupAbsence says why gid's coordinator does not describe it: the broker
// leading its partition is down, or still loading the partition (Kafka
// answers COORDINATOR_LOAD_IN_PROGRESS until the shard is loaded), or
// loaded it and holds no such group.
func (c *Cluster) groupAbsence(gid string) string {
	p := group.PartitionFor(gid, c.offsetsPartitions())
	leader := c.GroupCoordinator(gid)
	b := c.Broker(leader)
	if b == nil || c.World.State(c.BrokerNode(leader)) != sim.Running {
		return fmt.Sprintf("group %s: its coordinator (the leader of %s-%d, broker %d) is not running", gid, group.Topic, p, leader)
	}
	d, ok := b.Coordinator(group.Topic).(group.Describer)
	if !ok || !d.Loaded(p) {
		return fmt.Sprintf("group %s: its coordinator broker-%d has not loaded %s-%d yet", gid, leader, group.Topic, p)
	}
	return fmt.Sprintf("group %s: its coordinator broker-%d loaded %s-%d and holds no such group", gid, leader, group.Topic, p)
}

// lossCause names what took a loss's records, with the election that
// exposed it, for a verdict's reason.
func lossCause(f godview.Fact) string {
	if f.ExposedBy != "" {
		return f.Cause + " exposed by " + f.ExposedBy
	}
	return f.Cause
}
