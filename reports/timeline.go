package reports

import (
	"slices"
	"sort"
	"time"

	"kafkasim/history"
)

// sortedSamples returns the timeline in time order without touching the
// caller's slice; the runner samples in order, but a report must not draw
// lines backwards if one day it does not.
func sortedSamples(timeline []Sample) []*Sample {
	out := make([]*Sample, len(timeline))
	for i := range timeline {
		out[i] = &timeline[i]
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].At < out[j].At })
	return out
}

func seconds(d time.Duration) float64 { return d.Seconds() }

// leaderless counts, at each sample, the partitions without a leader: the
// partitions that can neither take writes nor serve reads.
func leaderless(samples []*Sample) (xs, ys []float64) {
	for _, s := range samples {
		n := 0
		for _, p := range s.Partitions {
			if p.Leader < 0 {
				n++
			}
		}
		xs = append(xs, seconds(s.At))
		ys = append(ys, float64(n))
	}
	return xs, ys
}

// readerMoves computes consumer lag per reader (a process with poll
// operations) at each timeline sample: the sum over partitions of the
// leader's high watermark minus the next offset the reader would fetch (the
// last offset it polled there + 1, or 0 before its first record), each term
// clamped at 0 because a reader can be ahead of a high watermark that a
// new leader has truncated back.
//
// It gathers, from the history's operations in order, what each
// successful poll moved: for every partition it returned records of, the
// offset after the last of them. Kept per reader in history order, a few
// words each rather than the polls themselves (a long run's polls return
// millions of records). A run view fills it during the pass that builds
// its client series, so the lag plot reads no history of its own.
type readerMoves struct {
	readers   []string
	moves     map[string][]readerMove
	partIDs   map[readerPart]int32
	partNames []string
	last      []int64 // per partition: this poll's offset after, -1 if none
	touched   []int32
}

type readerMove struct {
	at   int64
	part int32
	next int64
}

type readerPart struct {
	topic     string
	partition int32
}

func newReaderMoves() *readerMoves {
	return &readerMoves{moves: map[string][]readerMove{}, partIDs: map[readerPart]int32{}}
}

// add takes the history's next operation.
func (m *readerMoves) add(op *history.Op) {
	if op.F != history.FPoll || op.Process == "" {
		return
	}
	ms, ok := m.moves[op.Process]
	if !ok {
		m.readers = append(m.readers, op.Process)
	}
	if op.Type != history.OK || len(op.Value.Records) == 0 {
		m.moves[op.Process] = ms
		return
	}
	for i := range op.Value.Records {
		rec := &op.Value.Records[i]
		k := readerPart{rec.Topic, rec.Partition}
		id, ok := m.partIDs[k]
		if !ok {
			id = int32(len(m.partNames))
			m.partIDs[k] = id
			m.partNames = append(m.partNames, rec.TopicPartition())
			m.last = append(m.last, -1)
		}
		if m.last[id] < 0 {
			m.touched = append(m.touched, id)
		}
		m.last[id] = rec.Offset + 1
	}
	for _, id := range m.touched {
		ms = append(ms, readerMove{at: op.Time, part: id, next: m.last[id]})
		m.last[id] = -1
	}
	m.touched = m.touched[:0]
	m.moves[op.Process] = ms
}

// lag is each reader's lag at each sample: readers is sorted; lag[r][i]
// belongs to samples[i].
func (m *readerMoves) lag(samples []*Sample) (readers []string, lag [][]float64) {
	readers = slices.Clone(m.readers)
	sort.Strings(readers)
	if len(samples) == 0 {
		return readers, nil
	}
	lag = make([][]float64, len(readers))
	for r, name := range readers {
		ms := m.moves[name]
		sort.SliceStable(ms, func(i, j int) bool { return ms[i].at < ms[j].at })
		next := map[string]int64{}
		k := 0
		lag[r] = make([]float64, len(samples))
		for i, s := range samples {
			at := int64(s.At)
			for ; k < len(ms) && ms[k].at <= at; k++ {
				next[m.partNames[ms[k].part]] = ms[k].next
			}
			var sum int64
			for _, p := range s.Partitions {
				if p.HW < 0 { // the leader's high watermark is unknown
					continue
				}
				sum += max(0, p.HW-next[p.Name])
			}
			lag[r][i] = float64(sum)
		}
	}
	return readers, lag
}
