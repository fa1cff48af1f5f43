package runner

import (
	"slices"
	"time"

	"kafkasim/model/cluster"
	"kafkasim/model/metadata"
	"kafkasim/reports"
	"kafkasim/sim"
)

// Timeline samples the god view at regular simulated times, for the
// report's lanes and plots. Sampling only reads state: it adds no events,
// so the trace hash is the same with or without it.
type Timeline struct {
	c        *cluster.Cluster
	every    time.Duration
	next     time.Duration
	maxParts int
	// prev and prevTPs are the last sample's partitions and whom they
	// were of: a partition's name, ISR and ELR are shared with the last
	// sample while unchanged (the report only reads them), instead of a
	// name and two lists allocated per partition and sample (about 14 MB
	// a run of big-cluster-3000.yaml: 400 samples of 256 partitions).
	prev    []reports.PartitionSample
	prevTPs []metadata.TopicPartition
	Samples []reports.Sample
	// Truncated is set when partitions beyond maxParts were left out.
	Truncated bool
}

// SamplesTarget is about how many samples a run's timeline holds.
const SamplesTarget = 400

func newTimeline(c *cluster.Cluster, opts Options, total time.Duration) *Timeline {
	every := opts.SampleEvery
	if every <= 0 {
		every = min(max(total/SamplesTarget, 100*time.Millisecond), 10*time.Second)
	}
	maxParts := opts.TimelinePartitionsMax
	if maxParts <= 0 {
		maxParts = 256
	}
	return &Timeline{c: c, every: every, maxParts: maxParts}
}

// letGo drops the timeline's cluster once its samples are taken (a result
// keeps the timeline; it must not keep the cluster).
func (t *Timeline) letGo() {
	if t != nil {
		t.c = nil
	}
}

func (t *Timeline) afterEvent() {
	now := t.c.World.Now()
	if now < t.next {
		return
	}
	t.sample()
	t.next = now - now%t.every + t.every
}

func (t *Timeline) sample() {
	c := t.c
	w := c.World
	s := reports.Sample{At: w.Now()}
	if n, id := c.ActiveController(); n != nil {
		s.ActiveController = w.Name(id)
		s.ControllerEpoch = n.Raft().Epoch()
	}
	for _, id := range w.Nodes() {
		if w.State(id) != sim.Running {
			s.Down = append(s.Down, w.Name(id))
		}
	}
	if im := c.Metadata(); im != nil {
		// The first maxParts partitions by topic then number, read in
		// place and sampled into a list made to size: on 3,000 partitions
		// the list of them all (Image.Partitions) and the sample's growth
		// by append allocated about 30 MB a run of big-cluster-3000.yaml.
		n := 0
		for _, topic := range im.Topics { // kafkasim:orderless: a sum
			n += len(topic.Partitions)
		}
		if n > 0 {
			s.Partitions = make([]reports.PartitionSample, 0, min(n, t.maxParts))
		}
		tps := t.prevTPs[:0] // each read before it is written over
	topics:
		for _, name := range im.TopicNames() {
			for _, p := range im.Topics[name].Partitions {
				i := len(s.Partitions)
				if i == t.maxParts {
					t.Truncated = true
					break topics
				}
				var prev *reports.PartitionSample
				if i < len(t.prev) && t.prevTPs[i] == p.TopicPartition {
					prev = &t.prev[i]
				}
				s.Partitions = append(s.Partitions, partitionSample(c, p, prev))
				tps = append(tps, p.TopicPartition)
			}
		}
		t.prev, t.prevTPs = s.Partitions, tps
	}
	t.Samples = append(t.Samples, s)
}

// partitionSample samples p; prev, when not nil, is p's sample before,
// whose name and lists it shares while they are the same.
func partitionSample(c *cluster.Cluster, p *metadata.Partition, prev *reports.PartitionSample) reports.PartitionSample {
	ps := reports.PartitionSample{Leader: p.Leader, LeaderEpoch: p.LeaderEpoch, HW: -1, LEO: -1}
	if prev != nil {
		ps.Name, ps.ISR, ps.ELR = prev.Name, sameIDs(prev.ISR, p.ISR), sameIDs(prev.ELR, p.ELR)
	} else {
		ps.Name, ps.ISR, ps.ELR = p.TopicPartition.String(), slices.Clone(p.ISR), slices.Clone(p.ELR)
	}
	if p.Leader != metadata.NoLeader {
		if b := c.Broker(p.Leader); b != nil && c.World.State(c.BrokerNode(p.Leader)) == sim.Running {
			if v := b.Partition(p.TopicPartition); v != nil && v.IsLeader() {
				ps.HW = v.HighWatermark()
				ps.LEO = v.Log().LEO()
			}
		}
	}
	return ps
}

// sameIDs is was when it holds ids (nil when ids is nil, as slices.Clone
// gives), else a copy of ids.
func sameIDs(was, ids []int32) []int32 {
	if (was == nil) == (ids == nil) && slices.Equal(was, ids) {
		return was
	}
	return slices.Clone(ids)
}
