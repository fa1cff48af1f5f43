package assign

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"kafkasim/model/proto"
)

// RebalanceProtocol is Kafka's ConsumerPartitionAssignor.RebalanceProtocol:
// how a classic group's members give partitions up in a rebalance. Its
// order matters: RebalanceProtocolOf picks the highest one all assignors
// support, as Kafka sorts the enum by ordinal.
type RebalanceProtocol uint8

const (
	// Eager: every member revokes all its partitions before it rejoins
	// (ConsumerCoordinator.onJoinPrepare), so a rebalance stops the world.
	Eager RebalanceProtocol = iota
	// Cooperative (KIP-429): a member keeps its partitions across the join
	// and revokes only those the new assignment takes away; a partition
	// moving between members goes in two rebalances.
	Cooperative
)

// String is Kafka's enum constant name.
func (p RebalanceProtocol) String() string {
	switch p {
	case Eager:
		return "EAGER"
	case Cooperative:
		return "COOPERATIVE"
	}
	return fmt.Sprintf("RebalanceProtocol(%d)", uint8(p))
}

// MemberSubscription is what one member of a classic group sent in its
// JoinGroup protocol metadata (Kafka's ConsumerPartitionAssignor.Subscription,
// ConsumerProtocolSubscription v3), as the leader hands it to the assignor.
type MemberSubscription struct {
	MemberID        string
	GroupInstanceID string // "" for a dynamic member
	// Topics the member subscribes to. Order and duplicates do not matter.
	Topics []string
	// OwnedPartitions are the partitions the member claims it owns. For
	// cooperative-sticky that is the member's current assignment (the
	// subscription's ownedPartitions); for sticky it is the previous
	// assignment the member carries in its user data (StickyAssignor's
	// memberData), since an eager member revoked everything before joining.
	// Range and round robin ignore them.
	OwnedPartitions []proto.TopicPartition
	// Generation is the generation OwnedPartitions were assigned in, -1 when
	// unknown (AbstractStickyAssignor.DEFAULT_GENERATION).
	Generation int32
	RackID     string // carried for completeness; rack-aware assignment is not modelled
}

// ClientAssignor is one of Kafka's ConsumerPartitionAssignor implementations
// that a classic group's leader runs.
type ClientAssignor interface {
	// Name is the short name, also the protocol name the member puts in its
	// JoinGroup request ("range", "cooperative-sticky").
	Name() string
	// Protocols are the rebalance protocols the assignor supports
	// (ConsumerPartitionAssignor.supportedProtocols), in Kafka's order.
	Protocols() []RebalanceProtocol
	// Assign computes the group's assignment. partitionsPerTopic has the
	// partition count of each subscribed topic; a subscribed topic missing
	// from it is not known to the leader's metadata yet, and is skipped.
	// The result has an entry, possibly empty, for every member, each list
	// sorted by topic then partition.
	Assign(partitionsPerTopic map[string]int32, members []MemberSubscription) map[string][]proto.TopicPartition
}

// Kafka's class names of the four built-in client assignors, as
// partition.assignment.strategy lists them.
const (
	RangeAssignorClass             = "org.apache.kafka.clients.consumer.RangeAssignor"
	RoundRobinAssignorClass        = "org.apache.kafka.clients.consumer.RoundRobinAssignor"
	StickyAssignorClass            = "org.apache.kafka.clients.consumer.StickyAssignor"
	CooperativeStickyAssignorClass = "org.apache.kafka.clients.consumer.CooperativeStickyAssignor"
)

// ClientAssignorByName finds a client assignor by its Kafka class name or its
// short name.
func ClientAssignorByName(name string) (ClientAssignor, bool) {
	switch name {
	case "range", RangeAssignorClass:
		return RangeAssignor{}, true
	case "roundrobin", RoundRobinAssignorClass:
		return RoundRobinAssignor{}, true
	case "sticky", StickyAssignorClass:
		return StickyAssignor{}, true
	case "cooperative-sticky", CooperativeStickyAssignorClass:
		return CooperativeStickyAssignor{}, true
	}
	return nil, false
}

// ParseStrategy parses a partition.assignment.strategy value: a
// comma-separated list of assignor names (Kafka's ConfigDef LIST type trims
// the blanks around each entry), in the consumer's order of preference.
// The list must not be empty: Kafka's consumer refuses to subscribe without
// an assignor.
func ParseStrategy(value string) ([]ClientAssignor, error) {
	trimmed := strings.TrimSpace(value)
	if trimmed == "" {
		return nil, fmt.Errorf("partition.assignment.strategy: must name at least one assignor")
	}
	var out []ClientAssignor
	for i, entry := range strings.Split(trimmed, ",") {
		entry = strings.TrimSpace(entry)
		a, ok := ClientAssignorByName(entry)
		if !ok {
			return nil, fmt.Errorf("partition.assignment.strategy: entry %d %q: not an assignor "+
				"(range, roundrobin, sticky, cooperative-sticky, or their Kafka class names)", i+1, entry)
		}
		out = append(out, a)
	}
	return out, nil
}

// RebalanceProtocolOf is the rebalance protocol a consumer with these
// assignors uses: the highest one all of them support (ConsumerCoordinator's
// constructor). With Kafka's default [range, cooperative-sticky] that is
// Eager. The four built-in assignors all support Eager, so the intersection
// is never empty; for an empty list it is Eager.
func RebalanceProtocolOf(assignors []ClientAssignor) RebalanceProtocol {
	if len(assignors) == 0 {
		return Eager
	}
	common := slices.Clone(assignors[0].Protocols())
	for _, a := range assignors[1:] {
		common = slices.DeleteFunc(common, func(p RebalanceProtocol) bool {
			return !slices.Contains(a.Protocols(), p)
		})
	}
	if len(common) == 0 {
		return Eager
	}
	return slices.Max(common)
}

// memberInfoCompare orders members as Kafka's
// AbstractPartitionAssignor.MemberInfo.compareTo: static members first, by
// group instance id; then dynamic ones, by member id.
func memberInfoCompare(aID, aInstance, bID, bInstance string) int {
	switch {
	case aInstance != "" && bInstance != "":
		if c := strings.Compare(aInstance, bInstance); c != 0 {
			return c
		}
		return strings.Compare(aID, bID) // equal instance ids cannot happen in one group; keep the order total
	case aInstance != "":
		return -1
	case bInstance != "":
		return 1
	}
	return strings.Compare(aID, bID)
}

// comparePartitions orders partitions by topic, then partition number.
func comparePartitions(a, b proto.TopicPartition) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return cmp.Compare(a.Partition, b.Partition)
}

// sortPartitions sorts ps by topic then partition, in place, and returns it.
func sortPartitions(ps []proto.TopicPartition) []proto.TopicPartition {
	slices.SortFunc(ps, comparePartitions)
	return ps
}

// subscribedTopicCounts keeps the entries of partitionsPerTopic for topics at
// least one member subscribes to, as AbstractPartitionAssignor.assign builds
// partitionsPerTopic from the members' subscriptions and the metadata.
func subscribedTopicCounts(partitionsPerTopic map[string]int32, members []MemberSubscription) map[string]int32 {
	out := make(map[string]int32)
	for _, m := range members {
		for _, t := range m.Topics {
			if n, ok := partitionsPerTopic[t]; ok {
				out[t] = max(n, 0)
			}
		}
	}
	return out
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m { // kafkasim:orderless: sorted below
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// topicSet is a member's subscription as a set.
func topicSet(topics []string) map[string]bool {
	s := make(map[string]bool, len(topics))
	for _, t := range topics {
		s[t] = true
	}
	return s
}

// emptyAssignment has an empty list for every member.
func emptyAssignment(members []MemberSubscription) map[string][]proto.TopicPartition {
	out := make(map[string][]proto.TopicPartition, len(members))
	for _, m := range members {
		out[m.MemberID] = []proto.TopicPartition{}
	}
	return out
}

// finish sorts every member's list.
func finish(a map[string][]proto.TopicPartition) map[string][]proto.TopicPartition {
	for _, ps := range a { // kafkasim:orderless: each list is sorted on its own
		sortPartitions(ps)
	}
	return a
}
