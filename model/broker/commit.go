package broker

import (
	"slices"

	"kafkasim/model/proto"
)

// Writes waiting for the high watermark (Kafka's DelayedProduce purgatory,
// and the coordinator runtime's deferred events): a produce's with
// acks=all, a coordinator's append. Both went through appendAsLeader; each
// partition lists those waiting on it, oldest first, and re-checks them
// whenever its high watermark, its ISR or its leadership changes.

// commitWaiter is a write waiting on partitions' high watermarks.
type commitWaiter interface {
	// waitsOn reports whether it still waits for p.
	waitsOn(p *partition) bool
	// recheck decides what can be decided now (p's high watermark, ISR or
	// leadership changed). It never comes back to a waiting list.
	recheck()
	// unlisted: a partition's waiting list let it go.
	unlisted()
}

// writeOutcome is where a write to p stands that waits for the high
// watermark to reach required: still waiting (done false), committed
// (NONE), or failed: this replica no longer leads, or, for acks=all, the
// ISR the high watermark passed it with is smaller than min ISR (Kafka's
// Partition.checkEnoughReplicasReachOffset).
func (p *partition) writeOutcome(required int64, acks int16) (done bool, err proto.ErrorCode) {
	switch {
	case p == nil || !p.isLeader:
		return true, proto.NotLeaderOrFollower
	case p.hw < required:
		return false, proto.None
	case acks != proto.AcksAll:
		return true, proto.None
	case len(p.maximalISR()) < p.effectiveMinISR():
		return true, proto.NotEnoughReplicasAfterAppend
	}
	if a := p.rm.audit(); a != nil {
		a.AckedAll(p.rm.id(), p.tp, p.leaderEpoch, required-1, p.isr, p.effectiveMinISR())
	}
	return true, proto.None
}

// completeWaiting re-checks, oldest first, every write waiting on p (the
// high watermark moved, the ISR changed, or this replica no longer leads),
// and lets go of those that no longer wait.
func (rm *replicaManager) completeWaiting(p *partition) {
	if len(p.waiting) == 0 {
		return
	}
	for _, w := range p.waiting {
		if w.waitsOn(p) {
			w.recheck()
		}
	}
	rm.dropFinished(p)
}

// dropFinished removes from p's list the writes that no longer wait on it.
func (rm *replicaManager) dropFinished(p *partition) {
	// The list keeps its room for the next writes (DeleteFunc clears what
	// it drops: nothing finished stays referred to).
	p.waiting = slices.DeleteFunc(p.waiting, func(w commitWaiter) bool {
		if w.waitsOn(p) {
			return false
		}
		w.unlisted()
		return true
	})
}
