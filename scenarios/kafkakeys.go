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
	kindInt  keyKind = iota // an integer in [min, max]
	kindBool                // true or false
	kindEnum                // one of enum
	kindMs                  // milliseconds: an integer, or a duration string ("30s")
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

var consumerKeys = []kafkaKey{
	{name: "isolation.level", kind: kindEnum, def: "read_uncommitted", enum: []string{"read_uncommitted", "read_committed"}},
	{name: "auto.offset.reset", kind: kindEnum, def: "latest", enum: []string{"earliest", "latest", "none"}},
	{name: "max.poll.records", kind: kindInt, def: "500", min: 1, max: math.MaxInt32},
	{name: "fetch.max.wait.ms", kind: kindMs, def: "500", min: 0, max: math.MaxInt32},
	{name: "max.partition.fetch.bytes", kind: kindInt, def: "1048576", min: 0, max: math.MaxInt32},
	{name: "request.timeout.ms", kind: kindMs, def: "30000", min: 0, max: math.MaxInt32},
	{name: "retry.backoff.ms", kind: kindMs, def: "100", min: 0, max: math.MaxInt32},
	{name: "metadata.max.age.ms", kind: kindMs, def: "300000", min: 0, max: math.MaxInt64},
}

// notModelled are real Kafka keys a scenario may reasonably write that the
// model does not have yet: an error says so instead of "unknown key".
var notModelled = map[string]string{
	"transactional.id":              "transactions are not modelled yet",
	"transaction.timeout.ms":        "transactions are not modelled yet",
	"group.protocol":                "consumer groups are not modelled yet",
	"group.id":                      "consumer groups are not modelled yet",
	"group.instance.id":             "consumer groups are not modelled yet",
	"enable.auto.commit":            "consumer groups are not modelled yet",
	"auto.commit.interval.ms":       "consumer groups are not modelled yet",
	"session.timeout.ms":            "consumer groups are not modelled yet",
	"heartbeat.interval.ms":         "consumer groups are not modelled yet",
	"max.poll.interval.ms":          "consumer groups are not modelled yet",
	"partition.assignment.strategy": "consumer groups are not modelled yet",
	"group.remote.assignor":         "consumer groups are not modelled yet",
	"flush.ms":                      "per-topic flush.ms is not modelled; use the broker's log.flush.interval.ms",
	"partitioner.class":             "only Kafka's default partitioner is modelled",
	"partitioner.ignore.keys":       "only Kafka's default partitioner is modelled",
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
