package cluster

import (
	"fmt"
	"slices"
	"strings"

	"kafkasim/godview"
	"kafkasim/model/broker"
	"kafkasim/model/group"
	"kafkasim/model/group/assign"
	"kafkasim/model/group/consumergroup"
	"kafkasim/model/metadata"
	"kafkasim/model/partlog"
	"kafkasim/model/proto"
	"kafkasim/model/reader"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// Consumer groups in the cluster: the group coordinator every broker
// hosts on __consumer_offsets (model/group), the assignors it and the
// classic members' leaders run (model/group/assign), the
// group-coordinator(G) selector, and the condition a healed cluster's
// groups meet.

// GroupSettings are the brokers' group coordinator configuration.
type GroupSettings struct {
	Coordinator group.Config
	// ConsumerAssignors are group.consumer.assignors (uniform, range), the
	// first the default.
	ConsumerAssignors []string
}

// ClientAssignors maps partition.assignment.strategy's names (short or
// Kafka's class names) to the assignors a classic member's leader runs.
func ClientAssignors(names []string) ([]reader.GroupAssignor, error) {
	var out []reader.GroupAssignor
	for _, n := range names {
		a, ok := assign.ClientAssignorByName(strings.TrimSpace(n))
		if !ok {
			return nil, fmt.Errorf("unknown assignor %q", n)
		}
		out = append(out, clientAssignor{a})
	}
	return out, nil
}

// clientAssignor is an assign.ClientAssignor as the reader's leader calls
// it.
type clientAssignor struct{ a assign.ClientAssignor }

func (c clientAssignor) Name() string { return c.a.Name() }

func (c clientAssignor) Cooperative() bool {
	return slices.Contains(c.a.Protocols(), assign.Cooperative)
}

func (c clientAssignor) Assign(partitionsPerTopic map[string]int32, members []proto.JoinGroupMember) map[string][]proto.TopicPartition {
	subs := make([]assign.MemberSubscription, len(members))
	for i, m := range members {
		subs[i] = assign.MemberSubscription{MemberID: m.MemberID, GroupInstanceID: m.GroupInstanceID, Topics: m.Subscription.Topics,
			OwnedPartitions: m.Subscription.OwnedPartitions, Generation: m.Subscription.Generation, RackID: m.Subscription.RackID}
	}
	return c.a.Assign(partitionsPerTopic, subs)
}

// serverAssignors maps group.consumer.assignors to the coordinator's.
func serverAssignors(names []string) ([]consumergroup.Assignor, error) {
	var out []consumergroup.Assignor
	for _, n := range names {
		a, ok := assign.ServerAssignorByName(strings.TrimSpace(n))
		if !ok {
			return nil, fmt.Errorf("unknown group.consumer.assignors entry %q", n)
		}
		out = append(out, serverAssignor{a})
	}
	return out, nil
}

// serverAssignor is an assign.ServerAssignor as a consumer group's target
// assignment calls it.
type serverAssignor struct{ a assign.ServerAssignor }

func (s serverAssignor) Name() string { return s.a.Name() }

func (s serverAssignor) Assign(members []consumergroup.MemberSpec, partitionsPerTopic map[string]int32) map[string][]proto.TopicPartition {
	gm := make([]assign.GroupMember, len(members))
	for i, m := range members {
		gm[i] = assign.GroupMember{MemberID: m.MemberID, InstanceID: m.InstanceID, RackID: m.RackID, Topics: m.Topics, Assigned: m.Current}
	}
	return s.a.Assign(gm, partitionsPerTopic)
}

// groupCoordinatorSpec is the coordinator every broker hosts when the
// cluster has consumer groups.
func groupCoordinatorSpec(gs GroupSettings, bugs map[string]bool, audit group.Auditor) (broker.CoordinatorSpec, error) {
	gc := gs.Coordinator
	gc.Bugs.NoGenerationFencing = bugs[BugNoGenerationFencing]
	gc.Audit = audit
	names := gs.ConsumerAssignors
	if len(names) == 0 {
		names = []string{"uniform", "range"}
	}
	assignors, err := serverAssignors(names)
	if err != nil {
		return broker.CoordinatorSpec{}, err
	}
	gc.Consumer = group.NewConsumerProtocol(group.ConsumerProtocolConfig{SessionTimeout: gc.GroupConsumerSessionTimeout,
		HeartbeatInterval: gc.GroupConsumerHeartbeatInterval, Assignors: assignors,
		GrantBeforeRelease: bugs[BugGrantBeforeRelease], NoGenerationFencing: bugs[BugNoGenerationFencing]})
	return group.Spec(gc), nil
}

// Groups lists the consumer groups the cluster's readers belong to, in
// order.
func (c *Cluster) Groups() []string {
	var out []string
	for _, r := range c.cfg.Readers {
		if r.Config.Group != nil && !slices.Contains(out, r.Config.Group.GroupID) {
			out = append(out, r.Config.Group.GroupID)
		}
	}
	slices.Sort(out)
	return out
}

// groupMembers is the member ids groupID's coordinator holds, ok false
// when it does not hold the group (not up, not loaded): the god view's
// group-partition-single-owner asks who still counts as a member.
func (c *Cluster) groupMembers(groupID string) ([]string, bool) {
	d, ok := c.DescribeGroup(groupID)
	if !ok {
		return nil, false
	}
	ids := make([]string, len(d.Members))
	for i, m := range d.Members {
		ids[i] = m.MemberID
	}
	return ids, true
}

// groupOffsetsPartition is the partition of __consumer_offsets that holds
// a group's records (GroupCoordinatorService.partitionFor).
func (c *Cluster) groupOffsetsPartition(groupID string) metadata.TopicPartition {
	return metadata.TopicPartition{Topic: group.Topic, Partition: group.PartitionFor(groupID, c.offsetsPartitions())}
}

// offsetsPartitions is offsets.topic.num.partitions.
func (c *Cluster) offsetsPartitions() int {
	if c.cfg.Groups == nil || c.cfg.Groups.Coordinator.OffsetsTopicNumPartitions <= 0 {
		return group.DefaultConfig().OffsetsTopicNumPartitions
	}
	return c.cfg.Groups.Coordinator.OffsetsTopicNumPartitions
}

// GroupCoordinator is the broker id of groupID's coordinator as the
// committed metadata has it: the leader of its __consumer_offsets
// partition (-1: the topic does not exist yet, or the partition has no
// leader).
func (c *Cluster) GroupCoordinator(groupID string) int32 {
	im := c.Metadata()
	if im == nil {
		return -1
	}
	p := im.Partition(c.groupOffsetsPartition(groupID))
	if p == nil || p.Leader == metadata.NoLeader {
		return -1
	}
	return p.Leader
}

// DescribeGroup is what groupID's coordinator holds, ok false when its
// coordinator is not up or holds no such group (not loaded yet).
func (c *Cluster) DescribeGroup(groupID string) (group.GroupDescription, bool) {
	b := c.Broker(c.GroupCoordinator(groupID))
	if b == nil || c.World.State(c.BrokerNode(b.ID())) != sim.Running {
		return group.GroupDescription{}, false
	}
	d, ok := b.Coordinator(group.Topic).(group.Describer)
	if !ok {
		return group.GroupDescription{}, false
	}
	for _, g := range d.DescribeGroups() {
		if g.GroupID == groupID {
			return g, true
		}
	}
	return group.GroupDescription{}, false
}

// groupCoordinatorSelector resolves group-coordinator(G) when a fault
// fires: the broker leading G's __consumer_offsets partition (none while
// the topic does not exist or the partition has no leader).
var groupCoordinatorSelector = modelSelector{form: "group-coordinator(GROUP)",
	resolve: func(c *Cluster, sel string) ([]sim.NodeID, bool, error) {
		g, ok := sim.ParseCall(sel, "group-coordinator")
		if !ok {
			return nil, false, nil
		}
		b := c.GroupCoordinator(g)
		if b < 1 || int(b) > len(c.Brokers) {
			return nil, true, nil
		}
		return []sim.NodeID{c.BrokerNode(b)}, true, nil
	},
	validate: func(c *Cluster, sel string) (bool, error) {
		g, ok := sim.ParseCall(sel, "group-coordinator")
		if !ok {
			return false, nil
		}
		groups := c.Groups()
		if !slices.Contains(groups, g) {
			if len(groups) == 0 {
				return true, fmt.Errorf("%s: no consumer group %q (the scenario has no consumer groups)", sel, g)
			}
			return true, fmt.Errorf("%s: no consumer group %q (groups: %s)", sel, g, strings.Join(groups, ", "))
		}
		return true, nil
	}}

// groupsStable reports whether every consumer group healed: its
// coordinator holds it Stable, every live member is in the group's
// generation (a consumer group's member STABLE at the assignment epoch,
// which is the group epoch) with nothing pending, every partition of the topics the group
// subscribes to is owned by exactly one live member, and the group's
// committed offset of each is at its high watermark (lag 0).
//
// A member that stopped on a refusal Kafka's client cannot recover from
// while the coordinator's answer is Kafka's (stoppedForGood) is not a live
// member: the group heals without it (JudgedWithout names it). Members that
// stopped because the god view saw their group's records lost are not
// judged (lostGroupMembers), nor is a group none of whose members is left
// to bring it back; what was not judged is said even when the rest holds.
func (c *Cluster) groupsStable() (bool, string) {
	im := c.Metadata()
	if im == nil {
		return false, "no committed metadata"
	}
	var notJudged []string
	for _, gid := range c.Groups() {
		if _, note := c.lostGroupMembers(gid); note != "" {
			notJudged = append(notJudged, note)
		}
		if _, note := c.missedBySkippedAssignment(im, gid); note != "" {
			notJudged = append(notJudged, note)
		}
		ok, why, _, notes := c.groupStable(im, gid)
		if !ok {
			return false, why
		}
		notJudged = append(notJudged, notes...)
	}
	return true, strings.Join(notJudged, "; ")
}

// groupStable is groupsStable for one group; rebalancing tells a group
// that has not healed because its members are not all in its current
// generation (or it is between generations) from one that has not for
// another reason.
//
// notJudged says what of a group that healed was not judged, and why.
func (c *Cluster) groupStable(im *metadata.Image, gid string) (ok bool, why string, rebalancing bool, notJudged []string) {
	if !c.hasLiveMember(gid) {
		return true, "", false, nil // every member stopped for good: nothing heals
	}
	lost, _ := c.lostGroupMembers(gid)
	d, ok := c.DescribeGroup(gid)
	if !ok {
		if len(lost) > 0 && !c.groupHasOthers(gid, lost) {
			return true, "", false, nil // no member left that could bring it back
		}
		return false, c.groupAbsence(gid), false, nil
	}
	if d.State != "Stable" {
		return false, fmt.Sprintf("group %s is %s", gid, d.State), d.State == "PreparingRebalance" || d.State == "CompletingRebalance", nil
	}
	owners := map[string]string{}
	ownerOf := map[string]sim.NodeID{}
	var members []*reader.Reader
	for _, id := range c.Readers {
		r := c.Reader(id)
		name := c.World.Name(id)
		if r == nil {
			if c.readerGroup(id) == gid {
				return false, fmt.Sprintf("%s is %v", name, c.World.State(id)), false, nil
			}
			continue
		}
		g, generation, member, isMember := r.Group()
		if !isMember || g != gid || lost[id] {
			continue
		}
		if f := r.Fatal(); f != "" {
			if c.stoppedForGood(id, r) {
				continue
			}
			return false, fmt.Sprintf("%s stopped consuming: %s", name, f), false, nil
		}
		if c.World.State(id) != sim.Running {
			return false, fmt.Sprintf("%s is %v", name, c.World.State(id)), false, nil
		}
		if !r.Stable() {
			return false, fmt.Sprintf("%s is rebalancing", name), true, nil
		}
		if d.Protocol == "classic" && generation != d.Generation {
			return false, fmt.Sprintf("%s is in generation %d, the group in %d", name, generation, d.Generation), true, nil
		}
		if epoch, ok := r.MemberEpoch(); ok && (epoch != d.AssignmentEpoch || d.AssignmentEpoch != d.Generation) {
			// A consumer group (KIP-848) is healed when its target
			// assignment is of the current group epoch and every
			// member reconciled to it.
			return false, fmt.Sprintf("%s is at member epoch %d, the group's assignment at epoch %d (group epoch %d)", name, epoch, d.AssignmentEpoch, d.Generation), true, nil
		}
		for _, p := range r.Owned() {
			if other, taken := owners[p]; taken {
				return false, fmt.Sprintf("%s and %s both own %s", other, name, p), false, nil
			}
			owners[p] = name + " (" + member + ")"
			ownerOf[p] = id
		}
		members = append(members, r)
	}
	missed, _ := c.missedBySkippedAssignment(im, gid)
	var hanging []godview.Fact // the hanging transactions, once asked for
	committed := map[string]int64{}
	for _, o := range d.Offsets {
		committed[o.TopicPartition.String()] = o.Offset
	}
	for _, p := range im.Partitions() {
		if !slices.ContainsFunc(members, func(r *reader.Reader) bool { return r.Reads(p.Topic) }) {
			continue
		}
		key := p.TopicPartition.String()
		if missed[key] {
			continue
		}
		if _, ok := owners[key]; !ok {
			return false, fmt.Sprintf("group %s: no live member owns %s", gid, key), false, nil
		}
		v := c.LeaderView(p)
		if v == nil {
			return false, fmt.Sprintf("broker-%d does not lead %s yet", p.Leader, key), false, nil
		}
		hw := v.HighWatermark()
		if hw <= v.Log().LogStartOffset() {
			continue // nothing to consume
		}
		if c.resetPastUnpolled(ownerOf[key], p.TopicPartition, hw) {
			continue
		}
		if off, ok := committed[key]; !ok || off < hw {
			if !ok {
				off = -1
			}
			// from: where the group's records begin, the committed offset
			// or, with none committed yet, the log start.
			from := off
			if !ok {
				from = v.Log().LogStartOffset()
			}
			if from >= v.Log().LogStartOffset() && markersOnly(v.Log(), from, hw) {
				// Only transaction markers follow the committed offset
				// (or make up the whole log: a partition a transaction
				// was verified in but whose record never landed, aborted
				// with a marker only): the consumer skips them without a
				// record for its application, which commits what it
				// processed, so Kafka's committed offset stays below them
				// (or is never written).
				continue
			}
			if note := c.truncatedPastUnpolled(gid, ownerOf[key], p.TopicPartition, hw, off); note != "" {
				notJudged = append(notJudged, note)
				continue
			}
			if note := c.commitLostAtPosition(gid, ownerOf[key], p.TopicPartition, hw, off); note != "" {
				notJudged = append(notJudged, note)
				continue
			}
			readCommitted := !slices.ContainsFunc(members, func(r *reader.Reader) bool { return !r.ReadCommitted() })
			if from >= v.Log().LogStartOffset() && nothingVisibleBetween(v.Log(), from, hw, readCommitted) {
				continue
			}
			if lso := v.Log().LastStableOffset(hw); readCommitted && lso < hw {
				if hanging == nil {
					hanging = c.hangingTransactions()
				}
				if slices.ContainsFunc(hanging, func(h godview.Fact) bool { return h.Partition == key }) &&
					(off >= lso || c.resetPastUnpolled(ownerOf[key], p.TopicPartition, lso) ||
						from >= v.Log().LogStartOffset() && nothingVisibleBetween(v.Log(), from, lso, true)) {
					// Held by a hanging transaction (KIP-664): a
					// read_committed fetch ends at the last stable offset
					// (Kafka's FetchIsolation.TXN_COMMITTED), which only an
					// operator's kafka-transactions.sh abort moves, and the
					// group committed all it could read below it (or has
					// nothing to commit there). The checker judges the
					// hanging transaction.
					continue
				}
			}
			if hanging == nil {
				hanging = c.hangingTransactions()
			}
			if note := c.pendingHeldByHanging(gid, d, ownerOf[key], p.TopicPartition, off, hw, hanging); note != "" {
				notJudged = append(notJudged, note)
				continue
			}
			return false, fmt.Sprintf("group %s: committed offset of %s is %d, high watermark %d (lag %d)", gid, key, off, hw, hw-max(off, 0)), false, nil
		}
	}
	return true, "", false, notJudged
}

// pendingHeldByHanging says why a partition whose owner has no position
// is not judged ("" when it is): the group's offsets of it are pending in a
// transaction left hanging in the group's __consumer_offsets partition
// (KIP-664: its coordinator lost it, so no marker comes). Kafka's
// OffsetMetadataManager.fetchOffsets answers an OffsetFetch requiring
// stable offsets (a read_committed member's) UNSTABLE_OFFSET_COMMIT for the
// partition while those offsets are pending, and the consumer retries it
// (ConsumerCoordinator.fetchCommittedOffsets), so the owner never gets a
// position to read from until an operator's kafka-transactions.sh abort
// writes the marker.
func (c *Cluster) pendingHeldByHanging(gid string, d group.GroupDescription, owner sim.NodeID, tp metadata.TopicPartition, off, hw int64, hanging []godview.Fact) string {
	r := c.Reader(owner)
	if r == nil || r.Position(tp.Topic, tp.Partition) >= 0 {
		return ""
	}
	offsets := metadata.TopicPartition{Topic: group.Topic, Partition: d.Partition}.String()
	for _, p := range d.Pending {
		if p.Topic != tp.Topic || p.Partition != tp.Partition {
			continue
		}
		for _, h := range hanging {
			if h.Partition == offsets && h.Producer == p.ProducerID {
				return fmt.Sprintf("not judged: group %s: committed offset of %s is %d, below the high watermark %d: its offsets pending in producer id %d's transaction, left hanging in %s at offset %d (its coordinator no longer holds it: KIP-664), answer %s's OffsetFetch UNSTABLE_OFFSET_COMMIT until an operator aborts it",
					gid, tp, off, hw, p.ProducerID, offsets, h.From, c.World.Name(owner))
			}
		}
	}
	return ""
}

// resetPastUnpolled reports whether a partition whose committed offset is
// below its high watermark (or absent) is one its owner's application has
// nothing to commit for: its position is at the high watermark and came
// from auto.offset.reset=latest — where it was assigned, or mid-session
// when its position fell out of range (retention deleted what it had not
// read) — with no record returned to the application since, and the
// application commits the offsets of the records it polled
// (KafkaConsumer.commitSync(Map)), so Kafka commits nothing until a record
// arrives. Auto-commit commits every
// position (ConsumerCoordinator.maybeAutoCommitOffsetsAsync commits
// SubscriptionState.allConsumed), so its group must have committed.
func (c *Cluster) resetPastUnpolled(id sim.NodeID, tp metadata.TopicPartition, hw int64) bool {
	r := c.Reader(id)
	if r == nil || r.Position(tp.Topic, tp.Partition) < hw || !r.ResetUnconsumed(tp.Topic, tp.Partition) {
		return false
	}
	mode, ok := c.commitMode(id)
	return ok && mode != reader.CommitAuto
}

// readerGroup is the group a reader node was configured with ("" none).
func (c *Cluster) readerGroup(id sim.NodeID) string {
	i := slices.Index(c.Readers, id)
	for _, rs := range c.cfg.Readers {
		if i < rs.Count {
			if rs.Config.Group == nil {
				return ""
			}
			return rs.Config.Group.GroupID
		}
		i -= rs.Count
	}
	return ""
}

// markersOnly reports whether the log from off up to hw holds control
// batches (transaction markers) only.
func markersOnly(l *partlog.Log, off, hw int64) bool {
	only := true
	l.Scan(off, hw, func(b *record.Batch) bool {
		if b.LastOffset() >= off && !b.Control {
			only = false
		}
		return only
	})
	return only
}
