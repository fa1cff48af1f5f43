package group

import (
	"maps"
	"slices"

	"kafkasim/model/proto"
)

// What the coordinator holds, for the simulator's god view: the
// convergence check ("every group stable") and describe groups, as Kafka's
// DescribeGroups / ConsumerGroupDescribe and OffsetFetch would show it.
// Reading it changes nothing.

// GroupDescription is one group a loaded shard holds.
type GroupDescription struct {
	GroupID string
	// Protocol is "classic" or "consumer" (KIP-848).
	Protocol string
	// State is Kafka's name of the group's state (classic: Empty,
	// PreparingRebalance, CompletingRebalance, Stable, Dead; consumer:
	// Empty, Assigning, Reconciling, Stable, Dead).
	State string
	// Generation is a classic group's generation, a consumer group's group
	// epoch; AssignmentEpoch is a consumer group's target assignment epoch.
	Generation, AssignmentEpoch int32
	// Assignor is a classic group's protocol name (the assignor its
	// leader runs), a consumer group's server assignor.
	Assignor string
	// Leader is a classic group's leader member.
	Leader string
	// Partition is the __consumer_offsets partition of the group.
	Partition int32
	Members   []MemberDescription
	// Offsets are the group's committed offsets (the committed view),
	// by topic and partition.
	Offsets []CommittedOffset
	// Pending are the group's transactional offsets waiting for their
	// transaction's marker (OffsetMetadataManager's open transactions), by
	// topic and partition, then in the order they came: while one is, an
	// OffsetFetch requiring stable offsets is answered
	// UNSTABLE_OFFSET_COMMIT for its partition.
	Pending []PendingOffset
}

// PendingOffset is a partition with offsets pending in a producer's open
// transaction.
type PendingOffset struct {
	proto.TopicPartition
	ProducerID int64
}

// MemberDescription is one member.
type MemberDescription struct {
	MemberID, InstanceID, ClientID string
	// MemberEpoch is a consumer group member's epoch (-1 for classic).
	MemberEpoch int32
	// Assigned is what the member owns by the coordinator's account (a
	// classic member's assignment in the generation; a consumer member's
	// current assignment); Target a consumer member's target assignment.
	Assigned, Target []proto.TopicPartition
}

// CommittedOffset is one committed offset.
type CommittedOffset struct {
	proto.TopicPartition
	Offset      int64
	LeaderEpoch int32
}

// Describer is implemented by the group coordinator a broker hosts.
type Describer interface {
	// DescribeGroups describes the groups of every loaded shard, by
	// group id.
	DescribeGroups() []GroupDescription
	// Loaded reports whether the shard of __consumer_offsets partition p
	// is loaded: the broker leads p and has replayed its records
	// (CoordinatorRuntime's shard is ACTIVE); until then the coordinator
	// answers COORDINATOR_LOAD_IN_PROGRESS, and describes none of its
	// groups.
	Loaded(p int32) bool
}

// Loaded implements Describer.
func (c *coordinator) Loaded(p int32) bool {
	s, ok := c.shards[p]
	return ok && s.state == shardActive
}

// DescribeGroups implements Describer.
func (c *coordinator) DescribeGroups() []GroupDescription {
	var out []GroupDescription
	for _, p := range slices.Sorted(maps.Keys(c.shards)) {
		s := c.shards[p]
		if s.state != shardActive {
			continue
		}
		out = append(out, s.describe()...)
	}
	slices.SortFunc(out, func(a, b GroupDescription) int {
		if a.GroupID < b.GroupID {
			return -1
		}
		if a.GroupID > b.GroupID {
			return 1
		}
		return 0
	})
	return out
}

func (s *shard) describe() []GroupDescription {
	var out []GroupDescription
	for _, id := range slices.Sorted(maps.Keys(s.groups)) {
		g := s.groups[id]
		d := GroupDescription{GroupID: id, Protocol: "classic", State: g.state.String(), Generation: g.generation,
			Assignor: g.protocolName, Leader: g.leader, Partition: s.tp.Partition}
		for _, m := range g.allMembers() {
			d.Members = append(d.Members, MemberDescription{MemberID: m.id, InstanceID: m.instanceID, ClientID: m.clientID,
				MemberEpoch: -1, Assigned: slices.Clone(m.assignment)})
		}
		d.Offsets = s.committedOffsets(id)
		d.Pending = s.pendingOffsets(id)
		out = append(out, d)
	}
	if cg, ok := s.consumer.(*consumerGroups); ok {
		for _, cd := range cg.Describe() {
			d := GroupDescription{GroupID: cd.GroupID, Protocol: "consumer", State: string(cd.State), Generation: cd.GroupEpoch,
				AssignmentEpoch: cd.AssignmentEpoch, Assignor: cd.AssignorName, Partition: s.tp.Partition}
			for _, m := range cd.Members {
				d.Members = append(d.Members, MemberDescription{MemberID: m.MemberID, InstanceID: m.InstanceID,
					MemberEpoch: m.MemberEpoch, Assigned: slices.Clone(m.Assignment), Target: slices.Clone(m.TargetAssignment)})
			}
			d.Offsets = s.committedOffsets(cd.GroupID)
			d.Pending = s.pendingOffsets(cd.GroupID)
			out = append(out, d)
		}
	}
	return out
}

// committedOffsets is a group's committed view, sorted.
func (s *shard) committedOffsets(group string) []CommittedOffset {
	var out []CommittedOffset
	keys := s.committedKeys(group)
	sortKeys(keys)
	for _, k := range keys {
		if v, ok := s.committedOffset(k); ok {
			out = append(out, CommittedOffset{TopicPartition: proto.TopicPartition{Topic: k.Topic, Partition: k.Partition},
				Offset: v.Offset, LeaderEpoch: v.LeaderEpoch})
		}
	}
	return out
}

// PartitionFor is the __consumer_offsets partition whose leader
// coordinates groupID (GroupCoordinatorService.partitionFor).
func PartitionFor(groupID string, numPartitions int) int32 {
	return partitionFor(groupID, numPartitions)
}

// pendingOffsets is a group's offsets pending in open transactions, sorted.
func (s *shard) pendingOffsets(group string) []PendingOffset {
	var keys []offsetKey
	for k := range s.txn.open { // kafkasim:orderless: sorted below
		if k.Group == group {
			keys = append(keys, k)
		}
	}
	sortKeys(keys)
	var out []PendingOffset
	for _, k := range keys {
		for _, pid := range s.txn.open[k] {
			out = append(out, PendingOffset{TopicPartition: proto.TopicPartition{Topic: k.Topic, Partition: k.Partition}, ProducerID: pid})
		}
	}
	return out
}
