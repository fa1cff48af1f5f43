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
	if p == nil || !p.ExactlyOnce || p.Output != "invoices" || p.CommitInterval != 100*time.Millisecond || c.Group != "etl" ||
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
