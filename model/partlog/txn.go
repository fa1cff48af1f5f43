package partlog

import (
	"slices"

	"kafkasim/model/proto"
	"kafkasim/model/record"
)

// Transactions on the partition side, after Kafka 4's ProducerStateManager
// (ongoing and unreplicated transactions, the first unstable offset),
// ProducerAppendInfo (the checks on a marker), and TransactionIndex (the
// aborted transactions of each segment, which a read_committed fetch
// returns).

// AbortedTxn is an entry of a segment's transaction index (Kafka's
// AbortedTxn): a producer's aborted transaction, from its first offset to
// its abort marker's offset, and the partition's last stable offset once
// it was decided.
type AbortedTxn struct {
	ProducerID       int64
	FirstOffset      int64
	LastOffset       int64
	LastStableOffset int64
}

// txnMeta is an ongoing transaction (Kafka's TxnMetadata), or a decided one
// whose marker is not yet below the high watermark (lastOffset ≥ 0).
type txnMeta struct {
	pid         int64
	firstOffset int64
	lastOffset  int64
}

// txnState is what a partition that has seen transactions keeps of them.
type txnState struct {
	// ongoing, by first offset (ProducerStateManager.ongoingTxns).
	ongoing []txnMeta
	// unreplicated: decided transactions whose marker the high watermark
	// has not passed (unreplicatedTxns): they still hold the LSO back.
	unreplicated []txnMeta
}

// Transactional reports whether the state has seen a transactional batch
// or a marker.
func (p *ProducerState) Transactional() bool { return p.txn != nil }

// updateTxn records a transactional batch or a marker, as
// ProducerAppendInfo.appendDataBatch and appendEndTxnMarker do (no checks:
// CheckMarker and Check made them for a leader; a follower copies).
func (p *ProducerState) updateTxn(e *ProducerEntry, b *record.Batch) (AbortedTxn, bool) {
	if p.txn == nil {
		p.txn = &txnState{}
	}
	pid := b.ProducerID
	if !b.Control {
		if b.ProducerEpoch > e.Epoch {
			e.Epoch = b.ProducerEpoch
			e.Batches = e.Batches[:0]
		}
		e.appendBatch(BatchMeta{FirstSeq: b.BaseSequence, LastSeq: b.LastSequence(), FirstOffset: b.BaseOffset, LastOffset: b.LastOffset()})
		if e.TxnFirstOffset < 0 {
			e.TxnFirstOffset = b.BaseOffset
			p.txn.ongoing = append(p.txn.ongoing, txnMeta{pid: pid, firstOffset: b.BaseOffset, lastOffset: -1})
			// Appends come in offset order; a rebuild from a snapshot
			// may bring them in any (the snapshot's first).
			slices.SortFunc(p.txn.ongoing, func(a, b txnMeta) int { return cmpInt64(a.firstOffset, b.firstOffset) })
		}
		return AbortedTxn{}, false
	}
	t, coordinatorEpoch, ok := b.Marker()
	if !ok {
		return AbortedTxn{}, false // an empty control batch: the cleaner removed the transaction
	}
	var done AbortedTxn
	decided := e.TxnFirstOffset >= 0
	if decided {
		done = AbortedTxn{ProducerID: pid, FirstOffset: e.TxnFirstOffset, LastOffset: b.BaseOffset,
			LastStableOffset: p.lastStableOffsetAfter(pid, b.BaseOffset)}
		p.txn.ongoing = slices.DeleteFunc(p.txn.ongoing, func(m txnMeta) bool { return m.pid == pid })
		p.txn.unreplicated = append(p.txn.unreplicated, txnMeta{pid: pid, firstOffset: done.FirstOffset, lastOffset: b.BaseOffset})
	}
	// ProducerStateEntry.update: the marker's epoch (TV2: bumped) is the
	// producer's from now on; a new epoch clears the batches, so that the
	// next starts at sequence 0.
	if b.ProducerEpoch != e.Epoch {
		e.Epoch = b.ProducerEpoch
		e.Batches = e.Batches[:0]
	}
	e.CoordinatorEpoch = coordinatorEpoch
	e.TxnFirstOffset = -1
	return done, decided && t == record.ControlAbort
}

// lastStableOffsetAfter is the LSO once pid's transaction, decided by the
// marker at markerOffset, is complete (ProducerStateManager.lastStableOffset):
// the first offset of the earliest other ongoing transaction, else the
// offset after the marker.
func (p *ProducerState) lastStableOffsetAfter(pid int64, markerOffset int64) int64 {
	for _, m := range p.txn.ongoing {
		if m.pid != pid {
			return m.firstOffset
		}
	}
	return markerOffset + 1
}

// CheckMarker validates an end-transaction marker a leader is about to
// append for the coordinator (ProducerAppendInfo.appendEndTxnMarker with
// transaction version 2): the marker's epoch must be above the producer's
// (the coordinator bumped it), except a retry of a marker already written
// (the same epoch, no transaction open: KAFKA-19999), which is written
// again; an older epoch is INVALID_PRODUCER_EPOCH. A marker from an older
// coordinator than the producer's last is TRANSACTION_COORDINATOR_FENCED.
// A marker the coordinator did not bump (noEpochBump: transaction version
// 1's, ProducerAppendInfo.checkProducerEpoch with `<`) is fenced only by
// an older epoch: at the producer's own epoch it ends whatever
// transaction is open, the one it was meant for or the next.
func (p *ProducerState) CheckMarker(pid int64, epoch int16, coordinatorEpoch int32, noEpochBump bool) proto.ErrorCode {
	e := p.Entry(pid)
	if e == nil {
		return proto.None
	}
	if noEpochBump {
		if epoch < e.Epoch {
			return proto.InvalidProducerEpoch
		}
	} else if epoch <= e.Epoch && !(epoch == e.Epoch && e.TxnFirstOffset < 0) {
		return proto.InvalidProducerEpoch
	}
	if e.CoordinatorEpoch > coordinatorEpoch {
		return proto.TransactionCoordinatorFenced
	}
	return proto.None
}

// FirstUnstableOffset is the first offset of the earliest transaction
// still undecided, or decided by a marker at or above hw (Kafka's
// firstUnstableOffset, with onHighWatermarkUpdated's pruning of the
// replicated ones). ok is false when there is none.
func (p *ProducerState) FirstUnstableOffset(hw int64) (int64, bool) {
	if p.txn == nil {
		return 0, false
	}
	p.txn.unreplicated = slices.DeleteFunc(p.txn.unreplicated, func(m txnMeta) bool { return m.lastOffset < hw })
	first, ok := int64(0), false
	if len(p.txn.ongoing) > 0 {
		first, ok = p.txn.ongoing[0].firstOffset, true
	}
	for _, m := range p.txn.unreplicated {
		if !ok || m.firstOffset < first {
			first, ok = m.firstOffset, true
		}
	}
	return first, ok
}

// OngoingTxn reports the first offset of pid's ongoing transaction on the
// partition: what a leader asks before a transactional batch (the first of
// a transaction on the partition needs the coordinator's word).
func (p *ProducerState) OngoingTxn(pid int64) (firstOffset int64, epoch int16, ok bool) {
	e := p.Entry(pid)
	if e == nil || e.TxnFirstOffset < 0 {
		return -1, -1, false
	}
	return e.TxnFirstOffset, e.Epoch, true
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Transactional reports whether the log has seen a transactional batch or
// a marker: only then do the LSO and the aborted list cost anything.
func (l *Log) Transactional() bool { return l.producers.txn != nil || l.hasAborted }

// LastStableOffset is the log's LSO for high watermark hw: the first
// unstable offset when below hw, else hw (UnifiedLog.lastStableOffset).
// A first unstable offset below the log start (retention deleted the
// start of a transaction still open: a hanging one) counts as the log
// start (UnifiedLog.updateFirstUnstableOffset), so that the LSO never
// stands below what the log holds.
func (l *Log) LastStableOffset(hw int64) int64 {
	if l.producers.txn == nil {
		return hw
	}
	if first, ok := l.producers.FirstUnstableOffset(hw); ok && first < hw {
		return max(first, min(l.start, hw))
	}
	return hw
}

// OnHighWatermarkUpdated forgets the decided transactions whose marker is
// below hw (ProducerStateManager.onHighWatermarkUpdated): on a follower,
// which no fetch asks for its LSO, they would pile up.
func (l *Log) OnHighWatermarkUpdated(hw int64) {
	if l.producers.txn != nil && len(l.producers.txn.unreplicated) > 0 {
		l.producers.FirstUnstableOffset(hw)
	}
}

// CheckMarker is ProducerState.CheckMarker on the log's state.
func (l *Log) CheckMarker(pid int64, epoch int16, coordinatorEpoch int32, noEpochBump bool) proto.ErrorCode {
	return l.producers.CheckMarker(pid, epoch, coordinatorEpoch, noEpochBump)
}

// CollectAbortedTransactions lists the aborted transactions that may hold
// records in [from, upTo): those whose abort marker is at or after from
// and whose first offset is below upTo, oldest marker first
// (UnifiedLog.collectAbortedTransactions over the segments from the one
// holding from; TransactionIndex.collectAbortedTxns stops at the first
// entry whose LSO reaches upTo: no later one can start below it).
func (l *Log) CollectAbortedTransactions(from, upTo int64) []AbortedTxn {
	if !l.hasAborted {
		return nil
	}
	var out []AbortedTxn
	si, _ := l.find(from)
	if si == len(l.segs) {
		si = len(l.segs) - 1
	}
	for ; si < len(l.segs); si++ {
		for _, a := range l.segs[si].aborted {
			if a.LastOffset >= from && a.FirstOffset < upTo {
				out = append(out, a)
			}
			if a.LastStableOffset >= upTo {
				return out
			}
		}
	}
	return out
}

// AbortedTransactions is every entry of the log's transaction indexes,
// oldest first (tests, the god view).
func (l *Log) AbortedTransactions() []AbortedTxn {
	var out []AbortedTxn
	for _, s := range l.segs {
		out = append(out, s.aborted...)
	}
	return out
}

// indexAborted adds an aborted transaction to the index of seg (the
// segment its marker went to: LogSegment.updateTxnIndex).
func (l *Log) indexAborted(seg *segment, a AbortedTxn) {
	seg.aborted = append(seg.aborted, a)
	l.hasAborted = true
}

// rebuildTxnIndex rebuilds every segment's transaction index from the
// batches, as LogSegment.recover does for the segments it recovers: each
// producer's transactional batches from its first after a marker to the
// next marker are one transaction. (Kafka keeps a .txnindex file per
// segment and rebuilds only the recovered segments'; the model keeps the
// index in memory and rebuilds it whole at every open, which gives the same
// entries but for a transaction whose data lies wholly below the log's
// first batch: no fetch can read that.)
func (l *Log) rebuildTxnIndex() {
	l.hasAborted = false
	var ongoing []txnMeta
	for _, s := range l.segs {
		s.aborted = nil
		var txn []int32 // the batches to look at: the digest's, or all of them
		if l.memo != nil {
			txn = l.digest(s).txn
		}
		for k := range s.idx.len() {
			i := k
			if l.memo != nil {
				if k >= len(txn) {
					break
				}
				i = int(txn[k])
			} else {
				l.walked++
			}
			b := s.idx.batch(i)
			if !b.Transactional || b.ProducerID < 0 {
				continue
			}
			at := slices.IndexFunc(ongoing, func(m txnMeta) bool { return m.pid == b.ProducerID })
			if !b.Control {
				if at < 0 {
					ongoing = append(ongoing, txnMeta{pid: b.ProducerID, firstOffset: b.BaseOffset, lastOffset: -1})
				}
				continue
			}
			t, _, ok := b.Marker()
			if !ok || at < 0 {
				continue
			}
			m := ongoing[at]
			ongoing = slices.Delete(ongoing, at, at+1)
			if t != record.ControlAbort {
				continue
			}
			lso := b.BaseOffset + 1
			if len(ongoing) > 0 {
				lso = ongoing[0].firstOffset
			}
			l.indexAborted(s, AbortedTxn{ProducerID: m.pid, FirstOffset: m.firstOffset, LastOffset: b.BaseOffset, LastStableOffset: lso})
		}
	}
}
