package broker

// tpIndex finds a partition's place in a slice of partitions by topic and
// partition number: per topic (a session names one or a few), an array
// indexed by partition number. A leader of thousands of partitions looked
// its followers' sessions up by binary search on every fetch, partition
// touched and parked fetch (about a tenth of a busy big cluster's
// instructions, comparing topic names); this is a compare of the topic and
// an index. It is built from the slice and must be built again when the
// slice's partitions or their order change.
type tpIndex struct {
	topics []tpIndexTopic
}

type tpIndexTopic struct {
	name string
	at   []int32 // at[partition] is the slice index plus one; 0: not there
}

// build indexes n partitions, the i-th named by tp(i): the first of equal
// ones, as a binary search finds. It reports false, indexing nothing, when
// a partition number is negative (no replica's is): then the owner must
// search as it did before.
func (x *tpIndex) build(n int, tp func(i int) (string, int32)) bool {
	for k := range x.topics[:cap(x.topics)] {
		t := &x.topics[:cap(x.topics)][k]
		clear(t.at[:cap(t.at)])
		t.at = t.at[:0]
	}
	x.topics = x.topics[:0]
	for i := range n {
		name, part := tp(i)
		if part < 0 {
			x.topics = x.topics[:0]
			return false
		}
		t := x.topic(name)
		if t == nil {
			if len(x.topics) < cap(x.topics) {
				x.topics = x.topics[:len(x.topics)+1] // its array, cleared above
			} else {
				x.topics = append(x.topics, tpIndexTopic{})
			}
			t = &x.topics[len(x.topics)-1]
			t.name = name
		}
		for int(part) >= len(t.at) {
			if len(t.at) < cap(t.at) {
				t.at = t.at[:len(t.at)+1]
			} else {
				t.at = append(t.at, 0)
			}
		}
		if t.at[part] == 0 {
			t.at[part] = int32(i) + 1
		}
	}
	return true
}

func (x *tpIndex) topic(name string) *tpIndexTopic {
	for k := range x.topics {
		if x.topics[k].name == name {
			return &x.topics[k]
		}
	}
	return nil
}

// find returns the index of topic's partition, if there.
func (x *tpIndex) find(topic string, partition int32) (int, bool) {
	for k := range x.topics {
		if t := &x.topics[k]; t.name == topic {
			if partition < 0 || int(partition) >= len(t.at) || t.at[partition] == 0 {
				return 0, false
			}
			return int(t.at[partition]) - 1, true
		}
	}
	return 0, false
}
