package sweep

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kafkasim/history"
	"kafkasim/reports"
	"kafkasim/scenarios"
)

// procOps builds a processor's history: input sends by a producer, output
// sends with their source, transactions.
type procOps struct{ groupOps }

func ms(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }

// input: producer p-0 sends value at invoke, acknowledged at ack in
// orders-partition at offset.
func (b *procOps) input(invoke, ack time.Duration, value string, partition int32, offset int64) {
	v := history.NoValue()
	v.Topic, v.Value = "orders", value
	b.add(invoke, "p-0", history.Invoke, history.FSend, v)
	v.Partition, v.Offset = partition, offset
	b.add(ack, "p-0", history.OK, history.FSend, v)
}

// output: process sends value made from orders-partition@offset; tid is
// its transactional id ("" outside a transaction); outcome at done.
func (b *procOps) output(process, tid string, invoke, done time.Duration, outcome history.Type, value string, partition int32, offset int64) {
	v := history.NoValue()
	v.Topic, v.Value = "invoices", value
	x := v.X()
	x.Source = &history.Source{Topic: "orders", Partition: partition, Offset: offset}
	x.TransactionalID = tid
	b.add(invoke, process, history.Invoke, history.FSend, v)
	if outcome == history.OK {
		v.Partition, v.Offset = 0, int64(len(b.ops))
	}
	b.add(done, process, outcome, history.FSend, v)
}

// end: process's transaction of the sends values ends (f txn-commit or
// txn-abort) with outcome at done.
func (b *procOps) end(process, f string, invoke, done time.Duration, outcome history.Type, values ...string) {
	v := history.NoValue()
	v.X().TransactionalID = process
	b.add(invoke, process, history.Invoke, f, v)
	c := history.NoValue()
	x := c.X()
	x.TransactionalID = process
	for _, s := range values {
		x.Sends = append(x.Sends, history.Send{Topic: "invoices", Value: s, Partition: 0, Offset: -1})
	}
	b.add(done, process, outcome, f, c)
}

// An exactly-once processor etl-0 and an at-least-once one alo-0 over
// inputs sent from 1 s:
//
//   - p-0:1 (orders-0@0, sent at 1000 ms): etl-0's output in a transaction
//     that aborts, then again in one whose commit is answered at 1400 ms:
//     400 ms, from the send's invocation to the commit.
//   - p-0:2 (orders-0@1, sent at 1100 ms): in the same committed
//     transaction: 300 ms.
//   - p-0:3 (orders-1@0, sent at 1200 ms): alo-0's output acknowledged at
//     1250 ms (50 ms), and again at 1300 ms (a duplicate: counted once in
//     latency, twice in outputs).
//   - p-0:4 (orders-1@1, sent at 1300 ms): etl-0's output in a transaction
//     whose commit's outcome is unknown (info): never visible.
//   - p-0:5 (orders-1@2): a failed output, never visible.
//   - p-0:6 (orders-0@2, sent at 2000 ms): committed at 2100 ms, after the
//     fault phase (until = 2 s): in latency (100 ms), not in outputs.
//   - p-0:7 (orders-0@3, sent at 2500 ms, after until): a probe of the
//     final phase, committed at 2600 ms: in neither.
//   - p-0:8: its send failed, so no offset: its output at 1900 ms, made
//     from orders-1@9, has no known input and is counted in outputs only.
//
// Latencies 50, 100, 300, 400 ms: mean 212.5, p99 400. Outputs visible by
// 2 s: 2 (etl-0's commit at 1400 ms) + 2 (alo-0's of orders-1@0) + 1
// (orders-1@9) = 5, over the 1 s from the first input send to until.
func processorMetricsHistory() []history.Op {
	var b procOps
	b.input(ms(1000), ms(1010), "p-0:1", 0, 0)
	b.add(ms(1010), "p-0", history.Invoke, history.FSend, history.Value{Topic: "orders", Value: "p-0:8", Partition: -1, Offset: -1})
	b.add(ms(1020), "p-0", history.Fail, history.FSend, history.Value{Topic: "orders", Value: "p-0:8", Partition: -1, Offset: -1})
	b.output("etl-0", "etl-0", ms(1020), ms(1030), history.OK, "etl-0:1", 0, 0)
	b.end("etl-0", history.FTxnAbort, ms(1040), ms(1050), history.OK, "etl-0:1")
	b.input(ms(1100), ms(1110), "p-0:2", 0, 1)
	b.input(ms(1200), ms(1210), "p-0:3", 1, 0)
	b.output("etl-0", "etl-0", ms(1210), ms(1220), history.OK, "etl-0:2", 0, 0)
	b.output("etl-0", "etl-0", ms(1220), ms(1230), history.OK, "etl-0:3", 0, 1)
	b.output("alo-0", "", ms(1220), ms(1250), history.OK, "alo-0:1", 1, 0)
	b.output("alo-0", "", ms(1260), ms(1300), history.OK, "alo-0:2", 1, 0)
	b.input(ms(1300), ms(1310), "p-0:4", 1, 1)
	b.input(ms(1310), ms(1320), "p-0:5", 1, 2)
	b.output("alo-0", "", ms(1320), ms(1330), history.Fail, "alo-0:3", 1, 2)
	b.end("etl-0", history.FTxnCommit, ms(1300), ms(1400), history.OK, "etl-0:2", "etl-0:3")
	b.output("etl-0", "etl-0", ms(1410), ms(1420), history.OK, "etl-0:4", 1, 1)
	b.end("etl-0", history.FTxnCommit, ms(1500), ms(1600), history.Info, "etl-0:4")
	b.output("alo-0", "", ms(1890), ms(1900), history.OK, "alo-0:4", 1, 9)
	b.input(ms(2000), ms(2010), "p-0:6", 0, 2)
	b.output("etl-0", "etl-0", ms(2010), ms(2020), history.OK, "etl-0:5", 0, 2)
	b.end("etl-0", history.FTxnCommit, ms(2050), ms(2100), history.OK, "etl-0:5")
	b.input(ms(2500), ms(2510), "p-0:7", 0, 3)
	b.output("etl-0", "etl-0", ms(2510), ms(2520), history.OK, "etl-0:6", 0, 3)
	b.end("etl-0", history.FTxnCommit, ms(2550), ms(2600), history.OK, "etl-0:6")
	return b.ops
}

func TestProcessorMetrics(t *testing.T) {
	got := processorMetrics(reports.OpsHistory(processorMetricsHistory()), int64(2*time.Second))
	want := map[string]float64{"p99-end-to-end-latency-ms": 400, "mean-end-to-end-latency-ms": 212.5, "committed-outputs-per-second": 5}
	if len(got) != len(ProcessorMetrics) {
		t.Errorf("metrics %v, want exactly %v", got, ProcessorMetrics)
	}
	for _, name := range ProcessorMetrics {
		if math.Abs(got[name]-want[name]) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, got[name], want[name])
		}
	}
}

// No processor output, or no history: zeros, not NaN.
func TestProcessorMetricsZero(t *testing.T) {
	for _, ops := range [][]history.Op{nil, groupMetricsHistory()} {
		got := processorMetrics(reports.OpsHistory(ops), int64(10*time.Second))
		for _, m := range ProcessorMetrics {
			if v, ok := got[m]; !ok || v != 0 {
				t.Errorf("%d ops: %s = %v (present %v), want 0", len(ops), m, v, ok)
			}
		}
	}
}

// A processor's axes apply to the processors, and to nothing else; a key
// of a processor's producer half goes to it; every mistake is a load
// error naming the file, the line and the axis.
func TestProcessorAxes(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"processor-eos-base.yaml", "batching-base.yaml"} {
		data, err := os.ReadFile("../sweeps/" + f)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, f), data, 0o644)
	}
	write := func(base, body string) string {
		p := filepath.Join(dir, "s.yaml")
		os.WriteFile(p, []byte("name: s\nbase: "+base+"\nseeds: 1\n"+body), 0o644)
		return p
	}
	sw, err := Load(write("processor-eos-base.yaml", "axes:\n  exactly-once: [false, true]\n  commit-interval: [50ms, 1s]\n"+
		"  transaction.timeout.ms: [5000]\n  isolation.level: [read_committed]\n  linger.ms: [0, 20]\n  max.poll.records: [10]\n"))
	if err != nil {
		t.Fatal(err)
	}
	base := sw.Base
	s := *copyScenario(base)
	for _, a := range [][2]string{{"exactly-once", "false"}, {"commit-interval", "1s"}, {"linger.ms", "20"}, {"max.poll.records", "10"}} {
		if err := s.Apply(a[0], a[1]); err != nil {
			t.Fatalf("%s=%s: %v", a[0], a[1], err)
		}
	}
	c := s.Consumers[0]
	p := c.Processor
	if p.ExactlyOnce || p.CommitInterval != time.Second || p.Producer.Get("linger.ms") != "20" || c.Config.Get("max.poll.records") != "10" ||
		c.Config.Get("isolation.level") != "read_uncommitted" || p.Producer.Get("transaction.timeout.ms") != "" {
		t.Fatalf("at-least-once cell: %+v, config %v", *p, c.Config.Values)
	}
	if n, err := scenarios.Normalize(&s); err != nil || n.Consumers[0].Processor.ExactlyOnce || n.Consumers[0].Processor.CommitInterval != time.Second {
		t.Fatalf("the at-least-once cell does not load back as itself: %v", err)
	}
	if b := base.Consumers[0].Processor; !b.ExactlyOnce || b.CommitInterval != 100*time.Millisecond || b.Producer.Get("linger.ms") != "5" {
		t.Fatalf("the base changed: %+v", *b)
	}
	// Back to exactly-once: read_committed (over an explicit
	// read_uncommitted, as Streams overrides it), a transaction timeout
	// again.
	if err := s.Apply("isolation.level", "read_uncommitted"); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply("exactly-once", "true"); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply("transaction.timeout.ms", "5000"); err != nil {
		t.Fatal(err)
	}
	if c := s.Consumers[0]; c.Config.Get("isolation.level") != "read_committed" || c.Processor.Producer.Get("transaction.timeout.ms") != "5000" ||
		c.Processor.CommitInterval != time.Second {
		t.Fatalf("exactly-once cell: %+v, config %v", *c.Processor, c.Config.Values)
	}
	if n, err := scenarios.Normalize(&s); err != nil || n.Consumers[0].Processor.Producer.Get("transaction.timeout.ms") != "5000" {
		t.Fatalf("the exactly-once cell does not load back as itself: %v", err)
	}
	// Streams' default commit interval follows the guarantee when the base
	// leaves it out.
	s = *copyScenario(base)
	s.Consumers = append(s.Consumers[:0:0], s.Consumers...)
	q := *s.Consumers[0].Processor
	q.CommitIntervalGiven = false
	s.Consumers[0].Processor = &q
	if err := s.Apply("exactly-once", "false"); err != nil || s.Consumers[0].Processor.CommitInterval != 30*time.Second {
		t.Fatalf("at-least-once default commit interval: %v, %v", err, s.Consumers[0].Processor.CommitInterval)
	}
	for _, tc := range []struct{ base, body, want string }{
		{"batching-base.yaml", "axes:\n  exactly-once: [true]\n", "s.yaml:5: axes.exactly-once: exactly-once applies to nothing in the base scenario (no processor)"},
		{"batching-base.yaml", "axes:\n  commit-interval: [1s]\n", "s.yaml:5: axes.commit-interval: commit-interval applies to nothing in the base scenario (no processor)"},
		{"batching-base.yaml", "axes:\n  transactions.abort: [0.5]\n", "s.yaml:5: axes.transactions.abort: transactions.abort applies to nothing in the base scenario (no transactional producer)"},
		{"processor-eos-base.yaml", "axes:\n  transactions.records: [1..4]\n", "applies to nothing in the base scenario (no transactional producer)"},
		{"processor-eos-base.yaml", "axes:\n  commit-interval: [100ms, 0s]\n", `s.yaml:5: axes.commit-interval: commit-interval "0s": want a duration from 1ms to 1h`},
		{"processor-eos-base.yaml", "axes:\n  exactly-once: [maybe]\n", `exactly-once "maybe": want true or false`},
		// An exactly-once processor reads read_committed whatever its
		// config says: read_uncommitted is not its key.
		{"processor-eos-base.yaml", "axes:\n  isolation.level: [read_uncommitted]\n", "isolation.level applies to nothing in the base scenario"},
		{"processor-eos-base.yaml", "axes:\n  isolation.level: [read_comitted]\n", "read_comitted"},
		// Streams turns the auto-commit off: nothing else takes the key.
		{"processor-eos-base.yaml", "axes:\n  enable.auto.commit: [true]\n", "enable.auto.commit applies to nothing in the base scenario"},
		// A group member's own keys are a consumer's, not a processor's.
		{"processor-eos-base.yaml", "axes:\n  commit: [auto]\n", "commit applies to nothing in the base scenario (no consumer with a group)"},
		{"processor-eos-base.yaml", "axes:\n  exactly-onse: [true]\n", `s.yaml:5:3: axes.exactly-onse: unknown axis (did you mean "exactly-once"?)`},
		{"batching-base.yaml", "axes:\n  linger.ms: [0, 5]\nplots:\n  - { kind: lines, x: linger.ms, y: p99-end-to-end-latency-ms }\n",
			"p99-end-to-end-latency-ms is a processor's metric, and the base has no processor"},
	} {
		if _, err := Load(write(tc.base, tc.body)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s: got %v, want %q", tc.base, tc.body, err, tc.want)
		}
	}
}

// A transactional producer's transactions entry and transaction keys are
// axes: each applies to the transactional producers, on a copy.
func TestTransactionAxes(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "base.yaml"), []byte(`name: base
duration: 5s
cluster: { brokers: 3 }
topics: [{ name: orders, partitions: 2, replication.factor: 3 }]
producers:
  - { name: t, topic: orders, rate: 10/s, transactions: { records: 1..4, abort: 0.25 } }
  - { name: p, topic: orders, rate: 10/s }
consumers:
  - { name: c, topics: [orders] }
`), 0o644)
	p := filepath.Join(dir, "s.yaml")
	os.WriteFile(p, []byte("name: s\nbase: base.yaml\nseeds: 1\naxes:\n  transactions.records: [\"1\", 2..8]\n  transactions.abort: [0, 1]\n"+
		"  transaction.timeout.ms: [1000]\n  isolation.level: [read_committed]\n"), 0o644)
	sw, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	s := *copyScenario(sw.Base)
	for _, a := range [][2]string{{"transactions.records", "2..8"}, {"transactions.abort", "1"}, {"transaction.timeout.ms", "1000"}, {"isolation.level", "read_committed"}} {
		if err := s.Apply(a[0], a[1]); err != nil {
			t.Fatalf("%s=%s: %v", a[0], a[1], err)
		}
	}
	if tx := s.Producers[0].Transactions; *tx != (scenarios.Transactions{RecordsMin: 2, RecordsMax: 8, Abort: 1}) ||
		s.Producers[0].Config.Get("transaction.timeout.ms") != "1000" {
		t.Fatalf("transactional producer: %+v, %v", *tx, s.Producers[0].Config.Values)
	}
	if s.Producers[1].Transactions != nil || s.Producers[1].Config.Get("transaction.timeout.ms") != "" {
		t.Fatalf("the plain producer became transactional: %+v", s.Producers[1])
	}
	if s.Consumers[0].Config.Get("isolation.level") != "read_committed" {
		t.Fatalf("isolation.level: %v", s.Consumers[0].Config.Values)
	}
	if tx := sw.Base.Producers[0].Transactions; *tx != (scenarios.Transactions{RecordsMin: 1, RecordsMax: 4, Abort: 0.25}) {
		t.Fatalf("the base changed: %+v", *tx)
	}
	if _, err := scenarios.Normalize(&s); err != nil {
		t.Fatalf("the cell does not load back: %v", err)
	}
	for _, tc := range []struct{ axes, want string }{
		{"  transactions.records: [0]\n", `s.yaml:5: axes.transactions.records: transactions.records "0": want a count or a range such as 1..4`},
		{"  transactions.records: [4..2]\n", `transactions.records "4..2"`},
		{"  transactions.abort: [1.5]\n", `transactions.abort "1.5": want a probability in 0..1`},
		{"  transactions.record: [1]\n", `unknown axis (did you mean "transactions.records"?)`},
	} {
		os.WriteFile(p, []byte("name: s\nbase: base.yaml\nseeds: 1\naxes:\n"+tc.axes), 0o644)
		if _, err := Load(p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.axes, err, tc.want)
		}
	}
}
