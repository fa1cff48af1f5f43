package partlog

import (
	"kafkasim/model/proto"
	"kafkasim/model/record"
)

// BatchMetadataRetained is how many recent batches the broker remembers per
// producer, to answer retries (Kafka's NUM_BATCHES_TO_RETAIN).
const BatchMetadataRetained = 5

// BatchMeta is what is remembered of an idempotent batch.
type BatchMeta struct {
	FirstSeq, LastSeq       int32
	FirstOffset, LastOffset int64
}

// ProducerEntry is one producer id's state on a partition.
type ProducerEntry struct {
	Epoch int16
	// CoordinatorEpoch is the epoch of the transaction coordinator that
	// wrote the producer's last marker here (-1: none); a marker from an
	// older one is fenced (ProducerStateEntry.coordinatorEpoch).
	CoordinatorEpoch int32
	// TxnFirstOffset is the first offset of the producer's ongoing
	// transaction on the partition, -1 when none
	// (ProducerStateEntry.currentTxnFirstOffset).
	TxnFirstOffset int64
	// Batches is the last BatchMetadataRetained batches, oldest first: a
	// window on array, which slides back to the array's start once in a
	// while instead of shifting five entries on every append.
	Batches []BatchMeta
	array   []BatchMeta
	// first holds the window until a second batch comes: most entries
	// never see one (on a big cluster each producer's probe is the only
	// batch of most partitions it writes), and the array's 192 bytes for
	// each of their 72,000 entries were 14 MB of a run's allocations.
	first [1]BatchMeta
}

// batchWindowCap is how many batches an entry's array holds before its
// window slides back: a slide copies four entries every four appends, and
// the array takes 192 bytes, which stay in cache together. Every replica
// keeps an entry for every producer it hears from (72,000 on 3,000
// partitions of RF 3 and 8 producers), which at 32 batches took 768 bytes
// each, mostly never touched again.
const batchWindowCap = 8

// ProducerState is the idempotent producers' state of one partition replica
// (Kafka's ProducerStateManager): kept from every batch appended, as leader
// or follower, and rebuilt after recovery or truncation from the latest
// producer-state snapshot and the log after it (snapshots.go).
type ProducerState struct {
	// Entries by producer id: pids[i]'s is entries[i]. A partition hears
	// from a few producers, so a short list is searched; past
	// producersIndexedFrom, index finds them.
	pids    []int64
	entries []*ProducerEntry
	index   map[int64]int
	// txn is the transactions' state (txn.go), nil until the partition
	// sees a transactional batch or a marker: a partition without
	// transactions pays nothing for them.
	txn *txnState
}

// producersIndexedFrom is how many producers a partition's state holds
// before it indexes them by a map.
const producersIndexedFrom = 16

// NewProducerState is empty state.
func NewProducerState() *ProducerState { return &ProducerState{} }

// Entry returns a producer's state, or nil.
func (p *ProducerState) Entry(pid int64) *ProducerEntry {
	if p.index != nil {
		if i, ok := p.index[pid]; ok {
			return p.entries[i]
		}
		return nil
	}
	for i, x := range p.pids {
		if x == pid {
			return p.entries[i]
		}
	}
	return nil
}

// set makes e the state of producer pid.
func (p *ProducerState) set(pid int64, e *ProducerEntry) {
	if old := p.Entry(pid); old != nil {
		old.assign(e)
		return
	}
	p.pids = append(p.pids, pid)
	p.entries = append(p.entries, e)
	if p.index == nil && len(p.pids) < producersIndexedFrom {
		return
	}
	if p.index == nil {
		p.index = make(map[int64]int, len(p.pids))
		for i, x := range p.pids {
			p.index[x] = i
		}
		return
	}
	p.index[pid] = len(p.pids) - 1
}

// Len is the number of producers tracked.
func (p *ProducerState) Len() int { return len(p.pids) }

// Update records an appended batch.
func (p *ProducerState) Update(b *record.Batch) { p.update(b) }

// update records an appended batch; for an abort marker that ends a
// transaction with data on the partition, it returns the transaction and
// true (Kafka's ProducerAppendInfo.append and CompletedTxn), its
// LastStableOffset the partition's LSO once it is decided
// (ProducerStateManager.lastStableOffset).
func (p *ProducerState) update(b *record.Batch) (AbortedTxn, bool) {
	if b.ProducerID < 0 {
		return AbortedTxn{}, false
	}
	e := p.Entry(b.ProducerID)
	if e == nil {
		e = &ProducerEntry{Epoch: b.ProducerEpoch, CoordinatorEpoch: -1, TxnFirstOffset: -1}
		p.set(b.ProducerID, e)
	}
	if b.Transactional {
		return p.updateTxn(e, b)
	}
	if b.ProducerEpoch > e.Epoch {
		e.Epoch = b.ProducerEpoch
		e.Batches = e.Batches[:0]
	}
	e.appendBatch(BatchMeta{FirstSeq: b.BaseSequence, LastSeq: b.LastSequence(), FirstOffset: b.BaseOffset, LastOffset: b.LastOffset()})
	return AbortedTxn{}, false
}

// assign makes e a copy of src. A window held in src's first slot is
// held in e's own: copied as it is, e's window would point into src, and
// e's next append after an epoch bump would write into src's batch.
func (e *ProducerEntry) assign(src *ProducerEntry) {
	*e = *src
	if w := src.Batches; cap(w) > 0 && &w[:1][0] == &src.first[0] {
		e.Batches = e.first[:len(w):cap(w)]
	}
}

// appendBatch adds m to the window, dropping the oldest beyond
// BatchMetadataRetained.
func (e *ProducerEntry) appendBatch(m BatchMeta) {
	w := e.Batches
	if cap(w) == 0 && e.array == nil {
		e.first[0] = m
		e.Batches = e.first[:1:1]
		return
	}
	if len(w) == cap(w) {
		// At the array's end (or on a window set from outside): slide the
		// window, but for its oldest, to the array's start.
		if e.array == nil {
			e.array = make([]BatchMeta, batchWindowCap)
		}
		w = e.array[:copy(e.array, w[max(0, len(w)-(BatchMetadataRetained-1)):])]
	}
	w = append(w, m)
	e.Batches = w[max(0, len(w)-BatchMetadataRetained):]
}

// Check validates a batch a leader is about to append, in Kafka's order
// (ProducerAppendInfo): a retry of one of the last five batches is a
// duplicate (answered with its original offsets, nothing appended); an older
// epoch is fenced; a new epoch must start at sequence 0; otherwise the
// sequence must follow the last one. A producer the partition has no state
// for is accepted at any sequence (KIP-360).
func (p *ProducerState) Check(b *record.Batch) (*BatchMeta, proto.ErrorCode) {
	if b.ProducerID < 0 {
		return nil, proto.None
	}
	if b.Control {
		return nil, proto.InvalidRecord // markers come from a coordinator only (CheckMarker)
	}
	e := p.Entry(b.ProducerID)
	if e == nil {
		if b.Transactional && b.BaseSequence > 0 {
			// checkSequence with transaction version 2: a transaction's
			// producer unknown here starts at sequence 0 (its epoch is
			// new at every transaction).
			return nil, proto.OutOfOrderSequenceNumber
		}
		return nil, proto.None
	}
	if b.BaseSequence < 0 {
		// A coordinator's batch (the group coordinator's transactional
		// offset commits) has no sequence: Kafka checks only its epoch
		// (AppendOrigin.COORDINATOR), and it is never a duplicate.
		if b.ProducerEpoch < e.Epoch {
			return nil, proto.InvalidProducerEpoch
		}
		if e.TxnFirstOffset >= 0 && !b.Transactional {
			return nil, proto.InvalidTxnState
		}
		return nil, proto.None
	}
	if b.ProducerEpoch == e.Epoch {
		for _, m := range e.Batches {
			if m.FirstSeq == b.BaseSequence && m.LastSeq == b.LastSequence() {
				dup := m // a copy: later batches shift e.Batches
				return &dup, proto.None
			}
		}
	}
	if b.ProducerEpoch < e.Epoch {
		return nil, proto.InvalidProducerEpoch
	}
	if b.ProducerEpoch != e.Epoch {
		if b.BaseSequence != 0 {
			return nil, proto.OutOfOrderSequenceNumber
		}
		return nil, proto.None
	}
	if e.TxnFirstOffset >= 0 && !b.Transactional {
		// ProducerAppendInfo.appendDataBatch: a non-transactional write
		// while the producer's transaction is open.
		return nil, proto.InvalidTxnState
	}
	if len(e.Batches) == 0 {
		// A marker bumped the epoch (transaction version 2) and cleared
		// the batches: the epoch's first batch is sequence 0 (checkSequence
		// against NO_SEQUENCE).
		if b.BaseSequence != 0 {
			return nil, proto.OutOfOrderSequenceNumber
		}
		return nil, proto.None
	}
	last := e.Batches[len(e.Batches)-1].LastSeq
	next := int32((int64(last) + 1) % (1 << 31))
	if b.BaseSequence != next {
		return nil, proto.OutOfOrderSequenceNumber
	}
	return nil, proto.None
}
