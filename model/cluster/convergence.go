package cluster

import (
	"fmt"
	"kafkasim/model/processor"
	"slices"
	"strings"
	"time"

	"kafkasim/godview"
	"kafkasim/model/broker"
	"kafkasim/model/metadata"
	"kafkasim/sim"
)

// ConvergenceCondition is one thing a healed cluster holds. Check reports
// whether it holds now and, when it does not, what is missing (when it
// does, what it left unjudged and why, or ""); it may assume
// that every condition before it in the list holds (a reader caught up to
// the high watermark needs a leader to have one). Checks only read state:
// they add no events.
type ConvergenceCondition struct {
	Name  string
	Check func(c *Cluster) (bool, string)
}

// convergence lists what a cluster that healed after its faults holds, in
// the order they are checked; Converged reports the first that does not
// hold. The order decides which reason a run that did not converge gives,
// so it is part of its summary: add a condition after those it depends on,
// never between two that exist.
//
// Consumer groups come after the readers (group members are not readers
// for "readers caught up"): "consumer groups stable" — each group's
// coordinator holds it Stable, its live members are in its generation,
// every partition it subscribes to is owned by exactly one of them, and its
// committed offsets are at the high watermark (lag 0). Transactions (a
// transaction coordinator) go after that: "no transaction open" — every
// transaction has committed or aborted.
var convergence = []ConvergenceCondition{
	{Name: "control plane", Check: (*Cluster).ControlPlaneConverged},
	{Name: "partitions led in sync", Check: (*Cluster).partitionsLedInSync},
	{Name: "replication drained", Check: (*Cluster).Drained},
	{Name: "producers done", Check: (*Cluster).producersDone},
	{Name: "readers caught up", Check: (*Cluster).readersCaughtUp},
	{Name: "consumer groups stable", Check: (*Cluster).groupsStable},
	{Name: "no transaction open", Check: (*Cluster).noTransactionOpen},
}

// Converged reports whether the cluster healed: every convergence condition
// holds (the control plane agrees, every partition is led with its whole
// replica set in sync and its high watermark at its log end, producers have
// no sends left hanging, and readers have caught up). When it has not, the
// reason is the first condition's that does not hold; when it has, what
// the conditions left unjudged, if anything.
func (c *Cluster) Converged() (bool, string) {
	var notJudged []string
	for _, cond := range convergence {
		ok, why := cond.Check(c)
		if !ok {
			return false, why
		}
		if why != "" {
			notJudged = append(notJudged, why)
		}
	}
	return true, strings.Join(notJudged, "; ")
}

// ControlPlaneConverged reports whether the control plane has healed: one
// active controller that every running controller follows, and every broker
// running, registered and unfenced in the committed metadata. When it has
// not, the reason says what is missing.
func (c *Cluster) ControlPlaneConverged() (bool, string) {
	w := c.World
	active, activeID := c.ActiveController()
	if active == nil {
		return false, "no active controller"
	}
	epoch := active.Raft().Epoch()
	for _, id := range c.Controllers {
		n := c.Controller(id)
		if n == nil || w.State(id) != sim.Running {
			return false, fmt.Sprintf("%s is %v", w.Name(id), w.State(id))
		}
		if r := n.Raft(); r.Epoch() != epoch || r.Leader() != activeID {
			return false, fmt.Sprintf("%s follows %d in epoch %d, not %s in epoch %d", w.Name(id), r.Leader(), r.Epoch(), w.Name(activeID), epoch)
		}
	}
	im := active.Image()
	for i, id := range c.Brokers {
		bid := int32(i + 1)
		b := c.Broker(bid)
		if b == nil || w.State(id) != sim.Running {
			return false, fmt.Sprintf("%s is %v", w.Name(id), w.State(id))
		}
		if b.State() != broker.StateRunning {
			return false, fmt.Sprintf("%s is %s", w.Name(id), b.State())
		}
		reg, ok := im.Brokers[bid]
		if !ok || reg.Fenced || reg.Epoch != b.BrokerEpoch() {
			return false, fmt.Sprintf("%s is not registered and unfenced at its epoch %d in the committed metadata", w.Name(id), b.BrokerEpoch())
		}
	}
	return true, ""
}

// partitionsLedInSync reports whether every partition in the committed
// metadata has a leader that runs and leads it, with its whole replica set
// in its ISR but for replicas stuck there (see StuckBy). The checks go
// partition by partition, so that the reason names the first partition
// that is not there yet.
func (c *Cluster) partitionsLedInSync() (bool, string) {
	im := c.Metadata()
	if im == nil {
		return false, "no committed metadata"
	}
	for _, p := range im.Partitions() {
		if ok, why := c.partitionLedInSync(p); !ok {
			return false, why
		}
	}
	return true, ""
}

// partitionLedInSync is partitionsLedInSync for one partition.
func (c *Cluster) partitionLedInSync(p *metadata.Partition) (bool, string) {
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
	return true, ""
}

// Drained reports whether every partition's leader has its high watermark
// at its log end: nothing written is still waiting to be committed, so with
// the producers done the high watermark cannot move. A high watermark behind
// the log end is a follower still copying a backlog (one batch per round
// trip with replica.fetch.max.bytes small, an fsync per batch with
// log.flush.interval.messages=1), and an acks=all probe written now would
// wait behind all of it. Final reads read to the high watermark; taken
// while it still moves, they end below records that readers polling on read
// a moment later (and the checker would call those records lost).
func (c *Cluster) Drained() (bool, string) {
	im := c.Metadata()
	if im == nil {
		return false, "no committed metadata"
	}
	for _, p := range im.Partitions() {
		if ok, why := c.partitionDrained(p); !ok {
			return false, why
		}
	}
	return true, ""
}

// partitionDrained is Drained for one partition.
func (c *Cluster) partitionDrained(p *metadata.Partition) (bool, string) {
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
	return true, ""
}

// producersDone reports whether every producer runs with no record it
// could not write.
func (c *Cluster) producersDone() (bool, string) {
	w := c.World
	for _, id := range c.Producers {
		p := c.Producer(id)
		if p == nil || w.State(id) != sim.Running {
			return false, fmt.Sprintf("%s is %v", w.Name(id), w.State(id))
		}
		if n := p.Unresolved(); n > 0 {
			return false, fmt.Sprintf("%s still has %d records it could not write", w.Name(id), n)
		}
	}
	return true, ""
}

// ProducersHeldFor is how long a running producer may still hold records
// as Kafka's producer would (producer.Client.OutOfOrderHeldFor): the runner
// waits that long past its grace before it calls a producer stuck.
func (c *Cluster) ProducersHeldFor() time.Duration {
	var left time.Duration
	for _, id := range c.Producers {
		if p := c.Producer(id); p != nil && c.World.State(id) == sim.Running {
			left = max(left, p.OutOfOrderHeldFor())
		}
	}
	// A stream processor's producer half holds its outputs the same way,
	// and its commit (a flush) waits for them.
	for _, id := range c.Readers {
		if n, ok := c.World.Node(id).(*processor.Node); ok && c.World.State(id) == sim.Running {
			if p := n.Producer(); p != nil {
				left = max(left, p.OutOfOrderHeldFor())
			}
		}
	}
	return left
}

// readersCaughtUp reports whether every reader runs and has read every
// partition it reads up to its leader's high watermark. The final reader
// (Config.FinalReader) is not waited for: it starts only once the cluster
// has converged.
func (c *Cluster) readersCaughtUp() (bool, string) {
	w := c.World
	im := c.Metadata()
	if im == nil {
		return false, "no committed metadata"
	}
	type end struct {
		tp    metadata.TopicPartition
		hw    int64
		lso   int64 // the last stable offset: a read_committed reader's end
		empty bool  // nothing below the high watermark to read
	}
	var ends []end
	for _, p := range im.Partitions() {
		v := c.LeaderView(p)
		if v == nil {
			return false, fmt.Sprintf("broker-%d does not lead %s yet", p.Leader, p.TopicPartition)
		}
		ends = append(ends, end{tp: p.TopicPartition, hw: v.HighWatermark(), lso: v.Log().LastStableOffset(v.HighWatermark()), empty: v.HighWatermark() <= v.Log().LogStartOffset()})
	}
	var hanging []godview.Fact
	for _, id := range c.Readers {
		if id == c.FinalReader {
			continue
		}
		if c.readerGroup(id) != "" {
			continue // a group member: consumer groups stable says
		}
		r := c.Reader(id)
		if r == nil || w.State(id) != sim.Running {
			return false, fmt.Sprintf("%s is %v", w.Name(id), w.State(id))
		}
		for _, e := range ends {
			tp := e.tp
			if !r.Reads(tp.Topic) || e.empty {
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
			if pos := r.Position(tp.Topic, tp.Partition); pos < e.hw {
				// A read_committed fetch returns nothing at or past the
				// last stable offset (FetchIsolation.TXN_COMMITTED): a
				// reader can be past it when the log it read was lost and
				// a transaction left open in the new one holds the LSO
				// below where it stood.
				if r.ReadCommitted() && pos >= e.lso {
					if hanging == nil {
						hanging = c.hangingTransactions()
					}
					if slices.ContainsFunc(hanging, func(h godview.Fact) bool { return h.Partition == tp.String() }) {
						// Held by a hanging transaction (KIP-664): only
						// an operator's kafka-transactions.sh abort moves
						// this LSO, so the reader has read what it can.
						// The checker judges the hanging transaction.
						continue
					}
					// A read_committed reader held by an open transaction
					// (no transaction open says which).
					return false, fmt.Sprintf("%s has not caught up on %s: at %d, held by an open transaction at the last stable offset %d, high watermark %d", w.Name(id), tp, pos, e.lso, e.hw)
				}
				return false, fmt.Sprintf("%s has not caught up on %s: at %d, high watermark %d", w.Name(id), tp, pos, e.hw)
			}
		}
	}
	return true, ""
}
