package runner

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
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
	Samples  []reports.Sample
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
		for i, p := range im.Partitions() {
			if i >= t.maxParts {
				t.Truncated = true
				break
			}
			s.Partitions = append(s.Partitions, partitionSample(c, p))
		}
	}
	t.Samples = append(t.Samples, s)
}

func partitionSample(c *cluster.Cluster, p *metadata.Partition) reports.PartitionSample {
	ps := reports.PartitionSample{Name: p.TopicPartition.String(), Leader: p.Leader, LeaderEpoch: p.LeaderEpoch,
		ISR: slices.Clone(p.ISR), ELR: slices.Clone(p.ELR), HW: -1, LEO: -1}
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

// FinalState is every partition at the end of the run, for describe topics.
func FinalState(c *cluster.Cluster) []reports.PartitionState {
	im := c.Metadata()
	if im == nil {
		return nil
	}
	var out []reports.PartitionState
	for _, p := range im.Partitions() {
		st := reports.PartitionState{Topic: p.Topic, Partition: p.Partition, Leader: p.Leader, LeaderEpoch: p.LeaderEpoch,
			Replicas: slices.Clone(p.Replicas), ISR: slices.Clone(p.ISR), ELR: slices.Clone(p.ELR), LastKnownELR: slices.Clone(p.LastKnownELR),
			HW: -1, LEO: -1, LogStartOffset: -1, ReplicaLEO: map[int32]int64{}}
		for _, r := range p.Replicas {
			st.ReplicaLEO[r] = -1
			b := c.Broker(r)
			if b == nil || c.World.State(c.BrokerNode(r)) != sim.Running {
				continue
			}
			v := b.Partition(p.TopicPartition)
			if v == nil {
				continue
			}
			st.ReplicaLEO[r] = v.Log().LEO()
			if r == p.Leader && v.IsLeader() {
				st.HW, st.LEO, st.LogStartOffset = v.HighWatermark(), v.Log().LEO(), v.Log().LogStartOffset()
			}
		}
		out = append(out, st)
	}
	return out
}

// FinalTopics is each topic as the final committed metadata holds it, for
// final-state.json (describe topics).
func FinalTopics(c *cluster.Cluster) []reports.TopicState {
	im := c.Metadata()
	if im == nil {
		return nil
	}
	var out []reports.TopicState
	for _, name := range slices.Sorted(maps.Keys(im.Topics)) {
		t := im.Topics[name]
		st := reports.TopicState{Name: t.Name, ID: t.ID, Configs: []reports.KeyValue{
			{Key: "min.insync.replicas", Value: strconv.Itoa(t.MinInsyncReplicas)},
			{Key: "unclean.leader.election.enable", Value: strconv.FormatBool(t.UncleanLeaderElection)}}}
		for _, k := range slices.Sorted(maps.Keys(t.Configs)) {
			st.Configs = append(st.Configs, reports.KeyValue{Key: k, Value: t.Configs[k]})
		}
		out = append(out, st)
	}
	return out
}

// converged reports whether the cluster healed: the control plane agrees,
// every partition is led with its whole replica set in sync, producers have
// no sends left hanging, and readers have caught up.
func converged(c *cluster.Cluster) (bool, string) {
	if ok, why := c.ControlPlaneConverged(); !ok {
		return false, why
	}
	w := c.World
	im := c.Metadata()
	if im == nil {
		return false, "no committed metadata"
	}
	hw := map[metadata.TopicPartition]int64{}
	empty := map[metadata.TopicPartition]bool{} // nothing below the high watermark to read
	for _, p := range im.Partitions() {
		if p.Leader == metadata.NoLeader {
			return false, fmt.Sprintf("%s has no leader", p.TopicPartition)
		}
		if len(p.ISR) < len(p.Replicas) {
			for _, r := range p.Replicas {
				if !slices.Contains(p.ISR, r) && c.StuckBy(p, r) == "" {
					return false, fmt.Sprintf("%s's ISR %v is not its whole replica set %v", p.TopicPartition, p.ISR, p.Replicas)
				}
			}
		}
		b := c.Broker(p.Leader)
		if b == nil {
			return false, fmt.Sprintf("%s's leader broker-%d is down", p.TopicPartition, p.Leader)
		}
		v := b.Partition(p.TopicPartition)
		if v == nil || !v.IsLeader() {
			return false, fmt.Sprintf("broker-%d does not lead %s yet", p.Leader, p.TopicPartition)
		}
		hw[p.TopicPartition] = v.HighWatermark()
		empty[p.TopicPartition] = v.HighWatermark() <= v.Log().LogStartOffset()
	}
	// Replication has drained: a high watermark behind the log end is
	// a follower still copying a backlog (one batch per round trip
	// with replica.fetch.max.bytes small, an fsync per batch with
	// log.flush.interval.messages=1), and an acks=all probe written
	// now would wait behind all of it.
	if ok, why := drained(c); !ok {
		return false, why
	}
	for _, id := range c.Producers {
		p := c.Producer(id)
		if p == nil || w.State(id) != sim.Running {
			return false, fmt.Sprintf("%s is %v", w.Name(id), w.State(id))
		}
		if n := p.Unresolved(); n > 0 {
			return false, fmt.Sprintf("%s still has %d records it could not write", w.Name(id), n)
		}
	}
	for _, id := range c.Readers[:len(c.Readers)-1] { // the last is the final reader
		r := c.Reader(id)
		if r == nil || w.State(id) != sim.Running {
			return false, fmt.Sprintf("%s is %v", w.Name(id), w.State(id))
		}
		for _, tp := range keysOf(hw) {
			if !r.Reads(tp.Topic) || empty[tp] {
				// A reader that has not found a partition with nothing
				// to read (one added since its last metadata refresh)
				// has nothing to catch up on.
				continue
			}
			if int(tp.Partition) >= c.CreatedPartitions(tp.Topic) && !r.Knows(tp.Topic, tp.Partition) {
				// A partition added during the run that the reader's
				// metadata does not have yet: Kafka's consumer finds it
				// within metadata.max.age.ms (5 minutes by default), not
				// as part of the cluster's healing. The final reads
				// (fresh metadata) still judge what it holds.
				continue
			}
			if pos := r.Position(tp.Topic, tp.Partition); pos < hw[tp] {
				return false, fmt.Sprintf("%s has not caught up on %s: at %d, high watermark %d", w.Name(id), tp, pos, hw[tp])
			}
		}
	}
	return true, ""
}

// drained reports whether every partition's leader has its high watermark
// at its log end: nothing written is still waiting to be committed, so with
// the producers done the high watermark cannot move. Final reads read to
// the high watermark; taken while it still moves, they end below records
// that readers polling on read a moment later (and the checker would call
// those records lost).
func drained(c *cluster.Cluster) (bool, string) {
	im := c.Metadata()
	if im == nil {
		return false, "no committed metadata"
	}
	for _, p := range im.Partitions() {
		b := c.Broker(p.Leader)
		if b == nil || c.World.State(c.BrokerNode(p.Leader)) != sim.Running {
			return false, fmt.Sprintf("%s's leader broker-%d is down", p.TopicPartition, p.Leader)
		}
		v := b.Partition(p.TopicPartition)
		if v == nil || !v.IsLeader() || v.Log() == nil {
			return false, fmt.Sprintf("broker-%d does not lead %s yet", p.Leader, p.TopicPartition)
		}
		if leo := v.Log().LEO(); v.HighWatermark() < leo && !c.HasStuckReplica(p) {
			return false, fmt.Sprintf("%s's high watermark %d is behind its log end %d: its followers are still catching up", p.TopicPartition, v.HighWatermark(), leo)
		}
	}
	return true, ""
}

// catchUp remembers the highest log end each out-of-ISR replica has reached.
type catchUp map[string]int64

// rise records x under key and reports whether it beat an earlier record
// (the first record of a key is no progress: nothing to compare it with).
func (m catchUp) rise(key string, x int64) bool {
	best, ok := m[key]
	if !ok || x > best {
		m[key] = x
	}
	return ok && x > best
}

// progressed reports whether some replica outside its partition's ISR, on a
// running broker, has a log end beyond any it had before: a follower still
// fetching its backlog. A follower stuck, or truncating and refetching the
// same offsets, makes no progress.
func (m catchUp) progressed(c *cluster.Cluster) bool {
	im := c.Metadata()
	if im == nil {
		return false
	}
	moved := false
	for _, p := range im.Partitions() {
		// Every follower counts while the leader's high watermark trails
		// its log end (followers in the ISR still copying a backlog);
		// otherwise only those out of the ISR.
		draining := false
		if v := c.LeaderView(p); v != nil {
			draining = v.HighWatermark() < v.Log().LEO()
			// A leader still appending a backlog (acks=0 requests queued
			// behind flush-every-message fsyncs; the model has no TCP flow
			// control) moves its high watermark on its own.
			if draining && m.rise(fmt.Sprintf("%s/hw", p.TopicPartition), v.HighWatermark()) {
				moved = true
			}
		}
		if len(p.ISR) >= len(p.Replicas) && !draining {
			continue
		}
		for _, r := range p.Replicas {
			if r == p.Leader || (slices.Contains(p.ISR, r) && !draining) {
				continue
			}
			b := c.Broker(r)
			if b == nil || c.World.State(c.BrokerNode(r)) != sim.Running {
				continue
			}
			v := b.Partition(p.TopicPartition)
			if v == nil || v.Log() == nil {
				continue
			}
			if m.rise(fmt.Sprintf("%s/%d", p.TopicPartition, r), v.Log().LEO()) {
				moved = true
			}
		}
	}
	return moved
}

func keysOf(m map[metadata.TopicPartition]int64) []metadata.TopicPartition {
	keys := make([]metadata.TopicPartition, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b metadata.TopicPartition) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		return int(a.Partition - b.Partition)
	})
	return keys
}
