package scenarios

import (
	"fmt"
	"strconv"
	"strings"
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
		if c.Group == "" {
			continue
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
