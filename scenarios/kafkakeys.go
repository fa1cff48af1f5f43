package scenarios

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// The Kafka configuration keys kafkasim models, as Kafka spells them, with
// Kafka 4.2's defaults and the ranges Kafka's ConfigDef enforces (or a
// tighter one where the model needs it, said in the key's note).

type keyKind uint8

const (
	kindInt    keyKind = iota // an integer in [min, max]
	kindBool                  // true or false
	kindEnum                  // one of enum
	kindMs                    // milliseconds: an integer, or a duration string ("30s")
	kindList                  // a non-empty list of distinct names of enum (Kafka's LIST type): a YAML list or a comma-separated string
	kindString                // a non-empty string of at most max bytes
)

type kafkaKey struct {
	name     string
	kind     keyKind
	def      string
	min, max int64
	enum     []string
	// canonical maps accepted spellings to the canonical one (acks: -1 -> all).
	canonical map[string]string
	note      string
}

const never = "9223372036854775807"

var brokerKeys = []kafkaKey{
	{name: "replica.lag.time.max.ms", kind: kindMs, def: "30000", min: 1, max: math.MaxInt32},
	{name: "unclean.leader.election.enable", kind: kindBool, def: "false"},
	{name: "eligible.leader.replicas.enable", kind: kindBool, def: "true"},
	{name: "min.insync.replicas", kind: kindInt, def: "1", min: 1, max: 64},
	{name: "default.replication.factor", kind: kindInt, def: "1", min: 1, max: 64},
	{name: "log.flush.interval.messages", kind: kindInt, def: never, min: 1, max: math.MaxInt64},
	{name: "log.flush.interval.ms", kind: kindMs, def: never, min: 1, max: math.MaxInt64,
		note: "Kafka's default is unset: flush only by log.flush.interval.messages or the OS"},
	{name: "log.retention.ms", kind: kindMs, def: "604800000", min: -1, max: math.MaxInt64},
	{name: "log.retention.bytes", kind: kindInt, def: "-1", min: -1, max: math.MaxInt64},
	{name: "log.segment.bytes", kind: kindInt, def: "1073741824", min: 1 << 20, max: math.MaxInt32},
	{name: "log.retention.check.interval.ms", kind: kindMs, def: "300000", min: 1, max: math.MaxInt64},
	{name: "log.cleanup.policy", kind: kindEnum, def: "delete", enum: []string{"delete", "compact", "compact,delete"},
		canonical: map[string]string{"delete,compact": "compact,delete"}},
	{name: "replica.fetch.wait.max.ms", kind: kindMs, def: "500", min: 0, max: math.MaxInt32},
	{name: "replica.fetch.max.bytes", kind: kindInt, def: "1048576", min: 0, max: math.MaxInt32},
	{name: "replica.fetch.backoff.ms", kind: kindMs, def: "1000", min: 0, max: math.MaxInt32},
	{name: "replica.socket.timeout.ms", kind: kindMs, def: "30000", min: 1, max: math.MaxInt32},
	{name: "replica.high.watermark.checkpoint.interval.ms", kind: kindMs, def: "5000", min: 1, max: math.MaxInt64},
	{name: "log.flush.offset.checkpoint.interval.ms", kind: kindMs, def: "60000", min: 1, max: math.MaxInt32},
	{name: "broker.heartbeat.interval.ms", kind: kindMs, def: "2000", min: 1, max: math.MaxInt32},
	{name: "broker.session.timeout.ms", kind: kindMs, def: "9000", min: 1, max: math.MaxInt32},
	{name: "controller.quorum.election.timeout.ms", kind: kindMs, def: "1000", min: 1, max: math.MaxInt32},
	{name: "controller.quorum.fetch.timeout.ms", kind: kindMs, def: "2000", min: 1, max: math.MaxInt32},
	{name: "metadata.max.idle.interval.ms", kind: kindMs, def: "500", min: 0, max: math.MaxInt32},
	{name: "auto.leader.rebalance.enable", kind: kindBool, def: "true"},
	{name: "leader.imbalance.check.interval.seconds", kind: kindInt, def: "300", min: 1, max: math.MaxInt32,
		note: "Kafka's maximum is a long's; kafkasim stops at 2147483647 seconds (68 years)"},
	// The group coordinator's (Kafka's GroupCoordinatorConfig).
	{name: "offsets.topic.num.partitions", kind: kindInt, def: "50", min: 1, max: PartitionsMax},
	{name: "offsets.topic.replication.factor", kind: kindInt, def: "3", min: 1, max: BrokersMax,
		note: "kafkasim's default is min(3, brokers): Kafka's 3 would leave a smaller cluster without the topic"},
	{name: "offsets.commit.timeout.ms", kind: kindMs, def: "5000", min: 1, max: math.MaxInt32},
	{name: "group.initial.rebalance.delay.ms", kind: kindMs, def: "3000", min: 0, max: math.MaxInt32},
	{name: "group.min.session.timeout.ms", kind: kindMs, def: "6000", min: 0, max: math.MaxInt32},
	{name: "group.max.session.timeout.ms", kind: kindMs, def: "1800000", min: 0, max: math.MaxInt32},
	{name: "group.consumer.session.timeout.ms", kind: kindMs, def: "45000", min: 1, max: math.MaxInt32},
	{name: "group.consumer.min.session.timeout.ms", kind: kindMs, def: "45000", min: 1, max: math.MaxInt32},
	{name: "group.consumer.max.session.timeout.ms", kind: kindMs, def: "60000", min: 1, max: math.MaxInt32},
	{name: "group.consumer.heartbeat.interval.ms", kind: kindMs, def: "5000", min: 1, max: math.MaxInt32},
	{name: "group.consumer.min.heartbeat.interval.ms", kind: kindMs, def: "5000", min: 1, max: math.MaxInt32},
	{name: "group.consumer.max.heartbeat.interval.ms", kind: kindMs, def: "15000", min: 1, max: math.MaxInt32},
	{name: "group.consumer.assignors", kind: kindList, def: "uniform,range", enum: []string{"uniform", "range"},
		canonical: map[string]string{
			"org.apache.kafka.coordinator.group.assignor.UniformAssignor": "uniform",
			"org.apache.kafka.coordinator.group.assignor.RangeAssignor":   "range"}},
	// The transaction coordinator's (Kafka's TransactionLogConfig and
	// TransactionStateManagerConfig).
	{name: "transaction.state.log.num.partitions", kind: kindInt, def: "50", min: 1, max: PartitionsMax},
	{name: "transaction.state.log.replication.factor", kind: kindInt, def: "3", min: 1, max: BrokersMax,
		note: "kafkasim's default is min(3, brokers): Kafka's 3 would leave a smaller cluster without the topic"},
	{name: "transaction.state.log.min.isr", kind: kindInt, def: "2", min: 1, max: 64,
		note: "kafkasim's default is min(2, transaction.state.log.replication.factor)"},
	{name: "transaction.max.timeout.ms", kind: kindMs, def: "900000", min: 1, max: math.MaxInt32},
	{name: "transaction.abort.timed.out.transaction.cleanup.interval.ms", kind: kindMs, def: "10000", min: 1, max: math.MaxInt32},
	// A partition leader's (Kafka's AddPartitionsToTxnConfig).
	{name: "add.partitions.to.txn.retry.backoff.ms", kind: kindMs, def: "20", min: 1, max: math.MaxInt32},
	{name: "add.partitions.to.txn.retry.backoff.max.ms", kind: kindMs, def: "100", min: 0, max: math.MaxInt32},
}

// topicKeys default to the broker key in inherit (Kafka's
// ServerTopicConfigSynonyms).
var topicKeys = []kafkaKey{
	{name: "min.insync.replicas", kind: kindInt, min: 1, max: 64},
	{name: "unclean.leader.election.enable", kind: kindBool},
	{name: "cleanup.policy", kind: kindEnum, enum: []string{"delete", "compact", "compact,delete"},
		canonical: map[string]string{"delete,compact": "compact,delete"}},
	{name: "retention.ms", kind: kindMs, min: -1, max: math.MaxInt64},
	{name: "retention.bytes", kind: kindInt, min: -1, max: math.MaxInt64},
	{name: "segment.bytes", kind: kindInt, min: 1 << 20, max: math.MaxInt32},
	{name: "flush.messages", kind: kindInt, min: 1, max: math.MaxInt64},
}

var topicInherits = map[string]string{
	"min.insync.replicas":            "min.insync.replicas",
	"unclean.leader.election.enable": "unclean.leader.election.enable",
	"cleanup.policy":                 "log.cleanup.policy",
	"retention.ms":                   "log.retention.ms",
	"retention.bytes":                "log.retention.bytes",
	"segment.bytes":                  "log.segment.bytes",
	"flush.messages":                 "log.flush.interval.messages",
}

var producerKeys = []kafkaKey{
	{name: "acks", kind: kindEnum, def: "all", enum: []string{"all", "1", "0"}, canonical: map[string]string{"-1": "all"}},
	{name: "enable.idempotence", kind: kindBool, def: "true"},
	{name: "linger.ms", kind: kindMs, def: "5", min: 0, max: math.MaxInt32},
	{name: "batch.size", kind: kindInt, def: "16384", min: 0, max: math.MaxInt32},
	{name: "compression.type", kind: kindEnum, def: "none", enum: []string{"none", "gzip"},
		note: "snappy, lz4 and zstd are not modelled"},
	{name: "retries", kind: kindInt, def: "2147483647", min: 0, max: math.MaxInt32},
	{name: "retry.backoff.ms", kind: kindMs, def: "100", min: 0, max: math.MaxInt32},
	{name: "retry.backoff.max.ms", kind: kindMs, def: "1000", min: 0, max: math.MaxInt32},
	{name: "delivery.timeout.ms", kind: kindMs, def: "120000", min: 0, max: math.MaxInt32},
	{name: "request.timeout.ms", kind: kindMs, def: "30000", min: 0, max: math.MaxInt32},
	{name: "max.in.flight.requests.per.connection", kind: kindInt, def: "5", min: 1, max: math.MaxInt32},
	{name: "metadata.max.age.ms", kind: kindMs, def: "300000", min: 0, max: math.MaxInt64},
}

// txnProducerKeys are a transactional producer's own keys: a producer
// has them in its config only when it is transactional (a transactions
// entry, or transactional.id), so that the resolved config of any other
// producer stays as it was.
var txnProducerKeys = []kafkaKey{
	{name: "transactional.id", kind: kindString, max: 249},
	{name: "transaction.timeout.ms", kind: kindMs, def: "60000", min: 1, max: math.MaxInt32},
}

// allProducerKeys is every key a producers[].config may hold.
var allProducerKeys = append(append([]kafkaKey(nil), producerKeys...), txnProducerKeys...)

var consumerKeys = []kafkaKey{
	{name: "isolation.level", kind: kindEnum, def: "read_uncommitted", enum: []string{"read_uncommitted", "read_committed"}},
	{name: "auto.offset.reset", kind: kindEnum, def: "latest", enum: []string{"earliest", "latest", "none"}},
	{name: "max.poll.records", kind: kindInt, def: "500", min: 1, max: math.MaxInt32},
	{name: "fetch.max.wait.ms", kind: kindMs, def: "500", min: 0, max: math.MaxInt32},
	{name: "max.partition.fetch.bytes", kind: kindInt, def: "1048576", min: 0, max: math.MaxInt32},
	{name: "request.timeout.ms", kind: kindMs, def: "30000", min: 0, max: math.MaxInt32},
	{name: "retry.backoff.ms", kind: kindMs, def: "100", min: 0, max: math.MaxInt32},
	{name: "retry.backoff.max.ms", kind: kindMs, def: "1000", min: 0, max: math.MaxInt32},
	{name: "metadata.max.age.ms", kind: kindMs, def: "300000", min: 0, max: math.MaxInt64},
}

// groupConsumerKeys are the consumer keys only a group member takes (an
// assign-mode reader has no group to use them with); classicOnly and
// consumerOnly are those a single group.protocol takes, as Kafka's client
// refuses the others (ConsumerConfig.checkGroupRemoteAssignor, and the
// consumer protocol's unsupported configs of KIP-848).
var groupConsumerKeys = []kafkaKey{
	{name: "group.protocol", kind: kindEnum, def: "classic", enum: []string{"classic", "consumer"}},
	{name: "partition.assignment.strategy", kind: kindList, def: "range,cooperative-sticky",
		enum: []string{"range", "roundrobin", "sticky", "cooperative-sticky"},
		canonical: map[string]string{
			"org.apache.kafka.clients.consumer.RangeAssignor":             "range",
			"org.apache.kafka.clients.consumer.RoundRobinAssignor":        "roundrobin",
			"org.apache.kafka.clients.consumer.StickyAssignor":            "sticky",
			"org.apache.kafka.clients.consumer.CooperativeStickyAssignor": "cooperative-sticky"}},
	{name: "group.remote.assignor", kind: kindEnum, def: "uniform", enum: []string{"uniform", "range"},
		note: "the brokers' group.consumer.assignors"},
	{name: "session.timeout.ms", kind: kindMs, def: "45000", min: 1, max: math.MaxInt32},
	{name: "heartbeat.interval.ms", kind: kindMs, def: "3000", min: 1, max: math.MaxInt32},
	{name: "max.poll.interval.ms", kind: kindMs, def: "300000", min: 1, max: math.MaxInt32},
	{name: "enable.auto.commit", kind: kindBool, def: "true"},
	{name: "auto.commit.interval.ms", kind: kindMs, def: "5000", min: 0, max: math.MaxInt32},
	{name: "default.api.timeout.ms", kind: kindMs, def: "60000", min: 0, max: math.MaxInt32},
}

var (
	classicOnly  = []string{"partition.assignment.strategy", "session.timeout.ms", "heartbeat.interval.ms"}
	consumerOnly = []string{"group.remote.assignor"}
)

// allConsumerKeys is every key a consumers[].config may hold, in the order
// a group member's config lists them.
var allConsumerKeys = append(append([]kafkaKey(nil), consumerKeys...), groupConsumerKeys...)

// writtenElsewhere are real Kafka keys a scenario writes another way: an
// error says which.
var writtenElsewhere = map[string]string{
	"group.id":          "the group is the consumer's own key: write group: NAME beside config, not in it",
	"group.instance.id": "every instance needs a group.instance.id of its own: write static: true beside config, and instance i of consumer NAME takes NAME-i",
}

// notModelled are real Kafka keys a scenario may reasonably write that the
// model does not have yet: an error says so instead of "unknown key".
var notModelled = map[string]string{
	"flush.ms":                "per-topic flush.ms is not modelled; use the broker's log.flush.interval.ms",
	"partitioner.class":       "only Kafka's default partitioner is modelled",
	"partitioner.ignore.keys": "only Kafka's default partitioner is modelled",
}

func keyTable(keys []kafkaKey) map[string]*kafkaKey {
	m := make(map[string]*kafkaKey, len(keys))
	for i := range keys {
		m[keys[i].name] = &keys[i]
	}
	return m
}

func keyNames(keys []kafkaKey) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = k.name
	}
	return out
}

// parse turns a YAML scalar into the key's canonical text, or says why not.
func (k *kafkaKey) parse(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	switch k.kind {
	case kindBool:
		switch strings.ToLower(raw) {
		case "true":
			return "true", nil
		case "false":
			return "false", nil
		}
		return "", fmt.Errorf("want true or false, got %q", cutLong(raw))
	case kindEnum:
		v := strings.ToLower(raw)
		if c, ok := k.canonical[v]; ok {
			v = c
		}
		for _, e := range k.enum {
			if v == e {
				return v, nil
			}
		}
		msg := fmt.Sprintf("want one of %s, got %q", strings.Join(k.enum, ", "), cutLong(raw))
		if k.note != "" {
			msg += " (" + k.note + ")"
		}
		return "", fmt.Errorf("%s", msg)
	case kindList:
		return k.parseList(raw)
	case kindString:
		if raw == "" || int64(len(raw)) > k.max {
			return "", fmt.Errorf("want a name of 1 to %d characters, got %q", k.max, cutLong(raw))
		}
		return raw, nil
	case kindMs:
		if n, err := strconv.ParseInt(raw, 10, 64); err == nil {
			return k.inRange(n)
		}
		if d, err := time.ParseDuration(raw); err == nil {
			if d%time.Millisecond != 0 {
				return "", fmt.Errorf("%q is not a whole number of milliseconds", cutLong(raw))
			}
			return k.inRange(int64(d / time.Millisecond))
		}
		return "", fmt.Errorf("want milliseconds (an integer) or a duration such as 30s, got %q", cutLong(raw))
	default:
		n, err := strconv.ParseInt(raw, 10, 64)
		if err != nil {
			return "", fmt.Errorf("want an integer, got %q", cutLong(raw))
		}
		return k.inRange(n)
	}
}

// parseList reads a comma-separated list of names (a YAML list arrives
// joined with commas) into its canonical form: short names, in the given
// order, joined with commas.
func (k *kafkaKey) parseList(raw string) (string, error) {
	var out []string
	for _, item := range strings.Split(raw, ",") {
		item = strings.TrimSpace(item)
		v := item
		if c, ok := k.canonical[item]; ok {
			v = c
		}
		if !contains(k.enum, v) {
			if item == "" {
				return "", fmt.Errorf("want a non-empty list of %s, got %q", strings.Join(k.enum, ", "), cutLong(raw))
			}
			return "", fmt.Errorf("unknown name %q: want %s or Kafka's class name of one", cutLong(item), strings.Join(k.enum, ", "))
		}
		if contains(out, v) {
			return "", fmt.Errorf("%s is listed twice", v)
		}
		out = append(out, v)
	}
	return strings.Join(out, ","), nil
}

func (k *kafkaKey) inRange(n int64) (string, error) {
	if n < k.min || n > k.max {
		return "", fmt.Errorf("%d is out of range: want %s..%s", n, rangeEnd(k.min), rangeEnd(k.max))
	}
	return strconv.FormatInt(n, 10), nil
}

func rangeEnd(n int64) string {
	switch n {
	case math.MaxInt64:
		return "9223372036854775807"
	case math.MaxInt32:
		return "2147483647"
	}
	return strconv.FormatInt(n, 10)
}

// defaults returns a Config holding every key of a table at its default.
func defaults(keys []kafkaKey) Config {
	c := Config{Values: map[string]string{}, Explicit: map[string]bool{}}
	for _, k := range keys {
		c.Set(k.name, k.def)
	}
	return c
}

// configInt reads a key known to hold an integer.
func configInt(c Config, key string) int64 {
	n, _ := strconv.ParseInt(c.Get(key), 10, 64)
	return n
}

func configBool(c Config, key string) bool { return c.Get(key) == "true" }

func configMs(c Config, key string) time.Duration {
	n := configInt(c, key)
	if n >= math.MaxInt64/int64(time.Millisecond) {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(n) * time.Millisecond
}

// configList reads a key of kindList.
func configList(c Config, key string) []string {
	if c.Get(key) == "" {
		return nil
	}
	return strings.Split(c.Get(key), ",")
}

// del removes a key.
func (c *Config) del(key string) {
	if _, ok := c.Values[key]; !ok {
		return
	}
	delete(c.Values, key)
	delete(c.Explicit, key)
	keys := make([]string, 0, len(c.Keys)-1)
	for _, k := range c.Keys {
		if k != key {
			keys = append(keys, k)
		}
	}
	c.Keys = keys
}
