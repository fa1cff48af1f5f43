package cluster

import (
	"fmt"
	"slices"

	"kafkasim/godview"
	"kafkasim/model/broker"
	"kafkasim/model/metadata"
	"kafkasim/sim"
)

// Replicas stuck out of their ISR by undetected disk corruption, which
// Kafka cannot bring back without an operator (StuckBy), and what they hold
// back: the offsets above a high watermark that cannot advance. Convergence
// does not wait for them, and the god view's facts excuse what they hold.

// HasStuckReplica reports whether a replica of p is kept out of its ISR by a
// disk corruption (see StuckBy): with min.insync.replicas at the
// replication factor the high watermark then stays where it is, as in Kafka.
func (c *Cluster) HasStuckReplica(p *metadata.Partition) bool {
	for _, r := range p.Replicas {
		if !slices.Contains(p.ISR, r) && c.StuckBy(p, r) != "" {
			return true
		}
	}
	return false
}

// StuckBy says why a replica outside p's ISR can never rejoin it without an
// operator, or "". Every cause is undetected disk corruption (a bit flip in
// a batch header field the CRC does not cover), on its disk or the leader's:
//   - its log holds a leader epoch the controller never issued (above p's):
//     recovery takes it into the leader-epoch cache (Kafka's
//     LogSegment.recover assigns every epoch above the cache's latest), the
//     follower fetches with it as its last fetched epoch, and the leader,
//     which cannot find where that epoch ends, answers OFFSET_OUT_OF_RANGE;
//     the follower resumes at its own log end with the same epoch, for ever;
//   - its log ends inside one of the leader's batches (a flipped base
//     offset moved a batch boundary): every fetch returns that batch, which
//     starts below the follower's log end and cannot be appended (Kafka's
//     UnexpectedAppendOffsetException marks the partition failed);
//   - the leader's log holds such a flipped batch (the god view knows where
//     each flip landed): the follower cannot copy past it (the model stops
//     there; Kafka would copy the batch at its wrong offset, a gap).
//
// Kafka keeps such a replica out of the ISR until an operator steps in, so
// the run does not wait for it.
func (c *Cluster) StuckBy(p *metadata.Partition, r int32) string {
	b := c.Broker(r)
	if b == nil || c.World.State(c.BrokerNode(r)) != sim.Running {
		return ""
	}
	v := b.Partition(p.TopicPartition)
	if v == nil || v.IsLeader() || v.Log() == nil {
		return ""
	}
	lv := c.LeaderView(p)
	if lv != nil && lv.Log().HeaderFlipped(c.World.Disk(c.BrokerNode(p.Leader)).Flips()) {
		return fmt.Sprintf("the leader broker-%d holds a batch whose header a bit flip changed outside the CRC (an offset or an epoch): its followers cannot copy past it", p.Leader)
	}
	if c.World.Disk(c.BrokerNode(r)).Stats().Corruptions == 0 {
		return ""
	}
	if e := v.Log().LatestEpoch(); e > p.LeaderEpoch {
		return fmt.Sprintf("a bit flip gave its log leader epoch %d, above the %d the controller issued (OFFSET_OUT_OF_RANGE on every fetch, as in Kafka)", e, p.LeaderEpoch)
	}
	if lv != nil {
		end := v.Log().LEO()
		if batch := lv.Log().BatchAt(end); batch != nil && batch.BaseOffset < end {
			return fmt.Sprintf("a bit flip left its log ending at %d, inside the leader's batch %d..%d, which it cannot append (Kafka marks the partition failed)", end, batch.BaseOffset, batch.LastOffset())
		}
	}
	return ""
}

// LeaderView is p's partition on its leader, if that broker runs, leads it
// and has its log open; nil otherwise.
func (c *Cluster) LeaderView(p *metadata.Partition) *broker.PartitionView {
	b := c.Broker(p.Leader)
	if b == nil || c.World.State(c.BrokerNode(p.Leader)) != sim.Running {
		return nil
	}
	if v := b.Partition(p.TopicPartition); v != nil && v.IsLeader() && v.Log() != nil {
		return v
	}
	return nil
}

// heldBack lists, for partitions with a stuck replica, what their leader's
// log holds above its high watermark (godview.HeldBack): with the ISR kept
// below min.insync.replicas the high watermark cannot reach it, so no
// reader sees it, and the final reads end below it.
func (c *Cluster) heldBack() []godview.Fact {
	im := c.Metadata()
	if im == nil {
		return nil
	}
	var out []godview.Fact
	for _, p := range im.Partitions() {
		if !c.HasStuckReplica(p) {
			continue
		}
		if v := c.LeaderView(p); v != nil && v.HighWatermark() < v.Log().LEO() {
			out = append(out, godview.Fact{Kind: godview.HeldBack, Partition: p.TopicPartition.String(), From: v.HighWatermark(), To: v.Log().LEO(), Producer: godview.NoProducer})
		}
	}
	return out
}

// StuckReplicas lists the replicas kept out of their ISR by undetected disk
// corruption (see StuckBy): a cost Kafka has too, not a failure to heal.
func (c *Cluster) StuckReplicas() []string {
	im := c.Metadata()
	if im == nil {
		return nil
	}
	var out []string
	for _, p := range im.Partitions() {
		for _, r := range p.Replicas {
			if slices.Contains(p.ISR, r) {
				continue
			}
			if why := c.StuckBy(p, r); why != "" {
				out = append(out, fmt.Sprintf("%s: broker-%d stays out of the ISR: %s", p.TopicPartition, r, why))
			}
		}
	}
	return out
}
