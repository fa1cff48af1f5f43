package audit

import (
	"fmt"
	"math"

	"kafkasim/godview"
	"kafkasim/model/metadata"
	"kafkasim/model/partlog"
	"kafkasim/model/record"
)

// Losses Kafka permits: committed data a new leader lacks, or a deposed
// leader exposed, recorded as godview.Loss facts with their cause
// (cause.go), and as a violation of the invariant when nothing permits it;
// what an unclean election resurrected.

// Loss is committed data lost in a way Kafka's configuration permits: a fact
// of kind godview.Loss, its Cause the root cause (causeOf).
type Loss = godview.Fact

// Losses are the permitted losses of committed data, in order.
func (a *Audit) Losses() []Loss {
	var out []Loss
	for _, f := range a.facts {
		if f.Kind == godview.Loss {
			out = append(out, f)
		}
	}
	return out
}

// lose drops committed batches from index i on; if Kafka permits the loss it
// is recorded as one, otherwise as a violation of invariant.
func (a *Audit) lose(tp metadata.TopicPartition, p *partitionAudit, i int, broker int32, leaderEnd int64, invariant, how string) {
	from, to := p.committed.At(i).base, p.committed.Last().last()+1
	records := 0
	for j := i; j < p.committed.Len(); j++ {
		k := p.committed.At(j)
		records += int(k.last() - k.base + 1)
	}
	cause, exposedBy := a.causeOf(tp, p, from, broker)
	if cause == "" {
		a.report(invariant, a.brokerNode(broker), "%s: committed offsets %d..%d %s", tp, from, to-1, how)
	} else {
		a.facts = append(a.facts, Loss{Kind: godview.Loss, At: int64(a.w.Now()), Partition: tp.String(), From: from, To: to, Records: records,
			Producer: godview.NoProducer, Cause: cause, ExposedBy: exposedBy, LeaderEnd: leaderEnd})
		for j := i; j < p.committed.Len(); j++ {
			if k := p.committed.At(j); k.marker {
				a.lostMarker(tp, k.pid, k.base, len(a.facts)-1)
			}
		}
		why := cause
		if exposedBy != "" {
			why += ", exposed by " + exposedBy
		}
		a.w.Note("data-loss", fmt.Sprintf("%s: committed offsets %d..%d lost (%s): %s", tp, from, to-1, why, how))
	}
	p.committed.Truncate(i)
	p.committedCut()
	if p.ackedUpTo >= from {
		p.ackedUpTo = from - 1
	}
}

// deposedExposed records, as lost with the unclean election that deposed
// it, what a leader of leaderEpoch exposed below its high watermark (moving
// from from to hw) past where the unclean leader's log stops: readers saw
// those records and producers had them acknowledged, and they go when the
// deposed leader learns the new epoch. Adjacent ranges join one loss.
func (a *Audit) deposedExposed(tp metadata.TopicPartition, p *partitionAudit, leaderEpoch int32, from, hw int64, log *partlog.Log) {
	for _, e := range p.uncleanElections {
		if e.epoch > leaderEpoch {
			from = max(from, e.divergence(log))
		}
	}
	if from >= hw {
		return
	}
	records := 0
	var markers []batchKey
	log.Scan(from, hw, func(b *record.Batch) bool {
		if k := keyOf(b); k.marker && b.BaseOffset >= from {
			markers = append(markers, k)
		}
		if !b.Thinned() {
			records += int(min(hw, b.NextOffset()) - max(from, b.BaseOffset))
			return true
		}
		for _, r := range b.Records() {
			if off := b.BaseOffset + int64(r.OffsetDelta); off >= from && off < hw {
				records++
			}
		}
		return true
	})
	if records == 0 {
		return
	}
	if l := a.lastOf(godview.Loss); l != nil && l.Partition == tp.String() && l.Cause == CauseUncleanElection && l.To == from {
		l.To, l.Records = hw, l.Records+records
		for _, k := range markers {
			a.lostMarker(tp, k.pid, k.base, a.lastIndexOf(godview.Loss))
		}
		return
	}
	a.facts = append(a.facts, Loss{Kind: godview.Loss, At: int64(a.w.Now()), Partition: tp.String(), From: from, To: hw, Records: records,
		Producer: godview.NoProducer, Cause: CauseUncleanElection})
	for _, k := range markers {
		a.lostMarker(tp, k.pid, k.base, len(a.facts)-1)
	}
	a.w.Note("data-loss", fmt.Sprintf("%s: offsets %d..%d exposed by the deposed leader of epoch %d lost (unclean-election)", tp, from, hw-1, leaderEpoch))
}

// PartitionLeader checks a new leader's log against what was committed. A
// clean leader (from the ISR or the ELR) holds every committed batch, unless
// a power loss took them from page cache; an unclean one may not, which Kafka
// permits. What the new leader lacks is lost the moment it leads: every
// replica will truncate to its log.
func (a *Audit) PartitionLeader(broker int32, tp metadata.TopicPartition, leaderEpoch int32, log *partlog.Log, unclean bool) {
	p := a.part(tp)
	if leaderEpoch < p.leaderEpoch {
		// A broker catching up on metadata replays an election that a
		// later one replaced: it leads a stale epoch for a moment, and no
		// replica of the current epoch truncates to its log.
		return
	}
	p.leaderEpoch = leaderEpoch
	lost := p.firstLost(broker, log, a.headerFlipped(broker, log))
	if unclean {
		// An unclean leader's log is authoritative from where it stops
		// agreeing with what was committed: its end, or below it where it
		// holds a divergent tail of an older epoch (writes it took as a
		// deposed leader, never committed) in place of committed batches.
		from := log.LEO()
		if lost >= 0 {
			from = min(from, p.committed.At(lost).base)
		}
		p.uncleanElections = append(p.uncleanElections, a.uncleanElected(tp, p, broker, leaderEpoch, from, lost, log))
		// Its entries past what was committed (from the first committed
		// batch it lacks, if any) were never committed: they become the log.
		start := p.committedEnd()
		if lost >= 0 {
			start = p.committed.At(lost).base
		}
		// A producer that had given such a write up (it retried
		// elsewhere, was told OUT_OF_ORDER_SEQUENCE_NUMBER by a leader
		// that lacked it, bumped its epoch and sent it again) finds it
		// written twice: idempotence cannot match sequences across
		// producer epochs (fuzz seed 4008635).
		if start < log.LEO() {
			a.facts = append(a.facts, godview.Fact{Kind: godview.Resurrected, At: int64(a.w.Now()), Partition: tp.String(), From: start, To: log.LEO(),
				Producer: godview.NoProducer})
		}
		// What was acknowledged past where its log stops agreeing is
		// gone: followers that truncate to it owe those writes nothing.
		p.ackedUpTo = min(p.ackedUpTo, from-1)
	}
	if lost >= 0 {
		n := len(a.facts)
		a.lose(tp, p, lost, broker, log.LEO(), CommittedDataKept,
			fmt.Sprintf("missing from the log of broker %d, elected leader in epoch %d", broker, leaderEpoch))
		if unclean && len(a.facts) > n {
			p.uncleanElections[len(p.uncleanElections)-1].loss = n
		}
	}
}

// firstLost is the first committed batch (its index) that broker's log,
// newly leading, lacks; -1 if none. Those that end below its log start
// were deleted by retention, as Kafka permits: not lost. One its cleaner
// removed is not lost either (a different batch in its place still is),
// unless the log holds a header-flipped batch (flipped), which may have
// moved it.
func (p *partitionAudit) firstLost(broker int32, log *partlog.Log, flipped bool) int {
	if i := p.firstDisagreement(broker, log, !log.Compacted() || flipped); i < p.committed.Len() {
		return i
	}
	return -1
}

// deposedBy reports whether an unclean election of a later epoch than
// leaderEpoch happened.
func (p *partitionAudit) deposedBy(leaderEpoch int32) bool {
	return p.deposedLoses(leaderEpoch, math.MaxInt64, nil)
}

// deposedLoses reports whether an unclean election of a later epoch than
// leaderEpoch lost offset: a write a leader of leaderEpoch acknowledged there
// went with that election. log is that leader's (nil if unknown): the
// write is lost from where it diverges from the elected leader's.
func (p *partitionAudit) deposedLoses(leaderEpoch int32, offset int64, log *partlog.Log) bool {
	for i := range p.uncleanElections {
		if e := &p.uncleanElections[i]; e.epoch > leaderEpoch && e.divergence(log) <= offset {
			return true
		}
	}
	return false
}
