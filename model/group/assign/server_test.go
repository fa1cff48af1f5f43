package assign

import (
	"reflect"
	"testing"

	"kafkasim/model/proto"
)

func gm(id string, assigned []proto.TopicPartition, topics ...string) GroupMember {
	return GroupMember{MemberID: id, Topics: topics, Assigned: assigned}
}

type serverCase struct {
	name    string
	counts  map[string]int32
	members []GroupMember
	want    map[string][]proto.TopicPartition
}

func runServerCases(t *testing.T, a ServerAssignor, cases []serverCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := a.Assign(c.members, c.counts)
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("%s:\n got %v\nwant %v", a.Name(), got, c.want)
			}
		})
	}
}

// Shapes of UniformHomogeneousAssignmentBuilderTest and
// UniformHeterogeneousAssignmentBuilderTest, hand-checked against the
// builders (Kafka's own expectations name topics by random ids).
func TestUniformAssignor(t *testing.T) {
	runServerCases(t, UniformAssignor{}, []serverCase{
		{"no members", map[string]int32{"a": 3}, nil, map[string][]proto.TopicPartition{}},
		{"member subscribed to a nonexistent topic", map[string]int32{"a": 3},
			[]GroupMember{gm("A", nil, "zz")}, map[string][]proto.TopicPartition{"A": tps()}},
		{"first assignment, two members two topics", map[string]int32{"a": 3, "b": 2},
			[]GroupMember{gm("B", nil, "a", "b"), gm("A", nil, "b", "a")},
			map[string][]proto.TopicPartition{"A": tps("a-0", "a-1", "a-2"), "B": tps("b-0", "b-1")}},
		{"member joins: owners keep up to their quota", map[string]int32{"a": 3, "b": 2},
			[]GroupMember{
				gm("A", tps("a-0", "b-0", "b-1"), "a", "b"),
				gm("B", tps("a-1", "a-2"), "a", "b"),
				gm("C", nil, "a", "b"),
			},
			map[string][]proto.TopicPartition{"A": tps("a-0", "b-0"), "B": tps("a-1", "a-2"), "C": tps("b-1")}},
		{"member leaves: its partitions fill the others", map[string]int32{"a": 6},
			[]GroupMember{gm("A", tps("a-0", "a-1"), "a"), gm("C", tps("a-4", "a-5"), "a")},
			map[string][]proto.TopicPartition{"A": tps("a-0", "a-1", "a-2"), "C": tps("a-3", "a-4", "a-5")}},
		{"more members than partitions", map[string]int32{"a": 2},
			[]GroupMember{gm("A", nil, "a"), gm("B", nil, "a"), gm("C", nil, "a")},
			map[string][]proto.TopicPartition{"A": tps("a-0"), "B": tps("a-1"), "C": tps()}},
		// Heterogeneous: b (2 per subscriber, 1 subscriber) goes before a (2
		// per subscriber, 2 subscribers); then a's partitions go to the least
		// loaded of A and B.
		{"first assignment, unequal subscriptions", map[string]int32{"a": 4, "b": 2},
			[]GroupMember{gm("A", nil, "a"), gm("B", nil, "a", "b")},
			map[string][]proto.TopicPartition{"A": tps("a-0", "a-1", "a-2"), "B": tps("a-3", "b-0", "b-1")}},
		// B holds all of a and b (6 to A's 0); balancing moves B's highest
		// partitions of a to A one at a time until the totals are 3 and 3.
		{"unequal subscriptions: balancing moves the last partitions", map[string]int32{"a": 4, "b": 2},
			[]GroupMember{gm("A", nil, "a"), gm("B", tps("a-0", "a-1", "a-2", "a-3", "b-0", "b-1"), "a", "b")},
			map[string][]proto.TopicPartition{"A": tps("a-1", "a-2", "a-3"), "B": tps("a-0", "b-0", "b-1")}},
		{"unequal subscriptions: an unsubscribed topic is revoked", map[string]int32{"a": 2, "b": 2},
			[]GroupMember{gm("A", tps("a-0", "a-1", "b-0"), "a"), gm("B", tps("b-1"), "b")},
			map[string][]proto.TopicPartition{"A": tps("a-0", "a-1"), "B": tps("b-0", "b-1")}},
	})
}

// Kafka 4's server RangeAssignor (RangeAssignorTest shapes).
func TestServerRangeAssignor(t *testing.T) {
	runServerCases(t, ServerRangeAssignor{}, []serverCase{
		{"co-partitioned", map[string]int32{"t1": 3, "t2": 3},
			[]GroupMember{gm("M1", nil, "t1", "t2"), gm("M0", nil, "t2", "t1")},
			map[string][]proto.TopicPartition{"M0": tps("t1-0", "t1-1", "t2-0", "t2-1"), "M1": tps("t1-2", "t2-2")}},
		{"static members first, by instance id", map[string]int32{"t": 5},
			[]GroupMember{
				{MemberID: "b", Topics: []string{"t"}},
				{MemberID: "c", Topics: []string{"t"}},
				{MemberID: "z", InstanceID: "i0", Topics: []string{"t"}},
			},
			map[string][]proto.TopicPartition{"z": tps("t-0", "t-1"), "b": tps("t-2", "t-3"), "c": tps("t-4")}},
		{"unequal subscriptions", map[string]int32{"t1": 3, "t2": 3},
			[]GroupMember{gm("A", nil, "t1", "t2"), gm("B", nil, "t1")},
			map[string][]proto.TopicPartition{"A": tps("t1-0", "t1-1", "t2-0", "t2-1", "t2-2"), "B": tps("t1-2")}},
		{"more members than partitions", map[string]int32{"t": 1},
			[]GroupMember{gm("A", nil, "t"), gm("B", nil, "t")},
			map[string][]proto.TopicPartition{"A": tps("t-0"), "B": tps()}},
		// Kafka 4's range reads no current assignment.
		{"not sticky to the current assignment", map[string]int32{"t": 2},
			[]GroupMember{gm("A", tps("t-1"), "t"), gm("B", tps("t-0"), "t")},
			map[string][]proto.TopicPartition{"A": tps("t-0"), "B": tps("t-1")}},
	})
}

func TestServerAssignorByName(t *testing.T) {
	for name, want := range map[string]string{
		"uniform": "uniform", UniformAssignorClass: "uniform",
		"range": "range", ServerRangeAssignorClass: "range",
	} {
		if a, ok := ServerAssignorByName(name); !ok || a.Name() != want {
			t.Errorf("ServerAssignorByName(%q) = %v, %v", name, a, ok)
		}
	}
	if _, ok := ServerAssignorByName("sticky"); ok {
		t.Error("sticky is not a server assignor")
	}
}
