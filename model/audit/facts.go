package audit

import (
	"kafkasim/godview"
	"kafkasim/model/metadata"
)

// Facts are what the audit saw happen that Kafka permits to cost data or
// order, in order: committed data lost (godview.Loss), batches a leader's
// producer state forgot, or whose producer it forgot, or took from a
// producer it held nothing of, entries an unclean election resurrected. The
// cluster adds what it sees itself (model/cluster's Facts).
func (a *Audit) Facts() []godview.Fact { return a.facts }

// lastOf is the latest fact of kind, or nil. Records of one kind that repeat
// (a retry answered twice, a loss growing) are joined with it.
func (a *Audit) lastOf(kind godview.Kind) *godview.Fact {
	if i := a.lastIndexOf(kind); i >= 0 {
		return &a.facts[i]
	}
	return nil
}

// lastIndexOf is the index in facts of the last fact of kind, -1 when none.
func (a *Audit) lastIndexOf(kind godview.Kind) int {
	for i := len(a.facts) - 1; i >= 0; i-- {
		if a.facts[i].Kind == kind {
			return i
		}
	}
	return -1
}

// configKey is one ConfigRecord of the metadata log.
type configKey struct {
	offset      int64
	topic, name string
}

// ConfigApplied notes, the first time a node applies it (the active
// controller, at its commit: before any broker acts on it), a topic's or
// the cluster-wide config an operator set (godview.ConfigAltered). A
// broker's own config is left out: the checker judges by topic.
func (a *Audit) ConfigApplied(im *metadata.Image, offset int64, rec *metadata.ConfigRecord) {
	if rec.ResourceType == metadata.ResourceBroker && rec.ResourceName != "" {
		return
	}
	topic := ""
	if rec.ResourceType == metadata.ResourceTopic {
		topic = rec.ResourceName
	}
	key := configKey{offset: offset, topic: topic, name: rec.Name}
	if a.configsSeen[key] {
		return
	}
	if a.configsSeen == nil {
		a.configsSeen = map[configKey]bool{}
	}
	a.configsSeen[key] = true
	a.facts = append(a.facts, godview.Fact{Kind: godview.ConfigAltered, At: int64(a.w.Now()), Topic: topic,
		Config: rec.Name, Value: rec.Value, Producer: godview.NoProducer})
}
