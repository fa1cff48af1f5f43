package consumergroup

import (
	"slices"

	"kafkasim/model/proto"
)

// Assignor is a server-side assignor (Kafka's
// ConsumerGroupPartitionAssignor: uniform, range). Assign gets the members
// sorted by id and the partition count of every subscribed topic that
// exists; it returns each member's partitions. It must be deterministic.
type Assignor interface {
	Name() string
	Assign(members []MemberSpec, partitionsPerTopic map[string]int32) map[string][]proto.TopicPartition
}

// MemberSpec is what an assignor knows of a member (Kafka's
// MemberSubscriptionAndAssignmentImpl).
type MemberSpec struct {
	MemberID   string
	InstanceID string
	RackID     string
	// Topics is the subscription, sorted (topics that do not exist
	// included: they have no entry in partitionsPerTopic).
	Topics []string
	// Current is the member's target assignment so far, for sticky
	// assignors.
	Current []proto.TopicPartition
}

// preferredAssignor is ConsumerGroup.computePreferredServerAssignor: the
// server assignor most members ask for (a tie goes to the first name, where
// Kafka takes its hash map's order), or the default, the first configured.
func preferredAssignor(members []*Member, assignors []Assignor) Assignor {
	counts := map[string]int{}
	for _, m := range members {
		if m.ServerAssignor != "" {
			counts[m.ServerAssignor]++
		}
	}
	best, bestCount := "", 0
	for _, name := range sortedKeys(counts) {
		if counts[name] > bestCount {
			best, bestCount = name, counts[name]
		}
	}
	for _, a := range assignors {
		if a.Name() == best {
			return a
		}
	}
	return assignors[0]
}

// updateTarget is GroupMetadataManager.updateTargetAssignment with
// TargetAssignmentBuilder.build: the assignor's new target for every
// member, a ConsumerGroupTargetAssignmentMember record for each member
// whose target changed (or had none), then the assignment epoch. members
// is the group as the heartbeat leaves it; a static member replacing a
// departed one (replaced) starts from the departed one's target.
func (g *Group) updateTarget(env *Env, groupEpoch int32, members []*Member, joining, replaced string) (map[string][]proto.TopicPartition, []Record) {
	specs := make([]MemberSpec, 0, len(members))
	for _, m := range members {
		current := g.target[m.MemberID]
		if m.MemberID == joining && replaced != "" {
			current = g.target[replaced]
		}
		specs = append(specs, MemberSpec{MemberID: m.MemberID, InstanceID: m.InstanceID, RackID: m.RackID,
			Topics: slices.Clone(m.SubscribedTopicNames), Current: slices.Clone(current)})
	}
	partitions := map[string]int32{}
	for _, t := range subscribedTopics(members) {
		if n, ok := env.Partitions(t); ok {
			partitions[t] = n
		}
	}
	assigned := preferredAssignor(members, env.Config.Assignors).Assign(specs, partitions)

	target := make(map[string][]proto.TopicPartition, len(members))
	var records []Record
	for _, m := range members {
		t := normalize(assigned[m.MemberID])
		target[m.MemberID] = t
		if old, ok := g.target[m.MemberID]; !ok || !slices.Equal(old, t) {
			records = append(records, targetAssignmentRecord(g.id, m.MemberID, t))
		}
	}
	records = append(records, targetAssignmentEpochRecord(g.id, groupEpoch))
	return target, records
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m { // kafkasim:orderless: collects keys sorted right after
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
