package audit

import (
	"fmt"
	"slices"

	"kafkasim/model/metadata"
	"kafkasim/model/partlog"
)

// Loss causes, as recorded in Loss.Cause.
const (
	CauseUncleanElection = "unclean-election"
	CausePowerLoss       = "power-loss"
	CauseDiskWipe        = "disk-wipe"
	CauseDiskCorruption  = "disk-corruption"
)

// A loss is blamed on its root cause. An unclean election (or KIP-966's
// election of the last known leader, which Kafka marks the same way) is the
// cause when it chose a leader lacking committed data while an in-sync copy
// of that data survived: another replica held every committed batch the
// leader lacked (as an in-sync replica does), or may have held them, being
// down or not yet started (killed with its page cache kept, or flushed
// before it lost power). When no replica held them any more because a power
// loss (or a disk fault) had taken every in-sync copy, the election only
// exposed the loss: whatever it chose, the data was gone. The power loss is
// then the cause, and the election what exposed it (Loss.ExposedBy). A
// replica that fell out of sync earlier may still hold the oldest of the
// lost batches, but it was no longer a copy Kafka counts on, and no clean
// election would have chosen it.

// uncleanElection is one unclean election, as the audit saw it.
type uncleanElection struct {
	epoch int32
	// from is where its leader's log stops agreeing with what was
	// committed (it may have lost everything committed from there on).
	from   int64
	leader int32
	// epochs and leo are the leader's epoch cache and log end when it was
	// elected: where a deposed leader's log stops agreeing with it
	// (divergence) is where that leader's writes start to be lost.
	epochs []partlog.EpochEntry
	leo    int64
	// lacked and last are the first committed batch the leader lacked
	// and the last committed one (lacks: it lacked one).
	lacked, last batchKey
	lacks        bool
	// held: another replica held them (heldBy) when the election
	// happened, or when it opened its log afterwards.
	held bool
	// pending are the other replicas that had not opened their log when
	// it happened (down, or still starting): whether they hold the batches
	// is known when they do.
	pending []int32
	// rootCause is what took the batches from the replicas that had them:
	// "power-loss", "disk-wipe" or "disk-corruption"; "" if nothing did.
	rootCause string
	// loss indexes the loss recorded at the election in the audit's
	// facts (-1: none).
	loss int
}

// onlyExposes reports whether the election lost nothing another replica
// kept: no other replica held the batches its leader lacked, and rootCause
// had taken them.
func (e *uncleanElection) onlyExposes() bool {
	return e.lacks && !e.held && len(e.pending) == 0 && e.rootCause != ""
}

// uncleanElected records the unclean election of leader in leaderEpoch,
// whose log stops agreeing with what was committed at from; lost indexes
// the first committed batch it lacks (-1: none).
func (a *Audit) uncleanElected(tp metadata.TopicPartition, p *partitionAudit, leader, leaderEpoch int32, from int64, lost int, log *partlog.Log) uncleanElection {
	e := uncleanElection{epoch: leaderEpoch, from: from, leader: leader, loss: -1,
		epochs: slices.Clone(log.Epochs().Entries()), leo: log.LEO()}
	if lost < 0 {
		return e
	}
	e.lacked, e.last, e.lacks = *p.committed.At(lost), *p.committed.Last(), true
	e.held = a.replicas == nil
	for _, b := range p.replicaIDs() {
		if b == leader || e.held {
			continue
		}
		l := a.replicas(b, tp)
		if l == nil {
			e.pending = append(e.pending, b)
			continue
		}
		e.held = e.heldBy(l)
	}
	if p.tookFromSomeone(e.lacked.base) {
		// A recovery took them from a replica that may have held them. One
		// that came back before they were committed (as the elected leader
		// may have, out of sync since) took nothing of them.
		e.rootCause = p.recoveryLost(e.lacked.base, leader)
	}
	return e
}

// divergence is where log, a replica deposed by the election (it still
// follows or leads an earlier epoch), stops agreeing with the elected
// leader's log: from, or below it where log took writes of an epoch the
// leader's log never had. Kafka's follower truncates there when it learns
// the new epoch (AbstractFetcherThread's divergence check on the leader's
// OffsetsForLeaderEpoch answer, KIP-101/KIP-279): a deposed leader's log
// whose epoch started below the unclean leader's log end loses its writes
// from that start, though the unclean leader's log reaches past them with
// an older epoch's (fuzz seed 252014). nil log: from.
func (e *uncleanElection) divergence(log *partlog.Log) int64 {
	if log == nil || e.epochs == nil {
		return e.from
	}
	return min(e.from, epochsAgreeUpTo(e.epochs, e.leo, log.Epochs().Entries(), log.LEO()))
}

// epochsAgreeUpTo is the offset up to which two logs, given by their epoch
// caches and log ends, hold the same leader epoch at every offset: by the
// log matching property (one leader per epoch) they hold the same batches
// there. Below where either cache starts (retention) they are taken to
// agree.
func epochsAgreeUpTo(a []partlog.EpochEntry, aEnd int64, b []partlog.EpochEntry, bEnd int64) int64 {
	end := min(aEnd, bEnd)
	if len(a) == 0 || len(b) == 0 {
		return end
	}
	epochAt := func(es []partlog.EpochEntry, off int64) int32 {
		epoch := int32(-1)
		for _, e := range es {
			if e.StartOffset > off {
				break
			}
			epoch = e.Epoch
		}
		return epoch
	}
	start := max(a[0].StartOffset, b[0].StartOffset)
	bounds := []int64{start}
	for _, es := range [][]partlog.EpochEntry{a, b} {
		for _, e := range es {
			if e.StartOffset > start && e.StartOffset < end {
				bounds = append(bounds, e.StartOffset)
			}
		}
	}
	slices.Sort(bounds)
	for _, off := range bounds {
		if epochAt(a, off) != epochAt(b, off) {
			return off
		}
	}
	return end
}

// heldBy reports whether log holds the committed batches the election's
// leader lacked: their first (unless retention deleted it there) and the
// last committed one; the log matching property gives the rest.
func (e *uncleanElection) heldBy(log *partlog.Log) bool {
	return e.keptFirst(log) && holds(log, e.last)
}

// keptFirst reports whether log holds the first committed batch the
// election's leader lacked (or retention deleted it there). It is asked of
// the log a replica recovered, which may hold the older epoch's batches
// where the new leader's now stand: compared with the log as the new
// leader rewrote it (agreesUpTo), it would seem to have come back without
// the very batches the election took from it.
func (e *uncleanElection) keptFirst(log *partlog.Log) bool {
	return e.lacked.last() < log.LogStartOffset() || holds(log, e.lacked)
}

// holds reports whether log holds committed batch k, or may: its cleaner
// may have removed it.
func holds(log *partlog.Log, k batchKey) bool {
	if b := log.BatchAt(k.base); b != nil && keyOf(b).same(k) {
		return true
	}
	return cleaned(log, k.base)
}

// replicaIDs are the brokers that ever opened a replica of the partition,
// in order.
func (p *partitionAudit) replicaIDs() []int32 {
	ids := make([]int32, 0, len(p.diskFaults))
	for b := range p.diskFaults { // kafkasim:orderless: sorted below
		ids = append(ids, b)
	}
	slices.Sort(ids)
	return ids
}

// openedAfterElection settles the unclean elections that waited for broker
// to open its log: if it holds the batch an election's leader lacked, the
// election lost data it kept; if it lacks it, and every other replica did
// too, the election only exposed a loss, whose cause the loss recorded at
// the election now names. lostData: its recovery lost data (a power loss,
// a wipe or corruption; diskCause says which of the latter, if one).
func (a *Audit) openedAfterElection(tp metadata.TopicPartition, p *partitionAudit, broker int32, log *partlog.Log, lostData bool, diskCause string) {
	for i := range p.uncleanElections {
		e := &p.uncleanElections[i]
		j := slices.Index(e.pending, broker)
		if j < 0 {
			continue
		}
		e.pending = slices.Delete(e.pending, j, j+1)
		if e.heldBy(log) {
			e.held = true
			continue
		}
		if e.rootCause == "" && lostData && !e.keptFirst(log) {
			e.rootCause = CausePowerLoss
			if diskCause != "" {
				e.rootCause = diskCause
			}
		}
		if !e.onlyExposes() || e.loss < 0 {
			continue
		}
		l := &a.facts[e.loss]
		if l.Cause != CauseUncleanElection {
			continue
		}
		l.Cause, l.ExposedBy = e.rootCause, CauseUncleanElection
		a.w.Note("data-loss", fmt.Sprintf("%s: committed offsets %d..%d, lost at the unclean election of leader epoch %d, were kept by no replica: broker %d came back without them too (%s, exposed by %s)",
			tp, l.From, l.To-1, e.epoch, broker, l.Cause, l.ExposedBy))
	}
}

// causeOf is the root cause of losing committed data from offset from on,
// found missing on broker; exposedBy names the election that made a loss
// with an earlier root cause final ("" when none did). "" for both: nothing
// Kafka permits explains the loss.
func (a *Audit) causeOf(tp metadata.TopicPartition, p *partitionAudit, from int64, broker int32) (string, string) {
	if e := p.uncleanLosing(from); e != nil {
		if e.onlyExposes() {
			return e.rootCause, CauseUncleanElection
		}
		// An unclean election chose a leader that may lack committed data,
		// whatever the disks kept.
		return CauseUncleanElection, ""
	}
	if cause := p.recoveryLost(from, broker); cause != "" {
		return cause, ""
	}
	if a.flipped(broker, tp) {
		return CauseDiskCorruption, ""
	}
	return "", ""
}

// recoveryLost is what took committed data from offset on from the replicas
// that held it, when their recovery did: "power-loss" (a replica came back
// from a power loss ending at or below offset, and has not rejoined the ISR
// since), or, when the replicas whose recovery took it lost it from their
// disk (broker, the replica that lacks the data, or, when broker never had
// it, every other replica that did), "disk-wipe" or "disk-corruption". ""
// when no recovery lost it.
func (p *partitionAudit) recoveryLost(offset int64, broker int32) string {
	if p.powerLossFrom < 0 || offset < p.powerLossFrom || !p.shortBelow(offset) {
		return ""
	}
	// The data left page cache before it reached a disk; whatever election
	// followed could only pick among what survived.
	if short, ok := p.shortSince[broker]; ok && short.end <= offset {
		if c := p.diskCause[broker]; c != "" {
			// The replica that lacks it lost data from its disk
			// (replaced, or corrupt): no flush policy keeps data through
			// that.
			return c
		}
		return CausePowerLoss
	}
	// The replica that lacks it took nothing of it in a recovery: it never
	// had it. What took it is what took it from the replicas whose
	// recovery did: their disks, when every one of them lost it there.
	cause := ""
	for _, b := range p.replicaIDs() {
		r, ok := p.shortSince[b]
		if !ok || r.end > offset || offset >= r.committedEnd {
			continue
		}
		c := p.diskCause[b]
		if c == "" {
			return CausePowerLoss
		}
		if cause == "" {
			cause = c
		}
	}
	if cause == "" {
		return CausePowerLoss
	}
	return cause
}

// uncleanLosing is the latest unclean election that may have lost committed
// data at offset (its leader's log stopped agreeing at or below it), or nil.
func (p *partitionAudit) uncleanLosing(offset int64) *uncleanElection {
	for i := len(p.uncleanElections) - 1; i >= 0; i-- {
		if p.uncleanElections[i].from <= offset {
			return &p.uncleanElections[i]
		}
	}
	return nil
}
