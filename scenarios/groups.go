package scenarios

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"kafkasim/model/cluster"
)

// Consumer groups in a scenario: a consumer entry's group keys, the rules
// Kafka's client and group coordinator apply to them, the brokers' group
// coordinator keys and the internal topic of committed offsets.

// Commit modes of a group member (Consumer.Commit).
const (
	// CommitBeforeProcessing commits a poll's offsets before processing
	// its records: at-most-once.
	CommitBeforeProcessing = "before-processing"
	// CommitAfterProcessing commits once the records are processed:
	// at-least-once.
	CommitAfterProcessing = "after-processing"
	// CommitAuto leaves commits to the client's auto-commit
	// (enable.auto.commit=true, every auto.commit.interval.ms and before a
	// rebalance).
	CommitAuto = "auto"
	// CommitTransactional commits the offsets processed after each poll
	// inside a transaction of the member's own transactional producer
	// (sendOffsetsToTransaction: TxnOffsetCommit, then EndTxn), with no
	// records of its own: exactly-once for what the offsets mark.
	CommitTransactional = "transactional"
)

// CommitModes are the commit modes a scenario may name without a
// transactional producer (a sweep's commit axis and the fuzzer draw from
// them); CommitTransactional is the other.
var CommitModes = []string{CommitBeforeProcessing, CommitAfterProcessing, CommitAuto}

// SideEffects modes of a group member (Consumer.SideEffects).
var SideEffectModes = []string{"plain", "idempotent"}

// WorkersMax bounds a group member's worker pool.
const WorkersMax = 256

// OffsetsTopicName is Kafka's internal topic of committed offsets.
const OffsetsTopicName = "__consumer_offsets"

// offsetsTopicSegmentBytes is Kafka's offsets.topic.segment.bytes default:
// the coordinator creates the topic with it, compacted
// (GroupCoordinatorService.groupMetadataTopicConfigs).
const offsetsTopicSegmentBytes = "104857600"

// internalTopics are the internal topic names a scenario may not use as its
// own, with why.
var internalTopics = map[string]string{
	OffsetsTopicName:      "Kafka's internal topic of committed offsets, written by the group coordinator",
	"__transaction_state": "Kafka's internal topic of transactions",
}

func internalTopicRefusal(name string) string {
	return fmt.Sprintf("%s is %s: clients do not produce to it nor read it", name, internalTopics[name])
}

// memberOnlyKeys are a consumer entry's keys that need a group.
var memberOnlyKeys = []string{"commit", "workers", "workers-commit", "side-effects", "static"}

// WorkersCommitModes are what a worker pool commits (a kafkasim
// extension): completed-prefix, each partition's contiguous completed
// prefix (correct, the default), or highest-finished, the offset after the
// highest record any worker finished — an application bug for teaching: a
// crash then skips the records still in flight below it.
var WorkersCommitModes = []string{"completed-prefix", "highest-finished"}

// GroupInstanceID is the group.instance.id of instance i of a static
// member ("" when the member is dynamic): its instance name, "<name>-<i>".
func (c Consumer) GroupInstanceID(i int) string {
	if !c.Static || c.Group == "" {
		return ""
	}
	return cluster.ClientName(c.Name, i)
}

// problem is a rule a consumer entry breaks; key is relative to the entry
// ("commit", "config.session.timeout.ms") or, when a broker key is to
// blame, the broker key's path ("cluster.broker.KEY"). broker: the rule
// compares the entry with the brokers' keys.
type problem struct {
	key, msg string
	broker   bool
}

// groupMember reports what a consumer entry breaks of the rules for
// group keys, at the place each key was written.
func (r *reader) groupMember(item *yaml.Node, path string, c *Consumer, s *Scenario) {
	commitSet := r.at[path+".commit"] != nil
	for _, k := range memberOnlyKeys {
		if c.Group == "" && r.at[path+"."+k] != nil && !r.failedAt(path+"."+k) {
			r.fail(r.at[path+"."+k], path+"."+k, "%s applies to the members of a consumer group only: set group (an assign-mode reader joins no group and commits nothing)", k)
		}
	}
	brokerKnown := !r.failedAt("cluster.broker")
	for _, p := range fitMember(c, commitSet, c.Config.Explicit["enable.auto.commit"], s.Cluster.Broker) {
		if p.broker && !brokerKnown {
			continue // an echo of the broker key's own error
		}
		key := path + "." + p.key
		if strings.HasPrefix(p.key, "cluster.") {
			key = p.key
			if r.failedOn(key) {
				continue // said for an earlier entry
			}
		}
		r.fail(r.where(key, item), key, "%s", p.msg)
	}
}

// fitMember applies to a consumer entry the rules of its mode: an
// assign-mode reader has none of the group keys; a group member has its
// protocol's keys only (Kafka's client refuses the other protocol's), a
// commit mode agreeing with enable.auto.commit, a heartbeat below its
// session timeout (AbstractCoordinator's Heartbeat), and a session
// timeout the coordinator accepts. Defaults are filled in; what an
// explicit setting breaks is returned.
func fitMember(c *Consumer, commitSet, autoSet bool, broker Config) []problem {
	var out []problem
	cfg := &c.Config
	if c.Group == "" {
		for _, k := range groupConsumerKeys {
			if cfg.Explicit[k.name] {
				out = append(out, problem{key: "config." + k.name, msg: fmt.Sprintf("%s applies to the members of a consumer group only: set group", k.name)})
			}
			cfg.del(k.name)
		}
		c.Commit, c.Workers, c.SideEffects, c.Static = "", 0, "", false
		return out
	}
	for _, k := range groupConsumerKeys {
		if _, ok := cfg.Values[k.name]; !ok {
			cfg.Set(k.name, k.def)
		}
	}
	if c.Workers == 0 {
		c.Workers = 1
	}
	protocol := cfg.Get("group.protocol")
	drop := consumerOnly
	if protocol == "consumer" {
		drop = classicOnly
	}
	for _, k := range drop {
		if cfg.Explicit[k] {
			msg := fmt.Sprintf("%s cannot be set when group.protocol=%s, as Kafka's client refuses it", k, protocol)
			if protocol == "consumer" {
				msg += ": with the consumer protocol (KIP-848) the brokers' group.consumer.session.timeout.ms, group.consumer.heartbeat.interval.ms and group.consumer.assignors (or group.remote.assignor) take its place"
			} else {
				msg += ": the classic protocol's assignors are the client's partition.assignment.strategy"
			}
			out = append(out, problem{key: "config." + k, msg: msg})
		}
		cfg.del(k)
	}
	sortConsumerKeys(cfg)

	if protocol == "consumer" {
		assignors := configList(broker, "group.consumer.assignors")
		if !cfg.Explicit["group.remote.assignor"] && len(assignors) > 0 {
			// Kafka leaves it unset and the coordinator takes its first
			// assignor; kafkasim writes that choice out.
			cfg.Set("group.remote.assignor", assignors[0])
		} else if a := cfg.Get("group.remote.assignor"); !contains(assignors, a) {
			out = append(out, problem{"config.group.remote.assignor", fmt.Sprintf("%s is not one of the brokers' group.consumer.assignors (%s): Kafka's coordinator answers UNSUPPORTED_ASSIGNOR (set cluster.broker.group.consumer.assignors)", a, strings.Join(assignors, ", ")), true})
		}
	}

	mode, auto, p := commitMode(c.Commit, commitSet, cfg.Get("enable.auto.commit"), autoSet)
	if p != nil {
		out = append(out, *p)
	}
	c.Commit = mode
	cfg.Set("enable.auto.commit", auto)

	if protocol == "classic" {
		session, heartbeat := configInt(*cfg, "session.timeout.ms"), configInt(*cfg, "heartbeat.interval.ms")
		if heartbeat >= session {
			key := "heartbeat.interval.ms"
			if !cfg.Explicit[key] {
				key = "session.timeout.ms"
			}
			out = append(out, problem{key: "config." + key, msg: fmt.Sprintf("heartbeat.interval.ms %d must be lower than session.timeout.ms %d (Kafka's consumer refuses it)", heartbeat, session)})
		}
		lo, hi := configInt(broker, "group.min.session.timeout.ms"), configInt(broker, "group.max.session.timeout.ms")
		if session < lo || session > hi {
			bound := "cluster.broker.group.min.session.timeout.ms"
			if session > hi {
				bound = "cluster.broker.group.max.session.timeout.ms"
			}
			key := "config.session.timeout.ms"
			if !cfg.Explicit["session.timeout.ms"] {
				key = bound // the default is fine: the broker's bound is not
			}
			out = append(out, problem{key, fmt.Sprintf("session.timeout.ms %d is outside the brokers' [group.min.session.timeout.ms, group.max.session.timeout.ms] = [%d, %d]: Kafka's coordinator refuses the member's JoinGroup with INVALID_SESSION_TIMEOUT, a fatal error for the consumer", session, lo, hi), true})
		}
	}
	return out
}

// sortConsumerKeys keeps a consumer entry's keys in table order, whatever
// order they were added in.
func sortConsumerKeys(cfg *Config) {
	order := map[string]int{}
	for i, k := range consumerEntryKeys() {
		order[k.name] = i
	}
	slices.SortStableFunc(cfg.Keys, func(a, b string) int { return order[a] - order[b] })
}

// commitMode decides a group member's commit mode and enable.auto.commit
// together: either one decides the other (auto is enable.auto.commit=true;
// a member that does not auto-commit commits after processing unless told
// otherwise), both default to Kafka's enable.auto.commit=true, and two that
// disagree are a problem.
func commitMode(commit string, commitSet bool, auto string, autoSet bool) (string, string, *problem) {
	switch {
	case commitSet && autoSet:
		if (commit == CommitAuto) != (auto == "true") {
			what := "auto-commits as well as committing " + commit
			if commit == CommitAuto {
				what = "turns off the auto-commit that commit: auto is"
			}
			return commit, auto, &problem{key: "config.enable.auto.commit", msg: fmt.Sprintf("enable.auto.commit=%s contradicts commit: %s (it %s): give one of the two", auto, commit, what)}
		}
		return commit, auto, nil
	case commitSet:
		return commit, strconv.FormatBool(commit == CommitAuto), nil
	case autoSet && auto == "false":
		if commit != "" && commit != CommitAuto {
			return commit, auto, nil
		}
		return CommitAfterProcessing, auto, nil
	}
	return CommitAuto, "true", nil
}

// groupsAgree checks what the members of one group must agree on: the
// model runs a group on one protocol (Kafka 4 lets a consumer group hold
// classic members while it migrates, KIP-848's online migration, which is
// not modelled), and a classic group needs an assignor every member
// supports (otherwise Kafka's coordinator answers
// INCONSISTENT_GROUP_PROTOCOL).
func (r *reader) groupsAgree(s *Scenario) {
	type first struct {
		i         int
		protocol  string
		assignors []string
	}
	seen := map[string]*first{}
	for i, c := range s.Consumers {
		if c.Group == "" || i >= len(r.consumerPaths) {
			continue
		}
		path := r.consumerPaths[i]
		if r.failedAt(path + ".config") {
			continue
		}
		protocol := c.Config.Get("group.protocol")
		f := seen[c.Group]
		if f == nil {
			seen[c.Group] = &first{i: i, protocol: protocol, assignors: configList(c.Config, "partition.assignment.strategy")}
			continue
		}
		firstPath := r.consumerPaths[f.i]
		if protocol != f.protocol {
			key := path + ".config.group.protocol"
			r.fail(r.where(key, r.where(path+".group", nil)), key, "group %s mixes protocols: %s has group.protocol=%s, %s has %s; a mixed group (KIP-848's online migration) is not modelled yet", c.Group, firstPath, f.protocol, path, protocol)
			continue
		}
		if protocol == "classic" {
			var common []string
			for _, a := range configList(c.Config, "partition.assignment.strategy") {
				if contains(f.assignors, a) {
					common = append(common, a)
				}
			}
			if len(common) == 0 {
				key := path + ".config.partition.assignment.strategy"
				r.fail(r.where(key, r.where(path+".group", nil)), key, "group %s: no assignor is common to %s (%s) and %s (%s); Kafka's coordinator refuses the later members with INCONSISTENT_GROUP_PROTOCOL", c.Group, firstPath, strings.Join(f.assignors, ", "), path, c.Config.Get("partition.assignment.strategy"))
				continue
			}
			f.assignors = common
		}
	}
}

// Groups lists the consumer groups the scenario's consumers name, in the
// order they first appear.
func (s *Scenario) Groups() []string {
	var out []string
	for _, c := range s.Consumers {
		if c.Group != "" && !contains(out, c.Group) {
			out = append(out, c.Group)
		}
	}
	return out
}

// groupCoordinatorDefaults fills in the group coordinator's broker keys
// that follow the cluster, checks them as Kafka's GroupCoordinatorConfig
// does, and sets the offsets topic they describe.
func (r *reader) groupCoordinatorDefaults(s *Scenario) {
	b := &s.Cluster.Broker
	const rfKey = "offsets.topic.replication.factor"
	if !b.Explicit[rfKey] {
		b.Set(rfKey, strconv.Itoa(min(3, s.Cluster.Brokers)))
	} else if rf := configInt(*b, rfKey); !r.failedAt("cluster.brokers") && int(rf) > s.Cluster.Brokers {
		key := "cluster.broker." + rfKey
		r.fail(r.where(key, nil), key, "%s %d is more than the cluster's brokers (%d): the group coordinator could never create %s", rfKey, rf, s.Cluster.Brokers, OffsetsTopicName)
	}
	if !r.failedAt("cluster.broker") {
		for _, p := range coordinatorProblems(*b) {
			key := "cluster.broker." + p.key
			r.fail(r.where(key, nil), key, "%s", p.msg)
		}
	}
	s.OffsetsTopic = offsetsTopic(*b)
}

// coordinatorProblems are the broker's group coordinator keys that break
// GroupCoordinatorConfig's requirements (the broker would not start).
func coordinatorProblems(b Config) []problem {
	var out []problem
	atLeast := func(key, lower string) {
		if configInt(b, key) < configInt(b, lower) {
			out = append(out, problem{key: key, msg: fmt.Sprintf("%s %s must be at least %s %s (Kafka's broker refuses to start)", key, b.Get(key), lower, b.Get(lower))})
		}
	}
	atMost := func(key, upper string) {
		if configInt(b, key) > configInt(b, upper) {
			out = append(out, problem{key: key, msg: fmt.Sprintf("%s %s must be at most %s %s (Kafka's broker refuses to start)", key, b.Get(key), upper, b.Get(upper))})
		}
	}
	atLeast("group.consumer.max.heartbeat.interval.ms", "group.consumer.min.heartbeat.interval.ms")
	atLeast("group.consumer.heartbeat.interval.ms", "group.consumer.min.heartbeat.interval.ms")
	atMost("group.consumer.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms")
	atLeast("group.consumer.max.session.timeout.ms", "group.consumer.min.session.timeout.ms")
	atLeast("group.consumer.session.timeout.ms", "group.consumer.min.session.timeout.ms")
	atMost("group.consumer.session.timeout.ms", "group.consumer.max.session.timeout.ms")
	if hb, st := configInt(b, "group.consumer.heartbeat.interval.ms"), configInt(b, "group.consumer.session.timeout.ms"); hb >= st {
		out = append(out, problem{key: "group.consumer.heartbeat.interval.ms", msg: fmt.Sprintf("group.consumer.heartbeat.interval.ms %d must be lower than group.consumer.session.timeout.ms %d (Kafka's broker refuses to start)", hb, st)})
	}
	return out
}

// offsetsTopic is __consumer_offsets as the group coordinator creates it:
// the broker's offsets.topic.* keys, compacted, the rest of its config
// inherited from the broker's.
func offsetsTopic(b Config) Topic {
	t := Topic{Name: OffsetsTopicName, Partitions: int(configInt(b, "offsets.topic.num.partitions")),
		ReplicationFactor: int(configInt(b, "offsets.topic.replication.factor")), Config: topicDefaults(b)}
	t.Config.Set("cleanup.policy", "compact")
	t.Config.Set("segment.bytes", offsetsTopicSegmentBytes)
	return t
}

// offsetsTopicFixed are the offsets topic's keys the coordinator sets
// rather than the broker's keys they would inherit from.
var offsetsTopicFixed = map[string]bool{"cleanup.policy": true, "segment.bytes": true}

// internalTopic reads a topics entry naming an internal topic, and
// reports whether it was one. A __consumer_offsets entry tunes the topic
// the group coordinator creates when first used (its partitions and
// replication factor are the broker's offsets.topic.num.partitions and
// offsets.topic.replication.factor).
func (r *reader) internalTopic(item *yaml.Node, path string, s *Scenario) bool {
	name, nameNode := entryName(item)
	switch name {
	case TxnStateTopicName:
		r.txnStateTopic(item, path, s)
		return true
	case OffsetsTopicName:
	default:
		return false
	}
	if r.offsetsTopicListed {
		r.fail(nameNode, path+".name", "topic %q defined twice", name)
		return true
	}
	r.offsetsTopicListed = true
	b := &s.Cluster.Broker
	t := &s.OffsetsTopic
	set := func(g field, brokerKey string, hi int64, into *int) {
		n, ok := r.int(g, 1, hi)
		if !ok {
			return
		}
		if b.Explicit[brokerKey] && configInt(*b, brokerKey) != n {
			r.fail(g.value, g.path, "%d, but cluster.broker.%s is %s: give it in one place", n, brokerKey, b.Get(brokerKey))
			return
		}
		*into = int(n)
		b.Set(brokerKey, strconv.FormatInt(n, 10))
		b.Explicit[brokerKey] = true
	}
	var rfNode *yaml.Node
	for _, g := range r.fields(item, path, []string{"name", "partitions", "replication.factor", "config", "replica-assignment"}) {
		switch g.name {
		case "partitions":
			set(g, "offsets.topic.num.partitions", PartitionsMax, &t.Partitions)
		case "replication.factor":
			rfNode = g.value
			set(g, "offsets.topic.replication.factor", BrokersMax, &t.ReplicationFactor)
		case "config":
			r.kafkaConfig(g, topicKeys, &t.Config)
		case "replica-assignment":
			r.fail(g.key, g.path, "the group coordinator creates %s when it is first used, and the controller places its replicas", OffsetsTopicName)
		}
	}
	if !r.failedAt(path+".replication.factor") && !r.failedAt("cluster.brokers") && t.ReplicationFactor > s.Cluster.Brokers {
		r.fail(nodeOr(rfNode, item), path+".replication.factor", "replication factor %d is more than the cluster's brokers (%d)", t.ReplicationFactor, s.Cluster.Brokers)
	}
	if minISR := int(configInt(t.Config, "min.insync.replicas")); t.Config.Explicit["min.insync.replicas"] && minISR > t.ReplicationFactor &&
		!r.failedAt(path+".config.min.insync.replicas") {
		key := path + ".config.min.insync.replicas"
		r.fail(r.where(key, item), key, "min.insync.replicas %d is more than %s's replication factor %d", minISR, OffsetsTopicName, t.ReplicationFactor)
	}
	return true
}

// entryName is the value of a mapping's name key, when it is a scalar.
func entryName(item *yaml.Node) (string, *yaml.Node) {
	n := deref(item)
	if n == nil || n.Kind != yaml.MappingNode {
		return "", nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k, v := deref(n.Content[i]), deref(n.Content[i+1]); k.Value == "name" && v != nil && v.Kind == yaml.ScalarNode {
			return v.Value, v
		}
	}
	return "", nil
}
