package broker

import "kafkasim/model/metadata"

// partitionTable finds a broker's replicas by topic and partition. Nearly
// every lookup is for the topic of the one before (a request names one topic,
// a run has a handful), so the last topic's replicas are kept at hand and a
// lookup costs a string comparison and an index, not a hash of the name.
type partitionTable struct {
	byTopic map[string][]*partition // indexed by partition number; nil where none
	last    string
	lastOf  []*partition
	// names holds each topic's name once: a replica's topic partition
	// takes it (intern), so that the names this broker's fetches, sessions
	// and tables compare share their bytes, and string equality settles
	// at the pointer instead of comparing the bytes of two copies (every
	// metadata record decodes its own).
	names map[string]string
}

func newPartitionTable() partitionTable {
	return partitionTable{byTopic: map[string][]*partition{}, names: map[string]string{}}
}

// intern returns the topic name held for name's topic.
func (t *partitionTable) intern(name string) string {
	if held, ok := t.names[name]; ok {
		return held
	}
	t.names[name] = name
	return name
}

func (t *partitionTable) topic(name string) []*partition {
	if name == t.last && t.lastOf != nil {
		return t.lastOf
	}
	ps := t.byTopic[name]
	if ps != nil {
		t.last, t.lastOf = name, ps
	}
	return ps
}

// get returns tp's replica, or nil.
func (t *partitionTable) get(tp metadata.TopicPartition) *partition {
	ps := t.topic(tp.Topic)
	if tp.Partition < 0 || int(tp.Partition) >= len(ps) {
		return nil
	}
	return ps[tp.Partition]
}

// put adds tp's replica.
func (t *partitionTable) put(tp metadata.TopicPartition, p *partition) {
	ps := t.byTopic[tp.Topic]
	for int(tp.Partition) >= len(ps) {
		ps = append(ps, nil)
	}
	ps[tp.Partition] = p
	t.byTopic[tp.Topic] = ps
	if tp.Topic == t.last {
		t.lastOf = ps
	}
}

// remove forgets tp's replica (reassigned away).
func (t *partitionTable) remove(tp metadata.TopicPartition) {
	ps := t.byTopic[tp.Topic]
	if tp.Partition >= 0 && int(tp.Partition) < len(ps) {
		ps[tp.Partition] = nil
	}
}
