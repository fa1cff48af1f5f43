package assign

import "kafkasim/model/proto"

// uniformHomogeneous is Kafka 4's UniformHomogeneousAssignmentBuilder, for a
// group whose members all subscribe to the same topics:
//  1. each member in member id order gets quota minQuota, plus one while
//     fewer than partitions%members members got the extra one; it keeps its
//     current partitions of subscribed topics up to its quota (topics by
//     name, partitions by number), and the rest are revoked;
//  2. the unassigned partitions (those no member held, by topic then
//     partition, then the revoked ones) fill the members short of their
//     quota, in member id order.
//
// So max−min ≤ 1, and a member keeps what it had up to its quota; the members
// that get the extra partition are the first by id, whatever they held.
func uniformHomogeneous(g *serverGroup) map[string][]proto.TopicPartition {
	out := g.emptyResult()
	topics := sortedKeys(g.counts) // the first member's existing subscribed topics: all members'
	if len(topics) == 0 {
		return out
	}
	held := make(map[proto.TopicPartition]bool)
	for _, m := range g.members {
		for _, tp := range m.Assigned {
			held[tp] = true
		}
	}
	var unassigned []proto.TopicPartition
	total := 0
	for _, t := range topics {
		for p := int32(0); p < g.counts[t]; p++ {
			if tp := (proto.TopicPartition{Topic: t, Partition: p}); !held[tp] {
				unassigned = append(unassigned, tp)
			}
		}
		total += int(g.counts[t])
	}
	minQuota, extra := total/len(g.members), total%len(g.members)

	type unfilled struct {
		id        string
		remaining int
	}
	var short []unfilled
	for i, m := range g.members {
		quota := minQuota
		if extra > 0 {
			quota++
			extra--
		}
		// m.Assigned is sorted by topic then partition: Kafka's per-topic
		// pass over one topic's partitions at a time, in order.
		byTopic := groupByTopic(m.Assigned)
		for _, t := range sortedKeys(byTopic) {
			ps := byTopic[t]
			if !g.subs[i][t] {
				continue // the whole topic is revoked; no member subscribes to it
			}
			if len(ps) <= quota {
				quota -= len(ps)
				out[m.MemberID] = append(out[m.MemberID], ps...)
				continue
			}
			out[m.MemberID] = append(out[m.MemberID], ps[:quota]...)
			unassigned = append(unassigned, ps[quota:]...)
			quota = 0
		}
		if quota > 0 {
			short = append(short, unfilled{id: m.MemberID, remaining: quota})
		}
	}
	next := 0
	for _, u := range short {
		for i := 0; i < u.remaining && next < len(unassigned); i++ {
			out[u.id] = append(out[u.id], unassigned[next])
			next++
		}
	}
	if next < len(unassigned) {
		// Kafka throws PartitionAssignorException: the quotas add up to the
		// partitions, so it cannot happen.
		panic("assign: uniform assignment left partitions unassigned")
	}
	return out
}

// groupByTopic splits a sorted partition list by topic.
func groupByTopic(ps []proto.TopicPartition) map[string][]proto.TopicPartition {
	out := make(map[string][]proto.TopicPartition)
	for _, tp := range ps {
		out[tp.Topic] = append(out[tp.Topic], tp)
	}
	return out
}
