package scenarios

import (
	"strings"
	"testing"
	"time"

	"kafkasim/model/cluster"
	"kafkasim/model/proto"
)

// elect-leaders reads into the admin operation, round-trips through the
// resolved scenario, and the leader-balancing keys reach the controller.
func TestElectLeadersAndLeaderBalancingLoad(t *testing.T) {
	src := `name: e
cluster: { brokers: 3, broker: { leader.imbalance.check.interval.seconds: 10 } }
topics: [{ name: orders, partitions: 2, replication.factor: 3 }, { name: audit }]
faults:
  - { at: 5s, elect-leaders: { topic: orders, partition: 1, type: preferred } }
  - { at: 6s, elect-leaders: { type: unclean } }
  - { at: 7s, add-partitions: { topic: audit, count: 3 } }
  - { at: 8s, elect-leaders: { topic: audit, partition: 2, type: unclean } }
`
	s, err := Parse("e.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []cluster.ElectLeaders{
		{Type: proto.ElectionPreferred, Topic: "orders", Partition: 1},
		{Type: proto.ElectionUnclean},
		{Type: proto.ElectionUnclean, Topic: "audit", Partition: 2},
	}
	var got []cluster.ElectLeaders
	for _, f := range s.Faults {
		if op, ok := f.Fault.Custom.(cluster.ElectLeaders); ok {
			got = append(got, op)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("fault %d: got %+v, want %+v", i, got[i], want[i])
		}
	}
	if cfg := s.ClusterConfig(); cfg.Broker.LeaderImbalanceCheckInterval != 10*time.Second {
		t.Errorf("interval %v, want 10s", cfg.Broker.LeaderImbalanceCheckInterval)
	}
	out, err := s.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"elect-leaders: {topic: orders, partition: 1, type: preferred}", "elect-leaders: {type: unclean}",
		"auto.leader.rebalance.enable: true", "leader.imbalance.check.interval.seconds: 10"} {
		if !strings.Contains(string(out), line) {
			t.Errorf("resolved scenario lacks %q:\n%s", line, out)
		}
	}
	again, err := Parse("resolved.yaml", out)
	if err != nil {
		t.Fatalf("the resolved scenario does not load: %v", err)
	}
	if len(again.Faults) != len(s.Faults) {
		t.Fatalf("round trip: %d faults, want %d", len(again.Faults), len(s.Faults))
	}

	// Kafka's defaults: on, every 300 s; off is no interval at all.
	d, err := Parse("d.yaml", []byte("name: d\ntopics: [{name: t}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := d.ClusterConfig().Broker.LeaderImbalanceCheckInterval; got != 300*time.Second {
		t.Errorf("default interval %v, want 300s", got)
	}
	off, err := Parse("off.yaml", []byte("name: d\ncluster: {broker: {auto.leader.rebalance.enable: false}}\ntopics: [{name: t}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := off.ClusterConfig().Broker.LeaderImbalanceCheckInterval; got != 0 {
		t.Errorf("auto.leader.rebalance.enable=false: interval %v, want 0", got)
	}
}

func TestElectLeadersErrors(t *testing.T) {
	const topics = "topics: [{name: t, partitions: 2}, {name: u}]\n"
	cases := []errorCase{
		{"no type", topics + "faults: [{at: 1s, elect-leaders: {topic: t, partition: 0}}]\n", "faults[0].elect-leaders.type", "missing"},
		{"empty", topics + "faults: [{at: 1s, elect-leaders: }]\n", "faults[0].elect-leaders.type", "missing"},
		{"bad type", topics + "faults: [{at: 1s, elect-leaders: {type: clean}}]\n", "faults[0].elect-leaders.type", `unknown election type "clean"`},
		{"unknown key", topics + "faults: [{at: 1s, elect-leaders: {type: preferred, partitions: 1}}]\n", "faults[0].elect-leaders.partitions", "unknown key"},
		{"unknown topic", topics + "faults: [{at: 1s, elect-leaders: {topic: x, partition: 0, type: preferred}}]\n", "faults[0].elect-leaders.topic", `no topic "x"`},
		{"topic without partition", topics + "faults: [{at: 1s, elect-leaders: {topic: t, type: preferred}}]\n", "faults[0].elect-leaders.partition", "missing"},
		{"partition without topic among two", topics + "faults: [{at: 1s, elect-leaders: {partition: 0, type: preferred}}]\n", "faults[0].elect-leaders.topic", "missing"},
		{"partition out of range", topics + "faults: [{at: 1s, elect-leaders: {topic: t, partition: 2, type: preferred}}]\n", "faults[0].elect-leaders.partition", "no partition 2"},
		{"negative partition", topics + "faults: [{at: 1s, elect-leaders: {topic: t, partition: -1, type: preferred}}]\n", "faults[0].elect-leaders.partition", "out of range"},
		{"interval zero", topics + "cluster: {broker: {leader.imbalance.check.interval.seconds: 0}}\n", "cluster.broker.leader.imbalance.check.interval.seconds", "out of range"},
		{"rebalance not a bool", topics + "cluster: {broker: {auto.leader.rebalance.enable: sometimes}}\n", "cluster.broker.auto.leader.rebalance.enable", ""},
	}
	wantOneErrorEach(t, cases)
	// One topic: the partition alone is enough; a partition an
	// add-partitions fault creates (later in the list) may be named.
	s, err := Parse("one.yaml", []byte("topics: [{name: t}]\nfaults: [{at: 2s, elect-leaders: {partition: 1, type: preferred}}, {at: 1s, add-partitions: {count: 2}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if op := s.Faults[1].Fault.Custom.(cluster.ElectLeaders); op.Topic != "t" || op.Partition != 1 {
		t.Fatalf("got %+v", op)
	}
}
