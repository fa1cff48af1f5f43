package broker

import (
	"fmt"
	"strconv"

	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// Produce on the leader: checks, append, and for acks=all the wait for the
// high watermark (Kafka's DelayedProduce).

type produceTimeout struct{ req *pendingProduce }

// String is how the trace shows the timer: the produce it ends, by sender
// and correlation id (fmt would print the pointer, which differs from run
// to run).
func (t produceTimeout) String() string {
	return "broker.produceTimeout {from:" + strconv.Itoa(int(t.req.from)) + " correlation:" + strconv.FormatUint(t.req.resp.CorrelationID, 10) + "}"
}

type producePart struct {
	// p is the replica the write went to (partitions are never replaced:
	// one lookup serves the whole wait, and names the partition).
	p        *partition
	required int64 // the high watermark that commits this partition's write
	done     bool
}

type pendingProduce struct {
	rm     *replicaManager
	from   sim.NodeID
	on     uint64                // the connection it was read on
	resp   proto.ProduceResponse // the answer, sent when every part is done
	parts  []producePart         // parallel to resp.Partitions
	timer  sim.TimerID
	closed bool
	// lists counts the partitions' waiting lists that hold it, delivered
	// says its answer was delivered: when both say nothing refers to it
	// any more, the broker reuses it (see TakeBack).
	lists     int32
	delivered bool
	// poisoned: freed and filled with nonsense (tests); touching it panics.
	poisoned bool
	// A request names a handful of partitions: the answer and the wait
	// fit here, so that a produce allocates once, if at all.
	partsInline [2]producePart
	respInline  [2]proto.ProducePartitionResponse
}

// spareProducesMax bounds the finished produces a broker keeps for reuse.
const spareProducesMax = 64

func (rm *replicaManager) newPendingProduce(from sim.NodeID, correlationID uint64, n int) *pendingProduce {
	w := rm.spareProduces.Get()
	if w != nil {
		*w = pendingProduce{}
	} else {
		w = &pendingProduce{}
	}
	w.rm, w.from = rm, from
	w.resp.CorrelationID, w.resp.Owner = correlationID, w
	if n <= len(w.partsInline) {
		w.parts, w.resp.Partitions = w.partsInline[:0], w.respInline[:0]
	} else {
		w.parts, w.resp.Partitions = make([]producePart, 0, n), make([]proto.ProducePartitionResponse, 0, n)
	}
	return w
}

// TakeBack implements sim.Owner: the answer was delivered, and the
// receiver keeps nothing of it.
func (w *pendingProduce) TakeBack() {
	w.mustBeLive()
	w.delivered = true
	w.reuseIfFree()
}

// reuseIfFree makes w spare once its answer is delivered and no waiting
// list holds it. (A timer cannot: finishProduce cancelled it.)
func (w *pendingProduce) reuseIfFree() {
	if !w.delivered || w.lists != 0 {
		return
	}
	w.rm.producesFreed++
	if proto.PoisonFreed {
		w.poison()
		return
	}
	w.rm.spareProduces.Put(w, spareProducesMax)
}

// mustBeLive panics on a produce freed for reuse (in tests, which poison
// freed produces: see proto.PoisonFreed).
func (w *pendingProduce) mustBeLive() {
	if w.poisoned {
		panic("broker: a produce freed for reuse is still in use")
	}
}

func (w *pendingProduce) poison() {
	w.poisoned = true
	w.closed, w.delivered, w.from, w.timer = false, false, -1, sim.TimerID{}
	w.resp.CorrelationID = proto.FreedCorrelationID
	for i := range w.resp.Partitions {
		w.resp.Partitions[i] = proto.ProducePartitionResponse{Error: proto.CorruptMessage, BaseOffset: -7, LogStartOffset: -7}
	}
	for i := range w.parts {
		w.parts[i] = producePart{required: -7}
	}
}

// handleProduce serves a produce read on connection on of from: a
// transaction's first batch on a partition after the transaction
// coordinator's word (txnverify.go).
func (rm *replicaManager) handleProduce(from sim.NodeID, on uint64, m *proto.ProduceRequest) {
	if m.TransactionalID != "" && rm.verifyTransaction(from, on, m) {
		return
	}
	rm.appendProduce(from, on, m, nil, nil)
}

// appendProduce appends a produce's batches and answers, or waits for the
// high watermark; a partition whose verification failed (errs, parallel to
// verified) answers its error.
func (rm *replicaManager) appendProduce(from sim.NodeID, on uint64, m *proto.ProduceRequest, verified []proto.TopicPartition, errs []proto.ErrorCode) {
	wait := rm.newPendingProduce(from, m.CorrelationID, len(m.Partitions))
	wait.on = on
	resp := &wait.resp
	waiting := 0
	for _, pp := range m.Partitions {
		tp := metadata.TopicPartition{Topic: pp.Topic, Partition: pp.Partition}
		r := proto.ProducePartitionResponse{TopicPartition: pp.TopicPartition, BaseOffset: -1, LogStartOffset: -1}
		part := producePart{done: true}
		if m.Acks != proto.AcksNone && m.Acks != proto.AcksLeader && m.Acks != proto.AcksAll {
			r.Error = proto.InvalidRequiredAcks
		} else if err := verifiedError(pp.TopicPartition, verified, errs); err != proto.None {
			r.Error = err
		} else {
			p := rm.parts.get(tp)
			base, last, err := rm.appendAsLeader(tp, p, pp, m.Acks)
			r.Error, r.BaseOffset = err, base
			if p != nil && p.log != nil {
				r.LogStartOffset = p.log.LogStartOffset()
			}
			part.p = p
			if err == proto.None && m.Acks == proto.AcksAll {
				part.required = last + 1
				part.done = false
				r.Error = proto.RequestTimedOut // until the high watermark passes it
				waiting++
			}
		}
		resp.Partitions = append(resp.Partitions, r)
		wait.parts = append(wait.parts, part)
	}
	if m.Acks == proto.AcksNone {
		// acks=0: no answer, ever. On an error Kafka closes the connection
		// instead, so that the producer refreshes its metadata.
		for _, r := range resp.Partitions {
			if r.Error != proto.None {
				rm.n.env.CloseConnection(from)
				break
			}
		}
		// The handler returns once its append's flush has (flush.messages):
		// the connection reads on then.
		if rm.gate.Pending() {
			rm.gate.Then(func() { rm.unmute(from, on) })
		} else {
			rm.unmute(from, on)
		}
		return
	}
	if waiting == 0 {
		rm.answerDurably(from, on, resp)
		return
	}
	wait.timer = rm.n.env.After(m.Timeout, produceTimeout{req: wait})
	for _, part := range wait.parts {
		if !part.done {
			part.p.waiting = append(part.p.waiting, wait)
			wait.lists++
		}
	}
	rm.checkProduce(wait)
}

// verifiedError is tp's error from its verification, if it had one.
func verifiedError(tp proto.TopicPartition, verified []proto.TopicPartition, errs []proto.ErrorCode) proto.ErrorCode {
	for i, v := range verified {
		if v == tp {
			return errs[i]
		}
	}
	return proto.None
}

// appendAsLeader validates and appends one partition's batch; it returns the
// base and last offsets (the original ones for a duplicate).
func (rm *replicaManager) appendAsLeader(tp metadata.TopicPartition, p *partition, pp proto.ProducePartition, acks int16) (int64, int64, proto.ErrorCode) {
	if rm.stopped || p == nil || !p.isLeader || p.log == nil {
		if rm.image().Partition(tp) == nil {
			return -1, -1, proto.UnknownTopicOrPartition
		}
		return -1, -1, proto.NotLeaderOrFollower
	}
	if acks == proto.AcksAll && len(p.isr) < p.effectiveMinISR() {
		return -1, -1, proto.NotEnoughReplicas
	}
	if p.log.Compacted() && hasNullKey(pp.Batch) {
		// LogValidator: "Compacted topic cannot accept message without key".
		return -1, -1, proto.InvalidRecord
	}
	dup, err := p.log.Producers().Check(pp.Batch)
	if err != proto.None {
		if a := rm.audit(); a != nil && err == proto.OutOfOrderSequenceNumber {
			a.OutOfOrderSequence(rm.id(), tp, pp.Batch)
		}
		return -1, -1, err
	}
	if dup != nil {
		if a := rm.audit(); a != nil {
			if held := p.log.BatchAt(dup.FirstOffset); held != nil && held.BaseOffset == dup.FirstOffset && !held.Thinned() && held.CRC() != pp.Batch.CRC() {
				a.MistakenDuplicate(rm.id(), tp, pp.Batch, dup.FirstOffset, dup.LastOffset)
			}
		}
		return dup.FirstOffset, dup.LastOffset, proto.None
	}
	// (A coordinator's batch without sequence, a transactional offset
	// commit, is no idempotent producer's: the audit of sequences skips it.)
	if a := rm.audit(); a != nil && pp.Batch.ProducerID >= 0 && pp.Batch.BaseSequence >= 0 && !rm.cfg.Bugs.ProducerStateNotReplicated {
		if p.log.Producers().Entry(pp.Batch.ProducerID) == nil {
			a.UnknownProducer(rm.id(), tp, pp.Batch, p.log.LEO(), p.log.LogStartOffset(), p.log.ProducersRebuiltFrom())
		} else {
			a.KnownProducer(rm.id(), tp, pp.Batch, p.log.LogStartOffset(), p.log.ProducersRebuiltFrom())
		}
	}
	return rm.appendStamped(tp, p, pp.Batch)
}

// appendStamped stamps b with the log end and the leader epoch and appends
// it to p's log, which this broker leads; it returns the batch's base and
// last offsets.
func (rm *replicaManager) appendStamped(tp metadata.TopicPartition, p *partition, b *record.Batch) (int64, int64, proto.ErrorCode) {
	epoch := p.leaderEpoch
	if rm.cfg.Bugs.HWTruncation {
		epoch = -1 // batches carry no leader epoch before KIP-101
	}
	stamped := b.Stamp(p.log.LEO(), epoch)
	before := rm.gate.Issued()
	if err := p.log.Append(singleBatch(stamped), true); err != nil {
		rm.logDirFailed(fmt.Sprintf("%s: append failed: %v", tp, err))
		return -1, -1, proto.KafkaStorageError
	}
	// UnifiedLog.append flushed synchronously: Partition raises the high
	// watermark, and the fetch purgatory sees the new data, once
	// appendAsLeader returns.
	if rm.gate.Issued() == before {
		rm.appended(tp, p) // nothing to flush (no closure to allocate)
	} else {
		p.appendedFrom(stamped.BaseOffset, before, func() { rm.appended(tp, p) })
	}
	return stamped.BaseOffset, stamped.LastOffset(), proto.None
}

// appended lets the fetches parked on a leader's partition see a write, and
// the high watermark move past it.
func (rm *replicaManager) appended(tp metadata.TopicPartition, p *partition) {
	if p.isLeader {
		rm.wakeParked(tp)
		p.maybeIncrementHW()
	}
}

// checkProduce completes the partitions of a waiting produce whose write the
// high watermark has passed, or whose leadership is gone, and answers once
// none is left.
func (rm *replicaManager) checkProduce(w *pendingProduce) {
	w.mustBeLive()
	if w.closed {
		return
	}
	open := 0
	for i := range w.parts {
		part := &w.parts[i]
		if part.done {
			continue
		}
		if done, err := part.p.writeOutcome(part.required, proto.AcksAll); done {
			w.resp.Partitions[i].Error, part.done = err, true
		} else {
			open++
		}
	}
	if open == 0 {
		rm.finishProduce(w)
	}
}

func (rm *replicaManager) finishProduce(w *pendingProduce) {
	w.closed = true
	rm.n.env.Cancel(w.timer)
	rm.answerDurably(w.from, w.on, &w.resp)
}

// waitsOn reports whether w still waits for partition p.
func (w *pendingProduce) waitsOn(p *partition) bool {
	w.mustBeLive()
	if w.closed {
		return false
	}
	for _, part := range w.parts {
		if part.p == p && !part.done {
			return true
		}
	}
	return false
}

// recheck implements commitWaiter: checkProduce answers and forgets; it
// never comes back to a waiting list.
func (w *pendingProduce) recheck() { w.rm.checkProduce(w) }

// unlisted implements commitWaiter.
func (w *pendingProduce) unlisted() {
	w.lists--
	w.reuseIfFree()
}

func (rm *replicaManager) produceTimedOut(w *pendingProduce) {
	w.mustBeLive()
	if !w.closed {
		rm.finishProduce(w) // still-open partitions answer REQUEST_TIMED_OUT
	}
}

// hasNullKey reports whether a record of b has no key.
func hasNullKey(b *record.Batch) bool {
	null := false
	b.EachRecord(func(_ int, _ int64, _ []byte, hasKey bool, _ []byte) { null = null || !hasKey })
	return null
}
