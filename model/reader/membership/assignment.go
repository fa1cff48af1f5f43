package membership

import (
	"slices"

	"kafkasim/model/proto"
)

// Partition sets are sorted, duplicate-free slices, nil when empty.

func normalize(tps []proto.TopicPartition) []proto.TopicPartition { return proto.PartitionSet(tps) }

// minus is a − b over sets.
func minus(a, b []proto.TopicPartition) []proto.TopicPartition { return proto.SetMinus(a, b) }

// localAssignment is AbstractMembershipManager.LocalAssignment: a set of
// partitions with a local epoch the member bumps each time the coordinator
// sends a different one. The epoch lets "the assignment changed since the
// last heartbeat" be told even when a reconciliation lands back on the same
// partitions; it is never sent.
type localAssignment struct {
	localEpoch int64
	partitions []proto.TopicPartition
}

// noAssignment is LocalAssignment.NONE: not in a group, nothing reconciled.
var noAssignment = localAssignment{localEpoch: -1}

func (a localAssignment) isNone() bool { return a.localEpoch == noAssignment.localEpoch }

func (a localAssignment) equal(b localAssignment) bool {
	return a.localEpoch == b.localEpoch && slices.Equal(a.partitions, b.partitions)
}

// updateWith is LocalAssignment.updateWith: a new local assignment when the
// partitions differ (or there was none), ok false when nothing changed.
func (a localAssignment) updateWith(partitions []proto.TopicPartition) (localAssignment, bool) {
	partitions = normalize(partitions)
	if !a.isNone() && slices.Equal(a.partitions, partitions) {
		return a, false
	}
	return localAssignment{localEpoch: a.localEpoch + 1, partitions: partitions}, true
}
