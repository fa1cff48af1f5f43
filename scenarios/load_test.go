package scenarios

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"strings"
	"testing"
	"time"

	"kafkasim/sim"
)

// The resolved form of every scenario loads back to the same resolved form:
// scenario.yaml in a run store is replayable as it is.
func TestResolvedScenarioIsAValidScenario(t *testing.T) {
	files := map[string][]byte{}
	fs.WalkDir(Bundled, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files[p], _ = fs.ReadFile(Bundled, p)
		}
		return nil
	})
	spec, err := os.ReadFile("testdata/spec-example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files["spec-example.yaml"] = spec
	for name, data := range files {
		s, err := Parse(name, data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out, err := s.Resolved()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		again, err := Parse(name+" (resolved)", out)
		if err != nil {
			t.Fatalf("%s resolved does not load: %v\n%s", name, err, out)
		}
		out2, _ := again.Resolved()
		if !bytes.Equal(out, out2) {
			t.Fatalf("%s: resolving twice differs:\n%s\n---\n%s", name, out, out2)
		}
	}
}

func TestDefaultsAreKafkas(t *testing.T) {
	s, err := Parse("min.yaml", []byte("name: min\ntopics: [{name: t}]\nproducers: [{}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := s.Producers[0]
	want := map[string]string{"acks": "all", "enable.idempotence": "true", "linger.ms": "5", "batch.size": "16384",
		"delivery.timeout.ms": "120000", "max.in.flight.requests.per.connection": "5", "retries": "2147483647"}
	for k, v := range want {
		if got := p.Config.Get(k); got != v {
			t.Errorf("producer %s = %s, want Kafka's %s", k, got, v)
		}
	}
	b := s.Cluster.Broker
	for k, v := range map[string]string{"min.insync.replicas": "1", "unclean.leader.election.enable": "false",
		"eligible.leader.replicas.enable": "true", "replica.lag.time.max.ms": "30000", "log.flush.interval.messages": never} {
		if got := b.Get(k); got != v {
			t.Errorf("broker %s = %s, want %s", k, got, v)
		}
	}
	if s.Seed != 1 || s.Duration != time.Minute || s.Settle != 30*time.Second || p.Topic != "t" || p.Name != "p" {
		t.Errorf("defaults: seed %d duration %v settle %v topic %q name %q", s.Seed, s.Duration, s.Settle, p.Topic, p.Name)
	}
	if len(s.Expect) != 2 || s.Expect[0].Key != "violations" || s.Expect[1].Key != "converged" {
		t.Errorf("default expectations: %+v", s.Expect)
	}
	// acks=1 without an explicit enable.idempotence turns idempotence off,
	// as Kafka does; an explicit true is an error.
	s, err = Parse("a.yaml", []byte("topics: [{name: t}]\nproducers: [{config: {acks: 1}}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Producers[0].Config.Get("enable.idempotence"); got != "false" {
		t.Errorf("acks=1: enable.idempotence %s, want false", got)
	}
}

const base = `name: base
duration: 30s
cluster:
  controllers: 3
  brokers: 3
  racks: [a, b, c]
topics:
  - name: orders
    partitions: 3
    replication.factor: 3
    config: { min.insync.replicas: 2 }
producers:
  - name: p
    topic: orders
    rate: 100/s
    config: { acks: all }
consumers:
  - name: c
    topics: [orders]
faults:
  - at: 10s
    crash: leader(orders-0)
    restart-after: 5s
expect:
  lost-acked-write: 0
`

// Bad input: each is an error naming file, line and key, and nothing else
// goes wrong.
func TestBadScenariosNameFileLineAndKey(t *testing.T) {
	cases := []struct {
		name      string
		from, to  string // a replacement in base
		line      int
		key, want string
	}{
		{"unknown key", "    replication.factor: 3", "    replicaton.factor: 3", 10, "topics[0].replicaton.factor", `did you mean "replication.factor"`},
		{"wrong type", "  brokers: 3", "  brokers: three", 5, "cluster.brokers", "want an integer"},
		{"out of range", "  brokers: 3", "  brokers: 65", 5, "cluster.brokers", "out of range"},
		{"min isr above rf", "min.insync.replicas: 2", "min.insync.replicas: 4", 11, "topics[0].config.min.insync.replicas", "more than topic orders's replication factor 3"},
		{"rf above brokers", "    replication.factor: 3", "    replication.factor: 4", 10, "topics[0].replication.factor", "more than the cluster's brokers (3)"},
		{"missing node", "crash: leader(orders-0)", "crash: broker-9", 22, "faults[0].crash", "broker-9"},
		{"node on both sides of a cut", "crash: leader(orders-0)\n    restart-after: 5s", "partition: [[broker-1], [broker-1, broker-2]]\n    heal-after: 5s", 22, "faults[0].partition[1]", "broker-1 is in group 0 too"},
		{"missing topic in selector", "crash: leader(orders-0)", "crash: leader(payments-0)", 22, "faults[0].crash", "payments"},
		{"escaping name", "name: base", "name: ../../etc", 1, "name", "not a valid scenario name"},
		{"bad duration", "duration: 30s", "duration: 30", 2, "duration", "want a duration"},
		{"too long", "duration: 30s", "duration: 25h", 2, "duration", "out of range"},
		{"fault after the phase", "  - at: 10s", "  - at: 40s", 21, "faults[0].at", "after the fault phase"},
		{"wrong undo key", "    restart-after: 5s", "    heal-after: 5s", 23, "faults[0].heal-after", "restart-after"},
		{"stall without messages", "crash: leader(orders-0)\n    restart-after: 5s", "stall: leader(orders-0)\n    heal-after: 5s", 22, "faults[0].stall", "stall needs messages"},
		{"unknown stalled message", "crash: leader(orders-0)\n    restart-after: 5s", "stall: leader(orders-0)\n    messages: [AlterPartiton]\n    heal-after: 5s", 23, "faults[0].messages[0]", `unknown message "AlterPartiton"`},
		{"stalled messages not a list", "crash: leader(orders-0)\n    restart-after: 5s", "stall: leader(orders-0)\n    messages: {a: b}\n    heal-after: 5s", 23, "faults[0].messages", "want a list"},
		{"after-elections not a number", "    restart-after: 5s", "    restart-after: 5s\n    after-elections: next", 24, "faults[0].after-elections", "want an integer"},
		{"after-elections zero", "    restart-after: 5s", "    restart-after: 5s\n    after-elections: 0", 24, "faults[0].after-elections", "out of range"},
		{"messages on another fault", "    restart-after: 5s", "    restart-after: 5s\n    messages: [Produce]", 24, "faults[0].messages", "applies to stall only"},
		{"unknown acks", "{ acks: all }", "{ acks: two }", 16, "producers[0].config.acks", "want one of all, 1, 0"},
		{"kafka key not modelled", "{ acks: all }", "{ partitioner.class: x }", 16, "producers[0].config.partitioner.class", "only Kafka's default partitioner"},
		{"transactional.id empty", "{ acks: all }", "{ transactional.id: '' }", 16, "producers[0].config.transactional.id", "want a name of 1 to 249"},
		{"transaction.timeout.ms zero", "{ acks: all }", "{ transactional.id: t, transaction.timeout.ms: 0 }", 16, "producers[0].config.transaction.timeout.ms", "out of range"},
		{"transaction.timeout.ms without transactions", "{ acks: all }", "{ transaction.timeout.ms: 1000 }", 16, "producers[0].config.transaction.timeout.ms", "for a transactional producer"},
		{"transactional needs acks=all", "{ acks: all }", "{ acks: 1 }\n    transactions: { records: 2 }", 16, "producers[0].config.acks", "transactional producer needs acks=all"},
		{"transactional needs idempotence", "{ acks: all }", "{ enable.idempotence: false, transactional.id: t }", 16, "producers[0].config.enable.idempotence", "needs enable.idempotence=true"},
		{"transactions records range", "{ acks: all }", "{ acks: all }\n    transactions: { records: 4..1 }", 17, "producers[0].transactions.records", "want 1 <= low <= high"},
		{"transactions records not a number", "{ acks: all }", "{ acks: all }\n    transactions: { records: many }", 17, "producers[0].transactions.records", "want a count or a range"},
		{"transactions abort above 1", "{ acks: all }", "{ acks: all }\n    transactions: { abort: 1.5 }", 17, "producers[0].transactions.abort", "out of range"},
		{"transactions unknown key", "{ acks: all }", "{ acks: all }\n    transactions: { record: 2 }", 17, "producers[0].transactions.record", "unknown key"},
		{"transactions not a mapping", "{ acks: all }", "{ acks: all }\n    transactions: yes", 17, "producers[0].transactions", "want a mapping"},
		{"transactional commit without a group", "    topics: [orders]", "    topics: [orders]\n    commit: transactional", 20, "consumers[0].commit", "applies to the members of a consumer group only"},
		{"transaction.timeout.ms of a consumer", "    topics: [orders]", "    topics: [orders]\n    group: g\n    config: { transaction.timeout.ms: 1000 }", 21, "consumers[0].config.transaction.timeout.ms", "for a consumer with commit: transactional"},
		{"unknown expectation", "  lost-acked-write: 0", "  lost-writes: 0", 25, "expect.lost-writes", "unknown key"},
		{"anomaly of an unknown client", "  lost-acked-write: 0", "  aborted-read(nobody): 0", 25, "expect.aborted-read(nobody)", "unknown key"},
		{"unknown anomaly of a client", "  lost-acked-write: 0", "  lost-writes(p): 0", 25, "expect.lost-writes(p)", "unknown key"},
		{"bad comparison", "  lost-acked-write: 0", "  lost-acked-write: lots", 25, "expect.lost-acked-write", "comparison"},
		{"unknown bug", "expect:", "bugs: [hw-truncaton]\nexpect:", 24, "bugs[0]", `did you mean "hw-truncation"`},
		{"duplicate key", "  brokers: 3", "  brokers: 3\n  brokers: 4", 6, "cluster.brokers", "given twice"},
		{"idempotence needs acks=all", "{ acks: all }", "{ acks: 1, enable.idempotence: true }", 16, "producers[0].config.enable.idempotence", "needs acks=all"},
		{"client name collides", "  - name: p\n", "  - name: broker\n    count: 2\n", 13, "producers[0].name", "broker-1"},
		// yaml.v3 places a flow error at the line its context began.
		{"invalid yaml", "  racks: [a, b, c]", "  racks: [a, b, c", 5, "", "invalid YAML"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if !strings.Contains(base, c.from) {
				t.Fatalf("base lacks %q", c.from)
			}
			_, err := Parse("bad.yaml", []byte(strings.Replace(base, c.from, c.to, 1)))
			if err == nil {
				t.Fatal("accepted")
			}
			var first *Error
			var es Errors
			switch {
			case errors.As(err, &es):
				first = es[0]
			case errors.As(err, &first):
			default:
				t.Fatalf("error of type %T: %v", err, err)
			}
			if first.File != "bad.yaml" || (c.line > 0 && first.Line != c.line) || first.Key != c.key || !strings.Contains(first.Msg, c.want) {
				t.Fatalf("got %q (line %d, key %q); want line %d, key %q, message containing %q", err, first.Line, first.Key, c.line, c.key, c.want)
			}
			if strings.Count(first.Error(), "\n") > 0 {
				t.Fatalf("an error is one line: %q", first.Error())
			}
		})
	}
	if _, err := Parse("base.yaml", []byte(base)); err != nil {
		t.Fatalf("the base scenario is valid: %v", err)
	}
}

func TestFileLimits(t *testing.T) {
	if _, err := Parse("big.yaml", bytes.Repeat([]byte("#"), FileBytesMax+1)); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Fatalf("a file over 1 MiB: %v", err)
	}
	if _, err := Parse("empty.yaml", nil); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Fatalf("an empty file: %v", err)
	}
	if _, err := LoadFile("testdata/does-not-exist.yaml"); err == nil || !strings.Contains(err.Error(), "testdata/does-not-exist.yaml") {
		t.Fatalf("a missing file: %v", err)
	}
}

func TestComparisons(t *testing.T) {
	for s, x := range map[string][2]float64{">0": {1, 0}, "<=0.5": {0.5, 0.6}, ">= 0.99": {0.99, 0.98}, "3": {3, 4}, "!=2": {1, 2}} {
		c, err := ParseComparison(s)
		if err != nil {
			t.Fatal(err)
		}
		if !c.Holds(x[0]) || c.Holds(x[1]) {
			t.Errorf("%s: holds(%v)=%v holds(%v)=%v", s, x[0], c.Holds(x[0]), x[1], c.Holds(x[1]))
		}
	}
}

// A selector is resolved when its fault fires: leader(T-P) may name a
// partition an add-partitions fault creates before then, but not one that
// never exists.
func TestLeaderOfAnAddedPartition(t *testing.T) {
	grown := strings.Replace(base, "  - at: 10s\n    crash: leader(orders-0)",
		"  - { at: 5s, add-partitions: { topic: orders, count: 8 } }\n  - at: 10s\n    crash: leader(orders-7)", 1)
	if grown == base {
		t.Fatal("base lacks the fault")
	}
	if _, err := Parse("grown.yaml", []byte(grown)); err != nil {
		t.Fatalf("leader(orders-7) after growing to 8 partitions: %v", err)
	}
	beyond := strings.Replace(grown, "leader(orders-7)", "leader(orders-8)", 1)
	if _, err := Parse("beyond.yaml", []byte(beyond)); err == nil || !strings.Contains(err.Error(), "orders-8") {
		t.Fatalf("leader(orders-8) of 8 partitions: got %v", err)
	}
}

// A nemesis's slow network takes a latency or a range each fault draws
// from; a bad one is one error, not two.
func TestNemesisLatencyRange(t *testing.T) {
	withNemesis := func(latency string) string {
		return strings.Replace(base, "expect:", "nemesis:\n  - { fault: slow-network, latency: "+latency+", every: 1s..3s, down: 1s }\nexpect:", 1)
	}
	s, err := Parse("range.yaml", []byte(withNemesis("400ms..900ms")))
	if err != nil {
		t.Fatal(err)
	}
	if r := s.Nemesis[0].Rule; r.Latency.Min != 400*time.Millisecond || r.Latency.Max != 900*time.Millisecond {
		t.Fatalf("latency %+v", r.Latency)
	}
	out, err := s.Resolved()
	if err != nil || !strings.Contains(string(out), "latency: 400ms..900ms") {
		t.Fatalf("resolved scenario lacks the range (%v):\n%s", err, out)
	}
	_, err = Parse("bad.yaml", []byte(withNemesis("fast")))
	var es Errors
	if !errors.As(err, &es) || len(es) != 1 || es[0].Key != "nemesis[0].latency" {
		t.Fatalf("want one error at nemesis[0].latency, got %v", err)
	}
}

// One problem, one error: a partition's groups given as a mapping are not a
// list, and that is all there is to say about them.
func TestPartitionGroupsOfTheWrongTypeGiveOneError(t *testing.T) {
	src := "name: p\nfaults:\n  - { at: 1s, partition: { one-way: [[broker-1], [broker-2]] }, heal-after: 1s }\n"
	_, err := Parse("p.yaml", []byte(src))
	var es Errors
	if !errors.As(err, &es) && err != nil {
		es = Errors{}
		var one *Error
		if errors.As(err, &one) {
			es = Errors{one}
		}
	}
	if len(es) != 1 || es[0].Key != "faults[0].partition" || !strings.Contains(es[0].Msg, "want a list") {
		t.Fatalf("want one error at faults[0].partition saying it wants a list; got %v", err)
	}
}

// after-elections arms a fault at `at` and fires it at the N-th KRaft
// election after; the resolved file keeps it.
func TestAfterElectionsIsReadAndWritten(t *testing.T) {
	armed := strings.Replace(base, "    restart-after: 5s", "    restart-after: 5s\n    after-elections: 2", 1)
	s, err := Parse("armed.yaml", []byte(armed))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Faults) != 1 || s.Faults[0].AfterElections != 2 || s.Faults[0].At != 10*time.Second {
		t.Fatalf("faults %+v: want one armed at 10s for the second election", s.Faults)
	}
	out, err := s.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "after-elections: 2") {
		t.Fatalf("the resolved file lost after-elections:\n%s", out)
	}
	again, err := Parse("resolved.yaml", out)
	if err != nil || again.Faults[0].AfterElections != 2 {
		t.Fatalf("the resolved file does not load back: %v", err)
	}
	plain, _ := Parse("base.yaml", []byte(base))
	if plain.Faults[0].AfterElections != 0 {
		t.Fatal("a fault without after-elections waits for elections")
	}
}

// A nemesis fault that does not end (a disconnect, a disk corrupt or
// read-error) takes no duration: none is drawn, so its next fault comes
// `every` after it (not after a duration it does not have), and the
// resolved scenario, which the run store keeps for replay, loads again.
func TestNemesisFaultsThatDoNotEndHaveNoDuration(t *testing.T) {
	for _, rule := range []string{
		"{ fault: disconnect, every: 2s }",
		"{ fault: disk, disk: corrupt, every: 2s }",
		"{ fault: disk, disk: read-error, every: 2s }",
	} {
		src := strings.Replace(base, "expect:", "nemesis:\n  - "+rule+"\nexpect:", 1)
		s, err := Parse("lasting.yaml", []byte(src))
		if err != nil {
			t.Fatalf("%s: %v", rule, err)
		}
		if d := s.Nemesis[0].Rule.Down; d != (sim.Range{}) {
			t.Errorf("%s: lasts %v..%v", rule, d.Min, d.Max)
		}
		out, err := s.Resolved()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse("resolved.yaml", out); err != nil {
			t.Errorf("%s: the resolved scenario does not load: %v\n%s", rule, err, out)
		}
	}
}

// A transactions entry makes a producer transactional: transactional.id
// defaults to its name, transaction.timeout.ms to Kafka's 60000, and the
// resolved scenario writes both out, with the entry; the client config
// carries them. A producer without one is as it was: no transaction keys.
func TestTransactionalProducer(t *testing.T) {
	src := strings.Replace(base, "    config: { acks: all }\n", "    config: { acks: all }\n    transactions: { records: 1..4, abort: 0.25 }\n  - name: q\n    topic: orders\n    config: { transactional.id: pay, transaction.timeout.ms: 10s }\n  - name: r\n    topic: orders\n", 1)
	s, err := Parse("txn.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	p, q, r := s.Producers[0], s.Producers[1], s.Producers[2]
	if tx := p.Transactions; tx == nil || *tx != (Transactions{RecordsMin: 1, RecordsMax: 4, Abort: 0.25}) {
		t.Fatalf("p's transactions %+v", p.Transactions)
	}
	if p.Config.Get("transactional.id") != "p" || p.Config.Get("transaction.timeout.ms") != "60000" || p.Config.Get("enable.idempotence") != "true" {
		t.Fatalf("p's config %v", p.Config.Values)
	}
	if tx := q.Transactions; tx == nil || *tx != (Transactions{RecordsMin: 1, RecordsMax: 1}) || q.Config.Get("transactional.id") != "pay" || q.Config.Get("transaction.timeout.ms") != "10000" {
		t.Fatalf("q: %+v %v", q.Transactions, q.Config.Values)
	}
	if _, has := r.Config.Values["transactional.id"]; has || r.Transactions != nil {
		t.Fatalf("r is not transactional: %+v %v", r.Transactions, r.Config.Values)
	}
	pc := q.producerConfig()
	if pc.TransactionalID != "pay" || pc.TransactionTimeout != 10*time.Second || pc.Transactions == nil || pc.Transactions.RecordsMax != 1 {
		t.Fatalf("q's client config %+v", pc)
	}
	if rc := r.producerConfig(); rc.TransactionalID != "" || rc.Transactions != nil {
		t.Fatalf("r's client config is transactional: %+v", rc)
	}
	out, err := s.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"transactions:\n      records: 1..4\n      abort: 0.25", "transactional.id: p\n", "transaction.timeout.ms: 60000"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("the resolved scenario lacks %q:\n%s", want, out)
		}
	}
	again, err := Parse("txn resolved", out)
	if err != nil {
		t.Fatalf("the resolved scenario does not load: %v\n%s", err, out)
	}
	if out2, _ := again.Resolved(); !bytes.Equal(out, out2) {
		t.Fatalf("resolving twice differs:\n%s\n---\n%s", out, out2)
	}
	// A sweep may vary the transactional producers' timeout, not break
	// their config.
	if err := again.Apply("transaction.timeout.ms", "5000"); err != nil {
		t.Fatal(err)
	}
	if got := again.Producers[1].Config.Get("transaction.timeout.ms"); got != "5000" {
		t.Fatalf("applied transaction.timeout.ms: %s", got)
	}
	if _, has := again.Producers[2].Config.Values["transaction.timeout.ms"]; has {
		t.Fatal("transaction.timeout.ms applied to a producer that is not transactional")
	}
	if err := again.Apply("acks", "1"); err == nil || !strings.Contains(err.Error(), "producer p is transactional") {
		t.Fatalf("acks=1 on transactional producers: %v", err)
	}
}
