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
	for _, t := range [][]kafkaKey{brokerKeys, topicKeys, producerKeys, consumerKeys} {
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
	for _, t := range [][]kafkaKey{brokerKeys, topicKeys, producerKeys, consumerKeys} {
		out = append(out, keyNames(t)...)
	}
	return out
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
		c := Config{Keys: append([]string(nil), cfg.Keys...), Values: map[string]string{}, Explicit: map[string]bool{}}
		for key, val := range cfg.Values { // kafkasim:orderless: a copy
			c.Values[key] = val
		}
		for key, e := range cfg.Explicit { // kafkasim:orderless: a copy
			c.Explicit[key] = e
		}
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
		// Kafka's rule: idempotence is on by default only where acks=all
		// (and the in-flight limit and retries) allow it.
		if !c.Explicit["enable.idempotence"] && (c.Get("acks") != "all" ||
			configInt(*c, "max.in.flight.requests.per.connection") > 5 || configInt(*c, "retries") == 0) {
			c.Values = copyMap(c.Values)
			c.Values["enable.idempotence"] = "false"
		}
	}
	for i := range s.Consumers {
		if err := setKey(consumerKeys, &s.Consumers[i].Config); err != nil {
			return err
		}
	}
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
		return err
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

func copyMap(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m { // kafkasim:orderless: a copy
		c[k] = v
	}
	return c
}
