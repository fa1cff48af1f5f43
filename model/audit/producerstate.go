package audit

import (
	"fmt"
	"slices"

	"kafkasim/godview"
	"kafkasim/model/metadata"
	"kafkasim/model/record"
)

// Producer-state excuses: committed idempotent batches a leader's producer
// state forgot (answered OUT_OF_ORDER_SEQUENCE_NUMBER, or took a retry as
// new), and batches it appended from a producer it held nothing of
// (KIP-360), each recorded as a godview fact once the batch is committed.

// batchRetry identifies a batch a producer sent again (one a leader answered
// OUT_OF_ORDER_SEQUENCE_NUMBER, or took from a producer it held no state
// for): its producer id, epoch, first sequence and length, and the broker.
type batchRetry struct {
	pid       int64
	seq       int32
	lastDelta int32
	pepoch    int16
	broker    int32
}

func retryOf(b *record.Batch, broker int32) batchRetry {
	return batchRetry{pid: b.ProducerID, seq: b.BaseSequence, lastDelta: b.LastOffsetDelta, pepoch: b.ProducerEpoch, broker: broker}
}

// waitingMax bounds what an audit partition keeps waiting for a commit.
const waitingMax = 256

// unknownAppend is a batch a leader appended from a producer it held no
// state for: where, and whose.
type unknownAppend struct {
	base, last int64
	pid        int64
	seq        int32
	pepoch     int16
	broker     int32
}

func (u unknownAppend) matches(k batchKey) bool {
	return k.base == u.base && k.last() == u.last && k.pid == u.pid && k.pepoch == u.pepoch && k.seq == u.seq
}

func (r batchRetry) matches(k batchKey) bool {
	return k.pid == r.pid && k.pepoch == r.pepoch && k.seq == r.seq && k.lastDelta == r.lastDelta
}

// OutOfOrderSequence is told that a leader answered OUT_OF_ORDER_SEQUENCE_NUMBER
// to batch b: if b is a retry of a committed batch (same producer id, epoch
// and sequences), the leader's producer state forgot it, and that is
// recorded (godview.ForgottenBatch). Kafka's does that after a restart: the
// producer-state snapshot keeps each producer's last batch only, and the log
// it replays after the snapshot may have lost the batch to the cleaner. The
// producer then bumps its epoch and sends the batch again under new
// sequences (KIP-360): it is written twice.
func (a *Audit) OutOfOrderSequence(broker int32, tp metadata.TopicPartition, b *record.Batch) {
	if b.ProducerID < 0 {
		return
	}
	p := a.part(tp)
	r := retryOf(b, broker)
	for i := p.committed.Len() - 1; i >= 0; i-- {
		if k := *p.committed.At(i); r.matches(k) {
			a.forgetCommitted(tp, r, k)
			return
		}
	}
	// Not committed yet: the leader's log may hold it all the same, and a
	// later high watermark commit it (outOfOrderCommitted).
	if len(p.outOfOrder) == waitingMax {
		p.outOfOrder = p.outOfOrder[1:]
	}
	p.outOfOrder = append(p.outOfOrder, r)
}

// committedNow notes that batch k was just committed, for the records that
// wait on a commit.
func (a *Audit) committedNow(tp metadata.TopicPartition, p *partitionAudit, k batchKey) {
	if len(p.outOfOrder) > 0 {
		a.outOfOrderCommitted(tp, p, k)
	}
	if len(p.unknownAppends) > 0 {
		a.unknownAppendCommitted(tp, p, k)
	}
}

// unknownAppendCommitted records batch k, just committed, if a leader
// appended it from a producer it held no state for
// (godview.UnknownProducerAppend). Kafka 4.2's broker
// (ProducerAppendInfo.checkSequence) takes such a batch at any sequence
// (KIP-360): when an earlier batch of the same producer, in flight beside
// it, was refused without being appended (NOT_ENOUGH_REPLICAS,
// NOT_LEADER_OR_FOLLOWER), that one can be written only after it, under a
// new producer epoch (KAFKA-15591).
func (a *Audit) unknownAppendCommitted(tp metadata.TopicPartition, p *partitionAudit, k batchKey) {
	for i, u := range p.unknownAppends {
		if !u.matches(k) {
			continue
		}
		p.unknownAppends = slices.Delete(p.unknownAppends, i, i+1)
		r := godview.Fact{Kind: godview.UnknownProducerAppend, At: int64(a.w.Now()), Partition: tp.String(), From: k.base, To: k.last() + 1,
			Producer: k.pid}
		a.facts = append(a.facts, r)
		a.w.Note("producer-state", fmt.Sprintf("%s: committed offsets %d..%d (producer %d, epoch %d, sequence %d), which broker %d appended from a producer its producer state held nothing of",
			tp, r.From, r.To-1, k.pid, k.pepoch, k.seq, u.broker))
		return
	}
}

// outOfOrderCommitted is told that batch k was just committed: if a leader
// had answered OUT_OF_ORDER_SEQUENCE_NUMBER to a retry of it, the leader's
// producer state had forgotten it, and that is recorded.
func (a *Audit) outOfOrderCommitted(tp metadata.TopicPartition, p *partitionAudit, k batchKey) {
	for i, r := range p.outOfOrder {
		if r.matches(k) {
			p.outOfOrder = slices.Delete(p.outOfOrder, i, i+1)
			a.forgetCommitted(tp, r, k)
			return
		}
	}
}

// forgetCommitted records committed batch k as one a leader's producer state
// forgot (it answered OUT_OF_ORDER_SEQUENCE_NUMBER to retry r of it).
func (a *Audit) forgetCommitted(tp metadata.TopicPartition, r batchRetry, k batchKey) {
	f := godview.Fact{Kind: godview.ForgottenBatch, At: int64(a.w.Now()), Partition: tp.String(), From: k.base, To: k.last() + 1,
		Producer: r.pid}
	if last := a.lastOf(godview.ForgottenBatch); last == nil || last.Partition != f.Partition || last.From != f.From {
		a.facts = append(a.facts, f)
		a.w.Note("producer-state", fmt.Sprintf("%s: broker %d answered OUT_OF_ORDER_SEQUENCE_NUMBER to a retry of committed offsets %d..%d (producer %d, sequence %d): its producer state no longer held them",
			tp, r.broker, f.From, f.To-1, r.pid, r.seq))
	}
}

// UnknownProducer is told that a leader whose producer state holds nothing of
// batch b's producer is about to append b at offset base; its log starts at
// logStart and its producer state was last rebuilt from rebuiltFrom
// (partlog's ProducersRebuiltFrom). A batch at a sequence other than 0 is
// recorded when it commits (unknownAppendCommitted). If b is a retry of a
// committed batch (same producer id, epoch and sequences) that lies below
// both, retention deleted the batch and a reload (or a log copied from past
// it) forgot the producer, as Kafka's can, and that is recorded
// (godview.ForgottenProducer). Anything else (a batch the log still holds,
// or one the last rebuild replayed) is a producer state lost some other way:
// not excused.
//
// Kafka's broker keeps a producer whose batches retention deleted in memory
// (KIP-360) and in the snapshots it takes, but loses it when it reloads
// producer state from the log without a snapshot that still has it — after
// an unclean shutdown, the snapshots at or below the log start, or past the
// segment being recovered, are deleted first (a clean restart's snapshot is
// past the active segment's base) — or when it copied the log from past the
// batch (a new follower). Then it takes a batch of a producer it does not
// know at any sequence (ProducerAppendInfo.checkSequence), and the retry is
// written twice.
func (a *Audit) UnknownProducer(broker int32, tp metadata.TopicPartition, b *record.Batch, base, logStart, rebuiltFrom int64) {
	if b.ProducerID < 0 {
		return
	}
	p := a.part(tp)
	if b.BaseSequence != 0 {
		// Recorded once this very batch commits (unknownAppendCommitted):
		// an append that fails, or is truncated away, excuses nothing.
		if len(p.unknownAppends) == waitingMax {
			p.unknownAppends = p.unknownAppends[1:]
		}
		p.unknownAppends = append(p.unknownAppends, unknownAppend{base: base, last: base + int64(b.LastOffsetDelta),
			pid: b.ProducerID, seq: b.BaseSequence, pepoch: b.ProducerEpoch, broker: broker})
	}
	// Whatever the leader held of the producer is gone: a run of retries
	// it took as new ends here (one may begin again below).
	p.endForgottenRun(broker, b.ProducerID)
	k, ok := p.deletedRetry(b, broker, logStart, rebuiltFrom)
	if !ok {
		return
	}
	a.forgetProducer(tp, broker, b, k, logStart, rebuiltFrom, "no longer knew the producer")
	p.startForgottenRun(broker, b)
}

// KnownProducer is told that a leader whose producer state knows batch b's
// producer is about to append b as new (in sequence). If the leader's state
// holds the producer only from a retry of a batch retention deleted that it
// took as new (UnknownProducer recorded it), and b continues it in sequence
// and is itself a retry of a committed batch below both the leader's log
// start and the offset its producer state was rebuilt from, b is written
// twice as well, and recorded (godview.ForgottenProducer): Kafka's
// ProducerAppendInfo.checkSequence takes b because its first sequence
// follows the last one the producer's entry holds (inSequence), the entry
// the retry taken as new began (fuzz seed 222235: a producer whose first 37
// records had waited 36 s for acknowledgements retried them all to a new
// leader that had replicated the log only from past them). Any other batch
// ends the run.
func (a *Audit) KnownProducer(broker int32, tp metadata.TopicPartition, b *record.Batch, logStart, rebuiltFrom int64) {
	p := a.part(tp)
	if len(p.forgottenRuns) == 0 || b.ProducerID < 0 {
		return
	}
	i := p.forgottenRunOf(broker, b.ProducerID)
	if i < 0 {
		return
	}
	run := p.forgottenRuns[i]
	if run.pepoch != b.ProducerEpoch || run.next != b.BaseSequence {
		p.endForgottenRun(broker, b.ProducerID)
		return
	}
	k, ok := p.deletedRetry(b, broker, logStart, rebuiltFrom)
	if !ok {
		p.endForgottenRun(broker, b.ProducerID)
		return
	}
	a.forgetProducer(tp, broker, b, k, logStart, rebuiltFrom, "held the producer only from a retry it had taken as new, which this one follows in sequence")
	p.forgottenRuns[i].next = b.BaseSequence + b.LastOffsetDelta + 1
}

// forgottenRun is a producer whose retry of a batch retention deleted a
// leader took as new: the leader, the producer's id and epoch, and the
// sequence the leader's producer state expects next.
type forgottenRun struct {
	broker int32
	pid    int64
	pepoch int16
	next   int32
}

func (p *partitionAudit) forgottenRunOf(broker int32, pid int64) int {
	for i, r := range p.forgottenRuns {
		if r.broker == broker && r.pid == pid {
			return i
		}
	}
	return -1
}

func (p *partitionAudit) endForgottenRun(broker int32, pid int64) {
	if i := p.forgottenRunOf(broker, pid); i >= 0 {
		p.forgottenRuns = slices.Delete(p.forgottenRuns, i, i+1)
	}
}

func (p *partitionAudit) startForgottenRun(broker int32, b *record.Batch) {
	if len(p.forgottenRuns) == waitingMax {
		p.forgottenRuns = p.forgottenRuns[1:]
	}
	p.forgottenRuns = append(p.forgottenRuns, forgottenRun{broker: broker, pid: b.ProducerID, pepoch: b.ProducerEpoch,
		next: b.BaseSequence + b.LastOffsetDelta + 1})
}

// deletedRetry finds the committed batch b retries (same producer id, epoch
// and sequences), if it lies below both logStart and rebuiltFrom: retention
// deleted it, and the last rebuild of the producer state did not replay it.
func (p *partitionAudit) deletedRetry(b *record.Batch, broker int32, logStart, rebuiltFrom int64) (batchKey, bool) {
	r := retryOf(b, broker)
	for i := p.committed.Len() - 1; i >= 0; i-- {
		k := *p.committed.At(i)
		if !r.matches(k) {
			continue
		}
		if k.last() >= logStart || k.last() >= rebuiltFrom {
			return batchKey{}, false // the log holds it, or the last rebuild replayed it
		}
		return k, true
	}
	return batchKey{}, false
}

// forgetProducer records committed batch k, whose retry b a leader took as
// new (godview.ForgottenProducer).
func (a *Audit) forgetProducer(tp metadata.TopicPartition, broker int32, b *record.Batch, k batchKey, logStart, rebuiltFrom int64, why string) {
	f := godview.Fact{Kind: godview.ForgottenProducer, At: int64(a.w.Now()), Partition: tp.String(), From: k.base, To: k.last() + 1,
		Producer: b.ProducerID}
	if last := a.lastOf(godview.ForgottenProducer); last == nil || last.Partition != f.Partition || last.From != f.From {
		a.facts = append(a.facts, f)
		a.w.Note("producer-state", fmt.Sprintf("%s: broker %d took a retry of committed offsets %d..%d (producer %d, sequence %d) as new: retention deleted them below its log start %d, and its producer state, rebuilt from offset %d, %s",
			tp, broker, f.From, f.To-1, b.ProducerID, b.BaseSequence, logStart, rebuiltFrom, why))
	}
}

// MistakenDuplicate is told that a leader answered batch b as a duplicate of
// the batch it holds at [base, last] — same producer id, epoch and
// sequences — although the two differ: nothing was appended, and b's
// producer was acknowledged with the other batch's offsets. Kafka's
// ProducerStateEntry.findDuplicateBatch compares sequences only; a producer
// id and epoch are unique unless the transaction coordinator hands them out
// again, which it does when __transaction_state lost the records of later
// epochs and it reloaded the transactional id behind them. The checker
// excuses the write's loss and its offset only then
// (godview.MistakenDuplicate).
func (a *Audit) MistakenDuplicate(broker int32, tp metadata.TopicPartition, b *record.Batch, base, last int64) {
	f := godview.Fact{Kind: godview.MistakenDuplicate, At: int64(a.w.Now()), Partition: tp.String(), From: base, To: last + 1,
		Producer: b.ProducerID}
	if prev := a.lastOf(godview.MistakenDuplicate); prev != nil && prev.Partition == f.Partition && prev.From == f.From && prev.Producer == f.Producer {
		return // the same producer's retries of the batch
	}
	a.facts = append(a.facts, f)
	a.w.Note("producer-state", fmt.Sprintf("%s: broker %d answered a batch of producer %d (epoch %d, sequences %d..%d) as a duplicate of offsets %d..%d, a different batch with the same producer id, epoch and sequences: nothing appended",
		tp, broker, b.ProducerID, b.ProducerEpoch, b.BaseSequence, b.LastSequence(), base, last))
}
