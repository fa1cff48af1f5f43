package history

import "slices"

// Sizes is how many entries a checker of a history will tabulate: it sizes
// its tables once instead of growing them by doubling, which for a history
// of millions of operations copies hundreds of megabytes and touches twice
// the memory the tables end at. Counts are upper bounds; a table that needs
// more grows as before.
type Sizes struct {
	Sends int // send invocations
	// Reads and Acks are, per partition, the records polls returned and
	// the sends acknowledged at an offset.
	Reads, Acks map[TopicPartition]int
}

// TopicPartition names a partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// Sizes counts what a checker of the recorded history will tabulate,
// reading only the operations' headers and their polls' spans (no record
// is decoded): a few tens of milliseconds for millions of operations.
func (r *Recorder) Sizes() Sizes {
	var s Sizes
	send := uint64(slices.Index(r.fs.names, FSend))
	poll := uint64(slices.Index(r.fs.names, FPoll))
	// Counted by topic number and partition, named at the end: a map
	// lookup per operation would cost more than the walk.
	var acks, reads countsByTopic
	explicit := map[TopicPartition]int{}
	var h header
	for i := int64(0); i < r.n; i++ {
		r.header(i, &h)
		typ := Type(h.flags & flagsType)
		switch {
		case h.f == send && typ == Invoke:
			s.Sends++
		case h.f == send && typ == OK && h.offset >= 0:
			acks.add(uint32(h.topic), h.partition, 1)
		case h.f == poll && h.side >= 0:
			e := r.side.At(h.side)
			for j := range e.records {
				explicit[TopicPartition{e.records[j].Topic, e.records[j].Partition}]++
			}
			for j := e.spanFrom; j < e.spanFrom+e.spanN; j++ {
				sp := r.spans.At(int(j))
				reads.add(sp.topic, sp.partition, int(sp.hi-sp.lo))
			}
		}
	}
	s.Acks = acks.named(r.topics.names, nil)
	s.Reads = reads.named(r.spanTopics.names, explicit)
	return s
}

// countsByTopic counts by topic number, then partition.
type countsByTopic [][]int

func (c *countsByTopic) add(topic uint32, partition int32, n int) {
	if partition < 0 {
		return
	}
	for int(topic) >= len(*c) {
		*c = append(*c, nil)
	}
	row := (*c)[topic]
	if int(partition) >= len(row) {
		row = append(row, make([]int, int(partition)+1-len(row))...)
		(*c)[topic] = row
	}
	row[partition] += n
}

// named adds the counts to m (a new map when nil), topics named by names.
func (c countsByTopic) named(names []string, m map[TopicPartition]int) map[TopicPartition]int {
	if m == nil {
		m = map[TopicPartition]int{}
	}
	for t, row := range c {
		for p, n := range row {
			if n > 0 {
				m[TopicPartition{names[t], int32(p)}] += n
			}
		}
	}
	return m
}
