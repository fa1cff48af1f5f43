package producer

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"time"

	"kafkasim/history"
	"kafkasim/model/proto"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// The sender: drains ready batches into produce requests, one per leader
// broker, and settles each batch from the answer.

// never is a time that does not come: no wake-up, nothing until a change.
const never = time.Duration(math.MaxInt64)

// runSender expires overdue batches, settles the idempotent producer's
// sequences (Kafka's Sender.runOnce: maybeResolveSequences, then
// bumpIdempotentEpochAndResetIdIfNeeded), then sends what is ready.
func (p *Client) runSender() {
	now := p.env.Now()
	p.partitionPending()
	p.expire(now)
	if p.cfg.EnableIdempotence {
		p.maybeResolveSequences()
		if p.needBump {
			p.bumpEpoch()
		}
		p.rewriteSequences()
	}
	if p.Transactional() && p.pumpTxn() {
		// Sender.maybeSendAndPollTransactionalRequest: no produce
		// request while a transactional one is in flight.
		p.scheduleNext(now)
		return
	}
	if p.cfg.EnableIdempotence && p.pid == record.NoProducer {
		if p.pidCorr == 0 && p.metaValid && !p.Transactional() {
			p.initProducerID()
		}
		p.scheduleNext(now)
		return
	}
	// Batches by leader, in the order leaders were first met (sorted
	// below): a producer talks to a handful of brokers.
	// (Scratch slices the producer keeps, batch lists included: a request
	// keeps a copy of its list.)
	byBroker, brokers := p.sendBatches[:0], p.sendBrokers[:0]
	// Whether each leader met has room for a request: the counts change
	// only when the requests go, after this loop.
	var room leaderRoom
	// The blocks in ascending order whose idleMin is not ahead, as each is
	// reached (a look may mark a partition of a later one).
	for b := p.looks.idleMin.next(0, now); b >= 0; b = p.looks.idleMin.next(b+1, now) {
		base := b * 64
		due, first := p.looks.due(base, now)
		if due == 0 {
			continue
		}
		for d := due; d != 0; d &= d - 1 {
			byBroker, brokers = p.lookAt(base+bits.TrailingZeros64(d), now, &room, byBroker, brokers)
		}
		p.looks.settleIdle(base, due, first)
	}
	for i := 1; i < len(brokers); i++ { // by broker id; a handful at most
		for j := i; j > 0 && brokers[j] < brokers[j-1]; j-- {
			brokers[j], brokers[j-1] = brokers[j-1], brokers[j]
			byBroker[j], byBroker[j-1] = byBroker[j-1], byBroker[j]
		}
	}
	for i, id := range brokers {
		p.sendRequest(id, byBroker[i])
	}
	for i := range byBroker {
		clear(byBroker[i])
	}
	p.sendBatches, p.sendBrokers = byBroker, brokers
	p.scheduleNext(now)
}

// lookAt looks at partition i for runSender: marks it idle, or adds the
// batch it may send now to its leader's list.
func (p *Client) lookAt(i int, now time.Duration, room *leaderRoom, byBroker [][]*pbatch, brokers []int32) ([][]*pbatch, []int32) {
	part, st := int32(i), p.state[i]
	if len(st.queue) == 0 {
		// Nothing to send, nor to find a leader for, until a batch
		// joins the queue (changed).
		p.looks.idle(i, never, 0)
		return byBroker, brokers
	}
	if int(part) >= len(p.parts) {
		// The latest metadata does not list the partition (a broker's
		// cache from before partitions were added): its leader is
		// unknown. Kafka's RecordAccumulator.partitionReady adds the
		// topic to unknownLeaderTopics for a partition with batches and
		// no leader, and the Sender asks for metadata again; the next
		// answer looks at every partition (lookAtAll).
		p.refreshMetadataSoon()
		p.looks.idle(i, never, 0)
		return byBroker, brokers
	}
	info := p.parts[part]
	if !info.known {
		// Kafka's sender asks for fresh metadata when a partition with
		// data to send has no known leader; without it a producer whose
		// last metadata showed no leader would wait for
		// metadata.max.age.ms.
		p.refreshMetadataSoon()
		return byBroker, brokers
	}
	// max.in.flight.requests.per.connection counts requests: one
	// request carries a ready batch of every partition the broker leads.
	if !room.has(p, info.leader) {
		// Nothing goes to its leader until a request to it ends
		// (roomMade), the metadata changes (lookAtAll) or the
		// partition does (changed).
		p.looks.idle(i, never, info.leader+1)
		return byBroker, brokers
	}
	b, until := p.nextToSend(part, now)
	if b == nil {
		p.looks.idle(i, until, 0)
		return byBroker, brokers
	}
	k := slices.Index(brokers, info.leader)
	if k < 0 {
		k = len(brokers)
		brokers = append(brokers, info.leader)
		if k < cap(byBroker) {
			byBroker = byBroker[:k+1]
			byBroker[k] = byBroker[k][:0] // a list from last time
		} else {
			byBroker = append(byBroker, nil)
		}
	}
	b.leaderSeen = info.leaderEpoch
	byBroker[k] = append(byBroker[k], b)
	return byBroker, brokers
}

// leaderRoom remembers, for the few leaders one pass of the sender meets,
// whether each may take another request (max.in.flight.requests.per.connection).
type leaderRoom struct {
	ids  [8]int32
	room [8]bool
	n    int
}

func (r *leaderRoom) has(p *Client, leader int32) bool {
	for i := range r.n {
		if r.ids[i] == leader {
			return r.room[i]
		}
	}
	ok := p.perNode.get(leader) < p.cfg.MaxInFlight
	if r.n < len(r.ids) {
		r.ids[r.n], r.room[r.n] = leader, ok
		r.n++
	}
	return ok
}

// partitionPending gives their partitions to the records sent before any
// metadata arrived, in the order they were sent, before any later record.
func (p *Client) partitionPending() {
	st := p.pending
	if st == nil || !p.metaValid || len(p.parts) == 0 {
		return
	}
	p.pending = nil
	for _, b := range st.queue {
		for i, r := range b.records {
			p.append(pendingRecord{record: r, partition: b.explicit[i], cb: b.callback(i)})
		}
	}
}

// nextToSend picks the batch of a partition that may go now, if any: a
// retry's backoff must be over; an idempotent producer sends a partition's
// batches in sequence order and resends a retried batch only once it is the
// first of the partition's batches holding sequences, so the broker sees
// sequences in order (shouldStop, Kafka's RecordAccumulator.
// shouldStopDrainBatchesForPartition). With none, it says until when none
// can be ready unless the partition changes (its version) or the epoch is
// bumped: a linger or a backoff running out is the only thing time changes
// here.
func (p *Client) nextToSend(part int32, now time.Duration) (*pbatch, time.Duration) {
	st := p.state[part]
	if p.cfg.EnableIdempotence && st.rewrite {
		// Its sequences start again once its requests end
		// (rewriteSequences).
		return nil, never
	}
	// Kafka's Sender mutes a partition while one of its batches is in
	// flight when max.in.flight.requests.per.connection is 1
	// (guaranteeMessageOrder), whichever broker it went to.
	if p.cfg.MaxInFlight == 1 && st.inflight > 0 {
		return nil, never
	}
	for i, b := range st.queue {
		if b.inflight {
			continue
		}
		// Kafka's RecordAccumulator.ready: a batch goes before its linger
		// is up when it is full or another batch waits behind it in the
		// partition's deque, which holds the batches not yet sent (one in
		// flight has left it).
		ready := b.closed || now-b.created >= p.cfg.LingerMs || unsentAfter(st.queue[i+1:])
		if b.attempts > 0 {
			if now < b.retryAt {
				return nil, b.retryAt
			}
		} else if !ready {
			return nil, b.created + p.cfg.LingerMs
		}
		if p.cfg.EnableIdempotence && p.shouldStop(st, b) {
			return nil, never
		}
		return b, 0
	}
	return nil, never
}

// shouldStop says whether an idempotent producer must hold back b, the first
// batch of its partition not in flight, as Kafka's RecordAccumulator.
// shouldStopDrainBatchesForPartition does: a batch without a sequence while
// batches holding the partition's sequences under a former epoch are not
// settled (a new epoch's sequence 0 could land before them), or while the
// partition's sequences are unresolved; a retried batch until it is the
// first of the partition's batches holding sequences (it waits for those
// before it, not for later ones still in flight).
func (p *Client) shouldStop(st *partitionState, b *pbatch) bool {
	if b.baseSeq < 0 {
		if p.stale(st) && hasSequenced(st) {
			return true
		}
		if st.unresolved {
			return true
		}
		// The model's own bound: a partition's new batches in flight at
		// once (a leader that moved could otherwise take more).
		return st.inflight >= p.cfg.MaxInFlight
	}
	return firstInFlightSequence(st) != b.baseSeq
}

func (p *Client) sendRequest(broker int32, batches []*pbatch) {
	p.corr++
	sr := p.newSentRequest()
	req := &sr.req
	*req = proto.ProduceRequest{CorrelationID: p.corr, TransactionalID: p.cfg.TransactionalID, Acks: p.cfg.Acks, Timeout: p.cfg.RequestTimeout,
		Partitions: sr.parts[:0], Reuse: sim.Reuse{Owner: sr}}
	if len(batches) > len(sr.parts) {
		req.Partitions = make([]proto.ProducePartition, 0, len(batches))
	}
	for _, b := range batches {
		st := p.partState(b.partition)
		if p.cfg.EnableIdempotence && b.baseSeq < 0 {
			if p.stale(st) && !hasSequenced(st) {
				// Kafka's TransactionManager.maybeUpdateProducerIdAndEpoch:
				// the partition moves to the producer's id and epoch, its
				// sequences from 0, once its former batches are settled.
				p.startSequencesAtBeginning(st)
			}
			b.baseSeq, b.epoch = st.nextSeq, st.epoch
			st.nextSeq += int32(len(b.records))
			b.built = nil
		}
		if b.built == nil {
			prod := record.Producer{ID: record.NoProducer}
			if p.cfg.EnableIdempotence {
				prod = record.Producer{ID: st.pid, Epoch: b.epoch, BaseSequence: b.baseSeq}
			}
			// The records become the batch's (shared with the logs and the
			// history, which require them never to change): record.New
			// numbers them in place, and a rebuild after an epoch bump
			// writes the same numbers again.
			b.built = p.arena.New(b.records, prod, p.Transactional(), p.cfg.Compression)
			p.Stats.RecordsBytes += int64(b.built.RecordsBytes())
			p.Stats.Batches++
		}
		b.closed = true
		b.inflight = true
		b.request = p.corr
		b.attempts++
		st.changed()
		if b.attempts > 1 {
			p.Stats.Retries++
		}
		st.inflight++
		p.Stats.BytesSent += int64(b.built.SizeBytes())
		req.Partitions = append(req.Partitions, proto.ProducePartition{
			TopicPartition: proto.TopicPartition{Topic: p.cfg.Topic, Partition: b.partition}, Batch: b.built})
	}
	node := p.brokers[broker]
	p.Stats.Requests++
	p.env.Send(node, req)
	if p.cfg.Acks == proto.AcksNone {
		// acks=0: the send is done once it is on the wire; nobody will say
		// whether it arrived.
		for _, b := range batches {
			st := p.partState(b.partition)
			st.inflight--
			st.changed()
			b.inflight = false
			b.maybe = true
			p.complete(b, history.Info, -1, "acks=0: no acknowledgement")
		}
		p.wakeSender(0) // nothing will answer: drain what else is ready
		return
	}
	ir := &sr.ir
	*ir = inflightReq{broker: broker, node: node, batches: append(sr.batches[:0:len(sr.batches)], batches...), sent: sr}
	sr.timeout = newTimer(timerRequest, p.corr)
	ir.timer = p.env.After(p.cfg.RequestTimeout, &sr.timeout)
	p.inflight.Add(p.corr, ir)
	p.perNode.add(broker, 1)
}

// sentRequest is a produce request and what the producer keeps of it while
// it is in flight: the request, its partitions (a handful) and its
// in-flight record in one allocation, reused once the request is answered
// if the world delivered it exactly once (a duplicate might still arrive;
// a broker keeps nothing of a request it answered).
type sentRequest struct {
	req   proto.ProduceRequest
	ir    inflightReq
	parts [2]proto.ProducePartition
	// batches backs ir.batches when they are few.
	batches [2]*pbatch
	timeout ptimer
	// delivered: the world delivered the request, its only copy.
	delivered bool
	// poisoned: freed and filled with nonsense (tests).
	poisoned bool
}

// spareRequestsMax bounds the answered requests a producer keeps for reuse.
const spareRequestsMax = 16

func (p *Client) newSentRequest() *sentRequest {
	if sr := p.spareRequests.Get(); sr != nil {
		*sr = sentRequest{}
		return sr
	}
	return &sentRequest{}
}

// TakeBack implements sim.Owner.
func (sr *sentRequest) TakeBack() {
	if sr.poisoned {
		panic("producer: a request freed for reuse was delivered")
	}
	sr.delivered = true
}

// answered frees a request its answer came back for, if the world
// delivered it exactly once.
func (p *Client) answered(sr *sentRequest) {
	if !sr.delivered {
		return
	}
	p.Stats.RequestsReused++
	if proto.PoisonFreed {
		sr.poisoned = true
		sr.req.CorrelationID, sr.req.Acks, sr.req.Timeout = proto.FreedCorrelationID, 99, -1
		for i := range sr.req.Partitions {
			sr.req.Partitions[i].Batch = nil // a broker that takes it dies
		}
		return
	}
	clear(sr.batches[:])
	clear(sr.parts[:])
	p.spareRequests.Put(sr, spareRequestsMax)
}

// unsentAfter reports whether a batch not in flight is among batches.
func unsentAfter(batches []*pbatch) bool {
	for _, b := range batches {
		if !b.inflight {
			return true
		}
	}
	return false
}

// scheduleNext wakes the sender for the next linger expiry, retry or expiry.
func (p *Client) scheduleNext(now time.Duration) {
	p.looks.staleAfterJumpBack(now)
	// The blocks whose first wake-up is stale or passed; every other
	// block's is ahead, and the one.
	for b := p.looks.blockMin.next(0, now); b >= 0; b = p.looks.blockMin.next(b+1, now) {
		// The block's first wake-up: the first of those known and ahead,
		// and of those found again (each writes only its own).
		base := b * 64
		first, again := p.looks.earliestWake(base, now)
		for ; again != 0; again &= again - 1 {
			first = min(first, p.firstWake(base+bits.TrailingZeros64(again), now))
		}
		p.looks.wakesFound(b, first)
	}
	if next := p.looks.blockMin.first(); next < never {
		p.wakeSender(next - now)
	}
}

// firstWake finds partition i's first wake-up after now again, computing
// its wake-ups first when they are stale.
func (p *Client) firstWake(i int, now time.Duration) time.Duration {
	st := p.state[i]
	if p.looks.firstWake[i] == wakesStale {
		st.wakes = p.wakesOf(st)
		slices.Sort(st.wakes[:]) // the first one still ahead is the one
	}
	first := never
	for _, t := range st.wakes {
		if t > now {
			first = t
			break
		}
	}
	p.looks.setFirstWake(i, first)
	return first
}

// wakesOf are the times a partition's queue asks the sender to look again:
// its oldest batch's delivery timeout, the retry of the first batch not in
// flight, the linger of its last batch. Batches queue oldest first, so a
// few of them tell.
func (p *Client) wakesOf(st *partitionState) (w [3]time.Duration) {
	if len(st.queue) == 0 {
		return w
	}
	w[0] = st.queue[0].created + p.cfg.DeliveryTimeout
	for _, b := range st.queue {
		if b.inflight {
			continue
		}
		if b.attempts > 0 {
			w[1] = b.retryAt
		}
		break
	}
	if last := st.queue[len(st.queue)-1]; !last.inflight && last.attempts == 0 {
		w[2] = last.created + p.cfg.LingerMs
	}
	return w
}

func (p *Client) handleProduceResponse(m *proto.ProduceResponse) {
	ir, ok := p.inflight.Get(m.CorrelationID)
	if !ok {
		return // answered after we gave up on it: the batches were settled
	}
	p.finishRequest(m.CorrelationID, ir)
	for _, b := range ir.batches {
		r, ok := resultFor(m, b.partition)
		if b.done {
			// Settled when its delivery timeout expired: the application
			// was told. An acknowledgement still counts for the
			// partition's sequences (Kafka's Sender.completeBatch calls
			// TransactionManager.handleCompletedBatch before
			// ProducerBatch.complete, which does nothing for a done
			// batch); an error is dropped (Sender.canRetry and failBatch
			// do nothing for a done batch).
			if ok && r.Error == proto.None {
				p.noteAcked(b)
			}
			p.release(b)
			continue
		}
		if !ok {
			p.retryOrFail(b, proto.NetworkException, true)
			continue
		}
		if r.Error == proto.None {
			p.acked(b, r.BaseOffset)
			continue
		}
		p.retryOrFail(b, r.Error, mayHaveAppended(r.Error))
	}
	p.answered(ir.sent)
	p.runSender()
}

// resultFor is the response's answer for a partition (the last, should a
// broker answer one twice).
func resultFor(m *proto.ProduceResponse, partition int32) (proto.ProducePartitionResponse, bool) {
	for i := len(m.Partitions) - 1; i >= 0; i-- {
		if m.Partitions[i].Partition == partition {
			return m.Partitions[i], true
		}
	}
	return proto.ProducePartitionResponse{}, false
}

func (p *Client) finishRequest(corr uint64, ir *inflightReq) {
	p.inflight.Remove(corr)
	p.env.Cancel(ir.timer)
	p.perNode.add(ir.broker, -1)
	p.looks.roomMade(ir.broker)
	for _, b := range ir.batches {
		if b.done {
			continue // out of its partition's bookkeeping already (expire)
		}
		if !b.inflight || b.request != corr {
			panic(fmt.Sprintf("producer %s: a batch of request %d is not in flight in it (in flight: %v, in request %d)", p.cfg.Name, corr, b.inflight, b.request))
		}
		b.inflight = false
		st := p.partState(b.partition)
		st.inflight--
		st.changed()
	}
}

// connectionLost settles every request in flight on the connection to node,
// which died or which the producer closed because a request on it timed out:
// Kafka's NetworkClient fails them all at once (cancelInFlightRequests, with
// REQUEST_TIMED_OUT for every one when a request timed out, handleTimedOutRequests
// and processTimeoutDisconnection, NETWORK_EXCEPTION for a disconnection;
// Sender.handleProduceResponse reads wasTimedOut and wasDisconnected).
// Whatever they carried may have been appended.
//
// A metadata request on that connection is lost with it: Kafka counts it a
// failed update (DefaultMetadataUpdater.handleFailedRequest, Metadata.
// failedUpdate), and asks again once retry.backoff.ms has passed since
// (Metadata.timeToAllowUpdate). An InitProducerId request lost with it is
// sent again after retry.backoff.ms too (TransactionManager.TxnRequestHandler.
// onComplete re-enqueues it as a retry, and Sender.
// maybeSendAndPollTransactionalRequest sleeps retryBackoffMs before a
// retry). Otherwise the disconnection asks for fresh metadata
// (DefaultMetadataUpdater.handleServerDisconnect).
func (p *Client) connectionLost(node sim.NodeID, err proto.ErrorCode) {
	for _, corr := range p.inflightFor(node) {
		ir, _ := p.inflight.Get(corr)
		p.finishRequest(corr, ir)
		for _, b := range ir.batches {
			if b.done {
				p.release(b)
				continue
			}
			p.retryOrFail(b, err, true)
		}
	}
	if p.metaCorr != 0 && p.metaSent && p.metaTo == node {
		p.metaCorr = 0
		p.refreshMetadataSoon()
	}
	if p.pidCorr != 0 && p.pidSent && p.pidTo == node {
		p.corr++
		p.pidCorr, p.pidSent = p.corr, false
		p.env.After(p.cfg.RetryBackoff, newTimer(timerInitPID, p.corr))
	}
	p.txnConnectionLost(node)
	p.refreshMetadata()
	p.runSender()
}

// mayHaveAppended says whether a batch answered with err may be in the log:
// the broker appended before it found the trouble, or nobody knows.
// NOT_LEADER_OR_FOLLOWER is one of those: an acks=all write appended by a
// leader that lost leadership while it waited is answered with it.
func mayHaveAppended(err proto.ErrorCode) bool {
	switch err {
	case proto.NotEnoughReplicas, proto.UnknownTopicOrPartition, proto.InvalidProducerEpoch,
		proto.OutOfOrderSequenceNumber, proto.InvalidRequiredAcks, proto.KafkaStorageError, proto.UnknownLeaderEpoch,
		proto.FencedLeaderEpoch, proto.InvalidRecord,
		// A transactional produce refused before the append: the
		// leader's AddPartitionsToTxn to the coordinator failed (KIP-890).
		proto.TransactionAbortable, proto.ProducerFenced, proto.InvalidTxnState, proto.InvalidProducerIDMapping,
		proto.ConcurrentTransactions, proto.NotCoordinator, proto.CoordinatorNotAvailable, proto.CoordinatorLoadInProgress,
		proto.OperationNotAttempted:
		return false
	}
	return true // REQUEST_TIMED_OUT, NOT_ENOUGH_REPLICAS_AFTER_APPEND, network errors
}

func retriable(err proto.ErrorCode) bool {
	switch err {
	case proto.NotLeaderOrFollower, proto.NotEnoughReplicas, proto.NotEnoughReplicasAfterAppend, proto.RequestTimedOut,
		proto.NetworkException, proto.UnknownTopicOrPartition, proto.KafkaStorageError, proto.UnknownLeaderEpoch,
		proto.FencedLeaderEpoch, proto.OutOfOrderSequenceNumber,
		// RetriableExceptions a transactional produce may meet while its
		// leader adds the partition to the transaction.
		proto.ConcurrentTransactions, proto.NotCoordinator, proto.CoordinatorNotAvailable, proto.CoordinatorLoadInProgress:
		return true
	}
	return false
}

// retryOrFail retries a batch an answer (or a lost request) failed, or
// settles it, as Kafka's Sender.completeBatch does: retried while the error
// is retriable, retries are left and its delivery timeout has not passed
// (Sender.canRetry, TransactionManager.canRetry), failed otherwise
// (settleFailed, Sender.failBatch).
func (p *Client) retryOrFail(b *pbatch, err proto.ErrorCode, maybe bool) {
	b.maybe = b.maybe || maybe
	now := p.env.Now()
	switch err {
	case proto.NotLeaderOrFollower, proto.UnknownTopicOrPartition, proto.FencedLeaderEpoch, proto.UnknownLeaderEpoch,
		proto.NetworkException, proto.KafkaStorageError:
		p.refreshMetadata()
	}
	st := p.partState(b.partition)
	b.outOfOrder = err == proto.OutOfOrderSequenceNumber && p.cfg.EnableIdempotence && !st.unresolved &&
		(b.reset || !isNextSequence(st, b.baseSeq))
	// A transactional producer does not rewrite the sequences of a batch
	// answered out of order as the next sequence (TransactionManager.
	// canRetry says no): it fails, and the transaction must abort, whose
	// EndTxn bumps the epoch.
	txnGap := p.Transactional() && err == proto.OutOfOrderSequenceNumber && !b.outOfOrder
	if retriable(err) && !txnGap && b.attempts <= p.cfg.Retries && now-b.created < p.cfg.DeliveryTimeout {
		if err == proto.OutOfOrderSequenceNumber && p.cfg.EnableIdempotence {
			p.outOfOrder(st, b)
		}
		b.retryAt = now + p.backoff(b.attempts)
		st.changed()
		return
	}
	// Kafka adjusts sequences for a batch that failed with retries left
	// (Sender.completeBatch: failBatch(batch, response, attempts < retries)).
	p.settleFailed(b, err.String(), err, b.attempts <= p.cfg.Retries)
}

// outOfOrder decides, for a batch an OUT_OF_ORDER_SEQUENCE_NUMBER answer
// sends back to be retried, whether the partition's sequences must start
// again (Kafka's TransactionManager.canRetry). The batch is the very next
// the broker should expect (or the one after an unresolved batch), yet it
// says out of order: it lost our state (a truncation); the partition
// bumps the epoch and starts its sequences again (KIP-360). Otherwise an
// earlier batch is missing, and this one waits for it, or for its delivery
// timeout.
func (p *Client) outOfOrder(st *partitionState, b *pbatch) {
	if !st.unresolved && (b.reset || !isNextSequence(st, b.baseSeq)) {
		return
	}
	if st.unresolved && b.baseSeq != st.unresolvedNext {
		return
	}
	p.requestEpochBump(st)
	// It is sent again under the new epoch, as Kafka's
	// startSequencesAtBeginning rewrites it, whatever an earlier attempt
	// met (NOT_LEADER_OR_FOLLOWER from a deposed leader, a timeout): given
	// up, it would never be written.
	//
	// The answer does not say the batch is not in the log, so an earlier
	// attempt that may have been appended still may: a leader whose
	// producer state was loaded from a snapshot knows only each producer's
	// last batch (as Kafka's does), and answers a retry of an earlier batch
	// it holds as out of order. Should the rewritten batch then expire, its
	// send is indeterminate, not failed (fuzz seed 4005450); should it be
	// written, Kafka writes it twice, and so does the model (the audit
	// records the forgotten batch).
	b.rewrite = true
}

// backoff is Kafka's ExponentialBackoff: retry.backoff.ms doubling up to
// retry.backoff.max.ms, with 20% jitter.
func (p *Client) backoff(attempts int) time.Duration {
	d := float64(p.cfg.RetryBackoff)
	for i := 1; i < attempts && d < float64(p.cfg.RetryBackoffMax); i++ {
		d *= 2
	}
	d = min(d, float64(p.cfg.RetryBackoffMax))
	jitter := 0.8 + 0.4*p.env.Rand().Float64()
	return time.Duration(d * jitter)
}

// settleFailed ends a batch that will not be retried (Kafka's Sender.
// failBatch): fail if no attempt can have been appended, info otherwise.
// An idempotent producer then asks for an epoch bump of the batch's
// partition when the broker answered it out of order, or when sequences
// are to be adjusted (adjust: it failed with retries left); Kafka's
// TransactionManager.handleFailedBatch does so for an idempotent producer,
// where a transactional one takes the sequences back.
func (p *Client) settleFailed(b *pbatch, why string, err proto.ErrorCode, adjust bool) {
	t := history.Fail
	if b.maybe {
		t = history.Info
	}
	if p.Transactional() {
		// TransactionManager.handleFailedBatch: fenced is fatal, any other
		// failure makes the transaction abortable.
		p.complete(b, t, -1, why)
		p.failedBatch(err, why)
		return
	}
	if p.cfg.EnableIdempotence && b.baseSeq >= 0 && (err == proto.OutOfOrderSequenceNumber || adjust) {
		p.requestEpochBump(p.partState(b.partition))
	}
	p.complete(b, t, -1, why)
}

func (p *Client) acked(b *pbatch, base int64) {
	p.noteAcked(b)
	p.complete(b, history.OK, base, "")
}

// noteAcked counts an acknowledged batch's sequences as the partition's
// last acknowledged ones, if it holds sequences of the partition's epoch
// (Kafka's TransactionManager.handleCompletedBatch).
func (p *Client) noteAcked(b *pbatch) {
	if st := p.partState(b.partition); b.baseSeq >= 0 && b.epoch == st.epoch {
		st.lastAcked = max(st.lastAcked, b.baseSeq+int32(len(b.records))-1)
	}
}

// complete tells every record's callback how its settled batch ended, and
// removes it (Kafka's ProducerBatch.complete or completeExceptionally,
// once). A batch settled while in flight is kept until its request ends
// (release).
func (p *Client) complete(b *pbatch, t history.Type, base int64, why string) {
	st := p.partState(b.partition)
	st.queue = slices.DeleteFunc(st.queue, func(x *pbatch) bool { return x == b })
	st.changed()
	for i := range b.records {
		m := RecordMetadata{Topic: p.cfg.Topic, Partition: b.partition, Offset: -1}
		switch t {
		case history.OK:
			m.Offset = base + int64(i)
			p.Stats.Acked++
		case history.Fail:
			p.Stats.Failed++
		default:
			p.Stats.Indeterminate++
		}
		if cb := b.callback(i); cb != nil {
			cb.OnCompletion(&b.records[i], m, t, why)
		}
	}
	if !b.done {
		p.release(b)
	}
}

// release lets a settled batch be reused: nothing refers to it any more.
func (p *Client) release(b *pbatch) {
	clear(b.records) // the strings they hold go
	clear(b.callbacks)
	*b = pbatch{records: b.records[:0], explicit: b.explicit[:0], callbacks: b.callbacks[:0]}
	p.spareBatches.Put(b, spareBatchesMax)
}

// expire fails batches past delivery.timeout.ms, queued or in flight, as
// Kafka's Sender.sendProducerData does (RecordAccumulator.expiredBatches,
// Sender.getExpiredInflightBatches), oldest first: the first that has time
// left ends the look. One in flight may still be written: its send is
// unknown (info); its request's answer, when it comes, tells the
// application nothing. An idempotent producer marks the sequences of a
// batch that had been retried unresolved (Kafka: markSequenceUnresolved
// when ProducerBatch.inRetry).
func (p *Client) expire(now time.Duration) {
	if p.haveFloor && now-p.expireFloor < p.cfg.DeliveryTimeout {
		return // nothing queued is old enough
	}
	defer p.setExpireFloor()
	for _, st := range p.state {
		for len(st.queue) > 0 {
			b := st.queue[0]
			if now-b.created < p.cfg.DeliveryTimeout {
				break
			}
			// Kafka's inRetry: the batch came back from an attempt that
			// failed (one in flight now: from one before this one). One
			// expired in flight on its first attempt is not marked, as in
			// Kafka 4.3: should its late answer say it was not appended
			// (an answer to a batch already done changes nothing), its
			// sequences are neither acknowledged nor unresolved, and the
			// partition's next batch meets OUT_OF_ORDER_SEQUENCE_NUMBER,
			// is retried as not the next sequence (canRetry) and expires
			// in retry, which marks the gap and bumps the epoch: the
			// partition writes nothing for a delivery timeout (fuzz seeds
			// 353383, 353509).
			inRetry := b.attempts > 1 || (b.attempts == 1 && !b.inflight)
			if b.inflight {
				// Out of its partition's bookkeeping now (Kafka's
				// handleFailedBatch: removeInFlightBatch), in its request
				// until that ends.
				b.inflight, b.done, b.maybe = false, true, true
				st.inflight--
			}
			if p.cfg.EnableIdempotence && inRetry && b.baseSeq >= 0 {
				p.markSequenceUnresolved(st, b)
			}
			p.settleFailed(b, "delivery.timeout.ms expired", proto.None, false) // removes it from the queue
		}
	}
}

// setExpireFloor finds the oldest batch queued (every batch: a clock that
// jumped back may have put an older creation time behind a newer one).
func (p *Client) setExpireFloor() {
	p.haveFloor, p.expireFloor = true, time.Duration(math.MaxInt64)
	for _, st := range p.state {
		for _, b := range st.queue {
			p.expireFloor = min(p.expireFloor, b.created)
		}
	}
}

// refreshMetadataSoon asks for metadata after retry.backoff.ms, unless a
// request is already on its way.
func (p *Client) refreshMetadataSoon() {
	if p.metaCorr != 0 {
		return
	}
	p.corr++
	p.metaCorr = p.corr
	p.metaSent = false
	p.env.After(p.cfg.RetryBackoff, newTimer(timerMetadata, p.corr))
}
