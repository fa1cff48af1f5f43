package audit

import (
	"fmt"
	"slices"
	"time"

	"kafkasim/godview"
	"kafkasim/model/metadata"
	"kafkasim/model/partlog"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// Consumer groups' invariants, checked from the coordinators' and the
// members' own state (docs/checker.md, "God-view invariants"):
//
//   - group-generation-single-coordinator: a group's generation (classic)
//     or group epoch (consumer protocol, KIP-848) is begun by one
//     coordinator only. A coordinator — one leader epoch of one broker's
//     shard of a __consumer_offsets partition — begins generation G when a
//     write of it carrying G is committed (the high watermark passed it,
//     so the answers that wait on it go out: the assignments of a
//     SyncGroup, a heartbeat's new epoch) while nothing it loaded or wrote
//     before held G or later. Two coordinators may both run the group for
//     a while (a deposed leader that has not unloaded yet may even move it
//     to the same generation in memory), but Kafka writes with acks=1 and
//     answers only once the write is under the high watermark: the deposed
//     leader's high watermark cannot pass a write its followers, now
//     fetching from the new leader, never copy, and a committed write is
//     on the new leader, whose load sees it. So a coordinator never begins
//     a generation another committed already (nor an older one), unless
//     the god view saw the partition lose committed data.
//   - group-partition-single-owner: a member never comes to own a
//     partition that another member of the group still owns. A member
//     process owns a partition from its assignment (the assign callback)
//     until it revokes it or is told it lost it, or dies; "another member
//     of the group" is one that still counts as a member: under the
//     consumer protocol one its coordinator still has, under the classic
//     protocol one whose own assignment is of the same generation or a
//     later one (PartitionsAssigned says why). A member removed (session
//     timeout, fenced, left) may still think it owns its partitions until
//     it hears so — Kafka does not stop such a zombie; it fences its
//     commits (group-commit-not-below-owner). Nor is a zombie's own
//     claim judged: under the consumer protocol a member its coordinator
//     no longer has may apply an answer written before it was fenced;
//     under the classic protocol one may apply a SyncGroup answer of a
//     generation older than the other owner's (a member paused while its
//     answer waited, removed when the next join completed without it), or
//     of the other owner's generation number when a coordinator began it
//     again after the group's __consumer_offsets partition lost the
//     records that began it first (reusedGeneration).
//     Nor is a claim a coordinator forgot (forgotten): the group's
//     __consumer_offsets partition lost committed data after the claim,
//     and a coordinator then loaded the group without it.
//     Eager classic members revoke everything before they join, cooperative
//     ones revoke what moves before the next generation gives it away, and
//     a consumer group's coordinator grants a partition only once its
//     previous owner acknowledged releasing it.
//   - group-commit-not-below-owner: once a commit of a group's partition
//     at offset X by its owner in generation G (classic generation, or the
//     member epoch: a partition's successive owners hold strictly greater
//     ones) is acknowledged, no commit below X is acknowledged from an older
//     generation, or from another member of G — but for the same static
//     member's next process incarnation, which rejoins a Stable group under
//     a new member id in G (GroupMetadataManager.
//     updateStaticMemberThenRebalanceOrCompleteJoin) and is held as a
//     newer generation's owner is, and but for a consumer-protocol owner
//     granted the partition after the owner that committed X: the member
//     epoch is each member's own, and two owners share one when a
//     coordinator forgot the first one's grant (forgotten) and granted the
//     partition again; the later grant is held as a newer generation's
//     owner is. One from a newer generation
//     only if that member moved its position of the partition back since
//     it was granted it — reset it (auto.offset.reset), or found the log
//     truncated under it (KIP-320) where the god view saw the partition
//     lose committed data below X — or the god view saw the partition or
//     the group's __consumer_offsets partition lose committed data since X
//     was committed. The truncation covers a loss before X was committed
//     too: Kafka's coordinator accepts a commit of records the owner read
//     before they were lost (OffsetMetadataManager validates the member
//     and its generation, never the offset against the log), and the next
//     owner, fetching X with its leader epoch (ConsumerCoordinator.
//     refreshCommittedOffsetsIfNeeded: SubscriptionState.seekUnvalidated),
//     validates it and seeks back to the first offset known to diverge
//     (SubscriptionState.maybeCompleteValidation). A member lowering its
//     own commits within its generation is the application's doing, which
//     the history's nonmonotonic-commit judges.
const (
	GroupGenerationSingleCoordinator = "group-generation-single-coordinator"
	GroupPartitionSingleOwner        = "group-partition-single-owner"
	GroupCommitNotBelowOwner         = "group-commit-not-below-owner"
)

// groupInvariants lists the consumer groups' invariants.
var groupInvariants = []string{GroupGenerationSingleCoordinator, GroupPartitionSingleOwner, GroupCommitNotBelowOwner}

// GroupInvariants lists the consumer groups' invariants when the cluster has
// consumer groups (SetGroupMembers was called), none otherwise: a run
// without groups reports what it always did.
func (a *Audit) GroupInvariants() []string {
	if a.groups == nil {
		return nil
	}
	return groupInvariants
}

// Coordinator names one coordinator: a broker's shard of a
// __consumer_offsets partition in one leader epoch.
type Coordinator struct {
	Broker, Partition, LeaderEpoch int32
}

func (c Coordinator) String() string {
	return fmt.Sprintf("broker-%d (__consumer_offsets-%d, leader epoch %d)", c.Broker, c.Partition, c.LeaderEpoch)
}

// groupsAudit is the audit's state of the consumer groups, bounded by the
// groups, their partitions and members, and the coordinators that ran them.
type groupsAudit struct {
	// members is the group's members as its coordinator has them now (ok
	// false: it is not loaded).
	members func(group string) ([]string, bool)
	byGroup map[string]*groupAudit
	// lossCount is the losses among the first factsSeen facts.
	factsSeen, lossCount int
}

type groupAudit struct {
	// gen is the latest generation a coordinator began, and who began it.
	gen      int32
	began    Coordinator
	hasBegun bool
	// beganAt is when it began gen, in virtual nanoseconds.
	beganAt int64
	// known: the highest generation each coordinator loaded or wrote.
	known map[Coordinator]int32
	// loads: every load of the group by a coordinator, in time order.
	loads []GroupLoad
	// owners: the processes that own each partition (one, but for a
	// violation), and the latest commit of each by a member.
	owners  map[proto.TopicPartition][]owner
	commits map[proto.TopicPartition]commitMark
	// writes are the committed writes carrying a generation, in order.
	writes []GenerationWrite
	// reverts: every static member a coordinator put back under its old
	// member id, in time order.
	reverts []StaticRevert
	// removed: the highest member epoch at which a committed write
	// removed each consumer-protocol member (ConsumerMemberRemoved).
	removed map[string]int32
	// reused: the generations a coordinator began again after the
	// group's __consumer_offsets partition lost committed data
	// (reusedGeneration).
	reused []int32
	// grants counts the partitions granted to members
	// (PartitionsAssigned): each grant's sequence number orders it.
	grants int64
}

// GenerationWrite is a coordinator's committed write carrying a group's
// generation (classic) or group epoch (consumer protocol): every join
// makes one, and its answer waits for it.
type GenerationWrite struct {
	// At is when the high watermark passed it, in virtual nanoseconds.
	At int64
	// Deposed: an unclean election of a later leader epoch had already
	// deposed the coordinator that committed it, from an offset at or
	// below the write's. A deposed leader's high watermark moves over
	// records the new leader's log never holds (ReplicaHW's
	// deposedExposed): the write was lost as it committed, and its group
	// is on no log the partition's next coordinators load.
	Deposed bool
}

// GroupGenerationWrites are group's committed generation writes, in the
// order they committed (nil without groups).
func (a *Audit) GroupGenerationWrites(group string) []GenerationWrite {
	if a.groups == nil {
		return nil
	}
	if g, ok := a.groups.byGroup[group]; ok {
		return g.writes
	}
	return nil
}

type owner struct {
	node        sim.NodeID
	incarnation uint32
	memberID    string
	generation  int32
	// consumer: the claim is under the consumer protocol (KIP-848), whose
	// generation is the member's own epoch.
	consumer bool
	// grant orders the grants of the group's partitions: a later grant
	// has a greater one. A member that keeps the partition keeps it.
	grant int64
	// reset: the member reset its position since it was granted it.
	reset bool
	// truncated: the member found the log truncated below its position
	// since it was granted it, and sought back (KIP-320).
	truncated bool
	// losses is how many data losses the god view had seen when the
	// member claimed it.
	losses int
}

type commitMark struct {
	offset int64
	// record is the offset of the commit's record in the group's
	// __consumer_offsets partition.
	record     int64
	generation int32
	memberID   string
	// owner: the member owned the partition then, from the process
	// incarnation of node.
	owner       bool
	node        sim.NodeID
	incarnation uint32
	// consumer and grant are the owner's claim's (owner).
	consumer bool
	grant    int64
	// losses is how many data losses the god view had seen then.
	losses int
}

// SetGroupMembers turns the group invariants on, with where the audit
// asks a group's coordinator for its members.
func (a *Audit) SetGroupMembers(members func(group string) ([]string, bool)) {
	a.groups = &groupsAudit{members: members, byGroup: map[string]*groupAudit{}}
}

func (a *Audit) group(id string) *groupAudit {
	g, ok := a.groups.byGroup[id]
	if !ok {
		g = &groupAudit{known: map[Coordinator]int32{}, owners: map[proto.TopicPartition][]owner{},
			commits: map[proto.TopicPartition]commitMark{}}
		a.groups.byGroup[id] = g
	}
	return g
}

// lostSince reports whether the god view saw committed data of one of
// partitions lost after it had seen `since` losses.
func (a *Audit) lostSince(since int, partitions ...string) bool {
	n := 0
	for _, f := range a.facts {
		if f.Kind != godview.Loss {
			continue
		}
		n++
		if n > since && slices.Contains(partitions, f.Partition) {
			return true
		}
	}
	return false
}

// losses is how many losses the god view has seen, counted on from where
// the last call left off (it runs at every acknowledged commit).
func (a *Audit) losses() int {
	gs := a.groups
	for ; gs.factsSeen < len(a.facts); gs.factsSeen++ {
		if a.facts[gs.factsSeen].Kind == godview.Loss {
			gs.lossCount++
		}
	}
	return gs.lossCount
}

func offsetsPartition(p int32) string { return fmt.Sprintf("%s-%d", offsetsTopic, p) }

// offsetsTopic is the topic of the group coordinators' records.
const offsetsTopic = "__consumer_offsets"

// group.Auditor

// GroupLoaded notes the generation a coordinator loaded a group at: it
// continues it, it does not begin it.
func (a *Audit) GroupLoaded(broker, partition, leaderEpoch int32, group string, generation int32, staticMembers map[string]string,
	owned map[string][]proto.TopicPartition) {
	if a.groups == nil {
		return
	}
	c := Coordinator{Broker: broker, Partition: partition, LeaderEpoch: leaderEpoch}
	g := a.group(group)
	g.known[c] = max(g.known[c], generation)
	g.loads = append(g.loads, GroupLoad{At: a.w.Now(), Coordinator: c, Generation: generation, StaticMembers: staticMembers, Owned: owned})
}

// forgotten reports whether a coordinator forgot o's claim on tp: the god
// view saw the group's __consumer_offsets partition lose committed data
// after o claimed tp, and a coordinator then loaded the group with o's
// member owning tp neither as assigned nor as pending revocation. Its
// grant of tp to o was on the lost records (the answer that granted it
// waited for their commit), and nothing brings it back: a consumer-protocol
// member's heartbeat at its current epoch is accepted without a look at
// the partitions it reports owning (GroupMetadataManager.
// throwIfConsumerGroupMemberEpochIsInvalid checks them only for a heartbeat at the
// previous epoch; CurrentAssignmentBuilder reads them only for partitions
// pending revocation), and a classic coordinator takes a member's
// assignment from the SyncGroup leader's, not from the member. So the
// coordinator may grant tp to another member while o still owns it, until
// o hears its new assignment and revokes it.
func (a *Audit) forgotten(g *groupAudit, o owner, tp proto.TopicPartition) bool {
	for _, l := range g.loads {
		if l.Owned == nil || slices.Contains(l.Owned[o.memberID], tp) {
			continue
		}
		n := 0
		for _, f := range a.facts {
			if f.Kind != godview.Loss {
				continue
			}
			n++
			if n > o.losses && f.Partition == offsetsPartition(l.Coordinator.Partition) && f.At <= int64(l.At) {
				return true
			}
		}
	}
	return false
}

// reusedGeneration reports whether a classic group's generation number gen
// was begun twice: a coordinator began gen, or a later one, then the god
// view saw the group's __consumer_offsets partition lose committed data,
// then another coordinator, which had loaded the group below gen (or not at
// all: every record of it was lost), began gen again (GroupGeneration-
// Committed). The records that began gen the first time, with its members
// and their assignments, were on the lost log: the reloaded group starts
// again from the generation the coordinator found (GroupMetadataManager.
// replay rebuilds the ClassicGroup from the records it reads), and its next
// joins give gen to another membership. A member of the first gen its
// coordinator no longer has — a zombie applying its SyncGroup answer late,
// which AbstractCoordinator.SyncGroupResponseHandler checks only against
// the member's own generation — then claims what the second gen gave
// another member.
func (a *Audit) reusedGeneration(g *groupAudit, gen int32) bool {
	return slices.Contains(g.reused, gen)
}

// ConsumerMemberRemoved notes that a coordinator's committed write removed
// a consumer-protocol member (left, fenced, or its instance id taken),
// which had memberEpoch then: its claims of that epoch or older belong to
// a membership that ended (PartitionsAssigned). A member that rejoins under
// the same member id does so at the group epoch, which the removal bumped
// past every epoch the member had (GroupMetadataManager.
// consumerGroupFenceMember), so its new claims are newer.
func (a *Audit) ConsumerMemberRemoved(broker, partition, leaderEpoch int32, group, memberID string, memberEpoch int32) {
	if a.groups == nil {
		return
	}
	g := a.group(group)
	if g.removed == nil {
		g.removed = map[string]int32{}
	}
	if e, ok := g.removed[memberID]; !ok || memberEpoch > e {
		g.removed[memberID] = memberEpoch
	}
}

// ended reports whether a consumer-protocol claim by memberID at epoch
// belongs to a membership a committed write ended.
func (g *groupAudit) ended(memberID string, epoch int32) bool {
	e, ok := g.removed[memberID]
	return ok && epoch <= e
}

// GroupLoad is one load of a group by a coordinator: when, at which
// generation (classic) or group epoch (consumer protocol) its records left
// it, and under which member id each static member (classic or consumer
// protocol).
type GroupLoad struct {
	At            time.Duration
	Coordinator   Coordinator
	Generation    int32
	StaticMembers map[string]string
	// Owned: the partitions each member owned by the load's account (nil:
	// not told).
	Owned map[string][]proto.TopicPartition
}

// LastGroupLoad is the last load of group by a coordinator on broker at or
// before time at; ok false when there was none.
func (a *Audit) LastGroupLoad(group string, broker int32, at time.Duration) (GroupLoad, bool) {
	if a.groups == nil {
		return GroupLoad{}, false
	}
	g, ok := a.groups.byGroup[group]
	if !ok {
		return GroupLoad{}, false
	}
	for i := len(g.loads) - 1; i >= 0; i-- {
		if l := g.loads[i]; l.Coordinator.Broker == broker && l.At <= at {
			return l, true
		}
	}
	return GroupLoad{}, false
}

// StaticMemberReverted notes a classic coordinator putting a static
// member back under its old member id after the write of its new one
// failed (GroupMetadataManager.updateStaticMemberThenRebalanceOrCompleteJoin).
func (a *Audit) StaticMemberReverted(broker, partition, leaderEpoch int32, group, instanceID, reverted, restored string) {
	if a.groups == nil {
		return
	}
	g := a.group(group)
	g.reverts = append(g.reverts, StaticRevert{At: a.w.Now(), Coordinator: Coordinator{Broker: broker, Partition: partition, LeaderEpoch: leaderEpoch},
		InstanceID: instanceID, Reverted: reverted, Restored: restored})
}

// StaticRevert is one static member of a classic group put back by a
// coordinator from member id Reverted to Restored.
type StaticRevert struct {
	At                 time.Duration
	Coordinator        Coordinator
	InstanceID         string
	Reverted, Restored string
}

// StaticMemberReverts are group's static member reverts, in time order
// (nil without groups).
func (a *Audit) StaticMemberReverts(group string) []StaticRevert {
	if a.groups == nil {
		return nil
	}
	if g, ok := a.groups.byGroup[group]; ok {
		return g.reverts
	}
	return nil
}

// GroupGenerationCommitted checks a committed write of coordinator c that
// carries group's generation; lastOffset is the write's last offset on
// the __consumer_offsets partition.
func (a *Audit) GroupGenerationCommitted(broker, partition, leaderEpoch int32, group string, generation int32, lastOffset int64) {
	if a.groups == nil {
		return
	}
	c := Coordinator{Broker: broker, Partition: partition, LeaderEpoch: leaderEpoch}
	g := a.group(group)
	tp := metadata.TopicPartition{Topic: offsetsTopic, Partition: partition}
	p := a.part(tp)
	var log *partlog.Log
	if a.replicas != nil {
		log = a.replicas(broker, tp)
	}
	g.writes = append(g.writes, GenerationWrite{At: int64(a.w.Now()), Deposed: p.deposedLoses(leaderEpoch, lastOffset, log)})
	if k, ok := g.known[c]; ok && k >= generation {
		return // it continues a generation it holds
	}
	g.known[c] = generation
	again := g.hasBegun && generation <= g.gen && g.began != c
	if again && a.lostAfter(g.beganAt, offsetsPartition(c.Partition)) && !slices.Contains(g.reused, generation) {
		g.reused = append(g.reused, generation)
	}
	if again && !a.lostSince(0, offsetsPartition(c.Partition)) {
		what := "also began"
		if generation < g.gen {
			what = fmt.Sprintf("began the older generation %d after", generation)
		}
		a.report(GroupGenerationSingleCoordinator, a.brokerNode(c.Broker), "group %s: %s %s generation %d, committed by %s",
			group, c, what, g.gen, g.began)
	}
	if !g.hasBegun || generation >= g.gen {
		g.gen, g.began, g.hasBegun, g.beganAt = generation, c, true, int64(a.w.Now())
	}
}

// lostAfter reports whether the god view saw partition lose committed data
// at or after virtual nanosecond at.
func (a *Audit) lostAfter(at int64, partition string) bool {
	for _, f := range a.facts {
		if f.Kind == godview.Loss && f.Partition == partition && f.At >= at {
			return true
		}
	}
	return false
}

// GroupOffsetCommitted checks an acknowledged OffsetCommit of one
// partition by memberID in generation (the member epoch under the consumer
// protocol), its record at recordOffset of the coordinator's
// __consumer_offsets partition. Commits of no generation (a consumer
// outside any group) are not an owner's.
func (a *Audit) GroupOffsetCommitted(broker, partition, leaderEpoch int32, group, memberID string, generation int32, tp proto.TopicPartition, offset, recordOffset int64) {
	if a.groups == nil || generation < 0 {
		return
	}
	c := Coordinator{Broker: broker, Partition: partition, LeaderEpoch: leaderEpoch}
	g := a.group(group)
	prev, ok := g.commits[tp]
	mark := commitMark{offset: offset, record: recordOffset, generation: generation, memberID: memberID, losses: a.losses()}
	if o, ok := ownerOf(g, tp, memberID); ok {
		mark.owner, mark.node, mark.incarnation = true, o.node, o.incarnation
		mark.consumer, mark.grant = o.consumer, o.grant
	}
	if !ok || offset >= prev.offset {
		g.commits[tp] = mark
		return
	}
	lost := a.lostSince(prev.losses, tp.String(), offsetsPartition(c.Partition))
	switch {
	case generation == prev.generation && memberID != prev.memberID && succeeds(mark, prev):
		// A static member's process restarted and rejoined the Stable
		// group under a new member id in the same generation
		// (GroupMetadataManager.updateStaticMemberThenRebalanceOrCompleteJoin,
		// ClassicGroup.replaceStaticMember): the new member fetches what
		// its previous incarnation committed, so it commits below only as
		// a newer generation's owner may.
		if !lost && !a.movedBackBy(g, tp, memberID, prev.offset) {
			a.report(GroupCommitNotBelowOwner, a.brokerNode(c.Broker),
				"group %s: %s committed %s at %d for member %s of generation %d, below %d committed by its previous incarnation's member %s, with no reset, truncation or loss to explain it",
				group, c, tp, offset, memberID, generation, prev.offset, prev.memberID)
		}
	case generation == prev.generation && memberID != prev.memberID && grantedAfter(mark, prev):
		// Consumer protocol (KIP-848): the generation is the member
		// epoch, each member's own, so two members may both be at epoch
		// G, and both own the partition when a coordinator forgot the
		// first one's grant (forgotten) and granted it again. The later
		// grant is the newer owner, which commits below only as a newer
		// generation's owner may.
		if !lost && !a.movedBackBy(g, tp, memberID, prev.offset) {
			a.report(GroupCommitNotBelowOwner, a.brokerNode(c.Broker),
				"group %s: %s committed %s at %d for member %s of member epoch %d, below %d committed by member %s of the same member epoch, granted the partition before it, with no reset, truncation or loss to explain it",
				group, c, tp, offset, memberID, generation, prev.offset, prev.memberID)
		}
	case generation < prev.generation || (generation == prev.generation && memberID != prev.memberID):
		if !lost {
			a.report(GroupCommitNotBelowOwner, a.brokerNode(c.Broker),
				"group %s: %s committed %s at %d for member %s of generation %d, below %d committed by member %s of generation %d",
				group, c, tp, offset, memberID, generation, prev.offset, prev.memberID, prev.generation)
		}
	case generation == prev.generation:
		// The member's own doing: the history judges it.
	case !lost && !a.movedBackBy(g, tp, memberID, prev.offset):
		a.report(GroupCommitNotBelowOwner, a.brokerNode(c.Broker),
			"group %s: %s committed %s at %d for member %s of generation %d, below %d committed by member %s of the older generation %d, with no reset, truncation or loss to explain it",
			group, c, tp, offset, memberID, generation, prev.offset, prev.memberID, prev.generation)
	}
	g.commits[tp] = mark
}

// ownerOf is memberID's claim on tp, if it owns it.
func ownerOf(g *groupAudit, tp proto.TopicPartition, memberID string) (owner, bool) {
	for _, o := range g.owners[tp] {
		if o.memberID == memberID {
			return o, true
		}
	}
	return owner{}, false
}

// succeeds reports whether commit mark's member is a later process
// incarnation of the member that made prev, both owning the partition as
// they committed: the same client, so the same group instance id, back
// under a new member id.
func succeeds(mark, prev commitMark) bool {
	return mark.owner && prev.owner && mark.node == prev.node && mark.incarnation > prev.incarnation
}

// grantedAfter reports whether commit mark's member, owning the partition
// under the consumer protocol, was granted it after prev's member, owning
// it under the consumer protocol too, was.
func grantedAfter(mark, prev commitMark) bool {
	return mark.owner && prev.owner && mark.consumer && prev.consumer && mark.grant > prev.grant
}

// movedBackBy reports whether memberID, owning tp, moved its position
// back since it was granted it in a way that explains a commit below
// `below`: a reset, or a truncation where the god view saw tp lose
// committed data below `below` (a loss at or above it cannot have taken
// what that commit counted; without a loss, KIP-320 finds no divergence
// under a position taken from committed records).
func (a *Audit) movedBackBy(g *groupAudit, tp proto.TopicPartition, memberID string, below int64) bool {
	for _, o := range g.owners[tp] {
		if o.memberID != memberID {
			continue
		}
		if o.reset || (o.truncated && a.lostBelow(tp.String(), below)) {
			return true
		}
	}
	return false
}

// lostBelow reports whether the god view saw partition lose committed data
// at an offset below `below`.
func (a *Audit) lostBelow(partition string, below int64) bool {
	for _, f := range a.facts {
		if f.Kind == godview.Loss && f.Partition == partition && f.From < below {
			return true
		}
	}
	return false
}

// reader.GroupAuditor

// PartitionsAssigned checks the assignment a member applied (its assign
// callback ran): every partition it owns now, in generation (classic) or
// at its member epoch (consumer protocol). A partition it did not own is
// granted to it; one it kept now counts in this generation. Neither may be
// owned by another live process that still counts as a member: under the
// consumer protocol, any member its coordinator still has; under the
// classic protocol, one whose own claim is of this generation or a later
// one. A consumer-protocol member its coordinator no longer has is a
// zombie applying a late answer: its claim is recorded, not judged. So is
// a claim at a member epoch of a membership that ended, though the member
// id is back in the group: a member whose poll timer expired while a
// heartbeat waited on the coordinator's commit sends its leave and its
// rejoin behind it, and the answer, once it comes, finds the member
// JOINING, which applies an assignment (ConsumerMembershipManager.
// onHeartbeatSuccess ignores answers only when LEAVING or not in the
// group: UNSUBSCRIBED, FENCED, STALE, FATAL). The coordinator, which read
// the leave after sending that answer, gave the partitions to others and
// fences the stale epoch's heartbeats and commits. Nor is a claim a
// coordinator forgot judged (forgotten): its grant was on
// __consumer_offsets records the god view saw lost, and the coordinator
// that loaded the group after the loss may grant the partition again. A
// classic member that did not rejoin the generation — a static
// member is not removed when the join completes without it
// (GroupMetadataManager.completeClassicGroupJoin removes only dynamic
// ones) — still owns the partitions of its older generation until it
// hears of the rebalance; Kafka fences its commits rather than stopping
// it. Nor is a classic claim judged that is of an older generation than
// the other owner's, by a member its coordinator no longer has: a zombie
// applying a SyncGroup answer of a generation that ended without it. A
// member paused (or cut off) after sending SyncGroup is removed when the
// next join completes without it (GroupMetadataManager.
// completeClassicGroupJoin removes dynamic members that did not rejoin),
// while the answer of its generation waits in its socket; once it runs
// again, AbstractCoordinator.SyncGroupResponseHandler checks only the
// member's own generation and state (still that generation, completing
// its rebalance: the application was in poll, which keeps the poll timer
// fresh, and the session had not run out), so onJoinComplete applies the
// assignment, and the member hears it is out only at its next heartbeat
// (UNKNOWN_MEMBER_ID). Its commits are fenced meanwhile
// (group-commit-not-below-owner). The same holds for a zombie's answer of
// the other owner's generation number when that number was begun twice
// (reusedGeneration): the records that began it first, with the zombie's
// membership, were lost with the group's __consumer_offsets partition.
func (a *Audit) PartitionsAssigned(node sim.NodeID, group, memberID string, generation int32, classic bool, owned []proto.TopicPartition) {
	if a.groups == nil || len(owned) == 0 {
		return
	}
	g := a.group(group)
	var members []string
	asked, loaded := false, false
	zombie := false
	if !classic {
		// A consumer-protocol member its coordinator already fenced
		// (rebalance or session timeout) may still apply a heartbeat
		// answer written before: GroupMetadataManager.consumerGroupHeartbeat
		// schedules the rebalance timeout when it writes the assignment
		// (CoordinatorRuntime's EventBasedCoordinatorTimer starts it at
		// once), and the runtime answers only once that write is
		// committed, so the timeout can fence the member, and give its
		// partitions to others, before the member hears its assignment.
		// The zombie learns it is out at its next heartbeat
		// (UNKNOWN_MEMBER_ID); until then Kafka fences its commits, not its
		// ownership (group-commit-not-below-owner).
		members, loaded = a.groups.members(group)
		asked = true
		zombie = (loaded && !slices.Contains(members, memberID)) || g.ended(memberID, generation)
	}
	for _, tp := range owned {
		kept := g.owners[tp][:0]
		reset, truncated := false, false
		grant := int64(0)
		for _, o := range g.owners[tp] {
			if o.node == node {
				same := o.memberID == memberID
				reset, truncated = o.reset && same, o.truncated && same
				if same && o.incarnation == a.w.Incarnation(node) {
					grant = o.grant // kept, not granted again
				}
				continue // this process's own claim, renewed below
			}
			if !a.owns(o) {
				continue // its process died
			}
			kept = append(kept, o)
			if classic && o.generation < generation {
				continue
			}
			if !asked {
				members, loaded = a.groups.members(group)
				asked = true
			}
			// A classic zombie's late SyncGroup answer: an older
			// generation's claim by a member its coordinator no longer has
			// — or one of the same generation number, begun before the
			// group's __consumer_offsets partition lost its records and
			// begun again after (reusedGeneration).
			lateSync := classic && (o.generation > generation || (o.generation == generation && a.reusedGeneration(g, generation))) &&
				loaded && !slices.Contains(members, memberID)
			if loaded && !zombie && !lateSync && slices.Contains(members, o.memberID) && (classic || !g.ended(o.memberID, o.generation)) &&
				!a.forgotten(g, o, tp) {
				a.report(GroupPartitionSingleOwner, node,
					"group %s: %s owns %s as member %s of generation %d while %s (member %s, generation %d) still owns it",
					group, a.w.Name(node), tp, memberID, generation, a.w.Name(o.node), o.memberID, o.generation)
			}
		}
		if grant == 0 {
			g.grants++
			grant = g.grants
		}
		g.owners[tp] = append(kept, owner{node: node, incarnation: a.w.Incarnation(node), memberID: memberID, generation: generation,
			consumer: !classic, grant: grant, reset: reset, truncated: truncated, losses: a.losses()})
	}
}

// owns reports whether o's process is the one that was granted the
// partition, still alive.
func (a *Audit) owns(o owner) bool {
	return a.w.State(o.node) != sim.Down && a.w.Incarnation(o.node) == o.incarnation
}

// PartitionsRevoked notes partitions a member revoked or lost.
func (a *Audit) PartitionsRevoked(node sim.NodeID, group string, tps []proto.TopicPartition) {
	if a.groups == nil {
		return
	}
	g := a.group(group)
	for _, tp := range tps {
		g.owners[tp] = slices.DeleteFunc(g.owners[tp], func(o owner) bool { return o.node == node })
		if len(g.owners[tp]) == 0 {
			delete(g.owners, tp)
		}
	}
}

// PositionReset notes a member that reset its position of a partition it
// owns (auto.offset.reset).
func (a *Audit) PositionReset(node sim.NodeID, group string, tp proto.TopicPartition) {
	if a.groups == nil {
		return
	}
	os := a.group(group).owners[tp]
	for i := range os {
		if os[i].node == node {
			os[i].reset = true
		}
	}
}

// PositionTruncated notes a member whose position of a partition it owns
// went back to the first offset known to diverge: the leader's log ends
// the position's leader epoch below it (KIP-320's validation, Kafka's
// SubscriptionState.maybeCompleteValidation).
func (a *Audit) PositionTruncated(node sim.NodeID, group string, tp proto.TopicPartition) {
	if a.groups == nil {
		return
	}
	os := a.group(group).owners[tp]
	for i := range os {
		if os[i].node == node {
			os[i].truncated = true
		}
	}
}
