package scenarios

import (
	"reflect"
	"strings"
	"testing"

	"kafkasim/godview"
	"kafkasim/model/cluster"
	"kafkasim/model/proto"
)

// alter-config reads into the admin operation (values in Kafka's canonical
// form), round-trips through the resolved scenario, and leaves the facts a
// history checked without the god view is judged by.
func TestAlterConfigLoad(t *testing.T) {
	src := `name: a
cluster: { brokers: 3 }
topics: [{ name: orders, replication.factor: 3, config: { min.insync.replicas: 2 } }]
faults:
  - { at: 5s, alter-config: { topic: orders, config: { min.insync.replicas: 1, retention.ms: 10m } } }
  - { at: 6s, alter-config: { broker: all, config: { unclean.leader.election.enable: TRUE } } }
  - { at: 7s, alter-config: { broker: 2, config: { unclean.leader.election.enable: false } } }
`
	s, err := Parse("a.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []cluster.AlterConfig{
		{ResourceType: proto.ResourceTopic, Name: "orders", Configs: []proto.AlterableConfig{{Name: "min.insync.replicas", Value: "1"}, {Name: "retention.ms", Value: "600000"}}},
		{ResourceType: proto.ResourceBroker, Configs: []proto.AlterableConfig{{Name: "unclean.leader.election.enable", Value: "true"}}},
		{ResourceType: proto.ResourceBroker, Name: "2", Configs: []proto.AlterableConfig{{Name: "unclean.leader.election.enable", Value: "false"}}},
	}
	var got []cluster.AlterConfig
	for _, f := range s.Faults {
		if op, ok := f.Fault.Custom.(cluster.AlterConfig); ok {
			got = append(got, op)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	out, err := s.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"alter-config: {topic: orders, config: {min.insync.replicas: \"1\", retention.ms: \"600000\"}}",
		"alter-config: {broker: all, config: {unclean.leader.election.enable: \"true\"}}", "alter-config: {broker: 2, config:"} {
		if !strings.Contains(string(out), line) {
			t.Errorf("resolved scenario lacks %q:\n%s", line, out)
		}
	}
	again, err := Parse("resolved.yaml", out)
	if err != nil {
		t.Fatalf("the resolved scenario does not load: %v", err)
	}
	for i, f := range again.Faults {
		if !reflect.DeepEqual(f.Fault.Custom, s.Faults[i].Fault.Custom) {
			t.Fatalf("round trip of fault %d: %+v, want %+v", i, f.Fault.Custom, s.Faults[i].Fault.Custom)
		}
	}
	// Topic and cluster-wide configs are facts; a broker's own is not.
	facts := s.ScheduledFaultFacts().Of(godview.ConfigAltered)
	if len(facts) != 3 || facts[0].Topic != "orders" || facts[0].Config != "min.insync.replicas" || facts[2].Topic != "" || facts[2].Value != "true" {
		t.Fatalf("facts %+v", facts)
	}
	g := s.Guarantees()
	if !g.Topics[0].SetsMinInsyncReplicas || g.Topics[0].SetsUnclean {
		t.Fatalf("orders sets min ISR itself, not unclean: %+v", g.Topics[0])
	}
}

func TestAlterConfigErrors(t *testing.T) {
	const topics = "cluster: {brokers: 3}\ntopics: [{name: t}]\n"
	cases := []errorCase{
		{"no resource", topics + "faults: [{at: 1s, alter-config: {config: {min.insync.replicas: 1}}}]\n", "faults[0].alter-config.topic", "missing"},
		{"both", topics + "faults: [{at: 1s, alter-config: {topic: t, broker: 1, config: {min.insync.replicas: 1}}}]\n", "faults[0].alter-config.broker", "not both"},
		{"no config", topics + "faults: [{at: 1s, alter-config: {topic: t}}]\n", "faults[0].alter-config.config", "missing"},
		{"empty config", topics + "faults: [{at: 1s, alter-config: {topic: t, config: {}}}]\n", "faults[0].alter-config.config", "no config to set"},
		{"unknown topic", topics + "faults: [{at: 1s, alter-config: {topic: x, config: {min.insync.replicas: 1}}}]\n", "faults[0].alter-config.topic", `no topic "x"`},
		{"unknown broker", topics + "faults: [{at: 1s, alter-config: {broker: 4, config: {min.insync.replicas: 1}}}]\n", "faults[0].alter-config.broker", "no broker 4"},
		{"broker not a number", topics + "faults: [{at: 1s, alter-config: {broker: every, config: {min.insync.replicas: 1}}}]\n", "faults[0].alter-config.broker", "want a broker id or all"},
		{"unsupported topic config", topics + "faults: [{at: 1s, alter-config: {topic: t, config: {flush.messages: 1}}}]\n", "faults[0].alter-config.config.flush.messages", "cannot alter flush.messages of a topic"},
		{"unknown config", topics + "faults: [{at: 1s, alter-config: {topic: t, config: {max.message.bytes: 10}}}]\n", "faults[0].alter-config.config.max.message.bytes", "cannot alter"},
		{"topic config of a broker", topics + "faults: [{at: 1s, alter-config: {broker: all, config: {retention.ms: 10}}}]\n", "faults[0].alter-config.config.retention.ms", "cannot alter retention.ms of a broker"},
		{"bad value", topics + "faults: [{at: 1s, alter-config: {topic: t, config: {min.insync.replicas: 0}}}]\n", "faults[0].alter-config.config.min.insync.replicas", "out of range"},
		{"not a bool", topics + "faults: [{at: 1s, alter-config: {topic: t, config: {unclean.leader.election.enable: yes}}}]\n", "faults[0].alter-config.config.unclean.leader.election.enable", "want true or false"},
		{"unknown key", topics + "faults: [{at: 1s, alter-config: {topic: t, configs: {min.insync.replicas: 1}}}]\n", "faults[0].alter-config.configs", "unknown key"},
	}
	wantOneErrorEach(t, cases)
}
