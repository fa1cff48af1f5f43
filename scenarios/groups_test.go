package scenarios

import (
	"reflect"
	"strings"
	"testing"
)

const groupBase = `name: gbase
cluster: { brokers: 3 }
topics:
  - name: orders
    partitions: 3
consumers:
  - name: c
    count: 2
    group: billing
    config:
      group.protocol: classic
faults:
  - at: 10s
    crash: group-coordinator(billing)
    restart-after: 5s
`

func mustParse(t *testing.T, src string) *Scenario {
	t.Helper()
	s, err := Parse("g.yaml", []byte(src))
	if err != nil {
		t.Fatalf("%v\n%s", err, src)
	}
	return s
}

func replaced(t *testing.T, base, from, to string) string {
	t.Helper()
	if !strings.Contains(base, from) {
		t.Fatalf("the base lacks %q", from)
	}
	return strings.Replace(base, from, to, 1)
}

// A group member's keys default to Kafka 4.2's, its protocol's keys only;
// an assign-mode reader has none of them.
func TestGroupMemberDefaults(t *testing.T) {
	src := replaced(t, groupBase, "faults:", "  - name: d\n    group: ledger\n    config: { group.protocol: consumer }\n  - name: r\nfaults:")
	s := mustParse(t, src)
	c, d, r := s.Consumers[0], s.Consumers[1], s.Consumers[2]
	classic := map[string]string{"group.protocol": "classic", "partition.assignment.strategy": "range,cooperative-sticky",
		"session.timeout.ms": "45000", "heartbeat.interval.ms": "3000", "max.poll.interval.ms": "300000",
		"enable.auto.commit": "true", "auto.commit.interval.ms": "5000", "default.api.timeout.ms": "60000",
		"auto.offset.reset": "latest", "isolation.level": "read_uncommitted"}
	for k, v := range classic {
		if got := c.Config.Get(k); got != v {
			t.Errorf("classic member %s = %q, want %q", k, got, v)
		}
	}
	if _, ok := c.Config.Values["group.remote.assignor"]; ok {
		t.Error("a classic member has group.remote.assignor")
	}
	if c.Group != "billing" || c.Commit != CommitAuto || c.Workers != 1 || c.Static || c.SideEffects != "" {
		t.Errorf("classic member %+v: want group billing, commit auto, 1 worker, dynamic, no side effects", c)
	}
	if d.Config.Get("group.remote.assignor") != "uniform" || d.Config.Get("group.protocol") != "consumer" || d.Commit != CommitAuto {
		t.Errorf("consumer-protocol member: %v, commit %s", d.Config.Values, d.Commit)
	}
	for _, k := range classicOnly {
		if _, ok := d.Config.Values[k]; ok {
			t.Errorf("a consumer-protocol member has %s", k)
		}
	}
	if !reflect.DeepEqual(r.Config.Keys, keyNames(consumerKeys)) || r.Group != "" || r.Commit != "" || r.Workers != 0 {
		t.Errorf("an assign-mode reader: keys %v, group %q, commit %q, workers %d", r.Config.Keys, r.Group, r.Commit, r.Workers)
	}
	b := s.Cluster.Broker
	for k, v := range map[string]string{"offsets.topic.num.partitions": "50", "offsets.topic.replication.factor": "3",
		"offsets.commit.timeout.ms": "5000", "group.initial.rebalance.delay.ms": "3000", "group.min.session.timeout.ms": "6000",
		"group.max.session.timeout.ms": "1800000", "group.consumer.session.timeout.ms": "45000",
		"group.consumer.heartbeat.interval.ms": "5000", "group.consumer.assignors": "uniform,range"} {
		if got := b.Get(k); got != v {
			t.Errorf("broker %s = %q, want %q", k, got, v)
		}
	}
	ot := s.OffsetsTopic
	if ot.Name != OffsetsTopicName || ot.Partitions != 50 || ot.ReplicationFactor != 3 || ot.Config.Get("cleanup.policy") != "compact" {
		t.Errorf("offsets topic %+v", ot)
	}
	if len(s.Topics) != 1 || s.Topics[0].Name != "orders" {
		t.Errorf("topics %+v: the offsets topic is not one of them", s.Topics)
	}
	if got := s.Groups(); !reflect.DeepEqual(got, []string{"billing", "ledger"}) {
		t.Errorf("groups %v", got)
	}
}

// offsets.topic.replication.factor follows the cluster: min(3, brokers).
func TestOffsetsTopicReplicationFactorFollowsTheCluster(t *testing.T) {
	for brokers, want := range map[string]int{"1": 1, "2": 2, "3": 3, "5": 3} {
		s := mustParse(t, replaced(t, groupBase, "brokers: 3", "brokers: "+brokers))
		if got := configInt(s.Cluster.Broker, "offsets.topic.replication.factor"); int(got) != want || s.OffsetsTopic.ReplicationFactor != want {
			t.Errorf("%s brokers: offsets.topic.replication.factor %d, topic %d; want %d", brokers, got, s.OffsetsTopic.ReplicationFactor, want)
		}
	}
}

// Every group key takes a value of its own, in Kafka's spellings, and
// keeps it in canonical form.
func TestGroupKeysTakeValues(t *testing.T) {
	cases := []struct {
		config, key, want string
	}{
		{"partition.assignment.strategy: [range, cooperative-sticky]", "partition.assignment.strategy", "range,cooperative-sticky"},
		{"partition.assignment.strategy: org.apache.kafka.clients.consumer.RoundRobinAssignor", "partition.assignment.strategy", "roundrobin"},
		{"partition.assignment.strategy: \"sticky, org.apache.kafka.clients.consumer.RangeAssignor\"", "partition.assignment.strategy", "sticky,range"},
		{"session.timeout.ms: 10s", "session.timeout.ms", "10000"},
		{"heartbeat.interval.ms: 1000", "heartbeat.interval.ms", "1000"},
		{"max.poll.interval.ms: 2m", "max.poll.interval.ms", "120000"},
		{"auto.commit.interval.ms: 0", "auto.commit.interval.ms", "0"},
		{"enable.auto.commit: false", "enable.auto.commit", "false"},
		{"default.api.timeout.ms: 1000", "default.api.timeout.ms", "1000"},
		{"auto.offset.reset: earliest", "auto.offset.reset", "earliest"},
		{"group.protocol: CONSUMER", "group.protocol", "consumer"},
	}
	for _, c := range cases {
		s := mustParse(t, replaced(t, groupBase, "group.protocol: classic", c.config))
		if got := s.Consumers[0].Config.Get(c.key); got != c.want {
			t.Errorf("%s: %s = %q, want %q", c.config, c.key, got, c.want)
		}
	}
	s := mustParse(t, replaced(t, groupBase, "group.protocol: classic", "group.protocol: consumer\n      group.remote.assignor: range"))
	if got := s.Consumers[0].Config.Get("group.remote.assignor"); got != "range" {
		t.Errorf("group.remote.assignor %q", got)
	}
	member := replaced(t, groupBase, "    group: billing\n", "    group: billing\n    commit: before-processing\n    workers: 8\n    side-effects: idempotent\n    static: true\n")
	c := mustParse(t, member).Consumers[0]
	if c.Commit != CommitBeforeProcessing || c.Config.Get("enable.auto.commit") != "false" || c.Workers != 8 || c.SideEffects != "idempotent" || !c.Static {
		t.Errorf("member keys: %+v", c)
	}
	if c.GroupInstanceID(1) != "c-1" {
		t.Errorf("static instance 1's group.instance.id %q, want c-1", c.GroupInstanceID(1))
	}
	if mustParse(t, groupBase).Consumers[0].GroupInstanceID(1) != "" {
		t.Error("a dynamic member has a group.instance.id")
	}
	broker := replaced(t, groupBase, "cluster: { brokers: 3 }", "cluster:\n  brokers: 3\n  broker:\n    offsets.topic.num.partitions: 5\n    offsets.topic.replication.factor: 2\n    group.consumer.assignors: [org.apache.kafka.coordinator.group.assignor.RangeAssignor]\n    group.min.session.timeout.ms: 1000")
	s = mustParse(t, broker)
	if b := s.Cluster.Broker; b.Get("group.consumer.assignors") != "range" || s.OffsetsTopic.Partitions != 5 || s.OffsetsTopic.ReplicationFactor != 2 {
		t.Errorf("broker keys: assignors %q, offsets topic %+v", b.Get("group.consumer.assignors"), s.OffsetsTopic)
	}
	// The consumer protocol's default assignor is the brokers' first.
	s = mustParse(t, replaced(t, broker, "group.protocol: classic", "group.protocol: consumer"))
	if got := s.Consumers[0].Config.Get("group.remote.assignor"); got != "range" {
		t.Errorf("default group.remote.assignor %q, want the brokers' first, range", got)
	}
}

func TestCommitModeAndAutoCommitDecideEachOther(t *testing.T) {
	cases := []struct {
		commit           string
		commitSet        bool
		auto             string
		autoSet          bool
		wantMode, wantOn string
		problem          bool
	}{
		{"", false, "true", false, CommitAuto, "true", false},
		{CommitAfterProcessing, true, "true", false, CommitAfterProcessing, "false", false},
		{CommitBeforeProcessing, true, "true", false, CommitBeforeProcessing, "false", false},
		{CommitAuto, true, "true", false, CommitAuto, "true", false},
		{"", false, "false", true, CommitAfterProcessing, "false", false},
		{CommitBeforeProcessing, false, "false", true, CommitBeforeProcessing, "false", false},
		{CommitBeforeProcessing, false, "true", true, CommitAuto, "true", false},
		{CommitAuto, true, "true", true, CommitAuto, "true", false},
		{CommitAfterProcessing, true, "false", true, CommitAfterProcessing, "false", false},
		{CommitAfterProcessing, true, "true", true, CommitAfterProcessing, "true", true},
		{CommitAuto, true, "false", true, CommitAuto, "false", true},
	}
	for _, c := range cases {
		mode, on, p := commitMode(c.commit, c.commitSet, c.auto, c.autoSet)
		if mode != c.wantMode || on != c.wantOn || (p != nil) != c.problem {
			t.Errorf("commit %q (set %v), enable.auto.commit %s (set %v): got %s, %s, problem %v; want %s, %s, problem %v",
				c.commit, c.commitSet, c.auto, c.autoSet, mode, on, p, c.wantMode, c.wantOn, c.problem)
		}
		if p != nil && p.key != "config.enable.auto.commit" {
			t.Errorf("a contradiction names %s, want config.enable.auto.commit", p.key)
		}
	}
}

// Each rule Kafka (or the model) applies to group keys is an error at the
// line of the key that breaks it, naming that key.
func TestGroupRefusals(t *testing.T) {
	second := func(entry string) [2]string {
		return [2]string{"faults:", "  - name: d\n" + entry + "faults:"}
	}
	cases := []struct {
		name string
		edit [2]string
		line int
		key  string
		want string
	}{
		{"commit without group", [2]string{"    group: billing\n", "    commit: after-processing\n"}, 9, "consumers[0].commit", "applies to the members of a consumer group only"},
		{"workers without group", [2]string{"    group: billing\n", "    workers: 2\n"}, 9, "consumers[0].workers", "set group"},
		{"static without group", [2]string{"    group: billing\n", "    static: true\n"}, 9, "consumers[0].static", "set group"},
		{"group key without group", [2]string{"    group: billing\n    config:\n      group.protocol: classic", "    config:\n      session.timeout.ms: 10000"}, 10, "consumers[0].config.session.timeout.ms", "set group"},
		{"workers out of range", [2]string{"    group: billing\n", "    group: billing\n    workers: 257\n"}, 10, "consumers[0].workers", "out of range"},
		{"unknown side effects", [2]string{"    group: billing\n", "    group: billing\n    side-effects: twice\n"}, 10, "consumers[0].side-effects", "want plain or idempotent"},
		{"unknown commit mode", [2]string{"    group: billing\n", "    group: billing\n    commit: sometimes\n"}, 10, "consumers[0].commit", "want before-processing"},
		{"transactional commit with workers", [2]string{"    group: billing\n", "    group: billing\n    commit: transactional\n    workers: 4\n"}, 11, "consumers[0].workers", "commit: transactional processes on the poll loop"},
		{"transactional.id without commit: transactional", [2]string{"group.protocol: classic", "group.protocol: classic\n      transactional.id: pay"}, 12, "consumers[0].config.transactional.id", "for a consumer with commit: transactional"},
		{"transactional commit with auto-commit", [2]string{"    group: billing\n    config:\n", "    group: billing\n    commit: transactional\n    config:\n      enable.auto.commit: true\n"}, 12, "consumers[0].config.enable.auto.commit", "contradicts commit: transactional"},
		{"invalid group name", [2]string{"group: billing", "group: \"bill ing\""}, 9, "consumers[0].group", "not a valid group name"},
		{"remote assignor with classic", [2]string{"group.protocol: classic", "group.protocol: classic\n      group.remote.assignor: uniform"}, 12, "consumers[0].config.group.remote.assignor", "cannot be set when group.protocol=classic"},
		{"session timeout with consumer", [2]string{"group.protocol: classic", "group.protocol: consumer\n      session.timeout.ms: 45000"}, 12, "consumers[0].config.session.timeout.ms", "cannot be set when group.protocol=consumer"},
		{"heartbeat with consumer", [2]string{"group.protocol: classic", "group.protocol: consumer\n      heartbeat.interval.ms: 3000"}, 12, "consumers[0].config.heartbeat.interval.ms", "cannot be set when group.protocol=consumer"},
		{"assignment strategy with consumer", [2]string{"group.protocol: classic", "group.protocol: consumer\n      partition.assignment.strategy: range"}, 12, "consumers[0].config.partition.assignment.strategy", "cannot be set when group.protocol=consumer"},
		{"heartbeat not below session", [2]string{"group.protocol: classic", "group.protocol: classic\n      session.timeout.ms: 6000\n      heartbeat.interval.ms: 6000"}, 13, "consumers[0].config.heartbeat.interval.ms", "must be lower than session.timeout.ms"},
		{"session timeout below the brokers' minimum", [2]string{"group.protocol: classic", "group.protocol: classic\n      session.timeout.ms: 5000\n      heartbeat.interval.ms: 1000"}, 12, "consumers[0].config.session.timeout.ms", "INVALID_SESSION_TIMEOUT"},
		{"brokers' minimum above the default session timeout", [2]string{"cluster: { brokers: 3 }", "cluster: { brokers: 3, broker: { group.min.session.timeout.ms: 50000 } }"}, 2, "cluster.broker.group.min.session.timeout.ms", "INVALID_SESSION_TIMEOUT"},
		{"group.instance.id", [2]string{"group.protocol: classic", "group.protocol: classic\n      group.instance.id: c"}, 12, "consumers[0].config.group.instance.id", "static: true"},
		{"group.id", [2]string{"group.protocol: classic", "group.protocol: classic\n      group.id: billing"}, 12, "consumers[0].config.group.id", "write group: NAME"},
		{"unknown assignor", [2]string{"group.protocol: classic", "group.protocol: classic\n      partition.assignment.strategy: [range, fancy]"}, 12, "consumers[0].config.partition.assignment.strategy", `unknown name "fancy"`},
		{"assignor twice", [2]string{"group.protocol: classic", "group.protocol: classic\n      partition.assignment.strategy: range,range"}, 12, "consumers[0].config.partition.assignment.strategy", "listed twice"},
		{"empty assignor list", [2]string{"group.protocol: classic", "group.protocol: classic\n      partition.assignment.strategy: \"\""}, 12, "consumers[0].config.partition.assignment.strategy", "non-empty list"},
		{"auto-commit contradicts commit", [2]string{"    group: billing\n    config:\n", "    group: billing\n    commit: after-processing\n    config:\n      enable.auto.commit: true\n"}, 12, "consumers[0].config.enable.auto.commit", "contradicts commit: after-processing"},
		{"mixed protocols in one group", second("    group: billing\n    config: { group.protocol: consumer }\n"), 14, "consumers[1].config.group.protocol", "mixes protocols"},
		{"no common assignor in a classic group", second("    group: billing\n    config: { partition.assignment.strategy: roundrobin }\n"), 14, "consumers[1].config.partition.assignment.strategy", "INCONSISTENT_GROUP_PROTOCOL"},
		{"coordinator of an unknown group", [2]string{"group-coordinator(billing)", "group-coordinator(payments)"}, 14, "faults[0].crash", `no consumer joins group "payments" (groups: billing)`},
		{"offsets topic as a producer's topic", [2]string{"consumers:", "producers: [{topic: __consumer_offsets}]\nconsumers:"}, 6, "producers[0].topic", "internal topic of committed offsets"},
		{"offsets topic as a consumer's topic", [2]string{"    group: billing\n", "    group: billing\n    topics: [orders, __consumer_offsets]\n"}, 10, "consumers[0].topics[1]", "internal topic of committed offsets"},
		{"offsets replication factor above the brokers", [2]string{"cluster: { brokers: 3 }", "cluster: { brokers: 3, broker: { offsets.topic.replication.factor: 4 } }"}, 2, "cluster.broker.offsets.topic.replication.factor", "more than the cluster's brokers (3)"},
		{"offsets topic entry above the brokers", [2]string{"topics:\n", "topics:\n  - { name: __consumer_offsets, replication.factor: 4 }\n"}, 4, "topics[0].replication.factor", "more than the cluster's brokers (3)"},
		{"offsets topic partitions disagree", [2]string{"cluster: { brokers: 3 }\ntopics:\n", "cluster: { brokers: 3, broker: { offsets.topic.num.partitions: 5 } }\ntopics:\n  - { name: __consumer_offsets, partitions: 6 }\n"}, 4, "topics[0].partitions", "give it in one place"},
		{"offsets topic replica assignment", [2]string{"topics:\n", "topics:\n  - { name: __consumer_offsets, replica-assignment: [[1]] }\n"}, 4, "topics[0].replica-assignment", "the controller places its replicas"},
		{"processor without output", [2]string{"faults:", "processors: [{name: etl, input: [orders]}]\nfaults:"}, 12, "processors[0].output", "missing: the topic the processor writes"},
		{"processor reading its output", [2]string{"faults:", "processors: [{name: etl, input: [orders], output: orders}]\nfaults:"}, 12, "processors[0].output", "also an input"},
		{"processor named as a consumer", [2]string{"faults:", "processors: [{name: c, input: [orders], output: orders2}]\nfaults:"}, 12, "processors[0].name", `would have the name of consumer c`},
		{"processor output unknown", [2]string{"faults:", "processors: [{name: etl, input: [orders], output: orders2}]\nfaults:"}, 12, "processors[0].output", `no topic "orders2"`},
		{"producer transactions", [2]string{"consumers:", "producers: [{topic: orders, transactions: {records: 0..4}}]\nconsumers:"}, 6, "producers[0].transactions.records", "want 1 <= low <= high"},
		{"transaction.timeout.ms", [2]string{"consumers:", "producers: [{topic: orders, config: {transaction.timeout.ms: 1000}}]\nconsumers:"}, 6, "producers[0].config.transaction.timeout.ms", "for a transactional producer"},
		{"broker heartbeat above its bound", [2]string{"cluster: { brokers: 3 }", "cluster: { brokers: 3, broker: { group.consumer.heartbeat.interval.ms: 20000 } }"}, 2, "cluster.broker.group.consumer.heartbeat.interval.ms", "at most group.consumer.max.heartbeat.interval.ms"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := replaced(t, groupBase, c.edit[0], c.edit[1])
			es := parseErrors(t, src)
			e := es[0]
			if e.File != "bad.yaml" || e.Line != c.line || e.Key != c.key || !strings.Contains(e.Msg, c.want) {
				t.Fatalf("got %v; want line %d, key %s, a message with %q\n%s", es, c.line, c.key, c.want, src)
			}
		})
	}
	t.Run("remote assignor the brokers lack", func(t *testing.T) {
		src := replaced(t, groupBase, "cluster: { brokers: 3 }", "cluster: { brokers: 3, broker: { group.consumer.assignors: range } }")
		src = replaced(t, src, "group.protocol: classic", "group.protocol: consumer\n      group.remote.assignor: uniform")
		es := parseErrors(t, src)
		if e := es[0]; e.Line != 12 || e.Key != "consumers[0].config.group.remote.assignor" || !strings.Contains(e.Msg, "UNSUPPORTED_ASSIGNOR") {
			t.Fatalf("got %v", es)
		}
	})
	t.Run("offsets topic given twice", func(t *testing.T) {
		src := replaced(t, groupBase, "topics:\n", "topics:\n  - { name: __consumer_offsets }\n  - { name: __consumer_offsets }\n")
		es := parseErrors(t, src)
		if e := es[0]; e.Line != 5 || e.Key != "topics[1].name" || !strings.Contains(e.Msg, "defined twice") {
			t.Fatalf("got %v", es)
		}
	})
}

// A __consumer_offsets entry tunes the topic the coordinator creates: it
// is not a topic created at start, and sets the broker's offsets.topic.*.
func TestOffsetsTopicEntry(t *testing.T) {
	src := replaced(t, groupBase, "topics:\n", "topics:\n  - name: __consumer_offsets\n    partitions: 4\n    replication.factor: 2\n    config: { min.insync.replicas: 2 }\n")
	src = replaced(t, src, "    group: billing\n", "    group: billing\n    topics: [orders]\n")
	s := mustParse(t, src)
	if len(s.Topics) != 1 || s.Topics[0].Name != "orders" {
		t.Fatalf("topics %+v", s.Topics)
	}
	ot := s.OffsetsTopic
	if ot.Partitions != 4 || ot.ReplicationFactor != 2 || ot.Config.Get("min.insync.replicas") != "2" || ot.Config.Get("cleanup.policy") != "compact" {
		t.Fatalf("offsets topic %+v", ot)
	}
	if b := s.Cluster.Broker; b.Get("offsets.topic.num.partitions") != "4" || b.Get("offsets.topic.replication.factor") != "2" {
		t.Fatalf("broker keys %s %s", b.Get("offsets.topic.num.partitions"), b.Get("offsets.topic.replication.factor"))
	}
	for _, spec := range s.ClusterConfig().Topics {
		if spec.Name == OffsetsTopicName {
			t.Fatal("the cluster creates __consumer_offsets at start")
		}
	}
	// Consumers without topics read every topic: the offsets topic is not one.
	s = mustParse(t, replaced(t, groupBase, "topics:\n", "topics:\n  - name: __consumer_offsets\n"))
	if !reflect.DeepEqual(s.Consumers[0].Topics, []string{"orders"}) {
		t.Fatalf("consumer topics %v", s.Consumers[0].Topics)
	}
}

// The group coordinator's selector stands wherever a node is named, and is
// kept as written for the model to resolve when the fault fires.
func TestGroupCoordinatorSelector(t *testing.T) {
	src := replaced(t, groupBase, "    restart-after: 5s\n", "    restart-after: 5s\n"+
		"  - { at: 20s, partition: [[group-coordinator(billing)], [rest]], heal-after: 2s }\n"+
		"  - { at: 25s, pause: group-coordinator(billing), resume-after: 1s }\n"+
		"  - { at: 26s, disconnect: c-0, peer: group-coordinator(billing) }\n"+
		"nemesis:\n  - { fault: crash, target: group-coordinator(billing), every: 5s..10s }\n")
	s := mustParse(t, src)
	want := map[string]bool{"crash": false, "partition": false, "pause": false, "disconnect": false}
	for _, f := range s.Faults {
		for _, sel := range f.Fault.Selectors() {
			if g, ok := ParseGroupCoordinator(sel); ok && g == "billing" {
				want[f.Key] = true
			}
		}
	}
	for k, ok := range want {
		if !ok {
			t.Errorf("%s: the selector is not kept as written", k)
		}
	}
	if s.Nemesis[0].Rule.Fault.Target != "group-coordinator(billing)" {
		t.Errorf("nemesis target %q", s.Nemesis[0].Rule.Fault.Target)
	}
	es := parseErrors(t, replaced(t, src, "target: group-coordinator(billing)", "target: group-coordinator(ledger)"))
	if len(es) != 1 || es[0].Key != "nemesis[0]" || !strings.Contains(es[0].Msg, `no consumer joins group "ledger"`) {
		t.Errorf("a nemesis naming an unknown group: %v", es)
	}
	noGroups := replaced(t, groupBase, "    group: billing\n    config:\n      group.protocol: classic\n", "")
	es = parseErrors(t, noGroups)
	if !strings.Contains(es[0].Msg, "the scenario has no consumer group") {
		t.Errorf("without groups: %v", es)
	}
	if !strings.Contains(targetForms, GroupCoordinatorForm) {
		t.Errorf("the target forms lack %s: %s", GroupCoordinatorForm, targetForms)
	}
}

// comparable strips what a round trip may change and the scenario does not
// mean: where things were written, and which keys were written explicitly.
func comparable(s *Scenario) *Scenario {
	c := *s
	c.File = ""
	strip := func(cfg Config) Config { cfg.Explicit = nil; return cfg }
	c.Cluster.Broker = strip(c.Cluster.Broker)
	c.OffsetsTopic.Config = strip(c.OffsetsTopic.Config)
	c.Topics = append([]Topic(nil), s.Topics...)
	for i := range c.Topics {
		c.Topics[i].Config = strip(c.Topics[i].Config)
	}
	c.Producers = append([]Producer(nil), s.Producers...)
	for i := range c.Producers {
		c.Producers[i].Config = strip(c.Producers[i].Config)
	}
	c.Consumers = append([]Consumer(nil), s.Consumers...)
	for i := range c.Consumers {
		c.Consumers[i].Config = strip(c.Consumers[i].Config)
	}
	c.Faults = append([]ScheduledFault(nil), s.Faults...)
	for i := range c.Faults {
		c.Faults[i].Line, c.Faults[i].Column, c.Faults[i].Path = 0, 0, ""
	}
	c.Nemesis = append([]NemesisRule(nil), s.Nemesis...)
	for i := range c.Nemesis {
		c.Nemesis[i].Line, c.Nemesis[i].Column, c.Nemesis[i].Path = 0, 0, ""
	}
	c.Expect = append([]Expectation(nil), s.Expect...)
	for i := range c.Expect {
		c.Expect[i].Line = 0
	}
	return &c
}

// The resolved scenario of a scenario with groups loads back to the same
// scenario, and resolves to the same file again.
func TestGroupScenarioRoundTrip(t *testing.T) {
	srcs := []string{
		groupBase,
		replaced(t, groupBase, "faults:", "  - name: d\n    group: ledger\n    commit: before-processing\n    workers: 3\n    side-effects: plain\n    static: true\n"+
			"    config: { group.protocol: consumer, group.remote.assignor: range, enable.auto.commit: false }\n  - name: r\nfaults:"),
		replaced(t, groupBase, "topics:\n", "topics:\n  - { name: __consumer_offsets, partitions: 5, config: { min.insync.replicas: 2 } }\n"),
		replaced(t, groupBase, "cluster: { brokers: 3 }", "cluster: { brokers: 2, broker: { group.consumer.assignors: [range, uniform], offsets.commit.timeout.ms: 1s } }"),
		// No group, but a tuned offsets topic: written out all the same.
		replaced(t, replaced(t, groupBase, "    group: billing\n    config:\n      group.protocol: classic\n", ""), "topics:\n",
			"topics:\n  - { name: __consumer_offsets, config: { min.insync.replicas: 1, retention.ms: 1000 } }\n"),
	}
	srcs[4] = replaced(t, srcs[4], "crash: group-coordinator(billing)", "crash: broker-1")
	for i, src := range srcs {
		s := mustParse(t, src)
		out, err := s.Resolved()
		if err != nil {
			t.Fatal(err)
		}
		again, err := Parse("resolved.yaml", out)
		if err != nil {
			t.Fatalf("%d: the resolved scenario does not load: %v\n%s", i, err, out)
		}
		if a, b := comparable(s), comparable(again); !reflect.DeepEqual(a, b) {
			t.Fatalf("%d: load → resolve → load differs:\n%+v\n---\n%+v\n%s", i, a, b, out)
		}
		out2, _ := again.Resolved()
		if string(out) != string(out2) {
			t.Fatalf("%d: resolving twice differs:\n%s\n---\n%s", i, out, out2)
		}
	}
}

// A scenario built in code gets the same group defaults, and follows its
// cluster size when written out.
func TestBuiltGroupConsumer(t *testing.T) {
	s := New("built")
	s.Cluster.Brokers = 1
	s.Topics = append(s.Topics, s.NewTopic("orders", 2, 1))
	s.Consumers = append(s.Consumers, s.NewGroupConsumer("c", "g", 2, []string{"orders"}))
	n, err := Normalize(s)
	if err != nil {
		t.Fatal(err)
	}
	c := n.Consumers[0]
	if c.Group != "g" || c.Commit != CommitAuto || c.Workers != 1 || c.Config.Get("session.timeout.ms") != "45000" {
		t.Fatalf("built member %+v", c)
	}
	if n.OffsetsTopic.ReplicationFactor != 1 || n.Cluster.Broker.Get("offsets.topic.replication.factor") != "1" {
		t.Fatalf("one broker: offsets topic %+v", n.OffsetsTopic)
	}
}

// A sweep's axes set group keys on the group members whose protocol
// takes them, keeping each member's config what Kafka would accept.
func TestApplyGroupAxes(t *testing.T) {
	two := replaced(t, groupBase, "faults:", "  - name: r\nfaults:")
	apply := func(src, name, value string) (*Scenario, error) {
		s := mustParse(t, src)
		s.Consumers = append([]Consumer(nil), s.Consumers...)
		if err := s.Apply(name, value); err != nil {
			return s, err
		}
		return Normalize(s)
	}
	s, err := apply(two, "group.protocol", "consumer")
	if err != nil {
		t.Fatal(err)
	}
	if c := s.Consumers[0].Config; c.Get("group.protocol") != "consumer" || c.Get("group.remote.assignor") != "uniform" || c.Get("session.timeout.ms") != "" {
		t.Errorf("classic → consumer: %v", c.Values)
	}
	if _, ok := s.Consumers[1].Config.Values["group.protocol"]; ok {
		t.Error("an assign-mode reader took group.protocol")
	}
	s, err = apply(two, "partition.assignment.strategy", "cooperative-sticky")
	if err != nil || s.Consumers[0].Config.Get("partition.assignment.strategy") != "cooperative-sticky" {
		t.Errorf("strategy axis: %v", err)
	}
	s, err = apply(two, "enable.auto.commit", "false")
	if err != nil || s.Consumers[0].Commit != CommitAfterProcessing {
		t.Errorf("enable.auto.commit=false: %v, commit %s", err, s.Consumers[0].Commit)
	}
	s, err = apply(two, "commit", "before-processing")
	if err != nil || s.Consumers[0].Commit != CommitBeforeProcessing || s.Consumers[0].Config.Get("enable.auto.commit") != "false" {
		t.Errorf("commit axis: %v", err)
	}
	for _, kv := range [][2]string{{"workers", "4"}, {"static", "true"}, {"side-effects", "plain"}, {"max.poll.interval.ms", "1000"},
		{"offsets.topic.num.partitions", "7"}, {"brokers", "1"}} {
		if _, err := apply(two, kv[0], kv[1]); err != nil {
			t.Errorf("%s=%s: %v", kv[0], kv[1], err)
		}
	}
	if s, _ := apply(two, "brokers", "1"); s.OffsetsTopic.ReplicationFactor != 1 {
		t.Errorf("one broker: offsets replication factor %d", s.OffsetsTopic.ReplicationFactor)
	}
	consumerOnly := replaced(t, groupBase, "group.protocol: classic", "group.protocol: consumer")
	if _, err := apply(consumerOnly, "session.timeout.ms", "10000"); err == nil || !strings.Contains(err.Error(), "applies to nothing") {
		t.Errorf("session.timeout.ms on consumer-protocol members only: %v", err)
	}
	if _, err := apply(consumerOnly, "group.remote.assignor", "range"); err != nil {
		t.Errorf("group.remote.assignor: %v", err)
	}
	if _, err := apply(two, "group.remote.assignor", "range"); err == nil {
		t.Error("group.remote.assignor on classic members applied")
	}
	explicit := replaced(t, groupBase, "group.protocol: classic", "session.timeout.ms: 10000")
	if _, err := apply(explicit, "group.protocol", "consumer"); err == nil || !strings.Contains(err.Error(), "session.timeout.ms cannot be set") {
		t.Errorf("consumer protocol over an explicit session.timeout.ms: %v", err)
	}
	noGroup := replaced(t, groupBase, "    group: billing\n    config:\n      group.protocol: classic\n", "")
	noGroup = replaced(t, noGroup, "crash: group-coordinator(billing)", "crash: broker-1")
	if _, err := apply(noGroup, "commit", "auto"); err == nil || !strings.Contains(err.Error(), "no consumer with a group") {
		t.Errorf("commit without groups: %v", err)
	}
	if !IsKafkaKey("partition.assignment.strategy") || !IsKafkaKey("group.consumer.assignors") {
		t.Error("group keys are not Kafka keys an axis may name")
	}
}

// retry.backoff.ms and retry.backoff.max.ms reach a consumer's metadata
// backoff and its group membership's, defaults and set values alike.
func TestConsumerRetryBackoffKeys(t *testing.T) {
	for _, tc := range []struct {
		config           string
		backoff, ceiling string
	}{
		{"group.protocol: classic", "100ms", "1s"},
		{"{ group.protocol: consumer, retry.backoff.ms: 50, retry.backoff.max.ms: 5000 }", "50ms", "5s"},
	} {
		src := strings.Replace(groupBase, "group.protocol: classic", tc.config, 1)
		readers := mustParse(t, src).ClusterConfig().Readers
		if len(readers) != 1 {
			t.Fatalf("%d reader specs, want 1", len(readers))
		}
		rc := readers[0].Config
		got := []string{rc.RetryBackoff.String(), rc.RetryBackoffMax.String(), rc.Group.RetryBackoff.String(), rc.Group.RetryBackoffMax.String()}
		if want := []string{tc.backoff, tc.ceiling, tc.backoff, tc.ceiling}; !reflect.DeepEqual(got, want) {
			t.Errorf("config %s: reader and group backoffs %v, want %v", tc.config, got, want)
		}
	}
}
