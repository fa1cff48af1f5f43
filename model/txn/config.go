// Package txn is Kafka 4's transaction coordinator (KIP-98, with
// transaction version 2 of KIP-890), hosted on every broker on the
// partitions of __transaction_state: FindCoordinator for transactional
// ids, InitProducerId with a transactional id (fencing), AddPartitionsToTxn
// (sent by partition leaders and group coordinators on the producer's
// behalf), EndTxn, the transaction markers, the abort of timed-out
// transactions and DescribeTransactions. It follows Kafka's
// TransactionCoordinator, TransactionStateManager,
// TransactionMarkerChannelManager, TransactionMetadata and
// RPCProducerIdManager; docs/model.md says what is simplified.
package txn

import (
	"strconv"
	"time"

	"kafkasim/model/broker"
	"kafkasim/model/proto"
)

// Topic is the transaction coordinator's internal topic.
const Topic = "__transaction_state"

// Config is the transaction coordinator's configuration: the broker
// configs of the same names, with Kafka's defaults in DefaultConfig.
type Config struct {
	// NumPartitions is transaction.state.log.num.partitions (50).
	NumPartitions int
	// ReplicationFactor is transaction.state.log.replication.factor (3).
	ReplicationFactor int
	// MinISR is transaction.state.log.min.isr (2): the topic's
	// min.insync.replicas.
	MinISR int
	// TopicConfigs are other topic configs the topic is created with
	// besides cleanup.policy=compact.
	TopicConfigs map[string]string
	// MaxTimeout is transaction.max.timeout.ms (900000): a longer
	// transaction.timeout.ms is INVALID_TRANSACTION_TIMEOUT.
	MaxTimeout time.Duration
	// AbortTimedOutInterval is
	// transaction.abort.timed.out.transaction.cleanup.interval.ms (10000).
	AbortTimedOutInterval time.Duration
	// LoadBufferSize is transaction.state.log.load.buffer.size (5 MiB).
	LoadBufferSize int
	// RequestTimeout is request.timeout.ms (30000): how long a marker or
	// producer-id request waits for its answer.
	RequestTimeout time.Duration
	// RetryBackoff is how long a marker that failed waits before it is
	// sent again, and a failed producer-id request before the next
	// (retry.backoff.ms, 100; RPCProducerIdManager's is 50).
	RetryBackoff time.Duration
	// NoEpochBumpOnAbort is the bug zoo's no-epoch-bump-on-abort (KIP-890,
	// KAFKA-14053): a client's abort keeps the producer epoch, as with
	// transaction version 1, so a delayed produce of the aborted
	// transaction still passes every epoch check afterwards.
	NoEpochBumpOnAbort bool
	// DelayedEndTxn is the bug zoo's delayed-end-txn (KAFKA-17754, found
	// by Jepsen; KIP-890 part 2 fixed it): a client's commit or abort
	// keeps the producer epoch, as with transaction version 1, so a late
	// EndTxn of a transaction the client timed out and retried passes the
	// epoch check of the producer's next transaction and ends it.
	DelayedEndTxn bool
}

// DefaultConfig has Kafka's defaults.
func DefaultConfig() Config {
	return Config{NumPartitions: 50, ReplicationFactor: 3, MinISR: 2, MaxTimeout: 15 * time.Minute,
		AbortTimedOutInterval: 10 * time.Second, LoadBufferSize: 5 << 20, RequestTimeout: 30 * time.Second,
		RetryBackoff: 100 * time.Millisecond}
}

// Spec is the transaction coordinator as a broker hosts it: one per
// broker start, serving the partitions of __transaction_state the broker
// leads.
func Spec(cfg Config) broker.CoordinatorSpec {
	return broker.CoordinatorSpec{Topic: Topic, New: func(t *broker.InternalTopics) broker.Coordinator { return newCoordinator(cfg, t) }}
}

// stateTopic is the topic a FindCoordinator asks the controller to
// create: compacted, min.insync.replicas transaction.state.log.min.isr,
// never an unclean leader (TransactionStateManager.transactionTopicConfigs).
func (cfg Config) stateTopic() proto.CreatableTopic {
	unclean := false
	t := proto.CreatableTopic{Name: Topic, NumPartitions: cfg.NumPartitions, ReplicationFactor: cfg.ReplicationFactor,
		MinInsyncReplicas: cfg.MinISR, UncleanLeaderElection: &unclean, Configs: map[string]string{}}
	for k, v := range cfg.TopicConfigs { // kafkasim:orderless: copying into a map
		if k == "min.insync.replicas" {
			if n, err := strconv.Atoi(v); err == nil {
				t.MinInsyncReplicas = n
			}
			continue
		}
		t.Configs[k] = v
	}
	t.Configs["cleanup.policy"] = "compact"
	return t
}
