package scenarios

import (
	"time"

	"go.yaml.in/yaml/v3"

	"kafkasim/model/cluster"
	"kafkasim/model/processor"
	"kafkasim/model/producer"
	"kafkasim/sim"
)

// A processors entry: read-process-write stream processors (Kafka Streams'
// StreamThread, model/processor). Each is kept as a consumer entry of its
// own group (its consumer half) with a Processor part: the group rules,
// fault selectors, convergence and final reads are a group member's.

// Processor is a consumer entry's stream processor part.
type Processor struct {
	// Output is the topic each input record's output goes to.
	Output string
	// ExactlyOnce is processing.guarantee=exactly_once_v2 (else
	// at_least_once).
	ExactlyOnce bool
	// CommitInterval is commit.interval.ms; CommitIntervalGiven says the
	// scenario set it (else it is Streams' default for the guarantee, and
	// a sweep's exactly-once axis moves it with the guarantee).
	CommitInterval      time.Duration
	CommitIntervalGiven bool
	// Producer holds the producer half's keys (transaction.timeout.ms,
	// linger.ms, delivery.timeout.ms).
	Producer Config
}

// Streams' commit.interval.ms defaults: 100 ms exactly-once, 30 s
// at-least-once (StreamsConfig).
const (
	defaultCommitIntervalEOS  = 100 * time.Millisecond
	defaultCommitIntervalALOS = 30 * time.Second
)

// processorProducerKeys are the producer keys a processor's config may
// set, beside the consumer's.
var processorProducerKeys = []string{"linger.ms", "delivery.timeout.ms", "transaction.timeout.ms"}

func processorKeys() []kafkaKey {
	keys := append([]kafkaKey(nil), allConsumerKeys...)
	for _, k := range allProducerKeys {
		if contains(processorProducerKeys, k.name) {
			keys = append(keys, k)
		}
	}
	return keys
}

func (r *reader) processors(f field, s *Scenario) {
	instances := 0
	for _, c := range s.Consumers {
		instances += c.Count
	}
	for i, item := range r.clients(f, "processor") {
		if item == nil {
			continue
		}
		path := index(f.path, i)
		c := Consumer{Count: 1, Processing: sim.Range{Min: time.Millisecond, Max: 5 * time.Millisecond}, Config: defaults(allConsumerKeys),
			Commit: CommitAfterProcessing, Workers: 1, Processor: &Processor{}}
		p := c.Processor
		var countNode *yaml.Node
		intervalSet := false
		all := defaults(processorKeys())
		for _, g := range r.fields(item, path, []string{"name", "count", "group", "input", "output", "processing", "exactly-once",
			"commit-interval", "config"}) {
			if r.readerKey(g, s, &c, "processor", &countNode) {
				continue
			}
			switch g.name {
			case "output":
				t := r.str(g)
				r.clientTopic(g.value, g.path, t, s)
				p.Output = t
			case "exactly-once":
				if v, ok := r.bool(g); ok {
					p.ExactlyOnce = v
				}
			case "commit-interval":
				if v, ok := r.duration(g, time.Millisecond, time.Hour); ok {
					p.CommitInterval, intervalSet = v, true
				}
			case "config":
				r.kafkaConfig(g, processorKeys(), &all)
			}
		}
		if c.Name == "" {
			c.Name = defaultClientName("etl", i)
		}
		if c.Group == "" {
			c.Group = c.Name
		}
		if len(c.Topics) == 0 {
			r.fail(item, path+".input", "missing: the topics the processor reads")
		}
		if p.Output == "" {
			r.fail(item, path+".output", "missing: the topic the processor writes")
		}
		for _, t := range c.Topics {
			if t == p.Output && t != "" {
				r.fail(item, path+".output", "%q is also an input: a processor reading its own output never ends", t)
			}
		}
		p.CommitIntervalGiven = intervalSet
		if !intervalSet {
			p.CommitInterval = defaultCommitIntervalALOS
			if p.ExactlyOnce {
				p.CommitInterval = defaultCommitIntervalEOS
			}
		}
		// The config's keys: the consumer's stay in Config, the producer's
		// go to the processor's producer.
		p.Producer = Config{Values: map[string]string{}, Explicit: map[string]bool{}}
		for _, k := range processorProducerKeys {
			if k == "transaction.timeout.ms" && !p.ExactlyOnce {
				// As Kafka's producer does without a transactional.id, an
				// at-least-once processor ignores it: twins and sweeps
				// flip exactly-once and keep the rest of the config.
				continue
			}
			p.Producer.Set(k, all.Get(k))
			p.Producer.Explicit[k] = all.Explicit[k]
		}
		for _, k := range all.Keys {
			if contains(processorProducerKeys, k) {
				continue
			}
			c.Config.Set(k, all.Get(k))
			c.Config.Explicit[k] = all.Explicit[k]
		}
		if p.ExactlyOnce {
			// exactly_once_v2 reads read_committed (StreamsConfig sets
			// isolation.level for it, whatever the user's consumer config).
			if c.Config.Explicit["isolation.level"] && c.Config.Get("isolation.level") != "read_committed" {
				key := path + ".config.isolation.level"
				r.fail(r.where(key, item), key, "an exactly-once processor reads read_committed (Kafka Streams sets it)")
			}
			c.Config.Set("isolation.level", "read_committed")
		}
		c.Count = r.instances(&instances, c.Count, nodeOr(countNode, item), path, "consumer")
		// Streams turns the auto-commit off: the commit is the processor's.
		r.remember(path+".commit", item)
		r.groupMember(item, path, &c, s)
		r.consumerPaths = append(r.consumerPaths, path)
		s.Consumers = append(s.Consumers, c)
	}
}

// processorConfig is a processor entry's node configuration (Name,
// Brokers and Recorder are filled in per instance by the cluster).
func (c Consumer) processorConfig() processor.Config {
	p := c.Processor
	pc := producer.DefaultClientConfig("", p.Output)
	pc.LingerMs = configMs(p.Producer, "linger.ms")
	pc.DeliveryTimeout = configMs(p.Producer, "delivery.timeout.ms")
	if p.ExactlyOnce {
		pc.TransactionalID = c.Name // "<name>-<i>" per instance (cluster)
		pc.TransactionTimeout = configMs(p.Producer, "transaction.timeout.ms")
	}
	return processor.Config{Reader: c.readerConfig(), Producer: pc, CommitInterval: p.CommitInterval}
}

// transactionalCommitConfig is the node configuration of a consumer entry
// with commit: transactional: a processor with no output topic, whose
// transactions hold only the offsets each poll's processing reached
// (commit interval 0: one transaction per poll that returned records).
func (c Consumer) transactionalCommitConfig() processor.Config {
	pc := producer.DefaultClientConfig("", "")
	pc.TransactionalID = c.Config.Get("transactional.id") // "<id>-<i>" per instance (cluster)
	pc.TransactionTimeout = configMs(c.Config, "transaction.timeout.ms")
	return processor.Config{Reader: c.readerConfig(), Producer: pc}
}

// readerSpec is the cluster's spec of a consumer or processor entry.
func (c Consumer) readerSpec() cluster.ReaderSpec {
	rs := cluster.ReaderSpec{Name: c.Name, Count: c.Count, Config: c.readerConfig(), Static: c.Static}
	switch {
	case c.Processor != nil:
		pc := c.processorConfig()
		rs.Processor = &pc
	case c.Commit == CommitTransactional:
		pc := c.transactionalCommitConfig()
		rs.Processor = &pc
	}
	return rs
}
