package producer

import (
	"slices"

	"kafkasim/history"
	"kafkasim/model/record"
)

// The idempotent producer's sequence bookkeeping, after Kafka's
// TransactionManager (idempotent, not transactional) and TxnPartitionEntry:
// a partition's batches that hold a sequence and are not settled (in a
// request, or waiting to be retried) are its in-flight batches by sequence;
// unresolved sequences; epoch bumps per partition.

// hasSequenced reports whether a batch of the partition holds a sequence
// and is not settled (Kafka's TransactionManager.hasInflightBatches: its
// inflightBatchesBySequence is not empty).
func hasSequenced(st *partitionState) bool {
	for _, b := range st.queue {
		if b.baseSeq >= 0 {
			return true
		}
	}
	return false
}

// firstInFlightSequence is the lowest base sequence of the partition's
// batches holding one and not settled, or -1 (Kafka's TransactionManager.
// firstInFlightSequence).
func firstInFlightSequence(st *partitionState) int32 {
	first := int32(-1)
	for _, b := range st.queue {
		if b.baseSeq >= 0 && (first < 0 || b.baseSeq < first) {
			first = b.baseSeq
		}
	}
	return first
}

// stale reports whether the partition's sequences count under another
// producer id or epoch than the producer's (Kafka's TransactionManager.
// hasStaleProducerIdAndEpoch).
func (p *Client) stale(st *partitionState) bool {
	return st.pid != p.pid || st.epoch != p.epoch
}

// isNextSequence reports whether seq follows the partition's last
// acknowledged sequence (Kafka's TransactionManager.isNextSequence).
func isNextSequence(st *partitionState, seq int32) bool { return seq-st.lastAcked == 1 }

// requestEpochBump asks for an epoch bump that starts the partition's
// sequences again (Kafka's TransactionManager.
// requestIdempotentEpochBumpForPartition).
func (p *Client) requestEpochBump(st *partitionState) {
	if p.Transactional() {
		// No client-side bump with TV2: the transaction aborts, and its
		// EndTxn bumps the epoch.
		p.abortableError("OutOfOrderSequenceException: unresolved sequence")
		return
	}
	p.needBump = true
	if !st.rewrite {
		st.rewrite = true
		p.rewrites++
	}
}

// markSequenceUnresolved notes that a batch that had been retried expired:
// nobody knows whether its sequences were written (Kafka's
// TransactionManager.markSequenceUnresolved). The partition drains no new
// batch until that is resolved (maybeResolveSequences).
func (p *Client) markSequenceUnresolved(st *partitionState, b *pbatch) {
	next := b.baseSeq + int32(len(b.records))
	if !st.unresolved {
		st.unresolved, st.unresolvedNext = true, next
		p.unresolved++
		return
	}
	st.unresolvedNext = max(st.unresolvedNext, next)
}

// maybeResolveSequences looks at each partition with unresolved sequences
// whose batches holding sequences are all settled: if the last sequence
// acknowledged is the one before the next to hand out, the batch that
// expired was written and all is well; otherwise the partition's sequences
// must start again under a new epoch (Kafka's TransactionManager.
// maybeResolveSequences, for an idempotent producer).
func (p *Client) maybeResolveSequences() {
	if p.unresolved == 0 {
		return
	}
	for _, st := range p.state {
		if !st.unresolved || hasSequenced(st) {
			continue
		}
		if !isNextSequence(st, st.nextSeq) {
			p.requestEpochBump(st)
		}
		st.unresolved = false
		p.unresolved--
		st.changed() // new batches may drain again
	}
}

// bumpEpoch bumps the idempotent producer's epoch, as Kafka's
// TransactionManager.bumpIdempotentProducerEpoch does at the start of the
// sender's pass that follows the request, whatever is in flight (Sender.
// runOnce: bumpIdempotentEpochAndResetIdIfNeeded). Only the partitions that
// asked for it have their sequences rewritten (rewriteSequences); each other
// partition moves to the new epoch, from sequence 0, once none of its
// batches holds a sequence (sendRequest: Kafka's
// maybeUpdateProducerIdAndEpoch).
func (p *Client) bumpEpoch() {
	p.needBump = false
	if p.pid == record.NoProducer {
		return // a producer id is on its way: it starts every partition again
	}
	p.looks.lookAtAll() // every partition is stale now
	if p.epoch == 32767 {
		p.pid = record.NoProducer // epoch exhausted: a new producer id
		return
	}
	p.epoch++
}

// rewriteSequences starts again, under the producer's current epoch, the
// sequences of each partition that asked for a bump (Kafka's
// TxnPartitionEntry.startSequencesAtBeginning) — once none of its batches
// is in a request: Kafka rewrites a batch in flight too, and resends it
// under its new sequence if its answer fails, which may write it twice.
func (p *Client) rewriteSequences() {
	if p.rewrites == 0 || p.needBump || p.pid == record.NoProducer {
		return
	}
	for _, st := range p.state {
		if st.rewrite && st.inflight == 0 {
			p.startSequencesAtBeginning(st)
		}
	}
}

// startSequencesAtBeginning gives the partition's batches holding sequences
// new ones from 0 under the producer's id and epoch, in sequence order, and
// forgets what was acknowledged (Kafka's TxnPartitionEntry.
// startSequencesAtBeginning). A batch an earlier attempt may have appended
// is given up as unknown instead: sent again under a new sequence, it could
// be written twice. Not one a leader answered OUT_OF_ORDER_SEQUENCE_NUMBER
// as the next sequence (rewrite: see retryOrFail).
func (p *Client) startSequencesAtBeginning(st *partitionState) {
	if st.rewrite {
		st.rewrite = false
		p.rewrites--
	}
	if st.unresolved {
		st.unresolved = false
		p.unresolved--
	}
	seq := int32(0)
	for _, b := range slices.Clone(st.queue) {
		if b.baseSeq < 0 {
			continue
		}
		if b.maybe && !b.rewrite {
			p.complete(b, history.Info, -1, "unresolved sequence: producer epoch bumped")
			continue
		}
		b.baseSeq, b.epoch = seq, p.epoch
		seq += int32(len(b.records))
		b.built = nil // built again with its new sequence when it goes
		b.rewrite, b.reset = false, true
	}
	st.pid, st.epoch = p.pid, p.epoch
	st.nextSeq, st.lastAcked = seq, -1
	st.changed()
}
