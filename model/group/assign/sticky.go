package assign

import (
	"slices"
	"strings"

	"kafkasim/model/proto"
)

// StickyAssignor is Kafka's org.apache.kafka.clients.consumer.StickyAssignor
// (eager): as balanced as round robin, while each member keeps as many of
// the partitions it had as balance allows (AbstractStickyAssignor).
type StickyAssignor struct{}

// Name is "sticky".
func (StickyAssignor) Name() string { return "sticky" }

// Protocols is [Eager].
func (StickyAssignor) Protocols() []RebalanceProtocol { return []RebalanceProtocol{Eager} }

// Assign runs AbstractStickyAssignor.assignPartitions.
func (StickyAssignor) Assign(partitionsPerTopic map[string]int32, members []MemberSubscription) map[string][]proto.TopicPartition {
	a, _ := stickyAssign(partitionsPerTopic, members)
	return finish(a)
}

// CooperativeStickyAssignor is Kafka's
// org.apache.kafka.clients.consumer.CooperativeStickyAssignor: the sticky
// assignment, less every partition that moves from one member to another.
// The old owner revokes such a partition when it sees its new assignment;
// its revocation makes it rejoin (ConsumerCoordinator.onJoinComplete), and
// that second rebalance grants the partition to its new owner.
type CooperativeStickyAssignor struct{}

// Name is "cooperative-sticky".
func (CooperativeStickyAssignor) Name() string { return "cooperative-sticky" }

// Protocols is [Cooperative, Eager], in Kafka's order.
func (CooperativeStickyAssignor) Protocols() []RebalanceProtocol {
	return []RebalanceProtocol{Cooperative, Eager}
}

// Assign is AssignCooperative's assignment.
func (c CooperativeStickyAssignor) Assign(partitionsPerTopic map[string]int32, members []MemberSubscription) map[string][]proto.TopicPartition {
	a, _ := c.AssignCooperative(partitionsPerTopic, members)
	return a
}

// Transfer is a partition the cooperative assignor held back from the
// member the sticky assignment gives it to, because another member owns it
// now and must revoke it first.
type Transfer struct {
	Partition proto.TopicPartition
	To        string // the member that gets it in the next rebalance
}

// AssignCooperative is CooperativeStickyAssignor.assign: the sticky
// assignment, and the partitions it held back (adjustAssignment), sorted.
// With equal subscriptions the held-back partitions are those the
// constrained builder took from their valid owner, or that several members
// claimed in the same generation (partitionsTransferringOwnership); otherwise
// they are those the sticky assignment gives to a member that did not claim
// them while another member claimed them (computePartitionsTransferringOwnership,
// which compares the claims as sent, generations aside).
func (CooperativeStickyAssignor) AssignCooperative(partitionsPerTopic map[string]int32, members []MemberSubscription) (map[string][]proto.TopicPartition, []Transfer) {
	a, transferring := stickyAssign(partitionsPerTopic, members)
	if transferring == nil {
		transferring = computePartitionsTransferringOwnership(members, a)
	}
	var held []Transfer
	for tp, to := range transferring { // kafkasim:orderless: held is sorted below; removals commute
		a[to] = slices.DeleteFunc(a[to], func(p proto.TopicPartition) bool { return p == tp })
		held = append(held, Transfer{Partition: tp, To: to})
	}
	slices.SortFunc(held, func(x, y Transfer) int { return comparePartitions(x.Partition, y.Partition) })
	return finish(a), held
}

// computePartitionsTransferringOwnership is CooperativeStickyAssignor's: the
// partitions some member gets without claiming them, that another member
// claimed and does not keep.
func computePartitionsTransferringOwnership(members []MemberSubscription, a map[string][]proto.TopicPartition) map[proto.TopicPartition]string {
	added := make(map[proto.TopicPartition]string)
	revoked := make(map[proto.TopicPartition]bool)
	for _, m := range members {
		owned := make(map[proto.TopicPartition]bool, len(m.OwnedPartitions))
		for _, tp := range m.OwnedPartitions {
			owned[tp] = true
		}
		assigned := make(map[proto.TopicPartition]bool, len(a[m.MemberID]))
		for _, tp := range a[m.MemberID] {
			assigned[tp] = true
			if !owned[tp] {
				added[tp] = m.MemberID
			}
		}
		for _, tp := range m.OwnedPartitions {
			if !assigned[tp] {
				revoked[tp] = true
			}
		}
	}
	for tp := range added { // kafkasim:orderless: deleting from a map while ranging is defined and order-free
		if !revoked[tp] {
			delete(added, tp)
		}
	}
	return added
}

// stickyState is what AbstractStickyAssignor.allSubscriptionsEqual finds.
type stickyState struct {
	counts  map[string]int32     // the subscribed topics' partition counts
	members []MemberSubscription // sorted by member id
	subs    map[string]map[string]bool
	// owned is each member's previously owned, still existing partitions
	// (consumerToOwnedPartitions) after claims in conflict are settled.
	owned map[string][]proto.TopicPartition
	// multi holds the partitions two members claimed in the same generation
	// (partitionsWithMultiplePreviousOwners).
	multi         map[proto.TopicPartition]bool
	maxGeneration int32
	allEqual      bool
}

// stickyAssign is AbstractStickyAssignor.assignPartitions without racks. The
// second result is partitionsTransferringOwnership: set by the constrained
// builder, nil after the general one (which leaves the cooperative assignor
// to compute it).
func stickyAssign(partitionsPerTopic map[string]int32, members []MemberSubscription) (map[string][]proto.TopicPartition, map[proto.TopicPartition]string) {
	if len(members) == 0 {
		return map[string][]proto.TopicPartition{}, map[proto.TopicPartition]string{}
	}
	st := allSubscriptionsEqual(subscribedTopicCounts(partitionsPerTopic, members), members)
	if st.allEqual {
		return constrainedAssign(st)
	}
	return generalAssign(st), nil
}

// allSubscriptionsEqual follows AbstractStickyAssignor.allSubscriptionsEqual.
// Members are visited in member id order (Kafka visits a HashMap). A claim on
// a partition another member claims is settled by generation: the higher
// wins; in the same generation neither keeps it and it goes in multi. Two
// departures from Kafka, both on input a Kafka client never sends: a member
// with an empty subscription is not skipped when comparing subscriptions
// (Kafka's check starts from the first non-empty one), and claims on
// partitions the topic does not have, or repeated claims by one member, are
// dropped.
func allSubscriptionsEqual(counts map[string]int32, members []MemberSubscription) *stickyState {
	sorted := slices.Clone(members)
	slices.SortFunc(sorted, func(a, b MemberSubscription) int { return strings.Compare(a.MemberID, b.MemberID) })
	st := &stickyState{
		counts:        counts,
		members:       sorted,
		subs:          make(map[string]map[string]bool, len(sorted)),
		owned:         make(map[string][]proto.TopicPartition, len(sorted)),
		multi:         make(map[proto.TopicPartition]bool),
		maxGeneration: -1,
		allEqual:      true,
	}
	generation := make(map[string]int32, len(sorted))
	owner := make(map[proto.TopicPartition]string)
	for i, m := range sorted {
		st.subs[m.MemberID] = topicSet(m.Topics)
		if i > 0 && !sameTopics(st.subs[sorted[0].MemberID], st.subs[m.MemberID]) {
			st.allEqual = false
		}
		gen := max(m.Generation, -1)
		generation[m.MemberID] = gen
		st.maxGeneration = max(st.maxGeneration, gen)
		claims := slices.Clone(m.OwnedPartitions)
		sortPartitions(claims)
		claims = slices.Compact(claims)
		st.owned[m.MemberID] = []proto.TopicPartition{}
		for _, tp := range claims {
			n, ok := counts[tp.Topic]
			if !ok || tp.Partition < 0 || tp.Partition >= n {
				continue
			}
			other, claimed := owner[tp]
			switch {
			case !claimed:
				st.owned[m.MemberID] = append(st.owned[m.MemberID], tp)
				owner[tp] = m.MemberID
			case gen == generation[other]:
				st.multi[tp] = true
				st.owned[other] = removePartition(st.owned[other], tp)
				owner[tp] = m.MemberID
			case gen > generation[other]:
				st.owned[m.MemberID] = append(st.owned[m.MemberID], tp)
				st.owned[other] = removePartition(st.owned[other], tp)
				owner[tp] = m.MemberID
			}
			// gen < the other's: the other member keeps it.
		}
	}
	return st
}

// sameTopics is set equality.
func sameTopics(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for t := range a { // kafkasim:orderless: a membership test
		if !b[t] {
			return false
		}
	}
	return true
}

// removePartition removes tp from ps (Java's List.remove(Object)).
func removePartition(ps []proto.TopicPartition, tp proto.TopicPartition) []proto.TopicPartition {
	if i := slices.Index(ps, tp); i >= 0 {
		return slices.Delete(ps, i, i+1)
	}
	return ps
}
