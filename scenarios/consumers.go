package scenarios

import (
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"kafkasim/sim"
)

// A consumers entry: assign-mode readers, or members of a consumer group
// (groups.go has the rules for the latter).

func (r *reader) consumers(f field, s *Scenario) {
	instances := 0
	for i, item := range r.clients(f, "consumer") {
		if item == nil {
			continue
		}
		path := index(f.path, i)
		c := Consumer{Count: 1, Processing: sim.Range{Min: time.Millisecond, Max: 5 * time.Millisecond}, Config: defaults(allConsumerKeys)}
		topicsSet := false
		var countNode *yaml.Node
		for _, g := range r.fields(item, path, []string{"name", "count", "group", "topics", "processing", "commit", "workers",
			"workers-commit", "side-effects", "static", "config"}) {
			if r.readerKey(g, s, &c, "consumer", &countNode) {
				topicsSet = topicsSet || g.name == "topics"
				continue
			}
			switch g.name {
			case "commit", "workers", "workers-commit", "side-effects", "static":
				r.memberKey(g, &c)
			case "config":
				r.kafkaConfig(g, consumerEntryKeys(), &c.Config)
			}
		}
		if c.Name == "" {
			c.Name = defaultClientName("c", i)
		}
		c.Count = r.instances(&instances, c.Count, nodeOr(countNode, item), path, "consumer")
		if !topicsSet {
			for _, t := range s.Topics {
				c.Topics = append(c.Topics, t.Name)
			}
		}
		r.groupMember(item, path, &c, s)
		r.transactionalCommit(item, path, &c)
		r.consumerPaths = append(r.consumerPaths, path)
		s.Consumers = append(s.Consumers, c)
	}
}

// readerKey reads a key that consumer and processor entries (what) share:
// name, count, group, processing, and the topics read (topics, or a
// processor's input); it reports whether g was one of them. countNode is
// where count was written.
func (r *reader) readerKey(g field, s *Scenario, c *Consumer, what string, countNode **yaml.Node) bool {
	switch g.name {
	case "name":
		c.Name = r.name(g, what+" name")
		r.remember(g.path, g.key)
	case "count":
		if n, ok := r.int(g, 0, InstancesMax); ok {
			c.Count, *countNode = int(n), g.value
		}
	case "group":
		c.Group = r.name(g, "group name")
		r.remember(g.path, g.key)
	case "topics", "input":
		for j, t := range r.strings(g) {
			r.clientTopic(g.value, index(g.path, j), t, s)
			c.Topics = append(c.Topics, t)
		}
	case "processing":
		if v, ok := r.rangeOf(g, time.Hour); ok {
			c.Processing = v
		}
	default:
		return false
	}
	return true
}

// clientTopic refuses a topic a client names that it may not use: an
// internal topic, or one the scenario lacks.
func (r *reader) clientTopic(n *yaml.Node, path, t string, s *Scenario) {
	switch {
	case internalTopics[t] != "":
		r.fail(n, path, "%s", internalTopicRefusal(t))
	case r.topicNamed(s, t) == nil && !r.topicNamesDoubtful:
		r.fail(n, path, "no topic %q in topics", t)
	}
}

// consumerEntryKeys are the keys a consumers[].config may hold: the
// consumer's, and the transactional producer's of a member with commit:
// transactional.
func consumerEntryKeys() []kafkaKey {
	return append(append([]kafkaKey(nil), allConsumerKeys...), txnProducerKeys...)
}

// transactionalCommit completes a consumer entry with commit:
// transactional: its offsets go to transactions of a transactional
// producer of its own (model/processor with no output), whose
// transactional.id defaults to the entry's name (instance i takes
// "<id>-<i>", as a producer's) and transaction.timeout.ms to Kafka's; it
// reads read_committed unless told otherwise, as an exactly-once
// application does. Other entries may not give the producer's keys.
func (r *reader) transactionalCommit(item *yaml.Node, path string, c *Consumer) {
	cfg := &c.Config
	if c.Commit != CommitTransactional {
		for _, k := range txnProducerKeys {
			if _, ok := cfg.Values[k.name]; ok {
				key := path + ".config." + k.name
				r.fail(r.where(key, item), key, "%s is for a consumer with commit: transactional (whose offsets go to transactions of its own producer)", k.name)
				cfg.del(k.name)
			}
		}
		return
	}
	if c.Workers > 1 {
		key := path + ".workers"
		r.fail(r.where(key, item), key, "commit: transactional processes on the poll loop: a worker pool's records would span the transactions (workers: 1)")
	}
	if _, ok := cfg.Values["transactional.id"]; !ok {
		cfg.Set("transactional.id", c.Name)
	}
	if _, ok := cfg.Values["transaction.timeout.ms"]; !ok {
		cfg.Set("transaction.timeout.ms", "60000")
	}
	if !cfg.Explicit["isolation.level"] {
		cfg.Set("isolation.level", "read_committed")
	}
	sortConsumerKeys(cfg)
}

// memberKey reads one of a consumer entry's group-member keys.
func (r *reader) memberKey(g field, c *Consumer) {
	r.remember(g.path, g.key)
	switch g.name {
	case "commit":
		mode := r.str(g)
		switch {
		case mode == CommitTransactional:
			c.Commit = mode
		case !contains(CommitModes, mode):
			r.fail(g.value, g.path, "want %s, got %q", strings.Join(append(slices.Clone(CommitModes), CommitTransactional), ", "), cutLong(mode))
		default:
			c.Commit = mode
		}
	case "workers":
		if n, ok := r.int(g, 1, WorkersMax); ok {
			c.Workers = int(n)
		}
	case "workers-commit":
		mode := r.str(g)
		if !contains(WorkersCommitModes, mode) {
			r.fail(g.value, g.path, "want %s, got %q", strings.Join(WorkersCommitModes, " or "), cutLong(mode))
			return
		}
		c.WorkersCommit = mode
	case "side-effects":
		mode := r.str(g)
		if !contains(SideEffectModes, mode) {
			r.fail(g.value, g.path, "want %s, got %q", strings.Join(SideEffectModes, " or "), cutLong(mode))
			return
		}
		c.SideEffects = mode
	case "static":
		if v, ok := r.bool(g); ok {
			c.Static = v
		}
	}
}
