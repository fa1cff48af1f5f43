package group

import (
	"slices"

	"kafkasim/model/group/consumergroup"
	"kafkasim/model/proto"
)

// Auditor sees what the god view's group invariants check (model/audit's
// groups.go): which generation a coordinator loaded each group at, the
// generations its committed writes carry, and the offsets it acknowledged.
// A coordinator is named by its broker, __consumer_offsets partition and
// leader epoch.
type Auditor interface {
	// GroupLoaded: staticMembers maps each group.instance.id of the group
	// (classic or consumer protocol) to the member id the load left it
	// under; owned maps each member id to the partitions the load left it
	// owning by the coordinator's account (a classic member's assignment;
	// a consumer member's assigned partitions and those pending its
	// revocation).
	GroupLoaded(broker, partition, leaderEpoch int32, group string, generation int32, staticMembers map[string]string,
		owned map[string][]proto.TopicPartition)
	GroupGenerationCommitted(broker, partition, leaderEpoch int32, group string, generation int32, lastOffset int64)
	GroupOffsetCommitted(broker, partition, leaderEpoch int32, group, memberID string, generation int32, tp proto.TopicPartition, offset, recordOffset int64)
	// ConsumerMemberRemoved: a committed write removed a consumer group's
	// member (it left, or was fenced: session or rebalance timeout, its
	// instance id taken), which had memberEpoch then.
	ConsumerMemberRemoved(broker, partition, leaderEpoch int32, group, memberID string, memberEpoch int32)
	// StaticMemberReverted: a classic group's static member instanceID
	// went back from member id reverted to restored, because the
	// GroupMetadata write that stored reverted failed.
	StaticMemberReverted(broker, partition, leaderEpoch int32, group, instanceID, reverted, restored string)
}

// groupGeneration is a group's generation (classic) or group epoch
// (consumer protocol) that a write carries.
type groupGeneration struct {
	group      string
	generation int32
}

// writtenGenerations are the generations records carry: a classic group's
// GroupMetadata record, a consumer group's group epoch record.
func writtenGenerations(records []shardRecord) []groupGeneration {
	var out []groupGeneration
	for _, r := range records {
		if r.Tombstone {
			continue
		}
		if consumergroup.IsConsumerGroupRecord(r.Key) {
			if d, err := consumergroup.Decode(r.Key, r.Value, false); err == nil && d.Type == consumergroup.TypeGroupMetadata {
				out = append(out, groupGeneration{group: d.GroupID, generation: d.GroupEpoch})
			}
			continue
		}
		if d, err := decodeRecord([]byte(r.Key), []byte(r.Value)); err == nil && d.Type == recordGroupMetadata {
			out = append(out, groupGeneration{group: d.Group, generation: d.GroupVal.Generation})
		}
	}
	return out
}

// auditLoaded tells the auditor the generation of every group the shard
// loaded.
func (s *shard) auditLoaded() {
	a := s.c.cfg.Audit
	if a == nil {
		return
	}
	pending := map[string]map[string][]proto.TopicPartition{}
	if cg, ok := s.consumer.(*consumerGroups); ok {
		for _, cd := range cg.Describe() {
			pending[cd.GroupID] = map[string][]proto.TopicPartition{}
			for _, m := range cd.Members {
				pending[cd.GroupID][m.MemberID] = m.PendingRevocation
			}
		}
	}
	for _, d := range s.describe() {
		var static map[string]string
		owned := map[string][]proto.TopicPartition{}
		for _, m := range d.Members {
			owned[m.MemberID] = proto.PartitionSet(append(slices.Clone(m.Assigned), pending[d.GroupID][m.MemberID]...))
			if m.InstanceID != "" {
				if static == nil {
					static = map[string]string{}
				}
				static[m.InstanceID] = m.MemberID
			}
		}
		a.GroupLoaded(s.c.t.BrokerID(), s.tp.Partition, s.epoch, d.GroupID, d.Generation, static, owned)
	}
}

// auditCommitted tells the auditor the generations a committed write
// carried.
func (s *shard) auditCommitted(w *pendingWrite) {
	a := s.c.cfg.Audit
	if a == nil {
		return
	}
	for _, g := range w.generations {
		a.GroupGenerationCommitted(s.c.t.BrokerID(), s.tp.Partition, s.epoch, g.group, g.generation, w.lastOffset)
	}
	for _, r := range w.removals {
		a.ConsumerMemberRemoved(s.c.t.BrokerID(), s.tp.Partition, s.epoch, r.group, r.member, r.epoch)
	}
}

// memberRemoval is a consumer group's member a write removes, and the
// epoch it had.
type memberRemoval struct {
	group, member string
	epoch         int32
}

// consumerRemovals are the members recs remove (the tombstone of a
// member's current assignment: GroupMetadataManager.removeMember), with
// the epochs they have before recs are replayed.
func (s *shard) consumerRemovals(recs []ConsumerRecord) []memberRemoval {
	var out []memberRemoval
	for _, r := range recs {
		if !r.Tombstone {
			continue
		}
		d, err := consumergroup.Decode(r.Key, r.Value, true)
		if err != nil || d.Type != consumergroup.TypeCurrentMemberAssignment {
			continue
		}
		if epoch, ok := s.consumer.MemberEpoch(d.GroupID, d.MemberID); ok {
			out = append(out, memberRemoval{group: d.GroupID, member: d.MemberID, epoch: epoch})
		}
	}
	return out
}

// auditOffsetCommit tells the auditor the offsets of an acknowledged
// OffsetCommit, whose write of one record per partition, in m's order,
// ended at lastOffset of the shard's partition.
func (s *shard) auditOffsetCommit(m *proto.OffsetCommitRequest, lastOffset int64) {
	a := s.c.cfg.Audit
	if a == nil {
		return
	}
	first := lastOffset - int64(len(m.Partitions)) + 1
	for i, p := range m.Partitions {
		a.GroupOffsetCommitted(s.c.t.BrokerID(), s.tp.Partition, s.epoch, m.GroupID, m.MemberID, m.GenerationIDOrMemberEpoch,
			p.TopicPartition, p.CommittedOffset, first+int64(i))
	}
}

// auditReverted tells the auditor a static member's new member id was put
// back to its old one.
func (s *shard) auditReverted(group, instanceID, reverted, restored string) {
	if a := s.c.cfg.Audit; a != nil {
		a.StaticMemberReverted(s.c.t.BrokerID(), s.tp.Partition, s.epoch, group, instanceID, reverted, restored)
	}
}
