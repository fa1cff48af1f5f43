package cluster

import (
	"strings"
	"testing"
	"time"

	"kafkasim/godview"
	"kafkasim/model/metadata"
	"kafkasim/model/producer"
	"kafkasim/model/proto"
	"kafkasim/model/record"
)

// The god view of transactions: an open transaction keeps the cluster from
// converging (naming it) until it ends; a partition whose last stable
// offset a transaction holds that no coordinator holds open is a hanging
// transaction (here a broken model's: a transactional batch written
// straight into the leader's log by a producer id no coordinator knows).
func TestTransactionGodView(t *testing.T) {
	c, p, find := txnCluster(t)
	init := ask(t, c, p, find.Node, &proto.InitProducerIDRequest{CorrelationID: 1, TransactionalID: "tx", TransactionTimeout: time.Minute, ProducerID: -1, ProducerEpoch: -1},
		func(r *proto.InitProducerIDResponse) bool { return r.Error == proto.CoordinatorLoadInProgress })
	ask(t, c, p, find.Node, &proto.AddPartitionsToTxnRequest{CorrelationID: 2, TransactionalID: "tx", ProducerID: init.ProducerID,
		Partitions: []proto.TopicPartition{{Topic: "orders", Partition: 0}}}, func(*proto.AddPartitionsToTxnResponse) bool { return false })
	got, err := c.ResolveTarget("txn-coordinator(tx)")
	if err != nil || len(got) != 1 || got[0] != c.BrokerNode(c.TransactionCoordinator("tx")) {
		t.Fatalf("txn-coordinator(tx) = %v, %v; coordinator broker %d", got, err, c.TransactionCoordinator("tx"))
	}
	held := c.Transactions()
	if len(held) != 1 || held[0].TransactionalID != "tx" || held[0].State != "Ongoing" || held[0].Coordinator != c.TransactionCoordinator("tx") {
		t.Fatalf("Transactions() = %+v", held)
	}
	if ok, why := c.noTransactionOpen(); ok || !strings.Contains(why, "transaction tx") || !strings.Contains(why, "Ongoing") {
		t.Fatalf("no transaction open with tx Ongoing: %v %q", ok, why)
	}
	if f := c.Facts().Of(godview.HangingTransaction); len(f) != 0 {
		t.Fatalf("an open transaction that wrote nothing hangs nothing: %+v", f)
	}

	// A broken model: producer 4242's transactional batch in orders-1's
	// leader's log, its followers copying it, and no coordinator holding
	// that producer.
	part := c.Metadata().Partition(metadata.TopicPartition{Topic: "orders", Partition: 1})
	v := c.LeaderView(part)
	b := record.New([]record.Record{{Value: "zombie"}}, record.Producer{ID: 4242, Epoch: 0, BaseSequence: 0}, true, record.CompressionNone)
	if err := v.Log().Append([]*record.Batch{b.Stamped(v.Log().LEO(), v.LeaderEpoch())}, true); err != nil {
		t.Fatal(err)
	}
	c.World.RunFor(5 * time.Second)
	hanging := c.Facts().Of(godview.HangingTransaction)
	if len(hanging) != 1 || hanging[0].Partition != "orders-1" || hanging[0].Producer != 4242 || hanging[0].From != 0 || hanging[0].TransactionalID != "" {
		t.Fatalf("hanging transactions: %+v (high watermark %d)", hanging, v.HighWatermark())
	}

	ask(t, c, p, find.Node, &proto.EndTxnRequest{CorrelationID: 3, TransactionalID: "tx", ProducerID: init.ProducerID, Committed: false},
		func(*proto.EndTxnResponse) bool { return false })
	c.World.RunFor(2 * time.Second)
	if ok, why := c.noTransactionOpen(); !ok {
		t.Fatalf("after the abort: %q", why)
	}
}

// txn-coordinator(ID) names the producers' transactional ids, one per
// instance; an id no producer has is refused before the run.
func TestTxnCoordinatorSelectorValidation(t *testing.T) {
	cfg := DefaultConfig(11)
	cfg.Topics = []TopicSpec{{Name: "orders", Partitions: 1, ReplicationFactor: 3}}
	ts := DefaultTxnSettings(cfg.Brokers)
	cfg.Transactions = &ts
	cfg.Producers = []ProducerSpec{{Name: "t", Count: 2, Config: producer.Config{ClientConfig: producer.ClientConfig{Topic: "orders", TransactionalID: "pay"}}}}
	c, err := Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if ids := c.TransactionalIDs(); strings.Join(ids, ",") != "pay-0,pay-1" {
		t.Fatalf("TransactionalIDs = %v", ids)
	}
	if ok, err := txnCoordinatorSelector.validate(c, "txn-coordinator(nope)"); !ok || err == nil || !strings.Contains(err.Error(), "pay-0, pay-1") {
		t.Fatalf("validate an unknown id: %v %v", ok, err)
	}
	if ok, err := txnCoordinatorSelector.validate(c, "txn-coordinator(pay-0)"); !ok || err != nil {
		t.Fatalf("validate pay-0: %v %v", ok, err)
	}
}
