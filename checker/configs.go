package checker

import (
	"strconv"

	"kafkasim/godview"
)

// Configs an operator altered during the run (godview.ConfigAltered, an
// alter-config fault): a finding is judged against the config in force when
// it matters — a lost write's min.insync.replicas when it was acknowledged,
// unclean.leader.election.enable when the loss happened — not the one the
// scenario started with.

// topicConfigAt is the value of config for topic t in force at at
// (virtual nanoseconds), from the run's alterations: a topic-level one, or
// a cluster-wide one while the topic does not set the config itself (sets:
// in the scenario, or by an earlier topic-level alteration). ok is false
// when no alteration came before at.
func (c *Config) topicConfigAt(t TopicGuarantees, config string, sets bool, at int64) (value string, ok bool) {
	for _, f := range c.Happened.Of(godview.ConfigAltered) {
		if f.Config != config || f.At > at {
			continue
		}
		switch {
		case f.Topic == t.Name:
			value, ok, sets = f.Value, true, true
		case f.Topic == "" && !sets:
			value, ok = f.Value, true
		}
	}
	return value, ok
}

// uncleanAt is unclean.leader.election.enable for t at at; with at unknown
// (0: no god view, or no loss to time it), whether any alteration turned it
// on (a scheduled alter-config may have come before whatever happened).
func (c *Config) uncleanAt(t TopicGuarantees, at int64) bool {
	if at <= 0 {
		if t.Unclean {
			return true
		}
		for _, f := range c.Happened.Of(godview.ConfigAltered) {
			if f.Config == "unclean.leader.election.enable" && f.Value == "true" && (f.Topic == t.Name || f.Topic == "" && !t.SetsUnclean) {
				return true
			}
		}
		return false
	}
	if v, ok := c.topicConfigAt(t, "unclean.leader.election.enable", t.SetsUnclean, at); ok {
		return v == "true"
	}
	return t.Unclean
}

// minInsyncReplicasAt is min.insync.replicas for t at at (0: the
// scenario's).
func (c *Config) minInsyncReplicasAt(t TopicGuarantees, at int64) int {
	if at > 0 {
		if v, ok := c.topicConfigAt(t, "min.insync.replicas", t.SetsMinInsyncReplicas, at); ok {
			if n, err := strconv.Atoi(v); err == nil {
				return n
			}
		}
	}
	return t.MinInsyncReplicas
}
