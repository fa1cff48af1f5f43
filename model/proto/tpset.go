package proto

import (
	"cmp"
	"slices"
)

// Sets of partitions, as the group protocols' state keeps them: sorted,
// duplicate-free slices of TopicPartition, nil when empty — one spelling
// per set, so that equal sets compare equal and encode the same bytes.

// CompareTopicPartitions orders partitions by topic, then partition.
func CompareTopicPartitions(a, b TopicPartition) int {
	if c := cmp.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return cmp.Compare(a.Partition, b.Partition)
}

// PartitionSet sorts and deduplicates tps into a new set.
func PartitionSet(tps []TopicPartition) []TopicPartition {
	if len(tps) == 0 {
		return nil
	}
	out := slices.Clone(tps)
	slices.SortFunc(out, CompareTopicPartitions)
	return slices.CompactFunc(out, func(a, b TopicPartition) bool { return a == b })
}

// SetContains reports whether set holds tp.
func SetContains(set []TopicPartition, tp TopicPartition) bool {
	_, ok := slices.BinarySearchFunc(set, tp, CompareTopicPartitions)
	return ok
}

// SetMinus is a − b over sets.
func SetMinus(a, b []TopicPartition) []TopicPartition {
	var out []TopicPartition
	for _, tp := range a {
		if !SetContains(b, tp) {
			out = append(out, tp)
		}
	}
	return out
}
