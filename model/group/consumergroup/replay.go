package consumergroup

import (
	"fmt"
	"slices"
)

// Replay applies one of the group's records: the only way a Group changes,
// both when the coordinator applies its own change and when it loads the
// partition (GroupMetadataManager.replay for each consumer group record
// type). An error is a record sequence Kafka's replay refuses with an
// IllegalStateException (a member's subscription deleted before its
// assignment): the shell treats it as a simulator failure.
func (g *Group) Replay(r Record) error {
	if r.GroupID != g.id {
		return fmt.Errorf("consumer group %s: replayed a record of group %s", g.id, r.GroupID)
	}
	if !r.Tombstone {
		g.exists = true
	}
	switch r.Type {
	case TypeGroupMetadata:
		if r.Tombstone {
			if len(g.members) != 0 || len(g.target) != 0 {
				return fmt.Errorf("consumer group %s: group tombstone while it has members", g.id)
			}
			*g = *New(g.id)
			return nil
		}
		g.groupEpoch, g.metadataHash = r.GroupEpoch, r.MetadataHash
	case TypePartitionMetadata:
		// Kafka 3.7–4.0's subscription metadata; 4.1+ ignores it too.
	case TypeMemberMetadata:
		m := g.members[r.MemberID]
		if r.Tombstone {
			// Kafka's replay of a ConsumerGroupMemberMetadata tombstone:
			// the assignment tombstones come first.
			if m == nil {
				return fmt.Errorf("consumer group %s: subscription tombstone of unknown member %s", g.id, r.MemberID)
			}
			if m.MemberEpoch != LeaveGroupMemberEpoch {
				return fmt.Errorf("consumer group %s: subscription tombstone of member %s before its current assignment tombstone", g.id, r.MemberID)
			}
			if _, ok := g.target[r.MemberID]; ok {
				return fmt.Errorf("consumer group %s: subscription tombstone of member %s before its target assignment tombstone", g.id, r.MemberID)
			}
			delete(g.members, r.MemberID)
			return nil
		}
		if m == nil {
			m = newMember(r.MemberID)
			g.members[r.MemberID] = m
		}
		v := r.Member
		m.InstanceID, m.RackID, m.RebalanceTimeout, m.ServerAssignor = v.InstanceID, v.RackID, v.RebalanceTimeout, v.ServerAssignor
		m.SubscribedTopicNames = normalizeTopics(v.SubscribedTopicNames)
	case TypeTargetAssignmentMetadata:
		if r.Tombstone {
			g.assignmentEpoch = 0
			return nil
		}
		g.assignmentEpoch = r.AssignmentEpoch
	case TypeTargetAssignmentMember:
		if r.Tombstone {
			delete(g.target, r.MemberID)
			return nil
		}
		g.target[r.MemberID] = normalize(r.Partitions)
	case TypeCurrentMemberAssignment:
		m := g.members[r.MemberID]
		if r.Tombstone {
			// The member stays, at epoch -1 and holding nothing, until
			// its subscription tombstone.
			if m == nil {
				return fmt.Errorf("consumer group %s: current assignment tombstone of unknown member %s", g.id, r.MemberID)
			}
			m.MemberEpoch, m.PreviousMemberEpoch = LeaveGroupMemberEpoch, LeaveGroupMemberEpoch
			m.Assigned, m.PendingRevocation = nil, nil
			return nil
		}
		if m == nil {
			m = newMember(r.MemberID)
			g.members[r.MemberID] = m
		}
		v := r.Member
		m.MemberEpoch, m.PreviousMemberEpoch, m.State = v.MemberEpoch, v.PreviousMemberEpoch, v.State
		m.Assigned, m.PendingRevocation = normalize(v.Assigned), normalize(v.PendingRevocation)
	default:
		return fmt.Errorf("consumer group %s: record type %d is not a consumer group record", g.id, r.Type)
	}
	return nil
}

// ReplayAll replays records in order, stopping at the first error.
func (g *Group) ReplayAll(records []Record) error {
	for _, r := range records {
		if err := g.Replay(r); err != nil {
			return err
		}
	}
	return nil
}

// Equal tells whether two groups hold the same state (replay is checked
// with it).
func (g *Group) Equal(o *Group) bool {
	if g.id != o.id || g.exists != o.exists || g.groupEpoch != o.groupEpoch || g.metadataHash != o.metadataHash ||
		g.assignmentEpoch != o.assignmentEpoch || len(g.members) != len(o.members) || len(g.target) != len(o.target) {
		return false
	}
	for id, m := range g.members { // kafkasim:orderless: an all-equal test
		n := o.members[id]
		if n == nil || !m.subscriptionEqual(n) || !m.assignmentEqual(n) {
			return false
		}
	}
	for id, t := range g.target { // kafkasim:orderless: an all-equal test
		u, ok := o.target[id]
		if !ok || !slices.Equal(t, u) {
			return false
		}
	}
	return true
}
