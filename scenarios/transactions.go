package scenarios

import (
	"strconv"

	"go.yaml.in/yaml/v3"

	"kafkasim/model/cluster"
)

// The transaction coordinator's broker keys (transaction.state.log.*,
// transaction.max.timeout.ms, the timed-out transaction abort interval)
// and the __transaction_state topics entry that tunes the topic the
// coordinator creates when first used. The brokers host the coordinator
// when a client is transactional (hasTransactionalClients).

// TxnStateTopicName is Kafka's internal topic of transaction states.
const TxnStateTopicName = "__transaction_state"

const (
	txnRFKey    = "transaction.state.log.replication.factor"
	txnMinISR   = "transaction.state.log.min.isr"
	txnPartsKey = "transaction.state.log.num.partitions"
)

// txnCoordinatorDefaults fills in the transaction coordinator's broker
// keys that follow the cluster — the replication factor min(3, brokers),
// the min ISR min(2, replication factor) — and refuses values the cluster
// cannot satisfy (the coordinator could never create its topic, or no
// write to it could ever succeed).
func (r *reader) txnCoordinatorDefaults(s *Scenario) {
	b := &s.Cluster.Broker
	if !b.Explicit[txnRFKey] {
		b.Set(txnRFKey, strconv.Itoa(min(3, s.Cluster.Brokers)))
	} else if rf := configInt(*b, txnRFKey); !r.failedAt("cluster.brokers") && int(rf) > s.Cluster.Brokers {
		key := r.txnKeyPath(txnRFKey)
		r.fail(r.where(key, nil), key, "%s %d is more than the cluster's brokers (%d): the transaction coordinator could never create %s", txnRFKey, rf, s.Cluster.Brokers, TxnStateTopicName)
	}
	rf := configInt(*b, txnRFKey)
	if !b.Explicit[txnMinISR] {
		b.Set(txnMinISR, strconv.FormatInt(min(2, rf), 10))
	} else if isr := configInt(*b, txnMinISR); isr > rf && !r.failedAt(r.txnKeyPath(txnRFKey)) {
		key := r.txnKeyPath(txnMinISR)
		r.fail(r.where(key, nil), key, "%s %d is more than %s %d: no write to %s could ever succeed", txnMinISR, isr, txnRFKey, rf, TxnStateTopicName)
	}
	if s.TxnStateTopic.Name != "" {
		s.TxnStateTopic.Partitions = int(configInt(*b, txnPartsKey))
		s.TxnStateTopic.ReplicationFactor = int(rf)
	}
}

// txnStateTopic reads a __transaction_state entry: partitions and
// replication.factor are the broker's transaction.state.log.num.partitions
// and .replication.factor (given in one place), its min.insync.replicas
// the broker's transaction.state.log.min.isr.
func (r *reader) txnStateTopic(item *yaml.Node, path string, s *Scenario) {
	name, nameNode := entryName(item)
	if s.TxnStateTopic.Name != "" {
		r.fail(nameNode, path+".name", "topic %q defined twice", name)
		return
	}
	s.TxnStateTopic = Topic{Name: TxnStateTopicName, Config: Config{Values: map[string]string{}, Explicit: map[string]bool{}}}
	b := &s.Cluster.Broker
	setN := func(n int64, node *yaml.Node, path, brokerKey string) {
		if b.Explicit[brokerKey] && configInt(*b, brokerKey) != n {
			r.fail(node, path, "%d, but cluster.broker.%s is %s: give it in one place", n, brokerKey, b.Get(brokerKey))
			return
		}
		b.Set(brokerKey, strconv.FormatInt(n, 10))
		b.Explicit[brokerKey] = true
		if r.txnKeyPaths == nil {
			r.txnKeyPaths = map[string]string{}
		}
		r.txnKeyPaths[brokerKey] = path
		r.remember(path, node)
	}
	set := func(g field, brokerKey string, lo, hi int64) {
		if n, ok := r.int(g, lo, hi); ok {
			setN(n, g.value, g.path, brokerKey)
		}
	}
	for _, g := range r.fields(item, path, []string{"name", "partitions", "replication.factor", "config", "replica-assignment"}) {
		switch g.name {
		case "partitions":
			set(g, txnPartsKey, 1, PartitionsMax)
		case "replication.factor":
			set(g, txnRFKey, 1, BrokersMax)
		case "config":
			c := Config{Values: map[string]string{}, Explicit: map[string]bool{}}
			r.kafkaConfig(g, topicKeys, &c)
			for _, k := range c.Keys {
				if !c.Explicit[k] {
					continue
				}
				if k == "min.insync.replicas" {
					setN(configInt(c, k), r.where(g.path+"."+k, g.value), g.path+"."+k, txnMinISR)
					continue
				}
				s.TxnStateTopic.Config.Set(k, c.Get(k))
				s.TxnStateTopic.Config.Explicit[k] = true
			}
		case "replica-assignment":
			r.fail(g.key, g.path, "the transaction coordinator creates %s when it is first used, and the controller places its replicas", TxnStateTopicName)
		}
	}
}

// hasTransactionalClients reports whether a client of the scenario is
// transactional: a producer with a transactional.id, an exactly-once
// processor, or a consumer with commit: transactional.
func (s *Scenario) hasTransactionalClients() bool {
	for _, p := range s.Producers {
		if p.Config.Get("transactional.id") != "" {
			return true
		}
	}
	for _, c := range s.Consumers {
		if c.Processor != nil && c.Processor.ExactlyOnce || c.Commit == CommitTransactional {
			return true
		}
	}
	return false
}

// txnSettings is the brokers' transaction coordinator, from the broker
// keys and the __transaction_state entry.
func (s *Scenario) txnSettings() *cluster.TxnSettings {
	b := s.brokerOut()
	ts := cluster.TxnSettings{NumPartitions: int(configInt(b, txnPartsKey)), ReplicationFactor: int(configInt(b, txnRFKey)),
		MinISR: int(configInt(b, txnMinISR)), MaxTimeout: configMs(b, "transaction.max.timeout.ms"),
		AbortTimedOutInterval: configMs(b, "transaction.abort.timed.out.transaction.cleanup.interval.ms")}
	if c := s.TxnStateTopic.Config; len(c.Keys) > 0 {
		ts.TopicConfigs = map[string]string{}
		for _, k := range c.Keys {
			ts.TopicConfigs[k] = c.Get(k)
		}
	}
	return &ts
}

// txnKeyPath is where a transaction coordinator broker key was given: in
// cluster.broker, or in the __transaction_state entry.
func (r *reader) txnKeyPath(brokerKey string) string {
	if p, ok := r.txnKeyPaths[brokerKey]; ok {
		return p
	}
	return "cluster.broker." + brokerKey
}
