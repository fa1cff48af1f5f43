package assign

import (
	"slices"

	"kafkasim/model/proto"
)

// RoundRobinAssignor is Kafka's org.apache.kafka.clients.consumer.RoundRobinAssignor
// (eager): every partition of every subscribed topic, sorted by topic then
// partition, dealt in turn over the members in MemberInfo order (static
// members first by group instance id, then the others by member id),
// skipping a member not subscribed to the partition's topic. Balanced
// (max−min ≤ 1) when all subscriptions are equal.
type RoundRobinAssignor struct{}

// Name is "roundrobin".
func (RoundRobinAssignor) Name() string { return "roundrobin" }

// Protocols is [Eager].
func (RoundRobinAssignor) Protocols() []RebalanceProtocol { return []RebalanceProtocol{Eager} }

// Assign follows RoundRobinAssignor.assign: a CircularIterator over the
// sorted members that survives from one partition to the next.
func (RoundRobinAssignor) Assign(partitionsPerTopic map[string]int32, members []MemberSubscription) map[string][]proto.TopicPartition {
	out := emptyAssignment(members)
	if len(members) == 0 {
		return out
	}
	sorted := slices.Clone(members)
	slices.SortFunc(sorted, func(a, b MemberSubscription) int {
		return memberInfoCompare(a.MemberID, a.GroupInstanceID, b.MemberID, b.GroupInstanceID)
	})
	subs := make([]map[string]bool, len(sorted))
	for i, m := range sorted {
		subs[i] = topicSet(m.Topics)
	}
	counts := subscribedTopicCounts(partitionsPerTopic, members)
	next := 0
	for _, topic := range sortedKeys(counts) {
		for p := int32(0); p < counts[topic]; p++ {
			// Some member subscribes to topic (counts only holds such
			// topics), so this loop ends within one turn.
			for !subs[next][topic] {
				next = (next + 1) % len(sorted)
			}
			id := sorted[next].MemberID
			out[id] = append(out[id], proto.TopicPartition{Topic: topic, Partition: p})
			next = (next + 1) % len(sorted)
		}
	}
	return finish(out)
}
