package broker

// tpIndex finds a partition's place in a slice of partitions by topic and
// partition number: per topic (a session names one or a few), a small
// open-addressing table from partition number to index. A leader of
// thousands of partitions looked its followers' sessions up by binary
// search on every fetch, partition touched and parked fetch (about a tenth
// of a busy big cluster's instructions, comparing topic names); this is a
// compare of the topic and a probe or two. The table's size follows the
// slice's length, not the partition numbers, so a session of a few
// partitions of a topic of tens of thousands stays small. It is built from
// the slice and must be built again when the slice's partitions or their
// order change.
type tpIndex struct {
	topics []tpIndexTopic
}

type tpIndexTopic struct {
	name  string
	slots []tpSlot // a power of two, at most half full
	shift uint8    // 32 minus the log of len(slots): a hash's top bits pick the slot
}

// tpSlot maps partition to the slice index at; partition -1: empty.
type tpSlot struct {
	partition, at int32
}

// build indexes n partitions, the i-th named by tp(i): the first of equal
// ones, as a binary search finds. It reports false, indexing nothing, when
// a partition number is negative (no replica's is): then the owner must
// search as it did before.
func (x *tpIndex) build(n int, tp func(i int) (string, int32)) bool {
	x.topics = x.topics[:0]
	counts := make(map[string]int, 1)
	var order []string
	for i := range n {
		name, part := tp(i)
		if part < 0 {
			return false
		}
		if counts[name] == 0 {
			order = append(order, name)
		}
		counts[name]++
	}
	for _, name := range order {
		size, shift := 8, uint8(29)
		for size < 2*counts[name] {
			size, shift = size*2, shift-1
		}
		slots := make([]tpSlot, size)
		for k := range slots {
			slots[k].partition = -1
		}
		x.topics = append(x.topics, tpIndexTopic{name: name, slots: slots, shift: shift})
	}
	for i := range n {
		name, part := tp(i)
		t := x.topic(name)
		mask := len(t.slots) - 1
		for k := t.slot(part); ; k = (k + 1) & mask {
			s := &t.slots[k]
			if s.partition == part {
				break // a duplicate: the first is kept
			}
			if s.partition < 0 {
				*s = tpSlot{partition: part, at: int32(i)}
				break
			}
		}
	}
	return true
}

// slot is where part's probe starts (Fibonacci hashing: partitions a
// follower fetches from one leader are often evenly spaced numbers).
func (t *tpIndexTopic) slot(part int32) int { return int(uint32(part) * 0x9E3779B1 >> t.shift) }

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
	t := x.topic(topic)
	if t == nil || partition < 0 {
		return 0, false
	}
	mask := len(t.slots) - 1
	for k := t.slot(partition); ; k = (k + 1) & mask {
		switch s := t.slots[k]; s.partition {
		case partition:
			return int(s.at), true
		case -1:
			return 0, false
		}
	}
}
