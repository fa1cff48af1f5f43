package cluster

import (
	"fmt"
	"slices"

	"kafkasim/sim"
)

// CatchUp remembers the highest log end each out-of-ISR replica has
// reached, so that a wait for convergence can tell a follower still
// fetching its backlog from one that is stuck.
type CatchUp map[string]int64

// rise records x under key and reports whether it beat an earlier record
// (the first record of a key is no progress: nothing to compare it with).
func (m CatchUp) rise(key string, x int64) bool {
	best, ok := m[key]
	if !ok || x > best {
		m[key] = x
	}
	return ok && x > best
}

// Progressed reports whether some replica outside its partition's ISR, on a
// running broker, has a log end beyond any it had before: a follower still
// fetching its backlog. A follower stuck, or truncating and refetching the
// same offsets, makes no progress.
func (m CatchUp) Progressed(c *Cluster) bool {
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
