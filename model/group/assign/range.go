package assign

import (
	"slices"

	"kafkasim/model/proto"
)

// RangeAssignor is Kafka's org.apache.kafka.clients.consumer.RangeAssignor
// (eager): topic by topic, the members subscribed to the topic, in
// MemberInfo order (static members first by group instance id, then the
// others by member id), take contiguous ranges of its partitions; the first
// partitions%members members take one more. Its rack-aware variant (KIP-881)
// is not modelled.
type RangeAssignor struct{}

// Name is "range".
func (RangeAssignor) Name() string { return "range" }

// Protocols is [Eager] (ConsumerPartitionAssignor's default).
func (RangeAssignor) Protocols() []RebalanceProtocol { return []RebalanceProtocol{Eager} }

// Assign follows RangeAssignor.assignPartitions without racks.
func (RangeAssignor) Assign(partitionsPerTopic map[string]int32, members []MemberSubscription) map[string][]proto.TopicPartition {
	out := emptyAssignment(members)
	counts := subscribedTopicCounts(partitionsPerTopic, members)
	for _, topic := range sortedKeys(counts) {
		var subscribed []MemberSubscription
		for _, m := range members {
			if slices.Contains(m.Topics, topic) {
				subscribed = append(subscribed, m)
			}
		}
		slices.SortFunc(subscribed, func(a, b MemberSubscription) int {
			return memberInfoCompare(a.MemberID, a.GroupInstanceID, b.MemberID, b.GroupInstanceID)
		})
		n, m := int(counts[topic]), len(subscribed)
		perMember, withExtra := n/m, n%m
		for i, member := range subscribed {
			start := perMember*i + min(i, withExtra)
			length := perMember
			if i < withExtra {
				length++
			}
			for p := start; p < start+length; p++ {
				out[member.MemberID] = append(out[member.MemberID], proto.TopicPartition{Topic: topic, Partition: int32(p)})
			}
		}
	}
	return finish(out)
}
