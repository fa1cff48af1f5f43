package scenarios

import (
	"strings"
	"testing"
	"time"
)

// A processors entry loads as its consumer half (a group member committing
// after processing) with its processor part; exactly-once reads
// read_committed, needs the transaction coordinator, and is judged as
// commit: transactional; the resolved scenario writes it out as a
// processors entry that loads again to the same thing.
func TestProcessorsEntryLoadsResolvesAndPromises(t *testing.T) {
	s, err := LoadFile("processors-exactly-once-crashes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Consumers) != 1 {
		t.Fatalf("consumers %+v", s.Consumers)
	}
	c := s.Consumers[0]
	p := c.Processor
	if p == nil || !p.ExactlyOnce || p.Output != "invoices" || p.CommitInterval != 2*time.Second || c.Group != "etl" ||
		c.Commit != CommitAfterProcessing || c.Config.Get("isolation.level") != "read_committed" || c.Config.Get("enable.auto.commit") != "false" ||
		p.Producer.Get("transaction.timeout.ms") != "10000" {
		t.Fatalf("processor %+v %+v, config %v", c, p, c.Config.Values)
	}
	cfg := s.ClusterConfig()
	if cfg.Transactions == nil || cfg.Groups == nil || len(cfg.Readers) != 1 || cfg.Readers[0].Processor == nil ||
		cfg.Readers[0].Processor.Producer.TransactionalID != "etl" || cfg.Readers[0].Processor.Producer.Topic != "invoices" {
		t.Fatalf("cluster config %+v", cfg.Readers)
	}
	g := s.Guarantees()
	if len(g.Consumers) != 1 || g.Consumers[0].Commit != "transactional" || g.Consumers[0].Isolation != "read_committed" ||
		len(g.Producers) != 2 || g.Producers[1].Prefix != "etl" || g.Producers[1].TransactionTimeout != 10*time.Second {
		t.Fatalf("guarantees %+v", g)
	}
	out, err := s.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "processors:") || !strings.Contains(string(out), "exactly-once: true") {
		t.Fatalf("resolved:\n%s", out)
	}
	again, err := Parse("resolved.yaml", out)
	if err != nil {
		t.Fatalf("the resolved form does not load: %v\n%s", err, out)
	}
	if a := again.Consumers[0]; a.Processor == nil || a.Processor.CommitInterval != p.CommitInterval ||
		a.Config.Get("isolation.level") != "read_committed" {
		t.Fatalf("reloaded %+v", a)
	}
	alos, err := LoadFile("processors-at-least-once-crashes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if c := alos.Consumers[0]; c.Processor.ExactlyOnce || c.Config.Get("isolation.level") != "read_uncommitted" ||
		alos.Guarantees().Consumers[0].Commit != CommitAfterProcessing || alos.ClusterConfig().Transactions != nil {
		t.Fatalf("at-least-once %+v", c)
	}
}

// transaction.timeout.ms means nothing to an at-least-once processor, whose
// producer has no transactional.id: ignored, as Kafka's producer ignores it,
// so that exactly-once can be flipped alone (twins, sweep axes).
func TestAtLeastOnceProcessorIgnoresATransactionTimeout(t *testing.T) {
	src := "name: p\ntopics: [{name: a}, {name: b}]\nprocessors:\n  - {name: etl, input: [a], output: b, config: {transaction.timeout.ms: 5000}}\n"
	s, err := Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if p := s.Consumers[0].Processor; p.ExactlyOnce || p.Producer.Explicit["transaction.timeout.ms"] || s.ClusterConfig().Transactions != nil {
		t.Fatalf("at-least-once %+v", p)
	}
}

// A consumer with commit: transactional loads as a group member whose
// node is a processor with no output topic: its transactional.id is its
// name (instance i takes "<name>-<i>"), it reads read_committed, its
// auto-commit is off, the brokers host the transaction coordinator, and it
// is judged exactly-once; the resolved scenario writes it back as a
// consumer entry that loads again to the same thing. A transactional.id
// and an isolation.level it is given are kept.
func TestTransactionalCommitConsumerLoadsResolvesAndPromises(t *testing.T) {
	src := `name: t
topics: [{name: orders, partitions: 2}]
consumers:
  - name: c
    count: 2
    group: billing
    topics: [orders]
    commit: transactional
    config: { transaction.timeout.ms: 10000 }
  - name: d
    group: ledger
    topics: [orders]
    commit: transactional
    config: { transactional.id: ledger, isolation.level: read_uncommitted }
`
	s, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	c, d := s.Consumers[0], s.Consumers[1]
	if c.Processor != nil || c.Commit != CommitTransactional || c.Config.Get("transactional.id") != "c" ||
		c.Config.Get("transaction.timeout.ms") != "10000" || c.Config.Get("isolation.level") != "read_committed" ||
		c.Config.Get("enable.auto.commit") != "false" {
		t.Fatalf("consumer %+v, config %v", c, c.Config.Values)
	}
	if d.Config.Get("transactional.id") != "ledger" || d.Config.Get("transaction.timeout.ms") != "60000" ||
		d.Config.Get("isolation.level") != "read_uncommitted" {
		t.Fatalf("consumer d config %v", d.Config.Values)
	}
	cfg := s.ClusterConfig()
	if cfg.Transactions == nil || cfg.Groups == nil || len(cfg.Readers) != 2 {
		t.Fatalf("cluster config %+v", cfg)
	}
	for i, want := range []string{"c", "ledger"} {
		rs := cfg.Readers[i]
		p := rs.Processor
		if p == nil || p.Producer.TransactionalID != want || p.Producer.Topic != "" || p.CommitInterval != 0 || !p.ExactlyOnce() ||
			rs.Config.Group == nil || rs.Config.Group.Processor != nil {
			t.Fatalf("reader %d: %+v processor %+v", i, rs, p)
		}
	}
	if cfg.Readers[0].Processor.Producer.TransactionTimeout != 10*time.Second || cfg.Readers[0].Config.Isolation != "read_committed" {
		t.Fatalf("reader 0: %+v", cfg.Readers[0])
	}
	g := s.Guarantees()
	if len(g.Consumers) != 2 || g.Consumers[0].Commit != "transactional" || g.Consumers[0].Isolation != "read_committed" ||
		len(g.Producers) != 2 || g.Producers[0].Prefix != "c" || g.Producers[0].TransactionTimeout != 10*time.Second {
		t.Fatalf("guarantees %+v", g)
	}
	out, err := s.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "processors:") || strings.Count(string(out), "commit: transactional") != 2 {
		t.Fatalf("resolved:\n%s", out)
	}
	again, err := Parse("resolved.yaml", out)
	if err != nil {
		t.Fatalf("the resolved form does not load: %v\n%s", err, out)
	}
	for i, a := range again.Consumers {
		if b := s.Consumers[i]; a.Commit != b.Commit || strings.Join(a.Config.Keys, ",") != strings.Join(b.Config.Keys, ",") {
			t.Fatalf("reloaded %+v, want %+v", a, b)
		}
		for _, k := range a.Config.Keys {
			if a.Config.Get(k) != s.Consumers[i].Config.Get(k) {
				t.Fatalf("reloaded %s=%s, want %s", k, a.Config.Get(k), s.Consumers[i].Config.Get(k))
			}
		}
	}
}
