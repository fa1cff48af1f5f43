package consumergroup

import "kafkasim/model/proto"

// reconciliation is CurrentAssignmentBuilder's input: the target the
// member must converge to, which partitions other members still hold, and
// what the member reported owning.
type reconciliation struct {
	targetEpoch int32
	target      []proto.TopicPartition
	// held is the epoch of the member holding each partition (assigned or
	// pending revocation); absent: free.
	held      map[proto.TopicPartition]int32
	owned     []proto.TopicPartition
	ownedSent bool
	// grantBeforeRelease is the bug switch: a partition another member
	// still holds is granted at once instead of held back.
	grantBeforeRelease bool
}

// reconcile is CurrentAssignmentBuilder.build (Kafka 4.0/4.1's, before
// the later subscription-consistency shortcut): the member's next state,
// or the member itself when it cannot move on. fenced is set for a member
// in a state this version does not know that still owns partitions.
func reconcile(m *Member, r reconciliation) (next *Member, fenced bool) {
	switch m.State {
	case Stable:
		// A newer target epoch: reconcile towards it.
		if m.MemberEpoch != r.targetEpoch {
			return computeNextAssignment(m, m.MemberEpoch, r), false
		}
		return m, false
	case UnrevokedPartitions:
		// The member must first stop reporting the partitions pending
		// revocation; until then it stays where it is.
		if ownsAny(r.owned, r.ownedSent, m.PendingRevocation) {
			return m, false
		}
		return computeNextAssignment(m, m.MemberEpoch, r), false
	case UnreleasedPartitions:
		// Grant what its previous owners have released since.
		return computeNextAssignment(m, m.MemberEpoch, r), false
	}
	// UNKNOWN: only a member that gave everything up may start over.
	if !r.ownedSent || len(r.owned) != 0 {
		return m, true
	}
	return computeNextAssignment(m, r.targetEpoch, r), false
}

// computeNextAssignment is CurrentAssignmentBuilder.computeNextAssignment:
// revoke before granting, and grant a partition only once no other member
// holds it.
func computeNextAssignment(m *Member, memberEpoch int32, r reconciliation) *Member {
	// New assigned = assigned ∩ target; pending revocation = assigned − new
	// assigned; pending assignment = target − new assigned − unreleased.
	assigned := intersect(m.Assigned, r.target)
	pendingRevocation := minus(m.Assigned, assigned)
	var pendingAssignment []proto.TopicPartition
	unreleased := false
	for _, tp := range minus(r.target, assigned) {
		_, held := r.held[tp]
		// A partition this member itself is revoking is not held by
		// another: only one member holds a partition at a time.
		if held && !containsTP(m.PendingRevocation, tp) && !r.grantBeforeRelease {
			unreleased = true
			continue
		}
		pendingAssignment = append(pendingAssignment, tp)
	}

	next := m.clone()
	switch {
	case len(pendingRevocation) != 0 && ownsAny(r.owned, r.ownedSent, pendingRevocation):
		// Revoke first: the member keeps its epoch and is told to give up
		// the partitions (the response leaves them out).
		next.State = UnrevokedPartitions
		next.updateMemberEpoch(memberEpoch)
		next.Assigned = normalize(assigned)
		next.PendingRevocation = normalize(pendingRevocation)
	case len(pendingAssignment) != 0:
		// Grant the free partitions; the member moves to the target epoch.
		next.State = Stable
		if unreleased {
			next.State = UnreleasedPartitions
		}
		next.updateMemberEpoch(r.targetEpoch)
		next.Assigned = union(assigned, pendingAssignment)
		next.PendingRevocation = nil
	case unreleased:
		next.State = UnreleasedPartitions
		next.updateMemberEpoch(r.targetEpoch)
		next.Assigned = normalize(assigned)
		next.PendingRevocation = nil
	default:
		next.State = Stable
		next.updateMemberEpoch(r.targetEpoch)
		next.Assigned = normalize(assigned)
		next.PendingRevocation = nil
	}
	return next
}
