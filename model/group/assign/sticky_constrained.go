package assign

import (
	"cmp"
	"slices"
	"strings"

	"kafkasim/model/proto"
)

// constrainedAssign is AbstractStickyAssignor.ConstrainedAssignmentBuilder
// without racks, for a group whose members all subscribe to the same
// topics. Every member gets minQuota or maxQuota partitions (so max−min ≤ 1),
// keeping its owned partitions up to its quota:
//  1. each member (in member id order; Kafka's is a HashMap's) keeps its
//     owned partitions, sorted by partition then topic, up to minQuota, or
//     up to maxQuota while fewer members than partitions%members have taken
//     maxQuota; the rest are revoked;
//  2. the unassigned partitions, sorted by topic then partition, go round
//     robin to the members under minQuota, then one each to members at
//     minQuota until partitions%members members hold maxQuota.
//
// The second result is partitionsTransferringOwnership: the partitions given
// to a member other than the one that owned them, or claimed by several
// members in the same generation.
func constrainedAssign(st *stickyState) (map[string][]proto.TopicPartition, map[proto.TopicPartition]string) {
	total := 0
	for _, n := range st.counts { // kafkasim:orderless: a sum
		total += int(n)
	}
	numMembers := len(st.members)
	minQuota := total / numMembers
	maxQuota := (total + numMembers - 1) / numMembers
	expectedOverMin := total % numMembers
	currentOverMin := 0

	assignment := make(map[string][]proto.TopicPartition, numMembers)
	assigned := make(map[proto.TopicPartition]bool)
	revoked := make(map[proto.TopicPartition]bool)
	transferring := make(map[proto.TopicPartition]string)
	var underMin, exactlyMin []string

	// Step 1: assignOwnedPartitions.
	for _, m := range st.members {
		id := m.MemberID
		owned := slices.DeleteFunc(slices.Clone(st.owned[id]), func(tp proto.TopicPartition) bool { return st.multi[tp] })
		slices.SortFunc(owned, func(a, b proto.TopicPartition) int {
			if c := cmp.Compare(a.Partition, b.Partition); c != 0 {
				return c
			}
			return strings.Compare(a.Topic, b.Topic)
		})
		keep := owned
		switch {
		case len(owned) < minQuota:
			underMin = append(underMin, id)
		case len(owned) >= maxQuota && currentOverMin < expectedOverMin:
			currentOverMin++
			if currentOverMin == expectedOverMin {
				exactlyMin = exactlyMin[:0]
			}
			keep = owned[:maxQuota]
		default:
			keep = owned[:minQuota]
			if currentOverMin < expectedOverMin {
				exactlyMin = append(exactlyMin, id)
			}
		}
		for _, tp := range owned[len(keep):] {
			revoked[tp] = true
		}
		assignment[id] = slices.Clone(keep)
		for _, tp := range keep {
			assigned[tp] = true
		}
	}

	var unassigned []proto.TopicPartition
	for _, topic := range sortedKeys(st.counts) {
		for p := int32(0); p < st.counts[topic]; p++ {
			if tp := (proto.TopicPartition{Topic: topic, Partition: p}); !assigned[tp] {
				unassigned = append(unassigned, tp)
			}
		}
	}
	slices.Sort(underMin)
	slices.Sort(exactlyMin)

	assignNew := func(tp proto.TopicPartition, id string) int {
		assignment[id] = append(assignment[id], tp)
		if revoked[tp] || st.multi[tp] {
			transferring[tp] = id
		}
		return len(assignment[id])
	}

	// Step 2: assignRoundRobin. next is an iterator over underMin (Java's
	// LinkedList iterator, with remove).
	next := 0
	for _, tp := range unassigned {
		var id string
		fromUnder := false
		switch {
		case next < len(underMin):
			id, fromUnder = underMin[next], true
			next++
		case len(underMin) == 0 && len(exactlyMin) == 0:
			// Kafka throws IllegalStateException here: the quotas are
			// computed to fit, so it cannot happen.
			panic("assign: constrained sticky assignment ran out of members with room")
		case len(underMin) == 0:
			id, exactlyMin = exactlyMin[0], exactlyMin[1:]
		default:
			next = 0
			id, fromUnder = underMin[next], true
			next++
		}
		count := assignNew(tp, id)
		switch {
		case count == minQuota:
			if fromUnder {
				next--
				underMin = slices.Delete(underMin, next, next+1)
			}
			exactlyMin = append(exactlyMin, id)
		case count == maxQuota:
			currentOverMin++
		}
	}
	return assignment, transferring
}
