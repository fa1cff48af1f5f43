package consumergroup

import (
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"strings"

	"kafkasim/model/proto"
)

// Group is one consumer group as its records built it (Kafka's
// ConsumerGroup, without the soft state: timers live with the shell).
// Handlers read it; only Replay changes it.
type Group struct {
	id string
	// exists: a record of the group was replayed and no group tombstone
	// after it (Kafka creates the group on its first record).
	exists          bool
	groupEpoch      int32
	metadataHash    uint64
	assignmentEpoch int32
	members         map[string]*Member
	// target is the target assignment of each member, as of
	// assignmentEpoch (absent: none written).
	target map[string][]proto.TopicPartition
}

// New is an empty group that does not exist yet: a join's records create
// it.
func New(groupID string) *Group {
	return &Group{id: groupID, members: map[string]*Member{}, target: map[string][]proto.TopicPartition{}}
}

// Clone is a deep copy: the shell's snapshot to restore when a change's
// records fail to commit.
func (g *Group) Clone() *Group {
	c := *g
	c.members = make(map[string]*Member, len(g.members))
	for id, m := range g.members { // kafkasim:orderless: filling a map
		c.members[id] = m.clone()
	}
	c.target = make(map[string][]proto.TopicPartition, len(g.target))
	for id, t := range g.target { // kafkasim:orderless: filling a map
		c.target[id] = slices.Clone(t)
	}
	return &c
}

// ID is the group id.
func (g *Group) ID() string { return g.id }

// Exists tells whether the group's records created it (and no tombstone
// deleted it).
func (g *Group) Exists() bool { return g.exists }

// GroupEpoch is the epoch of the group's membership and subscriptions.
func (g *Group) GroupEpoch() int32 { return g.groupEpoch }

// AssignmentEpoch is the group epoch the target assignment was computed
// for.
func (g *Group) AssignmentEpoch() int32 { return g.assignmentEpoch }

// Member is a copy of the member with that id, or nil.
func (g *Group) Member(memberID string) *Member {
	if m := g.members[memberID]; m != nil {
		return m.clone()
	}
	return nil
}

// MemberIDs are the members' ids, sorted.
func (g *Group) MemberIDs() []string {
	return slices.Sorted(maps.Keys(g.members))
}

// Target is a member's target assignment (nil: none).
func (g *Group) Target(memberID string) []proto.TopicPartition {
	return slices.Clone(g.target[memberID])
}

// Empty tells whether the group has no member (Kafka's Empty state).
func (g *Group) Empty() bool { return len(g.members) == 0 }

// staticMember is ConsumerGroup.staticMember: the member holding the
// instance id, or nil. Kafka keeps an index; a group here is small enough
// to scan.
func (g *Group) staticMember(instanceID string) *Member {
	if instanceID == "" {
		return nil
	}
	for _, id := range g.MemberIDs() {
		if m := g.members[id]; m.InstanceID == instanceID {
			return m
		}
	}
	return nil
}

// targetOf is ConsumerGroup.targetAssignment(memberId, instanceId): a
// static member that replaces another takes the departed one's target.
func (g *Group) targetOf(memberID, instanceID string) []proto.TopicPartition {
	if prev := g.staticMember(instanceID); prev != nil && prev.MemberID != memberID {
		return g.target[prev.MemberID]
	}
	return g.target[memberID]
}

// partitionEpochs is ConsumerGroup.currentPartitionEpoch as a map: the
// epoch of the member holding each partition, assigned or pending
// revocation. A partition absent is free (Kafka's -1).
func (g *Group) partitionEpochs() map[proto.TopicPartition]int32 {
	held := map[proto.TopicPartition]int32{}
	for _, m := range g.members { // kafkasim:orderless: filling a map
		for _, tp := range m.Assigned {
			held[tp] = m.MemberEpoch
		}
		for _, tp := range m.PendingRevocation {
			held[tp] = m.MemberEpoch
		}
	}
	return held
}

// PartitionCounts is the broker's metadata image as the group sees it: a
// topic's partition count, false for a topic that does not exist.
type PartitionCounts func(topic string) (int32, bool)

// subscribedTopics is the union of the members' subscriptions, sorted.
func subscribedTopics(members []*Member) []string {
	var topics []string
	for _, m := range members {
		topics = append(topics, m.SubscribedTopicNames...)
	}
	return normalizeTopics(topics)
}

// metadataHash stands for Kafka 4.1's group metadata hash
// (Utils.computeGroupHash over the subscribed topics' hashes): it changes
// when a subscribed topic appears, disappears or gains partitions. Kafka
// hashes each topic's id, name, partition count and racks with Murmur3;
// here FNV-1a over the names and partition counts of the topics that exist.
func metadataHash(topics []string, counts PartitionCounts) uint64 {
	h := fnv.New64a()
	var b []byte
	for _, t := range topics {
		n, ok := counts(t)
		if !ok {
			continue
		}
		b = append(b[:0], t...)
		b = append(b, 0)
		b = strconv.AppendInt(b, int64(n), 10)
		b = append(b, 0)
		h.Write(b)
	}
	return h.Sum64()
}

// view is the members a change leaves in the group: the current ones with
// updated put in (nil: none) and removed taken out (""), sorted by id.
func (g *Group) view(updated *Member, removed string) []*Member {
	var out []*Member
	for _, id := range g.MemberIDs() {
		if id == removed || (updated != nil && id == updated.MemberID) {
			continue
		}
		out = append(out, g.members[id])
	}
	if updated != nil {
		out = append(out, updated)
		slices.SortFunc(out, func(a, b *Member) int { return strings.Compare(a.MemberID, b.MemberID) })
	}
	return out
}
