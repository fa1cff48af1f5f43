package assign

import (
	"reflect"
	"testing"

	"kafkasim/model/proto"
)

// Sticky cases: StickyAssignor's class comment (the first assignment), and
// AbstractStickyAssignorTest's shapes, hand-checked against the builders.
func TestStickyAssignor(t *testing.T) {
	all4 := []string{"t0", "t1", "t2", "t3"}
	runClientCases(t, StickyAssignor{}, []clientCase{
		{"first assignment, equal subscriptions", map[string]int32{"t0": 2, "t1": 2, "t2": 2, "t3": 2},
			[]MemberSubscription{sub("C0", all4...), sub("C1", all4...), sub("C2", all4...)},
			map[string][]proto.TopicPartition{
				"C0": tps("t0-0", "t1-1", "t3-0"),
				"C1": tps("t0-1", "t2-0", "t3-1"),
				"C2": tps("t1-0", "t2-1"),
			}},
		// C1 leaves: the others keep all they had and share C1's partitions.
		// (Kafka's class comment shows the pre-2.8 algorithm's choice, which
		// gives C0 t2-0 and C2 t0-1; the constrained builder fills members
		// round robin in member id order over sorted partitions.)
		{"member leaves, equal subscriptions", map[string]int32{"t0": 2, "t1": 2, "t2": 2, "t3": 2},
			[]MemberSubscription{
				owning("C0", 1, tps("t0-0", "t1-1", "t3-0"), all4...),
				owning("C2", 1, tps("t1-0", "t2-1"), all4...),
			},
			map[string][]proto.TopicPartition{
				"C0": tps("t0-0", "t0-1", "t1-1", "t3-0"),
				"C2": tps("t1-0", "t2-0", "t2-1", "t3-1"),
			}},
		{"member joins: the owner keeps its quota", map[string]int32{"t": 3},
			[]MemberSubscription{owning("c1", 1, tps("t-0", "t-1", "t-2"), "t"), sub("c2", "t")},
			map[string][]proto.TopicPartition{"c1": tps("t-0", "t-1"), "c2": tps("t-2")}},
		{"first assignment, unequal subscriptions", map[string]int32{"t0": 1, "t1": 2, "t2": 3},
			[]MemberSubscription{sub("C0", "t0"), sub("C1", "t0", "t1"), sub("C2", "t0", "t1", "t2")},
			map[string][]proto.TopicPartition{"C0": tps("t0-0"), "C1": tps("t1-0", "t1-1"), "C2": tps("t2-0", "t2-1", "t2-2")}},
		{"member leaves, unequal subscriptions", map[string]int32{"t0": 1, "t1": 2, "t2": 3},
			[]MemberSubscription{
				owning("C1", 1, tps("t1-0", "t1-1"), "t0", "t1"),
				owning("C2", 1, tps("t2-0", "t2-1", "t2-2"), "t0", "t1", "t2"),
			},
			map[string][]proto.TopicPartition{"C1": tps("t0-0", "t1-0", "t1-1"), "C2": tps("t2-0", "t2-1", "t2-2")}},
		{"higher generation wins a claim", map[string]int32{"t": 2},
			[]MemberSubscription{owning("c1", 2, tps("t-0", "t-1"), "t"), owning("c2", 3, tps("t-1"), "t")},
			map[string][]proto.TopicPartition{"c1": tps("t-0"), "c2": tps("t-1")}},
		{"a claim of an older generation is dropped", map[string]int32{"t": 2},
			[]MemberSubscription{owning("c1", 3, tps("t-0", "t-1"), "t"), owning("c2", 2, tps("t-0"), "t")},
			map[string][]proto.TopicPartition{"c1": tps("t-0"), "c2": tps("t-1")}},
		{"unsubscribed topic's partitions move", map[string]int32{"a": 2, "b": 2},
			[]MemberSubscription{
				owning("m1", 4, tps("a-0", "a-1", "b-0", "b-1"), "b"),
				owning("m2", 4, tps(), "a", "b"),
			},
			map[string][]proto.TopicPartition{"m1": tps("b-0", "b-1"), "m2": tps("a-0", "a-1")}},
	})
}

func TestCooperativeStickyAssignor(t *testing.T) {
	type coopCase struct {
		name    string
		counts  map[string]int32
		members []MemberSubscription
		want    map[string][]proto.TopicPartition
		held    []Transfer
	}
	cases := []coopCase{
		{"a joining member waits for the revocation", map[string]int32{"t": 3},
			[]MemberSubscription{owning("c1", 1, tps("t-0", "t-1", "t-2"), "t"), owning("c2", -1, nil, "t")},
			map[string][]proto.TopicPartition{"c1": tps("t-0", "t-1"), "c2": tps()},
			[]Transfer{{Partition: tps("t-2")[0], To: "c2"}}},
		{"the follow-up rebalance grants it", map[string]int32{"t": 3},
			[]MemberSubscription{owning("c1", 2, tps("t-0", "t-1"), "t"), owning("c2", 2, nil, "t")},
			map[string][]proto.TopicPartition{"c1": tps("t-0", "t-1"), "c2": tps("t-2")},
			nil},
		// c1 and c2 both claim t-1 in generation 3: neither keeps it, and
		// whoever gets it waits a rebalance (partitionsTransferringOwnership
		// includes partitionsWithMultiplePreviousOwners).
		{"a partition claimed twice in one generation is held back", map[string]int32{"t": 4},
			[]MemberSubscription{
				owning("c1", 3, tps("t-0", "t-1"), "t"),
				owning("c2", 3, tps("t-1", "t-2"), "t"),
				owning("c3", 3, tps("t-3"), "t"),
			},
			map[string][]proto.TopicPartition{"c1": tps("t-0"), "c2": tps("t-2"), "c3": tps("t-3")},
			[]Transfer{{Partition: tps("t-1")[0], To: "c1"}}},
		{"an older generation's claim does not hold a partition", map[string]int32{"t": 2},
			[]MemberSubscription{owning("c1", 3, tps("t-0", "t-1"), "t"), owning("c2", 2, tps("t-0"), "t")},
			map[string][]proto.TopicPartition{"c1": tps("t-0"), "c2": tps()},
			[]Transfer{{Partition: tps("t-1")[0], To: "c2"}}},
		// General builder: m1 drops topic a; m2 takes a's partitions, which
		// m1 still owns, so they wait (computePartitionsTransferringOwnership).
		{"unequal subscriptions: moved partitions wait", map[string]int32{"a": 2, "b": 2},
			[]MemberSubscription{
				owning("m1", 4, tps("a-0", "a-1", "b-0", "b-1"), "b"),
				owning("m2", 4, tps(), "a", "b"),
			},
			map[string][]proto.TopicPartition{"m1": tps("b-0", "b-1"), "m2": tps()},
			[]Transfer{{Partition: tps("a-0")[0], To: "m2"}, {Partition: tps("a-1")[0], To: "m2"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, held := CooperativeStickyAssignor{}.AssignCooperative(c.counts, c.members)
			if !reflect.DeepEqual(got, c.want) || !reflect.DeepEqual(held, c.held) {
				t.Fatalf("got %v held %v\nwant %v held %v", got, held, c.want, c.held)
			}
			if plain := (CooperativeStickyAssignor{}).Assign(c.counts, c.members); !reflect.DeepEqual(plain, got) {
				t.Fatalf("Assign %v differs from AssignCooperative %v", plain, got)
			}
		})
	}
}

// The general builder's undo: when its moves do not improve the balance
// score, it keeps the assignment it had before them. Here nothing can be
// improved (c's only topic is its own), so the owned partitions stay put.
func TestStickyGeneralKeepsOwnedWhenNothingImproves(t *testing.T) {
	counts := map[string]int32{"x": 4, "y": 1}
	members := []MemberSubscription{
		owning("a", 1, tps("x-0", "x-1", "x-2", "x-3"), "x"),
		owning("c", 1, tps("y-0"), "y"),
	}
	got := StickyAssignor{}.Assign(counts, members)
	want := map[string][]proto.TopicPartition{"a": tps("x-0", "x-1", "x-2", "x-3"), "c": tps("y-0")}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v want %v", got, want)
	}
}
