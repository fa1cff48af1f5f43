package history

import "math"

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

// Sizes counts what a checker of the recorded history will tabulate. The
// counts are kept as operations are recorded (countSizes), so that asking
// costs no pass over millions of operations.
func (r *Recorder) Sizes() Sizes {
	c := &r.sizes
	explicit := make(map[TopicPartition]int, len(c.explicit))
	for tp, n := range c.explicit { // kafkasim:orderless: a copy
		explicit[tp] = n
	}
	return Sizes{
		Sends: c.sends,
		Acks:  c.acks.named(r.topics.names, nil),
		Reads: c.reads.named(r.spanTopics.names, explicit),
	}
}

// sizeCounts is what Sizes reports, kept as operations are recorded.
// Acknowledged sends are counted by topic number and partition, polls'
// spans by span topic number and partition, named when asked: a map
// lookup per operation would cost more.
type sizeCounts struct {
	sends       int
	acks, reads countsByTopic
	// explicit counts the records of polls recorded one by one.
	explicit map[TopicPartition]int
}

// countSizes counts an operation being recorded (topic is v.Topic's
// number; spans, when any, are already kept, their topics numbered).
func (r *Recorder) countSizes(t Type, f string, topic uint32, v *Value, spans []RecordSpan) {
	c := &r.sizes
	switch {
	case f == FSend && t == Invoke:
		c.sends++
	case f == FSend && t == OK && v.Offset >= 0:
		c.acks.add(topic, v.Partition, 1)
	case f == FPoll:
		for j := range v.Records {
			if c.explicit == nil {
				c.explicit = map[TopicPartition]int{}
			}
			c.explicit[TopicPartition{v.Records[j].Topic, v.Records[j].Partition}]++
		}
		for _, sp := range spans {
			c.reads.add(r.spanTopics.id(sp.Topic, math.MaxUint32), sp.Partition, int(sp.Hi-sp.Lo))
		}
	}
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
