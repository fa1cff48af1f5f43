package scenarios

import (
	"slices"
	"strings"
	"testing"

	"kafkasim/model/cluster"
)

// reassign reads into the admin operation and round-trips through the
// resolved scenario.
func TestReassignLoads(t *testing.T) {
	src := `name: r
cluster: { brokers: 6 }
topics: [{ name: orders, partitions: 2, replication.factor: 3 }, { name: audit }]
faults:
  - { at: 30s, reassign: { topic: orders, partition: 0, replicas: [4, 5, 6] } }
  - { at: 31s, reassign: { topic: orders, partition: 1, replicas: [2] } }
  - { at: 32s, add-partitions: { topic: audit, count: 2 } }
  - { at: 33s, reassign: { topic: audit, partition: 1, replicas: [6, 1, 2, 3] } }
`
	s, err := Parse("r.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []cluster.Reassign{
		{Topic: "orders", Partition: 0, Replicas: []int32{4, 5, 6}},
		{Topic: "orders", Partition: 1, Replicas: []int32{2}},
		{Topic: "audit", Partition: 1, Replicas: []int32{6, 1, 2, 3}},
	}
	var got []cluster.Reassign
	for _, f := range s.Faults {
		if op, ok := f.Fault.Custom.(cluster.Reassign); ok {
			got = append(got, op)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i].Topic != want[i].Topic || got[i].Partition != want[i].Partition || !slices.Equal(got[i].Replicas, want[i].Replicas) {
			t.Errorf("fault %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	out, err := s.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	if line := "reassign: {topic: orders, partition: 0, replicas: [4, 5, 6]}"; !strings.Contains(string(out), line) {
		t.Errorf("resolved scenario lacks %q:\n%s", line, out)
	}
	again, err := Parse("resolved.yaml", out)
	if err != nil {
		t.Fatalf("the resolved scenario does not load: %v", err)
	}
	if len(again.Faults) != len(s.Faults) {
		t.Fatalf("round trip: %d faults, want %d", len(again.Faults), len(s.Faults))
	}

	// One topic: the topic may be left out.
	one, err := Parse("one.yaml", []byte("cluster: {brokers: 3}\ntopics: [{name: t}]\nfaults: [{at: 1s, reassign: {partition: 0, replicas: [3]}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if op := one.Faults[0].Fault.Custom.(cluster.Reassign); op.Topic != "t" || !slices.Equal(op.Replicas, []int32{3}) {
		t.Fatalf("got %+v", op)
	}
}

func TestReassignErrors(t *testing.T) {
	const head = "cluster: {brokers: 4}\ntopics: [{name: t, partitions: 2}, {name: u}]\n"
	cases := []errorCase{
		{"empty", head + "faults: [{at: 1s, reassign: }]\n", "faults[0].reassign.topic", "missing"},
		{"no partition", head + "faults: [{at: 1s, reassign: {topic: t, replicas: [1]}}]\n", "faults[0].reassign.partition", "missing"},
		{"no replicas", head + "faults: [{at: 1s, reassign: {topic: t, partition: 0}}]\n", "faults[0].reassign.replicas", "missing"},
		{"no topic among two", head + "faults: [{at: 1s, reassign: {partition: 0, replicas: [1]}}]\n", "faults[0].reassign.topic", "missing"},
		{"unknown topic", head + "faults: [{at: 1s, reassign: {topic: x, partition: 0, replicas: [1]}}]\n", "faults[0].reassign.topic", `no topic "x"`},
		{"unknown key", head + "faults: [{at: 1s, reassign: {topic: t, partition: 0, replicas: [1], brokers: [2]}}]\n", "faults[0].reassign.brokers", "unknown key"},
		{"partition out of range", head + "faults: [{at: 1s, reassign: {topic: t, partition: 2, replicas: [1]}}]\n", "faults[0].reassign.partition", "no partition 2"},
		{"negative partition", head + "faults: [{at: 1s, reassign: {topic: t, partition: -1, replicas: [1]}}]\n", "faults[0].reassign.partition", "out of range"},
		{"empty replicas", head + "faults: [{at: 1s, reassign: {topic: t, partition: 0, replicas: []}}]\n", "faults[0].reassign.replicas", "non-empty list"},
		{"replicas not a list", head + "faults: [{at: 1s, reassign: {topic: t, partition: 0, replicas: 3}}]\n", "faults[0].reassign.replicas", "want a list"},
		{"no such broker", head + "faults: [{at: 1s, reassign: {topic: t, partition: 0, replicas: [1, 5]}}]\n", "faults[0].reassign.replicas[1]", "no broker 5"},
		{"broker zero", head + "faults: [{at: 1s, reassign: {topic: t, partition: 0, replicas: [0]}}]\n", "faults[0].reassign.replicas[0]", "out of range"},
		{"duplicate", head + "faults: [{at: 1s, reassign: {topic: t, partition: 0, replicas: [2, 3, 2]}}]\n", "faults[0].reassign.replicas[2]", "broker 2 appears twice"},
		{"not a number", head + "faults: [{at: 1s, reassign: {topic: t, partition: 0, replicas: [two]}}]\n", "faults[0].reassign.replicas[0]", "want an integer"},
	}
	wantOneErrorEach(t, cases)
}
