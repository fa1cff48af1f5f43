package assign

import (
	"fmt"
	"testing"

	"kafkasim/model/proto"
)

// benchGroup is 50 members over 5 topics of 100 partitions (500 in all).
// With equal set, all subscribe to all topics; otherwise member i
// subscribes to topics i%5 and (i+1)%5 and (i+3)%5. Each member owns what a
// first assignment gave it, less the last member, who left.
func benchGroup(a ClientAssignor, equal bool) (map[string]int32, []MemberSubscription) {
	counts := map[string]int32{}
	for t := range 5 {
		counts[fmt.Sprintf("topic%d", t)] = 100
	}
	var members []MemberSubscription
	for i := range 50 {
		m := MemberSubscription{MemberID: fmt.Sprintf("member-%02d", i), Generation: 1}
		if equal {
			m.Topics = []string{"topic0", "topic1", "topic2", "topic3", "topic4"}
		} else {
			m.Topics = []string{fmt.Sprintf("topic%d", i%5), fmt.Sprintf("topic%d", (i+1)%5), fmt.Sprintf("topic%d", (i+3)%5)}
		}
		members = append(members, m)
	}
	first := a.Assign(counts, members)
	for i := range members {
		members[i].OwnedPartitions = first[members[i].MemberID]
	}
	return counts, members[:49]
}

func BenchmarkClientAssignors(b *testing.B) {
	for _, a := range []ClientAssignor{RangeAssignor{}, RoundRobinAssignor{}, StickyAssignor{}, CooperativeStickyAssignor{}} {
		for _, equal := range []bool{true, false} {
			counts, members := benchGroup(a, equal)
			b.Run(fmt.Sprintf("%s/equal=%v", a.Name(), equal), func(b *testing.B) {
				for b.Loop() {
					a.Assign(counts, members)
				}
			})
		}
	}
}

func BenchmarkServerAssignors(b *testing.B) {
	for _, a := range []ServerAssignor{UniformAssignor{}, ServerRangeAssignor{}} {
		for _, equal := range []bool{true, false} {
			counts, subs := benchGroup(StickyAssignor{}, equal)
			members := make([]GroupMember, len(subs))
			for i, s := range subs {
				members[i] = GroupMember{MemberID: s.MemberID, Topics: s.Topics, Assigned: append([]proto.TopicPartition(nil), s.OwnedPartitions...)}
			}
			b.Run(fmt.Sprintf("%s/equal=%v", a.Name(), equal), func(b *testing.B) {
				for b.Loop() {
					a.Assign(members, counts)
				}
			})
		}
	}
}
