package cluster

import (
	"testing"
	"time"

	"kafkasim/model/proto"
	"kafkasim/model/txn"
	"kafkasim/sim"
)

// ask sends m to node every half second until answer (the last message
// the probe got) is no longer retriable, and returns it.
func ask[R sim.Message](t *testing.T, c *Cluster, p *probeClient, to sim.NodeID, m sim.Message, retriable func(R) bool) R {
	t.Helper()
	for range 40 {
		n := len(p.got)
		p.env.Send(to, m)
		c.World.RunFor(500 * time.Millisecond)
		for _, got := range p.got[n:] {
			if r, ok := got.(R); ok && !retriable(r) {
				return r
			}
		}
	}
	var zero R
	t.Fatalf("no final answer to %T:\n%s", m, describe(c))
	return zero
}

// txnCluster is a settled cluster of 11 brokers with topic orders and a
// 3-partition __transaction_state, and its answer to the first
// FindCoordinator of transactional id "tx" (which creates the topic).
func txnCluster(t *testing.T) (*Cluster, *probeClient, *proto.FindCoordinatorResponse) {
	t.Helper()
	cfg := DefaultConfig(11)
	cfg.Topics = []TopicSpec{{Name: "orders", Partitions: 2, ReplicationFactor: 3}}
	ts := DefaultTxnSettings(cfg.Brokers)
	ts.NumPartitions = 3
	cfg.Transactions = &ts
	c, p := settledCluster(t, cfg)
	find := ask(t, c, p, c.Brokers[0], &proto.FindCoordinatorRequest{Key: "tx", KeyType: proto.CoordinatorKeyTransaction},
		func(r *proto.FindCoordinatorResponse) bool { return r.Error == proto.CoordinatorNotAvailable })
	return c, p, find
}

// The transaction coordinator in a cluster: FindCoordinator creates
// __transaction_state (replication factor 3, min ISR 2), InitProducerId
// gets an id from a block the active controller allocated, a partition
// leader's AddPartitionsToTxn opens the transaction, and EndTxn commits it
// with the epoch bumped.
func TestTransactionCoordinatorInCluster(t *testing.T) {
	c, p, find := txnCluster(t)
	if find.Error != proto.None || find.NodeID != c.TransactionCoordinator("tx") {
		t.Fatalf("FindCoordinator: %+v, the metadata says broker %d", find, c.TransactionCoordinator("tx"))
	}
	topic := c.Metadata().Topics[txn.Topic]
	if len(topic.Partitions) != 3 || len(topic.Partitions[0].Replicas) != 3 || topic.MinInsyncReplicas != 2 {
		t.Fatalf("%s: %d partitions, %d replicas, min ISR %d", txn.Topic, len(topic.Partitions), len(topic.Partitions[0].Replicas), topic.MinInsyncReplicas)
	}
	init := ask(t, c, p, find.Node, &proto.InitProducerIDRequest{CorrelationID: 1, TransactionalID: "tx", TransactionTimeout: time.Minute, ProducerID: -1, ProducerEpoch: -1},
		func(r *proto.InitProducerIDResponse) bool { return r.Error == proto.CoordinatorLoadInProgress })
	if init.Error != proto.None || init.ProducerID < 0 || init.ProducerID >= 1000 || init.ProducerEpoch != 0 {
		t.Fatalf("InitProducerId: %+v", init)
	}
	if next := c.Metadata().NextProducerID; next != 1000 {
		t.Fatalf("the controller's next producer id is %d, want 1000 after one block", next)
	}
	add := ask(t, c, p, find.Node, &proto.AddPartitionsToTxnRequest{CorrelationID: 2, TransactionalID: "tx", ProducerID: init.ProducerID,
		Partitions: []proto.TopicPartition{{Topic: "orders", Partition: 0}, {Topic: "orders", Partition: 1}}},
		func(*proto.AddPartitionsToTxnResponse) bool { return false })
	if add.Error != proto.None {
		t.Fatalf("AddPartitionsToTxn: %+v", add)
	}
	if d, ok := c.DescribeTransaction("tx"); !ok || d.State != "Ongoing" || len(d.Partitions) != 2 {
		t.Fatalf("after AddPartitionsToTxn: %+v %v", d, ok)
	}
	end := ask(t, c, p, find.Node, &proto.EndTxnRequest{CorrelationID: 3, TransactionalID: "tx", ProducerID: init.ProducerID, Committed: true},
		func(*proto.EndTxnResponse) bool { return false })
	if end.Error != proto.None || end.ProducerID != init.ProducerID || end.ProducerEpoch != 1 {
		t.Fatalf("EndTxn: %+v", end)
	}
	if d, ok := c.DescribeTransaction("tx"); !ok || (d.State != "PrepareCommit" && d.State != "CompleteCommit") || d.ProducerEpoch != 1 {
		t.Fatalf("after EndTxn: %+v %v", d, ok)
	}
	// An idempotent producer's InitProducerId is still any broker's.
	idem := ask(t, c, p, c.Brokers[0], &proto.InitProducerIDRequest{CorrelationID: 4, ProducerID: -1, ProducerEpoch: -1},
		func(*proto.InitProducerIDResponse) bool { return false })
	if idem.Error != proto.None || idem.ProducerID < 1<<20 {
		t.Fatalf("idempotent InitProducerId: %+v", idem)
	}
	if v := c.Audit.Violations(); len(v) > 0 {
		t.Fatalf("violations: %v", v)
	}
}

// Without transactions configured no broker hosts the coordinator: a
// transactional InitProducerId is NOT_COORDINATOR, FindCoordinator for a
// transactional id COORDINATOR_NOT_AVAILABLE.
func TestNoTransactionCoordinator(t *testing.T) {
	cfg := DefaultConfig(12)
	c, p := settledCluster(t, cfg)
	init := ask(t, c, p, c.Brokers[0], &proto.InitProducerIDRequest{TransactionalID: "tx", TransactionTimeout: time.Minute, ProducerID: -1, ProducerEpoch: -1},
		func(*proto.InitProducerIDResponse) bool { return false })
	if init.Error != proto.NotCoordinator {
		t.Fatalf("InitProducerId: %+v", init)
	}
	find := ask(t, c, p, c.Brokers[0], &proto.FindCoordinatorRequest{Key: "tx", KeyType: proto.CoordinatorKeyTransaction},
		func(*proto.FindCoordinatorResponse) bool { return false })
	if find.Error != proto.CoordinatorNotAvailable {
		t.Fatalf("FindCoordinator: %+v", find)
	}
}

// The coordinator's broker crashes with a transaction in PrepareCommit:
// the new leader of its __transaction_state partition loads the
// replicated log and holds the transaction as it was (the markers are
// then resent, with its own coordinator epoch).
func TestTransactionCoordinatorFailover(t *testing.T) {
	cfg := DefaultConfig(13)
	cfg.Topics = []TopicSpec{{Name: "orders", Partitions: 1, ReplicationFactor: 3}}
	ts := DefaultTxnSettings(cfg.Brokers)
	ts.NumPartitions = 1
	cfg.Transactions = &ts
	trace := &sim.TraceBuffer{RecordsMax: 1 << 20}
	cfg.Trace = trace
	c, p := settledCluster(t, cfg)
	find := ask(t, c, p, c.Brokers[0], &proto.FindCoordinatorRequest{Key: "tx", KeyType: proto.CoordinatorKeyTransaction},
		func(r *proto.FindCoordinatorResponse) bool { return r.Error == proto.CoordinatorNotAvailable })
	init := ask(t, c, p, find.Node, &proto.InitProducerIDRequest{TransactionalID: "tx", TransactionTimeout: time.Minute, ProducerID: -1, ProducerEpoch: -1},
		func(r *proto.InitProducerIDResponse) bool { return r.Error == proto.CoordinatorLoadInProgress })
	ask(t, c, p, find.Node, &proto.AddPartitionsToTxnRequest{TransactionalID: "tx", ProducerID: init.ProducerID,
		Partitions: []proto.TopicPartition{{Topic: "orders", Partition: 0}}}, func(*proto.AddPartitionsToTxnResponse) bool { return false })
	// The crash comes as soon as EndTxn is answered: the markers, which
	// need the followers of "orders" to fetch them, are not all written.
	n := len(p.got)
	p.env.Send(find.Node, &proto.EndTxnRequest{TransactionalID: "tx", ProducerID: init.ProducerID, Committed: true})
	var end *proto.EndTxnResponse
	for i := 0; end == nil && i < 2000; i++ {
		c.World.RunFor(time.Millisecond)
		for _, got := range p.got[n:] {
			if r, ok := got.(*proto.EndTxnResponse); ok {
				end = r
			}
		}
	}
	if end == nil || end.Error != proto.None {
		t.Fatalf("EndTxn: %+v", end)
	}
	old := c.TransactionCoordinator("tx")
	crashAt := c.World.Now()
	c.World.Crash(c.BrokerNode(old), true)
	c.World.RunFor(15 * time.Second)
	now := c.TransactionCoordinator("tx")
	if now == old || now < 1 {
		t.Fatalf("the coordinator did not move from broker %d:\n%s", old, describe(c))
	}
	d, ok := c.DescribeTransaction("tx")
	if !ok || (d.State != "PrepareCommit" && d.State != "CompleteCommit") || d.ProducerID != init.ProducerID || d.ProducerEpoch != 1 {
		t.Fatalf("after the failover broker %d holds %+v %v", now, d, ok)
	}
	// It resends the markers (their coordinator epoch is checked in
	// model/txn's tests).
	found := false
	for _, r := range trace.Records {
		if r.From == BrokerName(now) && r.At > crashAt && r.Kind == "deliver" && r.Detail == "WriteTxnMarkers" {
			found = true
		}
	}
	if !found {
		t.Fatalf("broker %d sent no WriteTxnMarkers after it took over", now)
	}
	// The old instance's epoch is fenced by the new coordinator too.
	r := ask(t, c, p, c.BrokerNode(now), &proto.AddPartitionsToTxnRequest{TransactionalID: "tx", ProducerID: init.ProducerID,
		Partitions: []proto.TopicPartition{{Topic: "orders", Partition: 0}}}, func(*proto.AddPartitionsToTxnResponse) bool { return false })
	if r.Error != proto.ProducerFenced {
		t.Fatalf("AddPartitionsToTxn with the pre-commit epoch: %+v", r)
	}
}

// A stalled transaction is excused from convergence only where a
// partition's producer state can be ahead of __transaction_state: after a
// loss of its records (the regression scenario
// stalled-prepareabort-after-txn-state-loss-not-judged) or with a bug
// switch that ends transactions without their epoch bump. Otherwise a
// stall is the model's own defect and must fail the run.
func TestTxnEpochsMayRunAheadOnlyAfterALossOrABugSwitch(t *testing.T) {
	c, _, _ := txnCluster(t)
	if c.TxnEpochsMayRunAhead() {
		t.Fatalf("no loss and no bug switch, yet epochs may run ahead:\n%s", describe(c))
	}
	for _, bug := range []string{BugNoEpochBumpOnAbort, BugDelayedEndTxn} {
		cfg := DefaultConfig(3)
		ts := DefaultTxnSettings(cfg.Brokers)
		cfg.Transactions = &ts
		cfg.Bugs = []string{bug}
		c, _ := settledCluster(t, cfg)
		if !c.TxnEpochsMayRunAhead() {
			t.Errorf("bug %s: epochs may not run ahead", bug)
		}
	}
}
