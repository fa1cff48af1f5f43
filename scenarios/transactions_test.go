package scenarios

import (
	"strings"
	"testing"
)

// The transaction coordinator's broker keys follow the cluster (the
// replication factor min(3, brokers), the min ISR min(2, it)), are
// written out resolved, and a __transaction_state entry sets them.
func TestTxnCoordinatorKeys(t *testing.T) {
	small := replaced(t, groupBase, "cluster: { brokers: 3 }", "cluster: { brokers: 1 }")
	s := mustParse(t, small)
	b := s.Cluster.Broker
	if b.Get(txnRFKey) != "1" || b.Get(txnMinISR) != "1" || b.Get(txnPartsKey) != "50" {
		t.Fatalf("one broker: rf %s min isr %s partitions %s", b.Get(txnRFKey), b.Get(txnMinISR), b.Get(txnPartsKey))
	}
	s = mustParse(t, groupBase)
	out, err := s.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"transaction.state.log.replication.factor: 3", "transaction.state.log.min.isr: 2",
		"transaction.state.log.num.partitions: 50", "transaction.abort.timed.out.transaction.cleanup.interval.ms: 10000"} {
		if !strings.Contains(string(out), want) {
			t.Fatalf("resolved lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), TxnStateTopicName) {
		t.Fatalf("resolved lists %s though the scenario did not:\n%s", TxnStateTopicName, out)
	}
	// A __transaction_state entry sets the broker keys.
	src := replaced(t, groupBase, "topics:\n", "topics:\n  - { name: __transaction_state, partitions: 3, replication.factor: 2, config: { min.insync.replicas: 1, segment.bytes: 2097152 } }\n")
	s = mustParse(t, src)
	b = s.Cluster.Broker
	if b.Get(txnRFKey) != "2" || b.Get(txnMinISR) != "1" || b.Get(txnPartsKey) != "3" {
		t.Fatalf("from the entry: rf %s min isr %s partitions %s", b.Get(txnRFKey), b.Get(txnMinISR), b.Get(txnPartsKey))
	}
	ts := s.txnSettings()
	if ts.ReplicationFactor != 2 || ts.MinISR != 1 || ts.NumPartitions != 3 || ts.TopicConfigs["segment.bytes"] != "2097152" {
		t.Fatalf("settings: %+v", ts)
	}
	out, err = s.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	again := mustParse(t, string(out))
	if again.TxnStateTopic.Name != TxnStateTopicName || again.Cluster.Broker.Get(txnRFKey) != "2" || again.Cluster.Broker.Get(txnMinISR) != "1" {
		t.Fatalf("the resolved scenario reads back otherwise:\n%s", out)
	}
	if cfg := s.ClusterConfig(); cfg.Transactions != nil {
		t.Fatalf("no transactional client, yet the brokers host a transaction coordinator")
	}
}

// Values the cluster cannot satisfy are refused.
func TestTxnCoordinatorRefusals(t *testing.T) {
	cases := []struct {
		name string
		edit [2]string
		line int
		key  string
		want string
	}{
		{"replication factor above the brokers", [2]string{"cluster: { brokers: 3 }", "cluster: { brokers: 3, broker: { transaction.state.log.replication.factor: 4 } }"}, 2, "cluster.broker.transaction.state.log.replication.factor", "more than the cluster's brokers (3)"},
		{"min ISR above the replication factor", [2]string{"cluster: { brokers: 3 }", "cluster: { brokers: 3, broker: { transaction.state.log.replication.factor: 2, transaction.state.log.min.isr: 3 } }"}, 2, "cluster.broker.transaction.state.log.min.isr", "more than transaction.state.log.replication.factor 2"},
		{"min ISR above the default on one broker", [2]string{"cluster: { brokers: 3 }", "cluster: { brokers: 1, broker: { transaction.state.log.min.isr: 2 } }"}, 2, "cluster.broker.transaction.state.log.min.isr", "more than"},
		{"entry above the brokers", [2]string{"topics:\n", "topics:\n  - { name: __transaction_state, replication.factor: 4 }\n"}, 4, "topics[0].replication.factor", "more than the cluster's brokers (3)"},
		{"entry disagrees with the broker", [2]string{"cluster: { brokers: 3 }\ntopics:\n", "cluster: { brokers: 3, broker: { transaction.state.log.num.partitions: 5 } }\ntopics:\n  - { name: __transaction_state, partitions: 6 }\n"}, 4, "topics[0].partitions", "give it in one place"},
		{"entry replica assignment", [2]string{"topics:\n", "topics:\n  - { name: __transaction_state, replica-assignment: [[1]] }\n"}, 4, "topics[0].replica-assignment", "the controller places its replicas"},
		{"entry twice", [2]string{"topics:\n", "topics:\n  - { name: __transaction_state }\n  - { name: __transaction_state }\n"}, 5, "topics[1].name", "defined twice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := replaced(t, groupBase, c.edit[0], c.edit[1])
			es := parseErrors(t, src)
			e := es[0]
			if e.Line != c.line || e.Key != c.key || !strings.Contains(e.Msg, c.want) {
				t.Fatalf("got %v; want line %d, key %s, a message with %q\n%s", es, c.line, c.key, c.want, src)
			}
		})
	}
}
