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
	s := Sizes{Reads: map[TopicPartition]int{}, Acks: map[TopicPartition]int{}}
	send := uint64(slices.Index(r.fs.names, FSend))
	poll := uint64(slices.Index(r.fs.names, FPoll))
	// Counted by topic number and partition, named at the end: a map
	// lookup per operation would cost more than the walk.
	var acks, reads [][]int
	count := func(byTopic [][]int, topic uint32, partition int32, n int) [][]int {
		if partition < 0 {
			return byTopic
		}
		for int(topic) >= len(byTopic) {
			byTopic = append(byTopic, nil)
		}
		row := byTopic[topic]
		if int(partition) >= len(row) {
			row = append(row, make([]int, int(partition)+1-len(row))...)
			byTopic[topic] = row
		}
		row[partition] += n
		return byTopic
	}
	for i := int64(0); i < r.n; i++ {
		d := opReader{b: r.stream.at(r.pos[i>>chunkShift][i&chunkMask]), k: 1}
		flags := d.b[0]
		d.varint()  // time
		d.uvarint() // process
		f := d.uvarint()
		d.uvarint() // isolation
		topic := d.uvarint()
		partition := int32(d.varint())
		offset := d.varint()
		typ := Type(flags & flagsType)
		switch {
		case f == send && typ == Invoke:
			s.Sends++
		case f == send && typ == OK && offset >= 0:
			acks = count(acks, uint32(topic), partition, 1)
		case f == poll && flags&flagSide != 0:
			e := r.side.At(int(d.uvarint()))
			for j := range e.records {
				rec := &e.records[j]
				s.Reads[TopicPartition{rec.Topic, rec.Partition}]++
			}
			for j := e.spanFrom; j < e.spanFrom+e.spanN; j++ {
				sp := r.spans.At(int(j))
				reads = count(reads, sp.topic, sp.partition, int(sp.hi-sp.lo))
			}
		}
	}
	for t, row := range acks {
		for p, n := range row {
			if n > 0 {
				s.Acks[TopicPartition{r.topics.names[t], int32(p)}] += n
			}
		}
	}
	for t, row := range reads {
		for p, n := range row {
			if n > 0 {
				s.Reads[TopicPartition{r.spanTopics.names[t], int32(p)}] += n
			}
		}
	}
	return s
}
