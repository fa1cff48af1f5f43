package assign

import (
	"slices"
	"strings"

	"kafkasim/model/proto"
)

// GroupMember is what the group coordinator of a KIP-848 consumer group
// hands its assignor about one member (Kafka's MemberSubscriptionAndAssignmentImpl).
type GroupMember struct {
	MemberID   string
	InstanceID string // "" for a dynamic member
	RackID     string // carried for completeness; rack-aware assignment is not modelled
	// Topics are the member's subscribed topic names. Order and duplicates
	// do not matter.
	Topics []string
	// Assigned is the member's current target assignment, which the uniform
	// assignor keeps as much of as balance allows.
	Assigned []proto.TopicPartition
}

// ServerAssignor is one of Kafka's ConsumerGroupPartitionAssignor
// implementations (group.consumer.assignors).
type ServerAssignor interface {
	// Name is the name a member asks for in ConsumerGroupHeartbeat's
	// ServerAssignor field, and group.consumer.assignors lists ("uniform",
	// "range").
	Name() string
	// Assign computes the group's target assignment. partitionsPerTopic has
	// the partition count of each subscribed topic; a subscribed topic
	// missing from it does not exist (Kafka resolves subscriptions against
	// the metadata image before the assignor runs) and is skipped. The
	// result has an entry, possibly empty, for every member, each list
	// sorted by topic then partition. Member ids must be unique.
	Assign(members []GroupMember, partitionsPerTopic map[string]int32) map[string][]proto.TopicPartition
}

// Kafka's class names of the two built-in server assignors.
const (
	UniformAssignorClass     = "org.apache.kafka.coordinator.group.assignor.UniformAssignor"
	ServerRangeAssignorClass = "org.apache.kafka.coordinator.group.assignor.RangeAssignor"
)

// ServerAssignorByName finds a server assignor by its name or Kafka class
// name. Kafka 4's group.consumer.assignors defaults to [uniform, range], the
// first being the default for members that name none.
func ServerAssignorByName(name string) (ServerAssignor, bool) {
	switch name {
	case "uniform", UniformAssignorClass:
		return UniformAssignor{}, true
	case "range", ServerRangeAssignorClass:
		return ServerRangeAssignor{}, true
	}
	return nil, false
}

// serverGroup is the assignor's view of the group: members sorted by member
// id (Kafka's GroupSpec is a HashMap), their subscriptions restricted to
// existing topics, and their current assignments cleaned of partitions
// Kafka's target assignments never hold: of unknown topics or out of range,
// or held by an earlier member too (the first member by id keeps it).
type serverGroup struct {
	members []GroupMember
	subs    []map[string]bool // existing subscribed topics, by member index
	counts  map[string]int32  // existing subscribed topics' partition counts
	// homogeneous: every member subscribes to the same topic names (Kafka's
	// SubscriptionType.HOMOGENEOUS, computed on names, existing or not).
	homogeneous bool
}

func newServerGroup(members []GroupMember, partitionsPerTopic map[string]int32) *serverGroup {
	sorted := slices.Clone(members)
	slices.SortFunc(sorted, func(a, b GroupMember) int { return strings.Compare(a.MemberID, b.MemberID) })
	g := &serverGroup{members: sorted, counts: make(map[string]int32), homogeneous: true}
	held := make(map[proto.TopicPartition]bool)
	for i, m := range sorted {
		names := topicSet(m.Topics)
		if i > 0 && !sameTopics(topicSet(sorted[0].Topics), names) {
			g.homogeneous = false
		}
		sub := make(map[string]bool)
		for t := range names { // kafkasim:orderless: fills a set and a map
			if n, ok := partitionsPerTopic[t]; ok {
				sub[t] = true
				g.counts[t] = max(n, 0)
			}
		}
		g.subs = append(g.subs, sub)
		assigned := sortPartitions(slices.Clone(m.Assigned))
		assigned = slices.DeleteFunc(assigned, func(tp proto.TopicPartition) bool {
			n, ok := partitionsPerTopic[tp.Topic]
			if !ok || tp.Partition < 0 || tp.Partition >= n || held[tp] {
				return true
			}
			held[tp] = true
			return false
		})
		g.members[i].Assigned = assigned
	}
	return g
}

// result has an empty list for every member.
func (g *serverGroup) emptyResult() map[string][]proto.TopicPartition {
	out := make(map[string][]proto.TopicPartition, len(g.members))
	for _, m := range g.members {
		out[m.MemberID] = []proto.TopicPartition{}
	}
	return out
}

// UniformAssignor is Kafka 4's org.apache.kafka.coordinator.group.assignor.UniformAssignor,
// the first of group.consumer.assignors: balanced (max−min ≤ 1 when all
// members subscribe to the same topics, as close as its bounded balancing
// gets otherwise) and sticky to each member's current target assignment.
type UniformAssignor struct{}

// Name is "uniform".
func (UniformAssignor) Name() string { return "uniform" }

// Assign runs UniformHomogeneousAssignmentBuilder when all members subscribe
// to the same topics, UniformHeterogeneousAssignmentBuilder otherwise.
func (UniformAssignor) Assign(members []GroupMember, partitionsPerTopic map[string]int32) map[string][]proto.TopicPartition {
	g := newServerGroup(members, partitionsPerTopic)
	if len(g.members) == 0 {
		return map[string][]proto.TopicPartition{}
	}
	if g.homogeneous {
		return finish(uniformHomogeneous(g))
	}
	return finish(uniformHeterogeneous(g))
}

// ServerRangeAssignor is Kafka 4's org.apache.kafka.coordinator.group.assignor.RangeAssignor:
// topic by topic, the subscribed members, static ones first by instance id
// and then the others by member id, take contiguous ranges, the first
// partitions%members one more; with equal subscriptions to topics of equal
// partition counts a member gets the same partition numbers of every topic
// (co-partitioning). Kafka 4's range assignor is a function of the
// membership alone: it reads no current assignment, so it is sticky only in
// that static members keep their place in the order (its class comment).
type ServerRangeAssignor struct{}

// Name is "range".
func (ServerRangeAssignor) Name() string { return "range" }

// Assign follows RangeAssignor.assignHomogeneousGroup and
// assignHeterogeneousGroup, which give the same ranges: each topic's
// subscribers in sortMemberIds order.
func (ServerRangeAssignor) Assign(members []GroupMember, partitionsPerTopic map[string]int32) map[string][]proto.TopicPartition {
	g := newServerGroup(members, partitionsPerTopic)
	out := g.emptyResult()
	order := make([]int, len(g.members))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		ma, mb := g.members[a], g.members[b]
		return memberInfoCompare(ma.MemberID, ma.InstanceID, mb.MemberID, mb.InstanceID)
	})
	for _, topic := range sortedKeys(g.counts) {
		var subscribers []int
		for _, i := range order {
			if g.subs[i][topic] {
				subscribers = append(subscribers, i)
			}
		}
		n, m := int(g.counts[topic]), len(subscribers)
		minQuota, extra := n/m, n%m
		next := 0
		for _, i := range subscribers {
			quota := minQuota
			if extra > 0 {
				quota++
				extra--
			}
			end := min(next+quota, n)
			id := g.members[i].MemberID
			for p := next; p < end; p++ {
				out[id] = append(out[id], proto.TopicPartition{Topic: topic, Partition: int32(p)})
			}
			next = end
		}
	}
	return finish(out)
}
