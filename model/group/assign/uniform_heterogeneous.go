package assign

import (
	"cmp"
	"slices"
	"strings"

	"kafkasim/model/proto"
)

// maxBalanceIterations is UniformHeterogeneousAssignmentBuilder.MAX_ITERATION_COUNT:
// the passes over the topics the final balancing makes at most. Overlapping,
// unequal subscriptions can need many passes to converge; each roughly
// halves the imbalance.
const maxBalanceIterations = 16

// uniformHeterogeneous is Kafka 4's UniformHeterogeneousAssignmentBuilder,
// for members whose subscriptions differ:
//  1. each member keeps its current partitions of topics it subscribes to;
//  2. topic by topic (most partitions per subscriber first, then fewest
//     subscribers, then name), the unassigned partitions go one at a time to
//     the topic's subscriber with the fewest partitions in all;
//  3. topic by topic, partitions move from the topic's most loaded
//     subscribers to its least loaded ones until their totals differ by at
//     most one, for at most maxBalanceIterations passes.
//
// Member indices are positions in member id order (Kafka numbers members in
// its GroupSpec's HashMap order); topic ties break on name where Kafka's
// break on topic id.
func uniformHeterogeneous(g *serverGroup) map[string][]proto.TopicPartition {
	h := &heterogeneousBuilder{
		g:           g,
		sizes:       make([]int, len(g.members)),
		owners:      make(map[string][]int, len(g.counts)),
		subscribers: make(map[string][]int, len(g.counts)),
	}
	for i := range g.members {
		for _, t := range sortedKeys(g.subs[i]) {
			h.subscribers[t] = append(h.subscribers[t], i)
		}
	}
	out := g.emptyResult()
	if len(g.counts) == 0 {
		return out
	}
	for t, n := range g.counts { // kafkasim:orderless: fills a map
		owners := make([]int, n)
		for p := range owners {
			owners[p] = -1
		}
		h.owners[t] = owners
	}
	// maybeRevokePartitions: keep what members hold of their subscriptions.
	for i, m := range g.members {
		for _, tp := range m.Assigned {
			if g.subs[i][tp.Topic] {
				h.owners[tp.Topic][tp.Partition] = i
				h.sizes[i]++
			}
		}
	}
	h.assignRemainingPartitions()
	h.balance()
	for _, t := range sortedKeys(h.owners) {
		for p, i := range h.owners[t] {
			id := g.members[i].MemberID
			out[id] = append(out[id], proto.TopicPartition{Topic: t, Partition: int32(p)})
		}
	}
	return out
}

// heterogeneousBuilder holds UniformHeterogeneousAssignmentBuilder's state.
type heterogeneousBuilder struct {
	g           *serverGroup
	sizes       []int            // memberTargetAssignmentSizes
	owners      map[string][]int // targetAssignmentPartitionOwners: member index, -1 unassigned
	subscribers map[string][]int // topicSubscribers, ascending
}

// compareTopics is topicComparator: partitions per subscriber descending,
// then subscribers ascending, then name.
func (h *heterogeneousBuilder) compareTopics(a, b string) int {
	na, nb := int64(h.g.counts[a]), int64(h.g.counts[b])
	sa, sb := int64(len(h.subscribers[a])), int64(len(h.subscribers[b]))
	if c := cmp.Compare(nb*sa, na*sb); c != 0 { // nb/sb vs na/sa, exactly
		return c
	}
	if c := cmp.Compare(sa, sb); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

func (h *heterogeneousBuilder) sortTopics(topics []string) []string {
	slices.SortFunc(topics, h.compareTopics)
	return topics
}

func (h *heterogeneousBuilder) assign(topic string, partition int, member int) {
	if old := h.owners[topic][partition]; old != -1 {
		h.sizes[old]--
	}
	h.owners[topic][partition] = member
	h.sizes[member]++
}

func (h *heterogeneousBuilder) assignRemainingPartitions() {
	unassigned := make(map[string][]int)
	for t, owners := range h.owners { // kafkasim:orderless: fills a map; topics are sorted below
		for p, o := range owners {
			if o == -1 {
				unassigned[t] = append(unassigned[t], p)
			}
		}
	}
	b := &memberBalancer{sizes: h.sizes}
	for _, t := range h.sortTopics(sortedKeys(unassigned)) {
		b.initialize(h.subscribers[t])
		for _, p := range unassigned[t] {
			h.assign(t, p, b.nextLeastLoaded())
		}
	}
}

func (h *heterogeneousBuilder) balance() {
	var topics []string
	for _, t := range sortedKeys(h.owners) {
		if len(h.subscribers[t]) >= 2 {
			topics = append(topics, t)
		}
	}
	if len(topics) == 0 {
		return
	}
	h.sortTopics(topics)
	last := -1
	b := &memberBalancer{sizes: h.sizes}
	for range maxBalanceIterations {
		for i, t := range topics {
			if i == last {
				// A whole pass since the last topic that moved anything.
				return
			}
			if h.balanceTopic(t, b) > 0 || last == -1 {
				last = i
			}
		}
	}
}

// balanceTopic moves partitions of topic from its most loaded subscribers
// (their last partition by number) to its least loaded ones; it returns how
// many moved.
func (h *heterogeneousBuilder) balanceTopic(topic string, b *memberBalancer) int {
	if b.initialize(h.subscribers[topic]) <= 1 {
		return 0
	}
	owners := h.owners[topic]
	partitions := make([]int, len(owners))
	for p := range partitions {
		partitions[p] = p
	}
	slices.SortFunc(partitions, func(x, y int) int {
		if c := cmp.Compare(owners[x], owners[y]); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	start, end := make(map[int]int), make(map[int]int)
	for i, p := range partitions {
		if _, ok := start[owners[p]]; !ok {
			start[owners[p]] = i
		}
		end[owners[p]] = i + 1
	}
	moved := 0
	for !b.isBalanced() {
		most := -1
		for {
			most = b.nextMostLoaded()
			if most == -1 {
				break
			}
			if e, ok := end[most]; !ok || e-start[most] <= 0 {
				b.excludeMostLoaded()
				continue
			}
			break
		}
		if most == -1 {
			break
		}
		p := partitions[end[most]-1]
		end[most]--
		least := b.nextLeastLoaded()
		if b.isBalanced() {
			break
		}
		h.assign(topic, p, least)
		moved++
	}
	return moved
}

// memberBalancer is UniformHeterogeneousAssignmentBuilder.MemberAssignmentBalancer:
// over one topic's subscribers sorted by total assigned partitions, a range
// of least loaded members that grows rightwards as they fill, and a range of
// most loaded ones that grows leftwards as they empty.
type memberBalancer struct {
	sizes  []int
	sorted []int

	leastEnd   int // [0, leastEnd): the least loaded range
	leastCount int // its partition count before it took more
	nextLeast  int

	mostStart int // [mostStart, mostEnd): the most loaded range
	mostEnd   int
	mostCount int // its partition count before it gave any up
	nextMost  int
}

// initialize starts over on members; it returns the difference between the
// most and least loaded.
func (b *memberBalancer) initialize(members []int) int {
	b.sorted = append(b.sorted[:0], members...)
	slices.SortFunc(b.sorted, func(x, y int) int {
		if c := cmp.Compare(b.sizes[x], b.sizes[y]); c != 0 {
			return c
		}
		return cmp.Compare(x, y)
	})
	n := len(b.sorted)
	b.leastEnd, b.leastCount, b.nextLeast = 0, b.sizes[b.sorted[0]]-1, 0
	b.mostStart, b.mostEnd, b.mostCount, b.nextMost = n, n, b.sizes[b.sorted[n-1]]+1, n-1
	return b.sizes[b.sorted[n-1]] - b.sizes[b.sorted[0]]
}

// nextLeastLoaded is the member to give the next partition to; it assumes
// that member takes it.
func (b *memberBalancer) nextLeastLoaded() int {
	if b.nextLeast >= b.leastEnd {
		b.leastCount++
		for b.leastEnd < len(b.sorted) && b.sizes[b.sorted[b.leastEnd]] == b.leastCount {
			b.leastEnd++
		}
		b.nextLeast = 0
	}
	m := b.sorted[b.nextLeast]
	b.nextLeast++
	return m
}

// nextMostLoaded is the member to take the next partition from, or -1; it
// assumes that member gives one up.
func (b *memberBalancer) nextMostLoaded() int {
	if b.nextMost < b.mostStart {
		if b.mostEnd <= b.mostStart && b.mostStart > 0 {
			// The range emptied by exclusions: restart it from the next
			// member down, so that it expands below.
			b.mostCount = b.sizes[b.sorted[b.mostStart-1]]
		} else {
			b.mostCount--
		}
		for b.mostStart > 0 && b.sizes[b.sorted[b.mostStart-1]] == b.mostCount {
			b.mostStart--
		}
		b.nextMost = b.mostEnd - 1
	}
	if b.nextMost < 0 {
		return -1
	}
	m := b.sorted[b.nextMost]
	b.nextMost--
	return m
}

// excludeMostLoaded drops the member nextMostLoaded last returned from the
// most loaded range: it has nothing of this topic to give up.
func (b *memberBalancer) excludeMostLoaded() {
	m := b.sorted[b.nextMost+1]
	b.sorted[b.nextMost+1] = b.sorted[b.mostEnd-1]
	b.sorted[b.mostEnd-1] = m
	b.mostEnd--
}

// isBalanced: the two ranges' counts differ by at most one.
func (b *memberBalancer) isBalanced() bool { return b.mostCount-b.leastCount <= 1 }
