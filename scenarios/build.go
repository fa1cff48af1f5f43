package scenarios

import "fmt"

// Constructors for scenarios built in code (the fuzzer's), with every
// default filled in as a loaded file would have it.

// New returns a scenario with kafkasim's and Kafka's defaults and no topics,
// clients or faults.
func New(name string) *Scenario {
	yes := true
	return &Scenario{Name: name, Seed: DefaultSeed, Duration: DefaultDuration, Settle: DefaultSettle, NemesisIntensity: 1,
		Cluster: defaultCluster(), Bugs: []string{},
		Expect: []Expectation{{Key: "violations", Cmp: Comparison{Op: "==", Value: 0, Text: "0"}}, {Key: "converged", Bool: &yes}}}
}

// NewTopic returns a topic whose configs inherit the scenario's broker configs.
func (s *Scenario) NewTopic(name string, partitions, replicationFactor int) Topic {
	return Topic{Name: name, Partitions: partitions, ReplicationFactor: replicationFactor, Config: topicDefaults(s.Cluster.Broker)}
}

// NewProducer returns a producer group with Kafka's producer defaults.
func (s *Scenario) NewProducer(name, topic string, count int, ratePerSecond float64, keys int) Producer {
	return Producer{Name: name, Count: count, Topic: topic, Rate: ratePerSecond, Keys: keys, Stop: s.Duration, Config: defaults(producerKeys)}
}

// NewConsumer returns assign-mode readers with Kafka's consumer defaults.
func (s *Scenario) NewConsumer(name string, count int, topics []string) Consumer {
	c := Consumer{Name: name, Count: count, Topics: topics, Config: defaults(consumerKeys)}
	c.Processing.Min, c.Processing.Max = 1e6, 5e6
	return c
}

// NewGroupConsumer returns members of a consumer group with Kafka's
// consumer defaults (the classic protocol, auto-commit) and one worker.
func (s *Scenario) NewGroupConsumer(name, group string, count int, topics []string) Consumer {
	c := s.NewConsumer(name, count, topics)
	c.Group = group
	c.Config = defaults(allConsumerKeys)
	fitMember(&c, false, false, s.brokerOut())
	return c
}

// Normalize validates a scenario built in code the way a file is validated:
// it renders it and loads it back, so that what runs is exactly what the
// YAML says (and Kafka's rules, such as idempotence needing acks=all, are
// applied).
func Normalize(s *Scenario) (*Scenario, error) {
	data, err := s.Resolved()
	if err != nil {
		return nil, err
	}
	out, err := Parse(s.Name+".yaml", data)
	if err != nil {
		return nil, fmt.Errorf("%w\n%s", err, data)
	}
	return out, nil
}
