package history

// Sizes is how many entries a checker of a history will tabulate: it sizes
// its tables once instead of growing them by doubling, which for a history
// of millions of operations copies hundreds of megabytes and touches twice
// the memory the tables end at. Counts are upper bounds; a table that needs
// more grows as before.
type Sizes struct {
	Sends int // send invocations
	// Acks are, per partition, the sends acknowledged at an offset.
	Acks map[TopicPartition]int
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
	return Sizes{Sends: c.sends, Acks: c.acks.named(r.topics.names)}
}

// sizeCounts is what Sizes reports, kept as operations are recorded.
// Acknowledged sends are counted by topic number and partition, named when
// asked: a map lookup per operation would cost more.
type sizeCounts struct {
	sends int
	acks  countsByTopic
}

// countSizes counts an operation being recorded (topic is v.Topic's
// number).
func (r *Recorder) countSizes(t Type, f string, topic uint32, v *Value) {
	c := &r.sizes
	switch {
	case f == FSend && t == Invoke:
		c.sends++
	case f == FSend && t == OK && v.Offset >= 0:
		c.acks.add(topic, v.Partition, 1)
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

// named is the counts by partition, topics named by names.
func (c countsByTopic) named(names []string) map[TopicPartition]int {
	m := map[TopicPartition]int{}
	for t, row := range c {
		for p, n := range row {
			if n > 0 {
				m[TopicPartition{names[t], int32(p)}] += n
			}
		}
	}
	return m
}
