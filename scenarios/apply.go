package scenarios

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A sweep's axis value set on a scenario (Apply), and the Kafka keys an
// axis may name. In this package, not the sweep's, because they work on the
// key tables and the scenario's fields that only the loader knows.

// IsKafkaKey reports whether k is a Kafka key kafkasim models (of a broker,
// a topic, a producer or a consumer).
func IsKafkaKey(k string) bool {
	if k == "transaction.timeout.ms" {
		return true // a transactional producer's (KafkaKeyNames)
	}
	for _, t := range [][]kafkaKey{brokerKeys, topicKeys, producerKeys, allConsumerKeys} {
		for _, key := range t {
			if key.name == k {
				return true
			}
		}
	}
	return false
}

// KafkaKeyNames lists the Kafka keys kafkasim models: the broker's, the
// topics', the producers' and the consumers'.
func KafkaKeyNames() []string {
	var out []string
	for _, t := range [][]kafkaKey{brokerKeys, topicKeys, producerKeys, allConsumerKeys} {
		out = append(out, keyNames(t)...)
	}
	// A transactional producer's timeout (its transactional.id is its own:
	// one value for every producer would make them fence each other).
	return append(out, "transaction.timeout.ms")
}

// Apply sets one axis value on the scenario: a Kafka key on every broker,
// topic, producer and consumer it belongs to (a broker key also moves the
// topic configs that inherit it), or one of kafkasim's own fields. Topics,
// producers and consumers must be copies the caller owns.
func (s *Scenario) Apply(name, value string) error {
	applied := false
	setKey := func(keys []kafkaKey, cfg *Config) error {
		k := keyTable(keys)[name]
		if k == nil {
			return nil
		}
		v, err := k.parse(value)
		if err != nil {
			return err
		}
		c := copyConfig(*cfg)
		c.Set(name, v)
		c.Explicit[name] = true
		*cfg = c
		applied = true
		return nil
	}
	if err := setKey(brokerKeys, &s.Cluster.Broker); err != nil {
		return err
	}
	for i := range s.Topics {
		t := &s.Topics[i]
		if err := setKey(topicKeys, &t.Config); err != nil {
			return err
		}
		for tk, bk := range topicInherits { // kafkasim:orderless: each key sets its own field
			if bk == name && !t.Config.Explicit[tk] {
				c := t.Config
				c.Values = copyMap(t.Config.Values)
				c.Values[tk] = s.Cluster.Broker.Get(bk)
				t.Config = c
			}
		}
	}
	for i := range s.Producers {
		c := &s.Producers[i].Config
		if err := setKey(producerKeys, c); err != nil {
			return err
		}
		if s.Producers[i].Transactions != nil {
			if name == "transaction.timeout.ms" {
				if err := setKey(txnProducerKeys, c); err != nil {
					return err
				}
			}
			// Kafka refuses a transactional producer without idempotence.
			if c.Get("acks") != "all" || configInt(*c, "max.in.flight.requests.per.connection") > 5 || configInt(*c, "retries") == 0 || !configBool(*c, "enable.idempotence") {
				return fmt.Errorf("%s=%s: producer %s is transactional, and needs acks=all, enable.idempotence=true, retries above 0 and max.in.flight.requests.per.connection at most 5", name, value, s.Producers[i].Name)
			}
		}
		// Kafka's rule: idempotence is on by default only where acks=all
		// (and the in-flight limit and retries) allow it.
		if !c.Explicit["enable.idempotence"] && (c.Get("acks") != "all" ||
			configInt(*c, "max.in.flight.requests.per.connection") > 5 || configInt(*c, "retries") == 0) {
			c.Values = copyMap(c.Values)
			c.Values["enable.idempotence"] = "false"
		}
	}
	for i := range s.Consumers {
		c := &s.Consumers[i]
		if c.Processor != nil {
			pc := *c.Processor // the caller's copy shares the base's
			c.Processor = &pc
			if name == "enable.auto.commit" {
				// Streams turns the auto-commit off whatever the config
				// says (StreamsConfig's non-configurable consumer
				// defaults): the commit is the processor's.
				continue
			}
			if name == "isolation.level" && pc.ExactlyOnce {
				// exactly_once_v2 reads read_committed whatever the
				// config says (StreamsConfig overrides the consumer's
				// isolation.level): another value is not this entry's.
				v, err := keyTable(consumerKeys)[name].parse(value)
				if err != nil {
					return err
				}
				if v != "read_committed" {
					continue
				}
			}
			if contains(processorProducerKeys, name) {
				// The producer half's keys; transaction.timeout.ms only
				// where there is a transaction.
				if name != "transaction.timeout.ms" || pc.ExactlyOnce {
					if err := setKey(allProducerKeys, &pc.Producer); err != nil {
						return err
					}
				}
				continue
			}
		}
		if err := setKey(consumerKeys, &c.Config); err != nil {
			return err
		}
		if c.Commit == CommitTransactional && name == "transaction.timeout.ms" {
			if err := setKey(txnProducerKeys, &c.Config); err != nil {
				return err
			}
		}
		if c.Group == "" {
			continue
		}
		// A group key applies to the members whose protocol takes it.
		protocol := c.Config.Get("group.protocol")
		takes := !contains(classicOnly, name) && !contains(consumerOnly, name) ||
			protocol == "classic" && contains(classicOnly, name) || protocol == "consumer" && contains(consumerOnly, name)
		if takes {
			if err := setKey(groupConsumerKeys, &c.Config); err != nil {
				return err
			}
		}
	}
	if err := s.fitGroupMembers(name == "enable.auto.commit"); err != nil {
		return err
	}
	s.syncOffsetsTopic(name)
	if IsKafkaKey(name) {
		if !applied {
			return fmt.Errorf("%s applies to nothing in the base scenario (no broker, topic or client it belongs to)", name)
		}
		return nil
	}
	num := func(lo, hi float64) (float64, error) {
		x, err := strconv.ParseFloat(value, 64)
		if err != nil || x < lo || x > hi {
			return 0, fmt.Errorf("%s %q: want a number in %v..%v", name, value, lo, hi)
		}
		return x, nil
	}
	switch name {
	case "nemesis-intensity":
		x, err := num(0, 100)
		s.NemesisIntensity = x
		return err
	case "duration", "settle":
		d, err := parseDuration(value)
		if err != nil || d < 0 || d > PhaseMax {
			return fmt.Errorf("%s %q: want a duration up to %v", name, value, PhaseMax)
		}
		if name == "duration" {
			for i := range s.Producers {
				if s.Producers[i].Stop == s.Duration {
					s.Producers[i].Stop = d
				}
			}
			s.Duration = d
		} else {
			s.Settle = d
		}
		return nil
	case "controllers":
		x, err := num(1, ControllersMax)
		s.Cluster.Controllers = int(x)
		return err
	case "brokers":
		x, err := num(1, BrokersMax)
		s.Cluster.Brokers = int(x)
		s.syncOffsetsTopic(name)
		return err
	case "commit", "workers", "workers-commit", "side-effects", "static":
		return s.groupAxis(name, value)
	case "exactly-once", "commit-interval":
		return s.processorAxis(name, value)
	case "transactions.records", "transactions.abort":
		return s.transactionsAxis(name, value)
	case "replication.factor", "partitions":
		x, err := num(1, PartitionsMax)
		for i := range s.Topics {
			if s.Topics[i].Assignment != nil {
				return fmt.Errorf("%s: topic %s has a replica-assignment", name, s.Topics[i].Name)
			}
			if name == "partitions" {
				s.Topics[i].Partitions = int(x)
			} else {
				s.Topics[i].ReplicationFactor = int(x)
			}
		}
		return err
	case "rate":
		// Written as in a scenario ("50/s") or as a bare number.
		value = strings.TrimSuffix(value, "/s")
		x, err := num(0, rateMax)
		for i := range s.Producers {
			s.Producers[i].Rate = x
		}
		return err
	case "keys":
		x, err := num(0, 1_000_000)
		for i := range s.Producers {
			s.Producers[i].Keys = int(x)
		}
		return err
	case "seed-offset":
		x, err := num(0, 1e15)
		s.Seed += uint64(x)
		return err
	}
	return fmt.Errorf("unknown axis %q", name)
}

// processorAxis sets a processor's own key (exactly-once,
// commit-interval) on every processors entry.
func (s *Scenario) processorAxis(name, value string) error {
	applied := false
	for i := range s.Consumers {
		c := &s.Consumers[i]
		if c.Processor == nil {
			continue
		}
		applied = true
		p := *c.Processor
		p.Producer = copyConfig(p.Producer)
		c.Config = copyConfig(c.Config)
		switch name {
		case "commit-interval":
			d, err := parseDuration(value)
			if err != nil || d < time.Millisecond || d > time.Hour {
				return fmt.Errorf("commit-interval %q: want a duration from 1ms to 1h", value)
			}
			p.CommitInterval, p.CommitIntervalGiven = d, true
		case "exactly-once":
			eos, err := strconv.ParseBool(value)
			if err != nil {
				return fmt.Errorf("exactly-once %q: want true or false", value)
			}
			p.ExactlyOnce = eos
			if !p.CommitIntervalGiven {
				// Streams' commit.interval.ms default follows
				// processing.guarantee (StreamsConfig).
				p.CommitInterval = defaultCommitIntervalALOS
				if eos {
					p.CommitInterval = defaultCommitIntervalEOS
				}
			}
			const tt = "transaction.timeout.ms"
			if eos {
				// exactly_once_v2 reads read_committed whatever the
				// consumer config says (StreamsConfig overrides it).
				c.Config.Set("isolation.level", "read_committed")
				if _, ok := p.Producer.Values[tt]; !ok {
					p.Producer.Set(tt, keyTable(allProducerKeys)[tt].def)
				}
			} else {
				if !c.Config.Explicit["isolation.level"] {
					c.Config.Set("isolation.level", keyTable(consumerKeys)["isolation.level"].def)
				}
				// An at-least-once processor's producer has no
				// transaction: the key means nothing to it.
				p.Producer.del(tt)
			}
		}
		c.Processor = &p
	}
	if !applied {
		return fmt.Errorf("%s applies to nothing in the base scenario (no processor)", name)
	}
	return nil
}

// transactionsAxis sets one key of the transactions entry (records,
// abort) of every transactional producer.
func (s *Scenario) transactionsAxis(name, value string) error {
	applied := false
	for i := range s.Producers {
		p := &s.Producers[i]
		if p.Transactions == nil {
			continue
		}
		applied = true
		t := *p.Transactions // the caller's copy shares the base's
		switch name {
		case "transactions.records":
			lo, hi, found := strings.Cut(strings.TrimSpace(value), "..")
			if !found {
				hi = lo
			}
			a, err1 := strconv.Atoi(strings.TrimSpace(lo))
			b, err2 := strconv.Atoi(strings.TrimSpace(hi))
			if err1 != nil || err2 != nil || a < 1 || b < a || b > txnRecordsMax {
				return fmt.Errorf("transactions.records %q: want a count or a range such as 1..4, 1 <= low <= high <= %d", value, txnRecordsMax)
			}
			t.RecordsMin, t.RecordsMax = a, b
		case "transactions.abort":
			x, err := strconv.ParseFloat(value, 64)
			if err != nil || x < 0 || x > 1 {
				return fmt.Errorf("transactions.abort %q: want a probability in 0..1", value)
			}
			t.Abort = x
		}
		p.Transactions = &t
	}
	if !applied {
		return fmt.Errorf("%s applies to nothing in the base scenario (no transactional producer)", name)
	}
	return nil
}

// fitGroupMembers applies the rules of a group member to every consumer
// with a group after an axis changed it; autoDecides: enable.auto.commit
// was the axis, and the commit mode follows it (otherwise the commit mode
// decides enable.auto.commit).
func (s *Scenario) fitGroupMembers(autoDecides bool) error {
	broker := s.brokerOut()
	for i := range s.Consumers {
		c := &s.Consumers[i]
		if c.Group == "" {
			continue
		}
		c.Config = copyConfig(c.Config)
		if ps := fitMember(c, !autoDecides, autoDecides, broker); len(ps) > 0 {
			return fmt.Errorf("consumer %s: %s", c.Name, ps[0].msg)
		}
	}
	return nil
}

// syncOffsetsTopic keeps the offsets topic as the broker's keys describe it
// after an axis changed them.
func (s *Scenario) syncOffsetsTopic(name string) {
	if s.OffsetsTopic.Name == "" {
		return
	}
	broker := s.brokerOut()
	t := &s.OffsetsTopic
	t.Config = copyConfig(t.Config)
	for tk, bk := range topicInherits { // kafkasim:orderless: each key sets its own field
		if bk == name && !t.Config.Explicit[tk] && !offsetsTopicFixed[tk] {
			t.Config.Values[tk] = broker.Get(bk)
		}
	}
	t.Partitions = int(configInt(broker, "offsets.topic.num.partitions"))
	t.ReplicationFactor = int(configInt(broker, "offsets.topic.replication.factor"))
}

// groupAxis sets one of a group member's own keys (commit, workers,
// side-effects, static) on every consumer with a group.
func (s *Scenario) groupAxis(name, value string) error {
	applied := false
	for i := range s.Consumers {
		c := &s.Consumers[i]
		if c.Group == "" || c.Processor != nil {
			continue // a processor's are its own (processorAxis)
		}
		applied = true
		switch name {
		case "commit":
			if !contains(CommitModes, value) {
				return fmt.Errorf("commit %q: want %s", value, strings.Join(CommitModes, ", "))
			}
			c.Commit = value
		case "workers":
			n, err := strconv.Atoi(value)
			if err != nil || n < 1 || n > WorkersMax {
				return fmt.Errorf("workers %q: want a number in 1..%d", value, WorkersMax)
			}
			c.Workers = n
		case "workers-commit":
			if !contains(WorkersCommitModes, value) {
				return fmt.Errorf("workers-commit %q: want %s", value, strings.Join(WorkersCommitModes, " or "))
			}
			c.WorkersCommit = value
		case "side-effects":
			if !contains(SideEffectModes, value) {
				return fmt.Errorf("side-effects %q: want %s", value, strings.Join(SideEffectModes, " or "))
			}
			c.SideEffects = value
		case "static":
			b, err := strconv.ParseBool(value)
			if err != nil {
				return fmt.Errorf("static %q: want true or false", value)
			}
			c.Static = b
		}
	}
	if !applied {
		return fmt.Errorf("%s applies to nothing in the base scenario (no consumer with a group)", name)
	}
	return s.fitGroupMembers(false)
}

func copyConfig(cfg Config) Config {
	c := Config{Keys: append([]string(nil), cfg.Keys...), Values: map[string]string{}, Explicit: map[string]bool{}}
	for key, val := range cfg.Values { // kafkasim:orderless: a copy
		c.Values[key] = val
	}
	for key, e := range cfg.Explicit { // kafkasim:orderless: a copy
		c.Explicit[key] = e
	}
	return c
}

func copyMap(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m { // kafkasim:orderless: a copy
		c[k] = v
	}
	return c
}
