package assign

import (
	"reflect"
	"strings"
	"testing"

	"kafkasim/model/proto"
)

// tps builds a partition list from "topic-partition" names.
func tps(names ...string) []proto.TopicPartition {
	out := []proto.TopicPartition{}
	for _, n := range names {
		i := strings.LastIndexByte(n, '-')
		var p int32
		for _, c := range n[i+1:] {
			p = p*10 + int32(c-'0')
		}
		out = append(out, proto.TopicPartition{Topic: n[:i], Partition: p})
	}
	return out
}

// sub is a member with no owned partitions.
func sub(id string, topics ...string) MemberSubscription {
	return MemberSubscription{MemberID: id, Topics: topics, Generation: -1}
}

// owning is a member owning partitions as of a generation.
func owning(id string, gen int32, owned []proto.TopicPartition, topics ...string) MemberSubscription {
	return MemberSubscription{MemberID: id, Topics: topics, OwnedPartitions: owned, Generation: gen}
}

type clientCase struct {
	name    string
	counts  map[string]int32
	members []MemberSubscription
	want    map[string][]proto.TopicPartition
}

func runClientCases(t *testing.T, a ClientAssignor, cases []clientCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := a.Assign(c.counts, c.members)
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("%s:\n got %v\nwant %v", a.Name(), got, c.want)
			}
		})
	}
}

// Cases from Kafka's RangeAssignorTest, and the class comment's example.
func TestRangeAssignor(t *testing.T) {
	runClientCases(t, RangeAssignor{}, []clientCase{
		{"one consumer no topic", map[string]int32{}, []MemberSubscription{sub("c")},
			map[string][]proto.TopicPartition{"c": tps()}},
		{"one consumer nonexistent topic", map[string]int32{}, []MemberSubscription{sub("c", "t")},
			map[string][]proto.TopicPartition{"c": tps()}},
		{"one consumer one topic", map[string]int32{"t": 3}, []MemberSubscription{sub("c", "t")},
			map[string][]proto.TopicPartition{"c": tps("t-0", "t-1", "t-2")}},
		{"only subscribed topics", map[string]int32{"t": 3, "other": 3}, []MemberSubscription{sub("c", "t")},
			map[string][]proto.TopicPartition{"c": tps("t-0", "t-1", "t-2")}},
		{"two consumers one partition", map[string]int32{"t": 1}, []MemberSubscription{sub("c2", "t"), sub("c1", "t")},
			map[string][]proto.TopicPartition{"c1": tps("t-0"), "c2": tps()}},
		{"mixed topics", map[string]int32{"t1": 3, "t2": 2},
			[]MemberSubscription{sub("c1", "t1"), sub("c2", "t1", "t2"), sub("c3", "t1")},
			map[string][]proto.TopicPartition{"c1": tps("t1-0"), "c2": tps("t1-1", "t2-0", "t2-1"), "c3": tps("t1-2")}},
		{"two consumers two topics six partitions", map[string]int32{"t0": 3, "t1": 3},
			[]MemberSubscription{sub("C1", "t0", "t1"), sub("C0", "t0", "t1")},
			map[string][]proto.TopicPartition{"C0": tps("t0-0", "t0-1", "t1-0", "t1-1"), "C1": tps("t0-2", "t1-2")}},
		{"static members order by instance id, before dynamic ones", map[string]int32{"t": 5},
			[]MemberSubscription{
				{MemberID: "a", Topics: []string{"t"}},
				{MemberID: "b", GroupInstanceID: "i2", Topics: []string{"t"}},
				{MemberID: "c", GroupInstanceID: "i1", Topics: []string{"t"}},
			},
			map[string][]proto.TopicPartition{"c": tps("t-0", "t-1"), "b": tps("t-2", "t-3"), "a": tps("t-4")}},
	})
}

// Cases from RoundRobinAssignor's class comment and RoundRobinAssignorTest.
func TestRoundRobinAssignor(t *testing.T) {
	runClientCases(t, RoundRobinAssignor{}, []clientCase{
		{"equal subscriptions", map[string]int32{"t0": 3, "t1": 3},
			[]MemberSubscription{sub("C1", "t0", "t1"), sub("C0", "t1", "t0")},
			map[string][]proto.TopicPartition{"C0": tps("t0-0", "t0-2", "t1-1"), "C1": tps("t0-1", "t1-0", "t1-2")}},
		{"unequal subscriptions skip members", map[string]int32{"t0": 1, "t1": 2, "t2": 3},
			[]MemberSubscription{sub("C0", "t0"), sub("C1", "t0", "t1"), sub("C2", "t0", "t1", "t2")},
			map[string][]proto.TopicPartition{"C0": tps("t0-0"), "C1": tps("t1-0"), "C2": tps("t1-1", "t2-0", "t2-1", "t2-2")}},
		{"two consumers one partition", map[string]int32{"t": 1}, []MemberSubscription{sub("c1", "t"), sub("c2", "t")},
			map[string][]proto.TopicPartition{"c1": tps("t-0"), "c2": tps()}},
		{"static members", map[string]int32{"t": 3},
			[]MemberSubscription{
				{MemberID: "a", Topics: []string{"t"}},
				{MemberID: "z", GroupInstanceID: "i0", Topics: []string{"t"}},
			},
			map[string][]proto.TopicPartition{"z": tps("t-0", "t-2"), "a": tps("t-1")}},
	})
}

func TestClientAssignorByNameAndParseStrategy(t *testing.T) {
	for name, want := range map[string]string{
		"range": "range", RangeAssignorClass: "range",
		"roundrobin": "roundrobin", RoundRobinAssignorClass: "roundrobin",
		"sticky": "sticky", StickyAssignorClass: "sticky",
		"cooperative-sticky": "cooperative-sticky", CooperativeStickyAssignorClass: "cooperative-sticky",
	} {
		a, ok := ClientAssignorByName(name)
		if !ok || a.Name() != want {
			t.Errorf("ClientAssignorByName(%q) = %v, %v; want %s", name, a, ok, want)
		}
	}
	if _, ok := ClientAssignorByName("Range"); ok {
		t.Error("names are case-sensitive, as Kafka's class names are")
	}

	got, err := ParseStrategy(" range ,\torg.apache.kafka.clients.consumer.CooperativeStickyAssignor")
	if err != nil || len(got) != 2 || got[0].Name() != "range" || got[1].Name() != "cooperative-sticky" {
		t.Fatalf("ParseStrategy = %v, %v", got, err)
	}
	for value, wantInErr := range map[string]string{
		"":                   "at least one",
		"  ":                 "at least one",
		"range,foo":          `entry 2 "foo"`,
		"range,,sticky":      `entry 2 ""`,
		"uniform":            `entry 1 "uniform"`,
		"sticky,roundrobin,": `entry 3 ""`,
	} {
		_, err := ParseStrategy(value)
		if err == nil || !strings.Contains(err.Error(), wantInErr) {
			t.Errorf("ParseStrategy(%q) error = %v; want it to contain %s", value, err, wantInErr)
		}
	}
}

func TestRebalanceProtocolOf(t *testing.T) {
	parse := func(s string) []ClientAssignor {
		a, err := ParseStrategy(s)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	for value, want := range map[string]RebalanceProtocol{
		"range,cooperative-sticky":              Eager, // Kafka's default list
		"cooperative-sticky":                    Cooperative,
		"cooperative-sticky,cooperative-sticky": Cooperative,
		"sticky":                                Eager,
		"roundrobin":                            Eager,
		"cooperative-sticky,sticky":             Eager,
	} {
		if got := RebalanceProtocolOf(parse(value)); got != want {
			t.Errorf("RebalanceProtocolOf(%s) = %v; want %v", value, got, want)
		}
	}
	if Eager.String() != "EAGER" || Cooperative.String() != "COOPERATIVE" {
		t.Error("protocol names")
	}
}
