package reports

import (
	"sort"
	"time"

	"kafkasim/checker/history"
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

// readerLag computes consumer lag per reader (a process with poll
// operations) at each timeline sample: the sum over partitions of the
// leader's high watermark minus the next offset the reader would fetch (the
// last offset it polled there + 1, or 0 before its first record), each term
// clamped at 0 because a reader can be ahead of a high watermark that a
// new leader has truncated back.
//
// readers is sorted; lag[r][i] belongs to samples[i].
func readerLag(ops []history.Op, samples []*Sample) (readers []string, lag [][]float64) {
	polls := map[string][]*history.Op{}
	for i := range ops {
		op := &ops[i]
		if op.F != history.FPoll || op.Process == "" {
			continue
		}
		if _, ok := polls[op.Process]; !ok {
			readers = append(readers, op.Process)
			polls[op.Process] = nil
		}
		if op.Type == history.OK && len(op.Value.Records) > 0 {
			polls[op.Process] = append(polls[op.Process], op)
		}
	}
	sort.Strings(readers)
	if len(samples) == 0 {
		return readers, nil
	}
	lag = make([][]float64, len(readers))
	for r, name := range readers {
		ps := polls[name]
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].Time < ps[j].Time })
		next := map[string]int64{}
		k := 0
		lag[r] = make([]float64, len(samples))
		for i, s := range samples {
			at := int64(s.At)
			for ; k < len(ps) && ps[k].Time <= at; k++ {
				for _, rec := range ps[k].Value.Records {
					next[rec.TopicPartition()] = rec.Offset + 1
				}
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
