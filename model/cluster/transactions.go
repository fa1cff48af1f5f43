package cluster

import (
	"time"

	"kafkasim/internal/kafkahash"
	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/model/txn"
	"kafkasim/sim"
)

// Transactions in the cluster: the transaction coordinator every broker
// hosts on __transaction_state (model/txn) when a scenario has
// transactional clients.

// TxnSettings are the brokers' transaction coordinator configuration:
// the transaction.state.log.* and transaction.* broker configs.
type TxnSettings struct {
	// NumPartitions is transaction.state.log.num.partitions (50).
	NumPartitions int
	// ReplicationFactor is transaction.state.log.replication.factor
	// (Kafka's default 3; DefaultTxnSettings takes min(3, brokers)).
	ReplicationFactor int
	// MinISR is transaction.state.log.min.isr (2; at most the replication
	// factor).
	MinISR int
	// AbortTimedOutInterval is
	// transaction.abort.timed.out.transaction.cleanup.interval.ms (10 s).
	AbortTimedOutInterval time.Duration
	// MaxTimeout is transaction.max.timeout.ms (15 min).
	MaxTimeout time.Duration
	// TopicConfigs are other configs __transaction_state is created with.
	TopicConfigs map[string]string
}

// DefaultTxnSettings are Kafka's defaults, the replication factor and min
// ISR bounded by what brokers can satisfy.
func DefaultTxnSettings(brokers int) TxnSettings {
	d := txn.DefaultConfig()
	rf := min(d.ReplicationFactor, max(brokers, 1))
	return TxnSettings{NumPartitions: d.NumPartitions, ReplicationFactor: rf, MinISR: min(d.MinISR, rf),
		AbortTimedOutInterval: d.AbortTimedOutInterval, MaxTimeout: d.MaxTimeout}
}

// AbortCheckInterval is how often a coordinator looks for timed-out
// transactions (transaction.abort.timed.out.transaction.cleanup.interval.ms).
func (ts TxnSettings) AbortCheckInterval() time.Duration {
	return ts.coordinatorConfig().AbortTimedOutInterval
}

// coordinatorConfig is the txn.Config ts describes (zero fields: Kafka's
// defaults).
func (ts TxnSettings) coordinatorConfig() txn.Config {
	cfg := txn.DefaultConfig()
	if ts.NumPartitions > 0 {
		cfg.NumPartitions = ts.NumPartitions
	}
	if ts.ReplicationFactor > 0 {
		cfg.ReplicationFactor = ts.ReplicationFactor
	}
	if ts.MinISR > 0 {
		cfg.MinISR = ts.MinISR
	}
	if ts.AbortTimedOutInterval > 0 {
		cfg.AbortTimedOutInterval = ts.AbortTimedOutInterval
	}
	if ts.MaxTimeout > 0 {
		cfg.MaxTimeout = ts.MaxTimeout
	}
	cfg.TopicConfigs = ts.TopicConfigs
	return cfg
}

// TransactionCoordinator is the broker id leading transactionalID's
// partition of __transaction_state in the active controller's committed
// metadata, or -1.
func (c *Cluster) TransactionCoordinator(transactionalID string) int32 {
	im := c.Metadata()
	if im == nil {
		return -1
	}
	t, ok := im.Topics[txn.Topic]
	if !ok || len(t.Partitions) == 0 {
		return -1
	}
	p := im.Partition(metadata.TopicPartition{Topic: txn.Topic, Partition: kafkahash.CoordinatorPartition(transactionalID, len(t.Partitions))})
	if p == nil {
		return -1
	}
	return p.Leader
}

// DescribeTransaction is transactionalID as its coordinator holds it, ok
// false when no running coordinator holds it (the god view's
// DescribeTransactions).
func (c *Cluster) DescribeTransaction(transactionalID string) (proto.TransactionDescription, bool) {
	b := c.Broker(c.TransactionCoordinator(transactionalID))
	if b == nil || c.World.State(c.BrokerNode(b.ID())) != sim.Running {
		return proto.TransactionDescription{}, false
	}
	d, ok := b.Coordinator(txn.Topic).(txn.Describer)
	if !ok {
		return proto.TransactionDescription{}, false
	}
	return d.DescribeTransaction(transactionalID)
}
