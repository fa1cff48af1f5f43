package assign

import (
	"fmt"
	"reflect"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"kafkasim/model/proto"
)

// group is a random classic group: members 1–10, topics 1–4 of 1–30
// partitions (sometimes one more topic that does not exist yet), random
// subscriptions (equal ones when equal is set), random owned partitions
// with generations −1..3, some static members.
type group struct {
	counts  map[string]int32
	members []MemberSubscription
	equal   bool
}

func drawGroup(t *rapid.T) group {
	numTopics := rapid.IntRange(1, 4).Draw(t, "topics")
	counts := map[string]int32{}
	var topics []string
	for i := range numTopics {
		name := fmt.Sprintf("t%d", i)
		counts[name] = int32(rapid.IntRange(1, 30).Draw(t, "partitions"))
		topics = append(topics, name)
	}
	if rapid.Bool().Draw(t, "unknownTopic") {
		topics = append(topics, "missing")
	}
	equal := rapid.Bool().Draw(t, "equal")
	shared := rapid.SliceOfNDistinct(rapid.SampledFrom(topics), 1, len(topics), rapid.ID[string]).Draw(t, "shared")
	var all []proto.TopicPartition
	for _, tpc := range sortedKeys(counts) {
		for p := range counts[tpc] {
			all = append(all, proto.TopicPartition{Topic: tpc, Partition: p})
		}
	}
	n := rapid.IntRange(1, 10).Draw(t, "members")
	ids := rapid.Permutation([]string{"m0", "m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8", "m9"}).Draw(t, "ids")
	var members []MemberSubscription
	for i := range n {
		m := MemberSubscription{MemberID: ids[i], Generation: int32(rapid.IntRange(-1, 3).Draw(t, "generation"))}
		if rapid.IntRange(0, 3).Draw(t, "static") == 0 {
			m.GroupInstanceID = fmt.Sprintf("i%d", rapid.IntRange(0, 99).Draw(t, "instance"))
		}
		if equal {
			m.Topics = rapid.Permutation(shared).Draw(t, "order") // the order must not matter
		} else {
			m.Topics = rapid.SliceOfNDistinct(rapid.SampledFrom(topics), 1, len(topics), rapid.ID[string]).Draw(t, "subscription")
		}
		if len(all) > 0 {
			m.OwnedPartitions = rapid.SliceOfNDistinct(rapid.SampledFrom(all), 0, 12, func(tp proto.TopicPartition) string { return tp.String() }).Draw(t, "owned")
		}
		members = append(members, m)
	}
	// Static members' instance ids are unique in a group.
	seen := map[string]bool{}
	for i := range members {
		if seen[members[i].GroupInstanceID] {
			members[i].GroupInstanceID = ""
		}
		if members[i].GroupInstanceID != "" {
			seen[members[i].GroupInstanceID] = true
		}
	}
	return group{counts: counts, members: members, equal: equal}
}

// expected: the partitions each topic must see assigned (known topics some
// member subscribes to).
func (g group) subscribedPartitions() map[proto.TopicPartition]bool {
	out := map[proto.TopicPartition]bool{}
	for t, n := range subscribedTopicCounts(g.counts, g.members) {
		for p := range n {
			out[proto.TopicPartition{Topic: t, Partition: p}] = true
		}
	}
	return out
}

func (g group) subscribes(id, topic string) bool {
	for _, m := range g.members {
		if m.MemberID == id {
			return slices.Contains(m.Topics, topic)
		}
	}
	return false
}

// checkValid: an entry for every member, sorted lists, no partition twice,
// no partition of a topic the member does not subscribe to; with complete
// set, every subscribed partition assigned.
func checkValid(t *rapid.T, name string, g group, a map[string][]proto.TopicPartition, complete bool) {
	if len(a) != len(g.members) {
		t.Fatalf("%s: %d entries for %d members", name, len(a), len(g.members))
	}
	owner := map[proto.TopicPartition]string{}
	for _, m := range g.members {
		ps, ok := a[m.MemberID]
		if !ok {
			t.Fatalf("%s: no entry for %s", name, m.MemberID)
		}
		if !slices.IsSortedFunc(ps, comparePartitions) {
			t.Fatalf("%s: %s's list not sorted: %v", name, m.MemberID, ps)
		}
		for _, tp := range ps {
			if prev, dup := owner[tp]; dup {
				t.Fatalf("%s: %v assigned to %s and %s", name, tp, prev, m.MemberID)
			}
			owner[tp] = m.MemberID
			if !g.subscribes(m.MemberID, tp.Topic) {
				t.Fatalf("%s: %s got %v without subscribing to its topic", name, m.MemberID, tp)
			}
			if !g.subscribedPartitions()[tp] {
				t.Fatalf("%s: %v does not exist", name, tp)
			}
		}
	}
	if complete {
		for tp := range g.subscribedPartitions() {
			if _, ok := owner[tp]; !ok {
				t.Fatalf("%s: %v unassigned", name, tp)
			}
		}
	}
}

func checkBalanced(t *rapid.T, name string, a map[string][]proto.TopicPartition) {
	lo, hi := -1, 0
	for _, ps := range a {
		if lo == -1 || len(ps) < lo {
			lo = len(ps)
		}
		hi = max(hi, len(ps))
	}
	if hi-lo > 1 {
		t.Fatalf("%s: unbalanced (%d..%d): %v", name, lo, hi, a)
	}
}

// withOwned is the group after a rebalance that gave each member a, in
// generation gen.
func (g group) withOwned(a map[string][]proto.TopicPartition, gen int32) group {
	out := group{counts: g.counts, equal: g.equal}
	for _, m := range g.members {
		m.OwnedPartitions = slices.Clone(a[m.MemberID])
		m.Generation = gen
		out.members = append(out.members, m)
	}
	return out
}

// shuffled lists the members, their topics and owned partitions in another
// order.
func (g group) shuffled(t *rapid.T) group {
	out := group{counts: g.counts, equal: g.equal}
	for _, m := range rapid.Permutation(g.members).Draw(t, "memberOrder") {
		m.Topics = rapid.Permutation(m.Topics).Draw(t, "topicOrder")
		m.OwnedPartitions = rapid.Permutation(m.OwnedPartitions).Draw(t, "ownedOrder")
		out.members = append(out.members, m)
	}
	return out
}

func TestClientAssignorProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := drawGroup(t)
		for _, a := range []ClientAssignor{RangeAssignor{}, RoundRobinAssignor{}, StickyAssignor{}} {
			got := a.Assign(g.counts, g.members)
			checkValid(t, a.Name(), g, got, true)
			if g.equal && a.Name() != "range" {
				checkBalanced(t, a.Name(), got)
			}
			if again := a.Assign(g.counts, g.shuffled(t).members); !reflect.DeepEqual(again, got) {
				t.Fatalf("%s depends on input order:\n%v\n%v", a.Name(), got, again)
			}
			next := g.withOwned(got, 7)
			if again := a.Assign(next.counts, next.members); !reflect.DeepEqual(again, got) {
				t.Fatalf("%s: re-running on its own output moved partitions:\n%v\n%v", a.Name(), got, again)
			}
		}
	})
}

// claims maps each partition to the members that claim it and their
// generations.
func claims(g group) map[proto.TopicPartition][]MemberSubscription {
	out := map[proto.TopicPartition][]MemberSubscription{}
	for _, m := range g.members {
		for _, tp := range m.OwnedPartitions {
			out[tp] = append(out[tp], m)
		}
	}
	return out
}

func TestCooperativeStickyProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := drawGroup(t)
		coop := CooperativeStickyAssignor{}
		got, held := coop.AssignCooperative(g.counts, g.members)
		checkValid(t, "cooperative-sticky", g, got, false)

		// The assignment plus the held-back partitions is the sticky one.
		sticky := StickyAssignor{}.Assign(g.counts, g.members)
		rebuilt := map[string][]proto.TopicPartition{}
		for id, ps := range got {
			rebuilt[id] = slices.Clone(ps)
		}
		for _, h := range held {
			rebuilt[h.To] = append(rebuilt[h.To], h.Partition)
		}
		if !reflect.DeepEqual(finish(rebuilt), sticky) {
			t.Fatalf("assignment %v + held %v is not the sticky assignment %v", got, held, sticky)
		}

		// A held-back partition is one another member claims; a granted one
		// is claimed by nobody else, or by its new owner too: with equal
		// subscriptions, by its new owner with the highest generation.
		cl := claims(g)
		for _, h := range held {
			if !slices.ContainsFunc(cl[h.Partition], func(m MemberSubscription) bool { return m.MemberID != h.To }) {
				t.Fatalf("%v held back from %s though no other member claims it", h.Partition, h.To)
			}
		}
		for id, ps := range got {
			for _, tp := range ps {
				cs := cl[tp]
				if len(cs) == 0 {
					continue
				}
				i := slices.IndexFunc(cs, func(m MemberSubscription) bool { return m.MemberID == id })
				if i < 0 {
					t.Fatalf("%v granted to %s while %v claim it", tp, id, cs)
				}
				if g.equal {
					for _, c := range cs {
						if c.Generation > cs[i].Generation {
							t.Fatalf("%v granted to %s (generation %d) while %s claims it in generation %d",
								tp, id, cs[i].Generation, c.MemberID, c.Generation)
						}
					}
				}
			}
		}

		if again, againHeld := coop.AssignCooperative(g.counts, g.shuffled(t).members); !reflect.DeepEqual(again, got) || !reflect.DeepEqual(againHeld, held) {
			t.Fatalf("depends on input order")
		}

		// The follow-up rebalance grants what was held back and holds nothing;
		// after it the assignment is complete, balanced for equal
		// subscriptions, and stable.
		second := g.withOwned(got, 8)
		got2, held2 := coop.AssignCooperative(second.counts, second.members)
		if len(held2) != 0 && g.equal {
			t.Fatalf("second rebalance held %v back", held2)
		}
		if g.equal {
			checkValid(t, "cooperative-sticky second", g, got2, true)
			checkBalanced(t, "cooperative-sticky second", got2)
		}
		third := g.withOwned(got2, 9)
		got3, held3 := coop.AssignCooperative(third.counts, third.members)
		if g.equal && (!reflect.DeepEqual(got3, got2) || len(held3) != 0) {
			t.Fatalf("not stable: %v then %v (held %v)", got2, got3, held3)
		}
	})
}

// serverMembers turns a drawn group into coordinator members whose current
// target assignments do not overlap (as Kafka's never do).
func serverMembers(g group) []GroupMember {
	taken := map[proto.TopicPartition]bool{}
	var out []GroupMember
	for _, m := range g.members {
		gm := GroupMember{MemberID: m.MemberID, InstanceID: m.GroupInstanceID, Topics: m.Topics}
		for _, tp := range m.OwnedPartitions {
			if !taken[tp] {
				taken[tp] = true
				gm.Assigned = append(gm.Assigned, tp)
			}
		}
		out = append(out, gm)
	}
	return out
}

func TestServerAssignorProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := drawGroup(t)
		members := serverMembers(g)
		for _, a := range []ServerAssignor{UniformAssignor{}, ServerRangeAssignor{}} {
			got := a.Assign(members, g.counts)
			checkValid(t, a.Name(), g, got, true)
			if g.equal && a.Name() == "uniform" {
				checkBalanced(t, a.Name(), got)
			}
			shuffled := rapid.Permutation(members).Draw(t, "order")
			if again := a.Assign(shuffled, g.counts); !reflect.DeepEqual(again, got) {
				t.Fatalf("%s depends on input order", a.Name())
			}
			next := slices.Clone(members)
			for i := range next {
				next[i].Assigned = got[next[i].MemberID]
			}
			if again := a.Assign(next, g.counts); !reflect.DeepEqual(again, got) {
				t.Fatalf("%s: re-running on its own output moved partitions:\n%v\n%v", a.Name(), got, again)
			}
			// Stickiness: a member keeps what it held, up to its quota, when
			// subscriptions are equal (uniform only; range reads no
			// assignment).
			if g.equal && a.Name() == "uniform" {
				total := len(g.subscribedPartitions())
				quota := (total + len(members) - 1) / len(members)
				for _, m := range members {
					kept, held := 0, 0
					for _, tp := range m.Assigned {
						if !slices.Contains(m.Topics, tp.Topic) {
							continue // unsubscribed: revoked
						}
						held++
						if slices.Contains(got[m.MemberID], tp) {
							kept++
						}
					}
					if want := min(held, total/len(members)); kept < want {
						t.Fatalf("uniform: %s kept %d of %v, want at least %d (quota %d)", m.MemberID, kept, m.Assigned, want, quota)
					}
				}
			}
		}
	})
}
