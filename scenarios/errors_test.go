package scenarios

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"kafkasim/model/cluster"
	"kafkasim/sim"
)

// parseErrors parses src and returns its errors, failing if it loads.
// errorCase is a scenario that must fail to load with one error at key,
// on a line, whose message holds msg.
type errorCase struct{ name, src, key, msg string }

// wantOneErrorEach runs each case as a subtest.
func wantOneErrorEach(t *testing.T, cases []errorCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			es := parseErrors(t, c.src)
			if len(es) != 1 || es[0].Key != c.key || !strings.Contains(es[0].Msg, c.msg) {
				t.Fatalf("want one error at %s saying %q; got\n%v", c.key, c.msg, es)
			}
			if es[0].Line == 0 {
				t.Fatalf("no line: %v", es[0])
			}
		})
	}
}

func parseErrors(t *testing.T, src string) Errors {
	t.Helper()
	_, err := Parse("bad.yaml", []byte(src))
	if err == nil {
		t.Fatalf("accepted:\n%s", src)
	}
	var es Errors
	var one *Error
	switch {
	case errors.As(err, &es):
		return es
	case errors.As(err, &one):
		return Errors{one}
	}
	t.Fatalf("error of type %T: %v", err, err)
	return nil
}

// An empty item in any list (a bare "-", or null) is an error at its place,
// not an item with every default nor no item: almost always an unfinished
// edit.
func TestEmptyListItemsAreErrors(t *testing.T) {
	cases := []struct {
		name, src string
		key       string
		line      int
	}{
		{"topic", "topics:\n  - name: t\n  -\n", "topics[1]", 3},
		{"last topic at the end of the file", "cluster:\n  brokers: 1\ntopics:\n  -", "topics[0]", 4},
		{"producer", "topics: [{name: t}]\nproducers:\n  -\n", "producers[0]", 3},
		{"consumer", "topics: [{name: t}]\nconsumers:\n  - name: c\n  - ~\n", "consumers[1]", 4},
		{"fault", "faults:\n  -\n  - {at: 1s, crash: broker-1}\n", "faults[0]", 2},
		{"nemesis rule", "nemesis:\n  - null\n", "nemesis[0]", 2},
		{"rack", "cluster:\n  racks: [a, ~, c]\n", "cluster.racks[1]", 2},
		{"bug", "bugs:\n  - hw-truncation\n  -\n", "bugs[1]", 3},
		{"consumer topic", "topics: [{name: t}]\nconsumers: [{topics: [t, null]}]\n", "consumers[0].topics[1]", 2},
		{"target", "faults: [{at: 1s, crash: [broker-1, ~]}]\n", "faults[0].crash[1]", 1},
		{"partition group", "faults: [{at: 1s, partition: [[broker-1], ~], heal-after: 1s}]\n", "faults[0].partition[1]", 1},
		{"partition member", "faults: [{at: 1s, partition: [[broker-1, ~], [rest]], heal-after: 1s}]\n", "faults[0].partition[0][1]", 1},
		{"replica list", "topics: [{name: t, replica-assignment: [[1], ~]}]\n", "topics[0].replica-assignment[1]", 1},
		{"replica", "topics: [{name: t, replica-assignment: [[1, ~]]}]\n", "topics[0].replica-assignment[0][1]", 1},
		{"stalled message", "faults: [{at: 1s, stall: broker-1, messages: [Produce, ~]}]\n", "faults[0].messages[1]", 1},
		{"disk target", "faults: [{at: 1s, disk: {target: [broker-1, ~], fault: wipe}}]\n", "faults[0].disk.target[1]", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			es := parseErrors(t, c.src)
			for _, e := range es {
				if e.Key == c.key && e.Line == c.line && strings.Contains(e.Msg, "an empty item") {
					if len(es) != 1 {
						t.Errorf("an empty item is one error, got %d:\n%v", len(es), es)
					}
					return
				}
			}
			t.Fatalf("want an empty-item error at line %d, key %s; got\n%v", c.line, c.key, es)
		})
	}
}

// A key with no value is nothing: where a value is wanted that is an error;
// a section left empty (cluster:, topics:, faults:, ...) is a section with
// nothing in it, and the scenario it makes is written out and loads back.
func TestKeysWithoutValues(t *testing.T) {
	for _, src := range []string{"name:\n", "seed:\n", "duration:\n", "topics: [{name: }]\n", "cluster: {brokers: }\n",
		"faults: [{at: , crash: broker-1}]\n", "nemesis: [{fault: crash, every: }]\n", "topics: [{name: t}]\nproducers: [{rate: ~}]\n",
		"expect: {violations: }\n", "cluster: {broker: {min.insync.replicas: }}\n"} {
		es := parseErrors(t, src)
		if len(es) != 1 || !strings.Contains(es[0].Msg, "got nothing") || es[0].Line == 0 {
			t.Errorf("%q: want one error saying the value is missing, got\n%v", src, es)
		}
	}
	for _, src := range []string{"name: empty\ncluster:\ntopics:\nproducers:\nconsumers:\nfaults:\nnemesis:\nbugs:\nexpect:\n",
		"name: empty\ncluster: {network: , disk: , broker: }\ntopics: [{name: t, config: }]\nproducers: [{config: }]\n"} {
		s, err := Parse("empty.yaml", []byte(src))
		if err != nil {
			t.Fatalf("%q: %v", src, err)
		}
		out, err := s.Resolved()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse("resolved.yaml", out); err != nil {
			t.Fatalf("%q: its resolved form does not load: %v\n%s", src, err, out)
		}
	}
}

// Every problem of a file in one round: errors of the first pass and of the
// checks across sections together, in file order, each with line and
// column.
func TestEveryErrorInOneRound(t *testing.T) {
	src := `name: many
duration: 30
faults:
  - at: 10s
    crash: broker-9
    restart-after: 5s
cluster:
  brokers: 3
  colour: blue
topics:
  - name: orders
    replication.factor: 3
    config: { min.insync.replicas: 4 }
producers:
  - topic: orders
    rate: fast
`
	want := []struct {
		line, column int
		key, msg     string
	}{
		{2, 11, "duration", "want a duration"},
		{5, 5, "faults[0].crash", "broker-9"},
		{9, 3, "cluster.colour", "unknown key"},
		{13, 15, "topics[0].config.min.insync.replicas", "more than topic orders's replication factor 3"},
		{16, 11, "producers[0].rate", "want a rate"},
	}
	es := parseErrors(t, src)
	if len(es) != len(want) {
		t.Fatalf("want %d errors, got %d:\n%v", len(want), len(es), es)
	}
	for i, w := range want {
		e := es[i]
		if e.Line != w.line || e.Column != w.column || e.Key != w.key || !strings.Contains(e.Msg, w.msg) {
			t.Errorf("error %d: got %v; want %d:%d: %s: ...%s...", i, e, w.line, w.column, w.key, w.msg)
		}
		if !strings.HasPrefix(e.Error(), fmt.Sprintf("bad.yaml:%d:%d: %s: ", w.line, w.column, w.key)) {
			t.Errorf("error %d prints as %q: want file:line:column: key: message", i, e.Error())
		}
	}
}

// A check comparing values is left out when one of them had an error of its
// own: the error is said once, not echoed by every value that depends on it.
func TestCrossChecksDoNotEchoErrors(t *testing.T) {
	cases := []struct {
		name, src string
		key       string
	}{
		{"broker count", "cluster: {brokers: 65}\ntopics: [{name: t, replication.factor: 5, replica-assignment: [[4, 5, 1, 2, 3]]}]\nfaults: [{at: 1s, crash: broker-5}]\n", "cluster.brokers"},
		{"topic name", "topics: [{name: \"orders!\", partitions: 2}]\nproducers: [{topic: \"orders!\"}]\nconsumers: [{topics: [\"orders!\"]}]\nfaults: [{at: 1s, crash: leader(orders!-1)}]\n", "topics[0].name"},
		{"partition count", "topics: [{name: t, partitions: lots}]\nfaults: [{at: 1s, crash: leader(t-3)}]\n", "topics[0].partitions"},
		{"duration", "duration: soon\ntopics: [{name: t}]\nproducers: [{stop: 70s}]\nfaults: [{at: 80s, crash: broker-1}]\n", "duration"},
		{"client name", "topics: [{name: t}]\nproducers: [{name: \"p/1\", count: 2}]\nfaults: [{at: 1s, crash: p-1}]\n", "producers[0].name"},
		{"racks", "cluster: {racks: {a: b}}\nfaults: [{at: 1s, crash: rack(a)}]\n", "cluster.racks"},
		{"growing", "topics: [{name: t}]\nfaults: [{at: 1s, add-partitions: {count: many}}, {at: 2s, crash: leader(t-5)}]\n", "faults[0].add-partitions.count"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			es := parseErrors(t, c.src)
			if len(es) != 1 || es[0].Key != c.key {
				t.Fatalf("want one error, at %s; got\n%v", c.key, es)
			}
		})
	}
	// The same checks do run when nothing they depend on is wrong.
	es := parseErrors(t, "duration: soon\ncluster: {brokers: 3}\nfaults: [{at: 1s, crash: broker-5}]\n")
	if len(es) != 2 || es[1].Key != "faults[0].crash" {
		t.Fatalf("an unrelated error does not hide a missing broker; got\n%v", es)
	}
}

// The message for a target no node has lists every way a fault may name
// its targets, with this cluster's names and racks: it is made from the
// tables the resolvers work from.
func TestUnknownTargetListsEverySelector(t *testing.T) {
	src := "cluster: {brokers: 3, racks: [a, b, c]}\ntopics: [{name: orders}]\nproducers: [{name: p, count: 2}]\n" +
		"consumers: [{name: c}]\nfaults: [{at: 1s, crash: brokr-1}]\n"
	es := parseErrors(t, src)
	if len(es) != 1 || es[0].Key != "faults[0].crash" || es[0].Line != 5 {
		t.Fatalf("want one error at faults[0].crash; got\n%v", es)
	}
	msg := es[0].Msg
	for _, want := range []string{`"brokr-1"`, "controller-1..controller-3", "broker-1..broker-3", "p-0..p-1", "c-0", "admin",
		"leader(TOPIC-PARTITION)", "active-controller", "rack(a)", "rack(b)", "rack(c)", "role(broker)", "role(controller)",
		"role(producer)", "role(consumer)", "random-broker", "random-controller", "random-producer", "random-consumer",
		", random,", ", all"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the message lacks %s: %s", want, msg)
		}
	}
	// Every form the resolvers have is in it, whatever is added later.
	for _, form := range (&cluster.Cluster{}).SelectorForms() {
		if !strings.Contains(msg, form) {
			t.Errorf("the message lacks the model's %s: %s", form, msg)
		}
	}
	for _, form := range sim.SelectorForms() {
		prefix, _, _ := strings.Cut(form, "ROLE")
		prefix, _, _ = strings.Cut(prefix, "RACK")
		if form != sim.NodeNameForm && !strings.Contains(msg, prefix) {
			t.Errorf("the message lacks the world's %s: %s", form, msg)
		}
	}
	// A fault with no target at all gets the forms too, before there is a
	// cluster to name instances of.
	es = parseErrors(t, "faults: [{at: 1s, crash: []}]\n")
	for _, want := range []string{"which node?", "broker-N", "controller-N", "NAME-I", "leader(TOPIC-PARTITION)", "active-controller",
		"rack(RACK)", "role(broker)", "role(controller)", "random-broker", "random,", "all"} {
		if len(es) != 1 || !strings.Contains(es[0].Msg, want) {
			t.Errorf("the message for a fault without target lacks %s: %v", want, es)
		}
	}
	// A selector of a known form that names no node says which exist.
	es = parseErrors(t, "cluster: {racks: [a, b]}\nfaults: [{at: 1s, crash: rack(z)}, {at: 2s, crash: random-brokers}]\n")
	if len(es) != 2 || !strings.Contains(es[0].Msg, "rack(a), rack(b)") || !strings.Contains(es[1].Msg, "random-broker,") {
		t.Errorf("want each error to list what exists: %v", es)
	}
}

// An unknown partition shape is answered with every shape and what it does.
func TestUnknownShapeListsEveryShape(t *testing.T) {
	es := parseErrors(t, "nemesis: [{fault: partition, shape: thirds, every: 10s, heal-after: 2s}]\n")
	if len(es) != 1 || es[0].Key != "nemesis[0].shape" {
		t.Fatalf("want one error at nemesis[0].shape, got\n%v", es)
	}
	for _, sh := range sim.PartitionShapes {
		if want := fmt.Sprintf("%s (%s)", sh, sh.Meaning()); sh.Meaning() == "" || !strings.Contains(es[0].Msg, want) {
			t.Errorf("the message lacks %q: %s", want, es[0].Msg)
		}
	}
}

// A key that cannot act on the fault it is given is an error, in nemesis
// rules as in scheduled faults: a partition rule has no target (its shape
// draws from among), a rule ends only with its kind's own key (or down),
// a disconnect does not end, and a bit flip or a bad range is damage that
// stays, so no heal-after undoes it.
func TestFaultKeysThatCannotActAreErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"nemesis:\n  - { fault: partition, shape: halves, target: broker-1, every: 10s }\n", "nemesis[0].target: a partition rule draws its groups by shape from among"},
		{"nemesis:\n  - { fault: crash, every: 10s, heal-after: 2s }\n", "nemesis[0].heal-after: a crash ends with restart-after (or down), not heal-after"},
		{"nemesis:\n  - { fault: disconnect, every: 10s, down: 2s }\n", "nemesis[0].down: a disconnect does not end by itself"},
		{"nemesis:\n  - { fault: disk, disk: corrupt, every: 10s, down: 2s }\n", "nemesis[0].down: a disk corrupt fault does not end"},
		{"faults:\n  - { at: 5s, disk: { target: broker-1, fault: read-error }, heal-after: 2s }\n", "faults[0].heal-after: a disk read-error fault does not end"},
	} {
		es := parseErrors(t, "name: x\ntopics: [{ name: t }]\n"+c.src)
		if len(es) != 1 || !strings.Contains(es[0].Error(), c.want) {
			t.Errorf("%s: want one error %q, got %v", c.src, c.want, es)
		}
	}
	// What does act still loads.
	for _, src := range []string{
		"nemesis:\n  - { fault: crash, every: 10s, restart-after: 2s }\n  - { fault: crash, every: 10s, down: 2s }\n",
		"nemesis:\n  - { fault: isolate, target: broker-1, every: 10s, heal-after: 2s }\n  - { fault: disk, disk: full, every: 10s, heal-after: 2s }\n",
		"faults:\n  - { at: 5s, disk: { target: broker-1, fault: slow-fsync }, heal-after: 2s }\n  - { at: 6s, disk: { target: broker-1, fault: corrupt } }\n",
	} {
		if _, err := Parse("ok.yaml", []byte("name: x\ntopics: [{ name: t }]\n"+src)); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
}
