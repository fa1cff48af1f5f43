package consumergroup

import (
	"slices"

	"kafkasim/model/proto"
)

// Sets of partitions are sorted, duplicate-free slices of
// proto.TopicPartition, nil when empty: one spelling per set, so that two
// groups holding the same state compare equal (replay is checked so) and
// records encode the same bytes.

// normalize sorts and deduplicates tps into a new set.
func normalize(tps []proto.TopicPartition) []proto.TopicPartition { return proto.PartitionSet(tps) }

func containsTP(set []proto.TopicPartition, tp proto.TopicPartition) bool {
	return proto.SetContains(set, tp)
}

// intersect is a ∩ b.
func intersect(a, b []proto.TopicPartition) []proto.TopicPartition {
	var out []proto.TopicPartition
	for _, tp := range a {
		if containsTP(b, tp) {
			out = append(out, tp)
		}
	}
	return out
}

// minus is a − b.
func minus(a, b []proto.TopicPartition) []proto.TopicPartition { return proto.SetMinus(a, b) }

// union is a ∪ b.
func union(a, b []proto.TopicPartition) []proto.TopicPartition {
	return normalize(append(slices.Clone(a), b...))
}

// isSubset is GroupMetadataManager.isSubset: whether every partition the
// member reports owning is in set. A member that sent no owned partitions
// is not a subset of anything.
func isSubset(owned []proto.TopicPartition, ownedSent bool, set []proto.TopicPartition) bool {
	if !ownedSent {
		return false
	}
	for _, tp := range owned {
		if !containsTP(set, tp) {
			return false
		}
	}
	return true
}

// ownsAny is CurrentAssignmentBuilder.ownsRevokedPartitions: whether the
// member still reports owning one of revoked. A member that did not send
// its owned partitions is taken to own them still.
func ownsAny(owned []proto.TopicPartition, ownedSent bool, revoked []proto.TopicPartition) bool {
	if !ownedSent {
		return true
	}
	for _, tp := range owned {
		if containsTP(revoked, tp) {
			return true
		}
	}
	return false
}
