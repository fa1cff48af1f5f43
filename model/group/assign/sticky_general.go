package assign

import (
	"cmp"
	"slices"
	"strings"

	"kafkasim/model/proto"
)

// generalAssign is AbstractStickyAssignor.GeneralAssignmentBuilder without
// racks, for members whose subscriptions differ:
//  1. each member keeps the partitions it owns of topics it still subscribes
//     to;
//  2. each unassigned partition (topics with fewer potential members first)
//     goes to the member with the fewest partitions that subscribes to it;
//  3. partitions of topics with two or more potential members move from
//     members with more partitions to members with fewer until no move can
//     improve the balance (isBalanced), preferring to give a partition back
//     to its owner of an earlier generation, and never moving one partition
//     back and forth between two members (PartitionMovements); if that ends
//     less balanced than it started (getBalanceScore), the moves are undone.
//
// Where Kafka iterates a HashMap or HashSet, this iterates member ids and
// partitions in order; Java's TreeSet of members by assignment size is a
// sorted slice. Where Kafka would throw NullPointerException (a partition's
// earlier owner, or its current one, is not among the members taking part in
// the reassignment), that check is skipped instead. And a partition goes
// back to its owner of an earlier generation only if that member still
// subscribes to its topic: Kafka's performReassignments does not check, and
// would hand the member a partition it did not subscribe to (which the member
// then refuses and rejoins over, ConsumerCoordinator.onJoinComplete).
func generalAssign(st *stickyState) map[string][]proto.TopicPartition {
	g := newGeneralBuilder(st)
	return g.build()
}

// generalBuilder holds GeneralAssignmentBuilder's state.
type generalBuilder struct {
	st               *stickyState
	potentialMembers map[string][]string        // topic2AllPotentialConsumers, members in id order
	potentialTopics  map[string]map[string]bool // consumer2AllPotentialTopics
	current          map[string][]proto.TopicPartition
	partitionOwner   map[proto.TopicPartition]string // currentPartitionConsumer
	sortedAll        []proto.TopicPartition
	sorted           []string // sortedCurrentSubscriptions: by assignment size, then member id
	revocationNeeded bool
	movements        *partitionMovements
	prev             map[proto.TopicPartition]prevOwner
}

// prevOwner is ConsumerGenerationPair.
type prevOwner struct {
	member     string
	generation int32
}

func newGeneralBuilder(st *stickyState) *generalBuilder {
	g := &generalBuilder{
		st:               st,
		potentialMembers: make(map[string][]string, len(st.counts)),
		potentialTopics:  make(map[string]map[string]bool, len(st.members)),
		current:          make(map[string][]proto.TopicPartition, len(st.members)),
		partitionOwner:   make(map[proto.TopicPartition]string),
		movements:        newPartitionMovements(),
		prev:             make(map[proto.TopicPartition]prevOwner),
	}
	for topic := range st.counts { // kafkasim:orderless: fills a map
		g.potentialMembers[topic] = nil
	}
	for _, m := range st.members {
		topics := make(map[string]bool)
		for t := range st.subs[m.MemberID] { // kafkasim:orderless: fills a set and appends to per-topic lists in member order
			if _, ok := st.counts[t]; ok {
				topics[t] = true
				g.potentialMembers[t] = append(g.potentialMembers[t], m.MemberID)
			}
		}
		g.potentialTopics[m.MemberID] = topics
		g.current[m.MemberID] = slices.Clone(st.owned[m.MemberID])
		for _, tp := range g.current[m.MemberID] {
			g.partitionOwner[tp] = m.MemberID
		}
	}
	topics := sortedKeys(st.counts)
	slices.SortStableFunc(topics, func(a, b string) int {
		return cmp.Compare(len(g.potentialMembers[a]), len(g.potentialMembers[b]))
	})
	for _, t := range topics {
		for p := int32(0); p < st.counts[t]; p++ {
			g.sortedAll = append(g.sortedAll, proto.TopicPartition{Topic: t, Partition: p})
		}
	}
	return g
}

func (g *generalBuilder) build() map[string][]proto.TopicPartition {
	g.prepopulateCurrentAssignments()
	assigned := g.assignOwnedPartitions()
	var unassigned []proto.TopicPartition
	for _, tp := range g.sortedAll {
		if !assigned[tp] {
			unassigned = append(unassigned, tp)
		}
	}
	for _, m := range g.st.members {
		g.insertSorted(m.MemberID)
	}
	g.balance(unassigned)
	return g.current
}

// prepopulateCurrentAssignments records, for each partition claimed by a
// member of a generation older than the newest, its owner in the newest of
// those older generations (Kafka's prevAssignment).
func (g *generalBuilder) prepopulateCurrentAssignments() {
	for _, m := range g.st.members {
		gen := max(m.Generation, -1)
		if gen >= g.st.maxGeneration {
			continue
		}
		claims := slices.Clone(m.OwnedPartitions)
		sortPartitions(claims)
		for _, tp := range slices.Compact(claims) {
			if p, ok := g.prev[tp]; !ok || gen > p.generation {
				g.prev[tp] = prevOwner{member: m.MemberID, generation: gen}
			}
		}
	}
}

// assignOwnedPartitions keeps each member's owned partitions of topics it
// still subscribes to and drops the rest.
func (g *generalBuilder) assignOwnedPartitions() map[proto.TopicPartition]bool {
	assigned := make(map[proto.TopicPartition]bool)
	for _, m := range g.st.members {
		id := m.MemberID
		g.current[id] = slices.DeleteFunc(g.current[id], func(tp proto.TopicPartition) bool {
			if !g.st.subs[id][tp.Topic] {
				g.revocationNeeded = true
				return true
			}
			assigned[tp] = true
			return false
		})
	}
	return assigned
}

func (g *generalBuilder) balance(unassigned []proto.TopicPartition) {
	initializing := len(g.current[g.sorted[len(g.sorted)-1]]) == 0

	for _, tp := range unassigned {
		if len(g.potentialMembers[tp.Topic]) == 0 {
			continue
		}
		g.maybeAssignPartition(tp)
	}

	fixedTopic := func(tp proto.TopicPartition) bool { return !g.canTopicParticipate(tp.Topic) }
	g.sortedAll = slices.DeleteFunc(g.sortedAll, fixedTopic)
	unassigned = slices.DeleteFunc(unassigned, fixedTopic)

	fixed := make(map[string][]proto.TopicPartition)
	for _, m := range g.st.members {
		if !g.canMemberParticipate(m.MemberID) {
			g.removeSorted(m.MemberID)
			fixed[m.MemberID] = g.current[m.MemberID]
			delete(g.current, m.MemberID)
		}
	}

	preBalance := make(map[string][]proto.TopicPartition, len(g.current))
	for id, ps := range g.current { // kafkasim:orderless: a copy
		preBalance[id] = slices.Clone(ps)
	}
	preOwner := make(map[proto.TopicPartition]string, len(g.partitionOwner))
	for tp, id := range g.partitionOwner { // kafkasim:orderless: a copy
		preOwner[tp] = id
	}

	if !g.revocationNeeded {
		g.performReassignments(unassigned)
	}
	performed := g.performReassignments(g.sortedAll)

	if !initializing && performed && balanceScore(g.current) >= balanceScore(preBalance) {
		g.current = preBalance
		g.partitionOwner = preOwner
	}
	for id, ps := range fixed { // kafkasim:orderless: puts entries back in a map
		g.current[id] = ps
	}
}

// maybeAssignPartition gives tp to the member with the fewest partitions
// that subscribes to its topic.
func (g *generalBuilder) maybeAssignPartition(tp proto.TopicPartition) {
	for _, id := range g.sorted {
		if g.potentialTopics[id][tp.Topic] {
			g.removeSorted(id)
			g.current[id] = append(g.current[id], tp)
			g.partitionOwner[tp] = id
			g.insertSorted(id)
			return
		}
	}
}

func (g *generalBuilder) canTopicParticipate(topic string) bool {
	return len(g.potentialMembers[topic]) >= 2
}

func (g *generalBuilder) maxAssignmentSize(id string) int {
	n := 0
	for t := range g.potentialTopics[id] { // kafkasim:orderless: a sum
		n += int(g.st.counts[t])
	}
	return n
}

func (g *generalBuilder) canMemberParticipate(id string) bool {
	if len(g.current[id]) < g.maxAssignmentSize(id) {
		return true
	}
	for _, tp := range g.current[id] {
		if g.canTopicParticipate(tp.Topic) {
			return true
		}
	}
	return false
}

// isBalanced: sizes differ by at most one, or no member short of all it
// could hold could take a partition from a member with two more than it.
func (g *generalBuilder) isBalanced() bool {
	minSize := len(g.current[g.sorted[0]])
	maxSize := len(g.current[g.sorted[len(g.sorted)-1]])
	if minSize >= maxSize-1 {
		return true
	}
	for _, id := range g.sorted {
		count := len(g.current[id])
		if count == g.maxAssignmentSize(id) {
			continue
		}
		for topic := range g.potentialTopics[id] { // kafkasim:orderless: the answer is the same whichever topic finds a move
			for p := int32(0); p < g.st.counts[topic]; p++ {
				other, ok := g.partitionOwner[proto.TopicPartition{Topic: topic, Partition: p}]
				if !ok || other == id {
					continue
				}
				if otherPs, ok := g.current[other]; ok && count+1 < len(otherPs) {
					return false
				}
			}
		}
	}
	return true
}

// performReassignments moves partitions of list until the assignment is
// balanced or a whole pass moves nothing.
func (g *generalBuilder) performReassignments(list []proto.TopicPartition) bool {
	performed := false
	for modified := true; modified; {
		modified = false
		for _, tp := range list {
			if g.isBalanced() {
				break
			}
			owner, ok := g.partitionOwner[tp]
			if !ok {
				continue
			}
			ownerPs, ok := g.current[owner]
			if !ok {
				continue
			}
			if prev, ok := g.prev[tp]; ok && g.potentialTopics[prev.member][tp.Topic] {
				if prevPs, ok := g.current[prev.member]; ok && len(ownerPs) > len(prevPs)+1 {
					g.reassignPartitionTo(tp, prev.member)
					performed, modified = true, true
					continue
				}
			}
			for _, other := range g.potentialMembers[tp.Topic] {
				if len(ownerPs) > len(g.current[other])+1 {
					g.reassignPartition(tp)
					performed, modified = true, true
					break
				}
			}
		}
	}
	return performed
}

// reassignPartition moves tp to the member with the fewest partitions that
// subscribes to its topic.
func (g *generalBuilder) reassignPartition(tp proto.TopicPartition) {
	for _, id := range g.sorted {
		if g.potentialTopics[id][tp.Topic] {
			g.reassignPartitionTo(tp, id)
			return
		}
	}
}

func (g *generalBuilder) reassignPartitionTo(tp proto.TopicPartition, to string) {
	from := g.partitionOwner[tp]
	g.processPartitionMovement(g.movements.actualPartitionToMove(tp, from, to), to)
}

func (g *generalBuilder) processPartitionMovement(tp proto.TopicPartition, to string) {
	from := g.partitionOwner[tp]
	g.removeSorted(from)
	g.removeSorted(to)
	g.movements.movePartition(tp, from, to)
	g.current[from] = removePartition(g.current[from], tp)
	g.current[to] = append(g.current[to], tp)
	g.partitionOwner[tp] = to
	g.insertSorted(to)
	g.insertSorted(from)
}

// compareBySize is SubscriptionComparator: assignment size, then member id.
func (g *generalBuilder) compareBySize(a, b string) int {
	if c := cmp.Compare(len(g.current[a]), len(g.current[b])); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func (g *generalBuilder) insertSorted(id string) {
	i, found := slices.BinarySearchFunc(g.sorted, id, g.compareBySize)
	if !found {
		g.sorted = slices.Insert(g.sorted, i, id)
	}
}

func (g *generalBuilder) removeSorted(id string) {
	if i := slices.Index(g.sorted, id); i >= 0 {
		g.sorted = slices.Delete(g.sorted, i, i+1)
	}
}

// balanceScore is getBalanceScore: the sum over pairs of members of the
// difference of their assignment sizes.
func balanceScore(a map[string][]proto.TopicPartition) int {
	sizes := make([]int, 0, len(a))
	for _, ps := range a { // kafkasim:orderless: sorted below
		sizes = append(sizes, len(ps))
	}
	slices.Sort(sizes)
	score, prefix := 0, 0
	for i, s := range sizes {
		score += s*i - prefix
		prefix += s
	}
	return score
}
