package metadata

import "slices"

// Reassignment is a partition reassignment's replica sets, after Kafka's
// PartitionReassignmentReplicas: the replicas being removed (in the current
// assignment, not in the target) and added (in the target, not in the
// current assignment), each sorted, and the assignment while it runs, the
// target followed by the removed replicas. The target's order is kept:
// its first replica is the preferred leader once the reassignment is done.
type Reassignment struct {
	Removing []int32
	Adding   []int32
	Replicas []int32
}

// NewReassignment is PartitionReassignmentReplicas(currentAssignment,
// targetAssignment).
func NewReassignment(current, target []int32) Reassignment {
	r := Reassignment{Removing: sorted(without(current, target)), Adding: sorted(without(target, current))}
	r.Replicas = append(slices.Clone(target), r.Removing...)
	return r
}

// InProgress reports whether replicas are still being added or removed.
func (r Reassignment) InProgress() bool { return len(r.Removing) > 0 || len(r.Adding) > 0 }

// MaybeComplete is PartitionReassignmentReplicas.maybeCompleteReassignment:
// once the ISR (targetISR, the one the change is about to write) holds every
// replica of the target, the reassignment completes: the assignment becomes
// the target and the removed replicas leave the ISR. It does not complete
// when that would leave the ISR or the assignment empty.
func (r Reassignment) MaybeComplete(targetISR []int32) (replicas, isr []int32, done bool) {
	if !r.InProgress() {
		return nil, nil, false
	}
	isr, replicas = slices.Clone(targetISR), r.Replicas
	if len(r.Removing) > 0 {
		isr = without(targetISR, r.Removing)
		if len(isr) == 0 {
			return nil, nil, false
		}
		replicas = without(r.Replicas, r.Removing)
		if len(replicas) == 0 {
			return nil, nil, false
		}
	}
	for _, x := range replicas {
		if !slices.Contains(isr, x) {
			return nil, nil, false
		}
	}
	return nonNil(replicas), nonNil(isr), true
}
