package producer

import (
	"time"

	"kafkasim/history"
	"kafkasim/model/record"
)

// The record accumulator: the default partitioner, and batches per
// partition, filled until batch.size or linger.ms (Kafka's
// RecordAccumulator).

type pendingRecord struct {
	record record.Record // its Value is the history's value
	// partition is an explicit partition (a probe's), or -1.
	partition int32
	cb        Callback
}

type pbatch struct {
	partition int32
	// records are the batch's records, handed to record.New as they are
	// (it numbers them); explicit holds, in a batch still waiting for a
	// partition (partition -1), each record's explicit partition or -1.
	records  []record.Record
	explicit []int32
	// cb is every record's callback, unless callbacks holds one per record
	// (records sent with different callbacks share the batch): a client's
	// records mostly come from one application, and a slice per batch
	// would cost it allocations.
	cb        Callback
	callbacks []Callback
	bytes     int
	created   time.Duration
	attempts  int
	baseSeq   int32
	epoch     int16
	built     *record.Batch
	inflight  bool
	retryAt   time.Duration // not before
	maybe     bool          // some attempt may have been appended
	rewrite   bool          // resent under the next epoch even if maybe (sender.go: retryOrFail)
	// reset: its sequence was rewritten under a new epoch (Kafka's
	// ProducerBatch.sequenceHasBeenReset).
	reset bool
	// outOfOrder: its last answer was OUT_OF_ORDER_SEQUENCE_NUMBER and it
	// is not the next sequence, so it is retried as it is until it is
	// acknowledged or expires (TransactionManager.canRetry).
	outOfOrder bool
	// done: settled while its request was in flight (its delivery timeout
	// expired), Kafka's ProducerBatch.isDone; kept, out of the queue,
	// until that request ends, whose answer tells the application nothing.
	done       bool
	closed     bool  // full: no more records
	leaderSeen int32 // the leader epoch of the last attempt's target
	// request is the correlation id of the request it is in flight in.
	request uint64
}

// spareBatchesMax bounds the settled batches a producer keeps for reuse.
const spareBatchesMax = 64

type partitionState struct {
	queue []*pbatch // oldest first
	// pid and epoch are the producer id and epoch the partition's
	// sequences count under, nextSeq the next batch's base sequence
	// (Kafka's TxnPartitionEntry): a bump moves a partition to the
	// producer's new epoch when its sequences are rewritten, or, for
	// another partition, once none of its batches holds a sequence.
	pid       int64
	epoch     int16
	nextSeq   int32
	lastAcked int32 // last sequence acknowledged under epoch, -1
	// inflight counts its batches in a request now (not one settled
	// while in flight).
	inflight int
	// unresolved: a batch that had been retried expired, and whether it
	// was written is unknown until the partition's batches holding
	// sequences are done; unresolvedNext is the sequence after it (Kafka's
	// TransactionManager.partitionsWithUnresolvedSequences).
	unresolved     bool
	unresolvedNext int32
	// rewrite: the partition's sequences are to start again under the
	// producer's new epoch (Kafka's partitionsToRewriteSequences), once
	// none of its batches is in a request.
	rewrite bool
	// wakes are the times the sender must look at this partition again
	// (scheduleNext; none: 0), recomputed when stale (sendLooks.firstWake):
	// whenever a batch joins or leaves the queue, is sent, comes back or
	// gets a retry time; kept in ascending order.
	wakes [3]time.Duration
	// looks holds what the sender reads of it on every pass, as partition
	// index (nil for the records waiting for metadata, which the sender
	// does not look at).
	looks *sendLooks
	index int
}

// changed notes that the partition's queue or a batch in it changed: its
// wake-up times are stale, and the sender must look at it again.
func (st *partitionState) changed() {
	if st.looks != nil {
		st.looks.changed(st.index)
	}
}

// maySendSooner notes that a batch may go before the sender's last look
// at the partition said (a batch filled up): the sender must look again.
func (st *partitionState) maySendSooner() {
	if st.looks != nil {
		st.looks.maySendSooner(st.index)
	}
}

// Send hands a record to the accumulator (Kafka's KafkaProducer.send): for
// partition, or, when it is -1, the one the partitioner picks. cb is told
// how it ends. Before any metadata arrives the record waits unpartitioned
// (Kafka blocks send() for up to max.block.ms), its delivery timeout
// running.
func (p *Client) Send(r record.Record, partition int32, cb Callback) {
	p.Stats.Sent++
	if p.Transactional() && p.refused(&r, cb) {
		return
	}
	p.append(pendingRecord{record: r, partition: partition, cb: cb})
}

// refused fails a record the transaction state does not let Send take,
// and says so. It is apart from Send, and never inlined, so that Send
// stays small enough to inline and only a refused record's copy goes to
// the heap (the callback takes its address), not every record sent.
//
//go:noinline
func (p *Client) refused(r *record.Record, cb Callback) bool {
	why := p.sendRefusal()
	if why == "" {
		return false
	}
	p.Stats.Failed++
	if cb != nil {
		failed := *r // escapes here only
		cb.OnCompletion(&failed, RecordMetadata{Topic: p.cfg.Topic, Partition: -1, Offset: -1}, history.Fail, why)
	}
	return true
}

// partitions is how many partitions of the topic the client's last
// metadata listed (Kafka's partitionsFor), and whether that metadata is
// current.
func (p *Client) partitions() (n int, current bool) { return len(p.parts), p.metaValid }

func (p *Client) partitionFor(pr pendingRecord) int32 {
	n := max(len(p.parts), 1)
	if pr.partition >= 0 && int(pr.partition) < n {
		return pr.partition
	}
	if pr.record.HasKey {
		return PartitionForKey([]byte(pr.record.Key), n)
	}
	// Sticky partitioning (KIP-794): stay on one partition until a batch's
	// worth of bytes went to it.
	if p.sticky < 0 || int(p.sticky) >= n || p.stickyN >= p.cfg.BatchSize {
		var avail []int32
		for i, pi := range p.parts {
			if pi.leader >= 0 {
				avail = append(avail, int32(i))
			}
		}
		if len(avail) == 0 {
			p.sticky = int32(p.env.Rand().IntN(n))
		} else {
			p.sticky = avail[p.env.Rand().IntN(len(avail))]
		}
		p.stickyN = 0
	}
	return p.sticky
}

// append adds a record to its partition's last batch, or to a new one when
// that one is closed, already sent or full (a record sent before any
// metadata arrived goes to pending, partition -1), and wakes the sender:
// now for a batch this record closed, after linger.ms otherwise.
func (p *Client) append(pr pendingRecord) {
	part := p.partitionFor(pr)
	if !p.metaValid {
		part = -1
	}
	size := 21 + len(pr.record.Key) + len(pr.record.Value)
	if part >= 0 && !pr.record.HasKey {
		p.stickyN += size
	}
	st := p.partState(part)
	var b *pbatch
	if n := len(st.queue); n > 0 {
		last := st.queue[n-1]
		if !last.closed && last.attempts == 0 && !last.inflight && last.bytes+size <= p.cfg.BatchSize {
			b = last
		}
	}
	if b == nil {
		b = p.newBatch(part)
		st.queue = append(st.queue, b)
		st.changed()
		if p.haveFloor && b.created < p.expireFloor {
			p.expireFloor = b.created
		}
	}
	b.records = append(b.records, pr.record)
	b.addCallback(pr.cb)
	if part < 0 {
		b.explicit = append(b.explicit, pr.partition)
	}
	b.bytes += size
	if b.bytes+size > p.cfg.BatchSize {
		b.closed = true
		st.maySendSooner() // before its linger is up
	}
	if b.closed {
		p.wakeSender(0)
	} else {
		p.wakeSender(p.cfg.LingerMs)
	}
}

// addCallback notes the callback of the record just added. Callbacks are
// compared, so a Callback's type must be comparable (a pointer is).
func (b *pbatch) addCallback(cb Callback) {
	switch n := len(b.records); {
	case n == 1:
		b.cb = cb
	case len(b.callbacks) > 0:
		b.callbacks = append(b.callbacks, cb)
	case cb != b.cb:
		for range n - 1 {
			b.callbacks = append(b.callbacks, b.cb)
		}
		b.callbacks = append(b.callbacks, cb)
	}
}

// callback is record i's callback.
func (b *pbatch) callback(i int) Callback {
	if len(b.callbacks) > 0 {
		return b.callbacks[i]
	}
	return b.cb
}

// newBatch is an empty batch of partition part, created now.
func (p *Client) newBatch(part int32) *pbatch {
	b := p.spareBatches.Get()
	if b == nil {
		b = new(pbatch)
	}
	// A reused batch keeps its record and partition arrays (emptied when
	// it was settled): a producer's batches stop allocating once it has
	// settled a few dozen.
	*b = pbatch{partition: part, created: p.env.Now(), baseSeq: -1, records: b.records[:0], explicit: b.explicit[:0], callbacks: b.callbacks[:0]}
	return b
}

func (p *Client) partState(part int32) *partitionState {
	if part < 0 {
		if p.pending == nil {
			p.pending = &partitionState{pid: record.NoProducer, epoch: -1, lastAcked: -1}
		}
		return p.pending
	}
	if int(part) >= len(p.state) {
		p.growState(int(part) + 1)
	}
	return p.state[part]
}

// growState makes room for n partitions.
func (p *Client) growState(n int) {
	for len(p.state) < n {
		p.state = append(p.state, &partitionState{pid: record.NoProducer, epoch: -1, lastAcked: -1, looks: &p.looks, index: len(p.state)})
	}
	p.looks.grow(n)
}

func (p *Client) wakeSender(after time.Duration) {
	now := p.env.Now()
	at := now + after
	// One wake-up at a time, the earliest asked for (Kafka's sender polls
	// with the nearest deadline): the one it replaces would only find the
	// work done, as every wake-up ends by asking for the next (scheduleNext).
	// But not a wake-up the clock has passed while its timer waits: set
	// forward or sped up, the local clock reached it before the world's
	// time did, and its timer, armed by the world's time, fires later than
	// anything asked for now (a nanosecond or so of rounding between a
	// drifting clock's conversions aside).
	if p.senderAt != 0 && p.senderAt <= at && now-p.senderAt <= senderLateMax {
		return
	}
	if p.senderAt != 0 {
		p.env.Cancel(p.sender)
	}
	p.senderAt = at
	p.sender = p.env.After(after, newTimer(timerSender, 0))
}

// senderLateMax is how far the local clock may be past a pending sender
// wake-up before it is taken for a clock set forward (see wakeSender).
const senderLateMax = time.Microsecond

// Unresolved is the number of records sent whose outcome the producer does
// not know yet (queued, in flight or waiting to retry): after a heal it must
// fall to zero, or the producer cannot write.
func (p *Client) Unresolved() int {
	n := 0
	for _, st := range append([]*partitionState{p.pending}, p.state...) {
		if st == nil {
			continue
		}
		for _, b := range st.queue {
			n += len(b.records)
		}
	}
	return n
}

// OutOfOrderHeldFor is how long the producer may still hold a partition's
// batches as Kafka's would, however long the cluster has been healthy: a
// batch a leader answered OUT_OF_ORDER_SEQUENCE_NUMBER, not the next
// sequence, because it took a later batch of the producer first (KIP-360:
// a leader holding no state for a producer takes any first sequence), is
// retried as it is until its delivery timeout (TransactionManager
// .canRetry), and the partition's later batches wait behind it
// (shouldStopDrainBatchesForPartition). It is the longest delivery time
// left among such partitions' batches, 0 when none is held so.
func (p *Client) OutOfOrderHeldFor() time.Duration {
	var left time.Duration
	now := p.env.Now()
	for _, st := range p.state {
		if st == nil || len(st.queue) == 0 || !st.queue[0].outOfOrder {
			continue
		}
		for _, b := range st.queue {
			left = max(left, b.created+p.cfg.DeliveryTimeout-now)
		}
	}
	return left
}
