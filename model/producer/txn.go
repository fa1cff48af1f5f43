package producer

import (
	"slices"

	"kafkasim/history"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// The transactional producer, after Kafka 4's TransactionManager with
// transaction version 2 (KIP-890): initTransactions finds the transaction
// coordinator and asks it for the producer id and epoch (which fences any
// earlier instance of the transactional.id); beginTransaction is local;
// sends carry the transactional.id and the partition leaders add their
// partitions to the transaction (no AddPartitionsToTxn from the client);
// sendOffsetsToTransaction goes straight to the group coordinator
// (TxnOffsetCommit, no AddOffsetsToTxn); commit and abort flush (abort:
// drop the batches not yet drained) and send EndTxn, whose answer carries
// the bumped epoch the next transaction's sequences start from.
//
// One transactional request is outstanding at a time, and no produce
// request goes while one is in flight (Sender.
// maybeSendAndPollTransactionalRequest).

// TxnState is the transactional producer's state (Kafka's
// TransactionManager.State).
type TxnState uint8

// Transactional producer states.
const (
	TxnUninitialized TxnState = iota
	TxnInitializing
	TxnReady
	TxnInTransaction
	TxnCommitting
	TxnAborting
	TxnAbortableError
	TxnFatalError
)

var txnStateNames = [...]string{"UNINITIALIZED", "INITIALIZING", "READY", "IN_TRANSACTION", "COMMITTING_TRANSACTION",
	"ABORTING_TRANSACTION", "ABORTABLE_ERROR", "FATAL_ERROR"}

func (s TxnState) String() string { return txnStateNames[s] }

// TxnOp names a transactional operation whose end a TxnCallback hears.
type TxnOp uint8

// Transactional operations.
const (
	TxnOpInit TxnOp = iota
	TxnOpCommit
	TxnOpAbort
	TxnOpSendOffsets
)

// TxnCallback is told how a transactional operation ended: history.OK;
// history.Fail, it did not take effect (a commit: the transaction is not
// committed and must be aborted); history.Info, nobody knows (a commit
// whose EndTxn may have been written before the producer was fenced). why
// names the error.
type TxnCallback interface {
	OnTxnResult(op TxnOp, outcome history.Type, why string)
}

// GroupMetadata is the consumer group member a sendOffsetsToTransaction is
// for (Kafka's ConsumerGroupMetadata): the group coordinator fences a
// TxnOffsetCommit from a stale generation or member epoch (KIP-447).
type GroupMetadata struct {
	GroupID                   string
	GenerationIDOrMemberEpoch int32
	MemberID                  string
	GroupInstanceID           string
}

type txnReqKind uint8

const (
	reqFindCoordinator txnReqKind = iota
	reqInitPID
	reqEndTxn
	reqTxnOffsetCommit
)

// txnRequest is one of the transactional requests Kafka's TransactionManager
// queues (pendingRequests): a TxnRequestHandler.
type txnRequest struct {
	kind    txnReqKind
	commit  bool   // EndTxn: commit (else abort)
	keyType int8   // FindCoordinator
	key     string // FindCoordinator: the transactional.id or group
	group   GroupMetadata
	offsets []proto.OffsetCommitPartition // TxnOffsetCommit: still to be committed
	// attempts counts the times it was sent.
	attempts int
	// bump: an InitProducerId with the producer's id and epoch (KIP-360)
	// that ends an abort in place of EndTxn.
	bump bool
}

// txnManager is the Client's transactional state.
type txnManager struct {
	state TxnState
	// lastErr is the error that put the producer in AbortableError or
	// FatalError.
	lastErr string
	// pidMappingLost: the error was INVALID_PRODUCER_ID_MAPPING (Kafka's
	// lastError instanceof InvalidPidMappingException): the coordinator
	// has no mapping of the transactional id to the producer id (its
	// __transaction_state lost it, or it expired), so it would refuse the
	// abort's EndTxn too.
	pidMappingLost bool
	// started: a record was sent or offsets were sent in the transaction
	// (Kafka's transactionStarted with TV2): without it commit and abort
	// end locally, with no EndTxn.
	started bool
	// coord is the transaction coordinator, when known.
	coord      sim.NodeID
	coordKnown bool
	// groupCoord is the group coordinator of the group offsets are sent
	// for (one group at a time, as a stream processor has).
	groupCoordKey string
	groupCoord    sim.NodeID
	groupKnown    bool
	pending       []*txnRequest
	// inflight is the request in flight (corr, to, timer), or waiting out
	// its backoff (backoff).
	inflight *txnRequest
	corr     uint64
	to       sim.NodeID
	timer    sim.TimerID
	backoff  bool
	cb       TxnCallback
	// endSent: the EndTxn now pending or in flight was sent at least once
	// (an attempt may have been written).
	endSent bool
}

// Transactional reports whether the client has a transactional.id.
func (p *Client) Transactional() bool { return p.cfg.TransactionalID != "" }

// TxnState is the transactional producer's state.
func (p *Client) TxnState() TxnState { return p.txn.state }

// TxnError is the error behind an AbortableError or FatalError state.
func (p *Client) TxnError() string { return p.txn.lastErr }

// ProducerIDAndEpoch are the producer id and epoch the client writes with
// now (-1, -1 before it has one).
func (p *Client) ProducerIDAndEpoch() (int64, int16) { return p.pid, p.epoch }

// InitTransactions finds the transaction coordinator and asks it for the
// producer id and epoch (KafkaProducer.initTransactions); cb hears
// TxnOpInit's end. A producer in FatalError (fenced) stays there.
func (p *Client) InitTransactions(cb TxnCallback) {
	p.txn.cb = cb
	if p.txn.state != TxnUninitialized {
		p.txnResult(TxnOpInit, history.Fail, "cannot initialize transactions in state "+p.txn.state.String())
		return
	}
	p.txn.state = TxnInitializing
	p.enqueueTxn(&txnRequest{kind: reqInitPID})
	p.wakeSender(0)
}

// BeginTransaction starts a transaction, locally (KafkaProducer.
// beginTransaction): the first send or offsets sent make it one the
// coordinator knows.
func (p *Client) BeginTransaction() bool {
	if p.txn.state != TxnReady {
		return false
	}
	p.txn.state, p.txn.started = TxnInTransaction, false
	return true
}

// CommitTransaction flushes the transaction's records and commits it
// (KafkaProducer.commitTransaction); cb hears TxnOpCommit's end. A
// producer in AbortableError fails the commit at once: the application
// must abort.
func (p *Client) CommitTransaction() {
	switch p.txn.state {
	case TxnInTransaction:
	case TxnAbortableError, TxnFatalError:
		p.txnResult(TxnOpCommit, history.Fail, p.txn.lastErr)
		return
	default:
		p.txnResult(TxnOpCommit, history.Fail, "cannot commit in state "+p.txn.state.String())
		return
	}
	p.txn.state = TxnCommitting
	p.endTxn(true)
}

// AbortTransaction aborts the transaction (KafkaProducer.abortTransaction):
// its batches not yet sent are dropped, those in flight are waited for,
// then EndTxn(abort). It is how an AbortableError ends; cb hears
// TxnOpAbort's end.
func (p *Client) AbortTransaction() {
	switch p.txn.state {
	case TxnInTransaction, TxnAbortableError:
	default:
		p.txnResult(TxnOpAbort, history.Fail, "cannot abort in state "+p.txn.state.String())
		return
	}
	p.txn.state = TxnAborting
	p.endTxn(false)
}

func (p *Client) endTxn(commit bool) {
	p.txn.endSent = false
	if !commit && p.txn.pidMappingLost {
		// TransactionManager.beginCompletingTransaction: the coordinator
		// would refuse EndTxn, so the abort goes straight to
		// InitProducerId with the id and epoch, which maps the
		// transactional id to a producer id again (KIP-360: a new
		// mapping's epoch is -1, so the named id is not fenced).
		p.enqueueTxn(&txnRequest{kind: reqInitPID, bump: true})
		p.flush()
		p.wakeSender(0)
		return
	}
	p.enqueueTxn(&txnRequest{kind: reqEndTxn, commit: commit})
	p.flush()
	p.wakeSender(0)
}

// SendOffsetsToTransaction commits a consumer group's offsets in the
// transaction (KafkaProducer.sendOffsetsToTransaction with TV2: a
// TxnOffsetCommit to the group coordinator, which adds the offsets
// partition to the transaction itself); cb hears TxnOpSendOffsets's end.
func (p *Client) SendOffsetsToTransaction(offsets []proto.OffsetCommitPartition, g GroupMetadata) {
	if p.txn.state != TxnInTransaction {
		why := p.txn.lastErr
		if why == "" {
			why = "cannot send offsets in state " + p.txn.state.String()
		}
		p.txnResult(TxnOpSendOffsets, history.Fail, why)
		return
	}
	p.txn.started = true
	p.enqueueTxn(&txnRequest{kind: reqTxnOffsetCommit, group: g, offsets: slices.Clone(offsets)})
	p.wakeSender(0)
}

func (p *Client) txnResult(op TxnOp, t history.Type, why string) {
	if p.txn.cb != nil {
		p.txn.cb.OnTxnResult(op, t, why)
	}
}

func (p *Client) enqueueTxn(r *txnRequest) { p.txn.pending = append(p.txn.pending, r) }

// flush makes every queued batch ready now (RecordAccumulator.beginFlush).
func (p *Client) flush() {
	for _, st := range p.state {
		for _, b := range st.queue {
			b.closed = true
		}
		st.changed()
	}
}

// hasIncomplete reports whether a batch is not settled yet
// (RecordAccumulator.hasIncomplete).
func (p *Client) hasIncomplete() bool {
	if p.pending != nil && len(p.pending.queue) > 0 {
		return true
	}
	for _, st := range p.state {
		if len(st.queue) > 0 {
			return true
		}
	}
	return false
}

// sendRefusal says why a transactional producer refuses a send now, or "".
// KafkaProducer.send fails a record sent outside a transaction, and one
// sent after an error (TransactionManager.maybeFailWithError).
func (p *Client) sendRefusal() string {
	switch p.txn.state {
	case TxnInTransaction:
		p.txn.started = true
		return ""
	case TxnAbortableError, TxnFatalError:
		return p.txn.lastErr
	}
	return "cannot send in state " + p.txn.state.String() + ": no transaction begun"
}

// abortableError moves the transaction to AbortableError (Kafka's
// transitionToAbortableError): only an abort gets the producer out.
// With TV2 the abort's EndTxn bumps the epoch, so no client-side bump.
func (p *Client) abortableError(why string) {
	switch p.txn.state {
	case TxnInTransaction, TxnCommitting:
		p.txn.state, p.txn.lastErr = TxnAbortableError, why
	}
}

// fatalError moves the producer to FatalError (transitionToFatalError):
// fenced, it writes nothing more; every batch not settled fails
// (Sender.maybeAbortBatches) and every request pending with it.
func (p *Client) fatalError(why string) {
	if p.txn.state == TxnFatalError {
		return
	}
	p.txn.state, p.txn.lastErr = TxnFatalError, why
	// The batches are aborted at the sender's next pass (pumpTxn), not
	// here: an answer being read may still hold some.
	p.wakeSender(0)
	pending := p.txn.pending
	if p.txn.inflight != nil {
		pending = append([]*txnRequest{p.txn.inflight}, pending...)
		p.env.Cancel(p.txn.timer)
		p.txn.inflight, p.txn.corr = nil, 0
	}
	p.txn.pending = nil
	for _, r := range pending {
		p.failTxnRequest(r, why)
	}
}

// failTxnRequest tells the application that a pending request will not
// be answered: EndTxn(commit) is unknown if an attempt went (the
// coordinator may have written PrepareCommit), failed otherwise.
func (p *Client) failTxnRequest(r *txnRequest, why string) {
	switch r.kind {
	case reqInitPID:
		op := TxnOpInit
		if r.bump {
			op = TxnOpAbort
		}
		p.txnResult(op, history.Fail, why)
	case reqEndTxn:
		t := history.Fail
		if r.commit && p.txn.endSent {
			t = history.Info
		}
		op := TxnOpAbort
		if r.commit {
			op = TxnOpCommit
		}
		p.txnResult(op, t, why)
	case reqTxnOffsetCommit:
		t := history.Fail
		if r.attempts > 0 {
			t = history.Info
		}
		p.txnResult(TxnOpSendOffsets, t, why)
	}
}

// abortBatches settles batches with why: every one not settled (fatal:
// RecordAccumulator.abortIncompleteBatches), or (undrained) only those
// never drained, which hold no sequence (abortUndrainedBatches, on abort).
func (p *Client) abortBatches(why string, undrained bool) {
	for _, st := range append([]*partitionState{p.pending}, p.state...) {
		if st == nil {
			continue
		}
		for _, b := range slices.Clone(st.queue) {
			if undrained && b.baseSeq >= 0 {
				continue
			}
			if b.inflight {
				b.inflight, b.done, b.maybe = false, true, true
				st.inflight--
			}
			t := history.Fail
			if b.maybe {
				t = history.Info
			}
			p.complete(b, t, -1, why)
		}
	}
	p.setExpireFloor()
}

// failedBatch classifies the error a transactional batch failed with
// (TransactionManager.maybeTransitionToErrorState): PRODUCER_FENCED is
// fatal; a produce's INVALID_PRODUCER_EPOCH is not (KIP-588's
// InvalidProducerEpochException: the application aborts, and the abort's
// EndTxn learns whether the producer was fenced — PRODUCER_FENCED — or its
// transaction was aborted by the coordinator on timeout, whose bumped epoch
// the abort then answers with, and the producer goes on).
func (p *Client) failedBatch(err proto.ErrorCode, why string) {
	switch err {
	case proto.ProducerFenced:
		p.fatalError(proto.ProducerFenced.String())
	default:
		p.abortableError(why)
		p.txn.pidMappingLost = p.txn.pidMappingLost || err == proto.InvalidProducerIDMapping
	}
}

// resetForNewEpoch starts every partition's sequences again under the
// epoch an EndTxn or InitProducerId gave (no batch is left: EndTxn waits
// for them).
func (p *Client) resetForNewEpoch() {
	p.needBump = false
	for _, st := range p.state {
		if st.rewrite {
			st.rewrite = false
			p.rewrites--
		}
		if st.unresolved {
			st.unresolved = false
			p.unresolved--
		}
		st.changed()
	}
	p.looks.lookAtAll()
}

// pumpTxn sends the next transactional request, if one may go now
// (Sender.maybeSendAndPollTransactionalRequest, TransactionManager.
// nextRequest). It reports whether no produce request may go: a
// transactional request is in flight, or the producer is fenced.
func (p *Client) pumpTxn() bool {
	t := &p.txn
	if t.inflight != nil {
		return !t.backoff
	}
	if t.state == TxnFatalError {
		p.abortBatches(t.lastErr, false)
		return true // nothing more is sent
	}
	if t.state == TxnAbortableError || t.state == TxnAborting {
		p.abortBatches("TransactionAbortedException: "+p.abortReason(), true)
	}
	if len(t.pending) == 0 {
		return false
	}
	r := t.pending[0]
	if (r.kind == reqEndTxn || r.bump) && p.hasIncomplete() {
		// EndTxn waits for every batch; so does the abort's
		// InitProducerId here, whose new epoch starts every partition's
		// sequences again (Kafka resets those of batches still in flight).
		return false
	}
	t.pending = t.pending[1:]
	// TransactionManager.maybeTerminateRequestWithError: an error fails
	// every request but the abort's EndTxn.
	if t.state == TxnAbortableError && !(r.kind == reqEndTxn && !r.commit) {
		p.failTxnRequest(r, t.lastErr)
		return p.pumpTxn()
	}
	if r.kind == reqEndTxn && !t.started {
		// Nothing was sent in it: the coordinator never heard of it
		// (TV2's nextRequest completes it locally).
		p.txnDone(r, history.OK, "")
		return p.pumpTxn()
	}
	p.sendTxn(r)
	return true
}

func (p *Client) abortReason() string {
	if p.txn.lastErr != "" {
		return p.txn.lastErr
	}
	return "transaction aborted"
}

// sendTxn sends r, first finding its coordinator if unknown.
func (p *Client) sendTxn(r *txnRequest) {
	t := &p.txn
	var to sim.NodeID
	var m sim.Message
	switch r.kind {
	case reqFindCoordinator:
		ids := p.brokerIDs()
		if len(ids) > 0 {
			to = p.brokers[ids[int(p.corr-p.corrBase)%len(ids)]]
		} else if len(p.cfg.Brokers) > 0 {
			to = p.cfg.Brokers[int(p.corr-p.corrBase)%len(p.cfg.Brokers)]
		} else {
			t.pending = append([]*txnRequest{r}, t.pending...)
			return
		}
		m = &proto.FindCoordinatorRequest{KeyType: r.keyType, Key: r.key}
	case reqTxnOffsetCommit:
		if !t.groupKnown || t.groupCoordKey != r.group.GroupID {
			p.findCoordinator(r, proto.CoordinatorKeyGroup, r.group.GroupID)
			return
		}
		to = t.groupCoord
		m = &proto.TxnOffsetCommitRequest{TransactionalID: p.cfg.TransactionalID, GroupID: r.group.GroupID,
			ProducerID: p.pid, ProducerEpoch: p.epoch, GenerationIDOrMemberEpoch: r.group.GenerationIDOrMemberEpoch,
			MemberID: r.group.MemberID, GroupInstanceID: r.group.GroupInstanceID, Partitions: slices.Clone(r.offsets)}
	default:
		if !t.coordKnown {
			p.findCoordinator(r, proto.CoordinatorKeyTransaction, p.cfg.TransactionalID)
			return
		}
		to = t.coord
		if r.kind == reqInitPID {
			init := &proto.InitProducerIDRequest{TransactionalID: p.cfg.TransactionalID, TransactionTimeout: p.cfg.TransactionTimeout,
				ProducerID: proto.NoProducerID, ProducerEpoch: proto.NoProducerEpoch}
			if r.bump {
				init.ProducerID, init.ProducerEpoch = p.pid, p.epoch
			}
			m = init
		} else {
			m = &proto.EndTxnRequest{TransactionalID: p.cfg.TransactionalID, ProducerID: p.pid, ProducerEpoch: p.epoch, Committed: r.commit}
			t.endSent = true
		}
	}
	p.corr++
	switch m := m.(type) {
	case *proto.FindCoordinatorRequest:
		m.CorrelationID = p.corr
	case *proto.TxnOffsetCommitRequest:
		m.CorrelationID = p.corr
	case *proto.InitProducerIDRequest:
		m.CorrelationID = p.corr
	case *proto.EndTxnRequest:
		m.CorrelationID = p.corr
	}
	r.attempts++
	t.inflight, t.corr, t.to, t.backoff = r, p.corr, to, false
	p.Stats.Requests++
	p.env.Send(to, m)
	t.timer = p.env.After(p.cfg.RequestTimeout, newTimer(timerTxnRequest, p.corr))
}

// findCoordinator puts a FindCoordinator before r (TransactionManager.
// lookupCoordinator) and sends it.
func (p *Client) findCoordinator(r *txnRequest, keyType int8, key string) {
	p.txn.pending = append([]*txnRequest{r}, p.txn.pending...)
	p.sendTxn(&txnRequest{kind: reqFindCoordinator, keyType: keyType, key: key})
}

// retryTxn sends the request in flight again after retry.backoff.ms
// (TxnRequestHandler.reenqueue; Sender sleeps retryBackoffMs before a
// retry), first finding its coordinator again when lookup.
func (p *Client) retryTxn(lookup bool) {
	t := &p.txn
	r := t.inflight
	p.env.Cancel(t.timer)
	if lookup {
		switch r.kind {
		case reqTxnOffsetCommit:
			t.groupKnown = false
		case reqInitPID, reqEndTxn:
			t.coordKnown = false
		}
	}
	if r.kind == reqFindCoordinator {
		// The request it was found for is at the head of pending: find
		// again with it.
		r = t.pending[0]
		t.pending = t.pending[1:]
		t.inflight = r
	}
	p.corr++
	t.corr, t.backoff = p.corr, true
	t.timer = p.env.After(p.cfg.RetryBackoff, newTimer(timerTxnRetry, p.corr))
}

// txnTimer handles a transactional request's timeout (the connection is
// closed and the request sent again after finding its coordinator) and the
// end of a retry's backoff.
func (p *Client) txnTimer(pt ptimer) {
	t := &p.txn
	if t.inflight == nil || pt.corr() != t.corr {
		return
	}
	if pt.kind() == timerTxnRequest {
		p.env.CloseConnection(t.to)
		p.connectionLost(t.to, proto.RequestTimedOut)
		return
	}
	r := t.inflight
	t.inflight, t.corr, t.backoff = nil, 0, false
	t.pending = append([]*txnRequest{r}, t.pending...)
	p.runSender()
}

// txnConnectionLost retries the transactional request in flight on a
// connection that is gone (TxnRequestHandler.onComplete: wasDisconnected
// re-enqueues it), finding its coordinator again.
func (p *Client) txnConnectionLost(node sim.NodeID) {
	t := &p.txn
	if t.inflight != nil && !t.backoff && t.to == node {
		p.retryTxn(true)
	}
}

// txnAnswer takes the answer to the transactional request in flight, if m
// is it.
func (p *Client) txnAnswer(corr uint64) (*txnRequest, bool) {
	t := &p.txn
	if t.inflight == nil || t.backoff || corr != t.corr {
		return nil, false
	}
	return t.inflight, true
}

// txnDone ends request r: the in-flight slot is free again.
func (p *Client) txnDone(r *txnRequest, outcome history.Type, why string) {
	t := &p.txn
	if t.inflight == r {
		p.env.Cancel(t.timer)
		t.inflight, t.corr = nil, 0
	}
	switch r.kind {
	case reqInitPID:
		op := TxnOpInit
		if r.bump {
			op = TxnOpAbort
		}
		if outcome == history.OK {
			t.state, t.lastErr, t.started, t.pidMappingLost = TxnReady, "", false, false
		}
		p.txnResult(op, outcome, why)
	case reqEndTxn:
		op := TxnOpAbort
		if r.commit {
			op = TxnOpCommit
		}
		if outcome == history.OK {
			// TransactionManager.completeTransaction.
			t.state, t.lastErr, t.started, t.pidMappingLost = TxnReady, "", false, false
		}
		p.txnResult(op, outcome, why)
	case reqTxnOffsetCommit:
		p.txnResult(TxnOpSendOffsets, outcome, why)
	}
}

// handleFindCoordinator (FindCoordinatorHandler): the coordinator found,
// the request it was found for goes next.
func (p *Client) handleFindCoordinator(m *proto.FindCoordinatorResponse) {
	r, ok := p.txnAnswer(m.CorrelationID)
	if !ok {
		return
	}
	t := &p.txn
	switch m.Error {
	case proto.None:
		if r.keyType == proto.CoordinatorKeyGroup {
			t.groupCoordKey, t.groupCoord, t.groupKnown = r.key, m.Node, true
		} else {
			t.coord, t.coordKnown = m.Node, true
		}
		p.txnDone(r, history.OK, "")
	case proto.CoordinatorNotAvailable:
		p.retryTxn(false)
		return
	default: // authorization, unexpected: fatal, as Kafka's handler has it
		p.fatalError("FindCoordinator: " + m.Error.String())
	}
	p.runSender()
}

// retryCoordinatorError retries the transactional request in flight after
// a retriable coordinator error: looking the coordinator up again when it
// moved (NOT_COORDINATOR, COORDINATOR_NOT_AVAILABLE), after
// retry.backoff.ms when it is busy (loading, or a transaction still ending).
func (p *Client) retryCoordinatorError(err proto.ErrorCode) {
	p.retryTxn(err == proto.NotCoordinator || err == proto.CoordinatorNotAvailable)
}

// handleTxnInitPID (InitProducerIdHandler).
func (p *Client) handleTxnInitPID(m *proto.InitProducerIDResponse) {
	r, ok := p.txnAnswer(m.CorrelationID)
	if !ok {
		return
	}
	switch m.Error {
	case proto.None:
		p.pid, p.epoch = m.ProducerID, m.ProducerEpoch
		p.resetForNewEpoch()
		p.txnDone(r, history.OK, "")
	case proto.NotCoordinator, proto.CoordinatorNotAvailable, proto.CoordinatorLoadInProgress, proto.ConcurrentTransactions:
		p.retryCoordinatorError(m.Error)
		return
	case proto.ProducerFenced, proto.InvalidProducerEpoch:
		p.fatalError(proto.ProducerFenced.String())
	default:
		p.fatalError("InitProducerId: " + m.Error.String())
	}
	p.runSender()
}

// handleEndTxn (EndTxnHandler): with TV2 the answer carries the producer
// id and epoch the next transaction writes with.
func (p *Client) handleEndTxn(m *proto.EndTxnResponse) {
	r, ok := p.txnAnswer(m.CorrelationID)
	if !ok {
		return
	}
	switch m.Error {
	case proto.None:
		if m.ProducerID >= 0 && m.ProducerEpoch >= 0 {
			p.pid, p.epoch = m.ProducerID, m.ProducerEpoch
		}
		p.resetForNewEpoch()
		p.txnDone(r, history.OK, "")
	case proto.NotCoordinator, proto.CoordinatorNotAvailable, proto.CoordinatorLoadInProgress, proto.ConcurrentTransactions:
		p.retryCoordinatorError(m.Error)
		return
	case proto.ProducerFenced, proto.InvalidProducerEpoch:
		p.fatalError(proto.ProducerFenced.String())
	case proto.UnknownProducerID, proto.InvalidProducerIDMapping, proto.TransactionAbortable:
		// abortableErrorIfPossible: a commit refused is not committed
		// (unless an earlier attempt was written: then unknown).
		// The application aborts (again).
		why := m.Error.String()
		t := history.Fail
		if r.commit && r.attempts > 1 {
			t = history.Info
		}
		p.txn.state, p.txn.lastErr = TxnAbortableError, why
		p.txn.pidMappingLost = m.Error == proto.InvalidProducerIDMapping
		p.txnDone(r, t, why)
	default: // INVALID_TXN_STATE, authorization, unexpected: fatal
		p.fatalError("EndTxn: " + m.Error.String())
	}
	p.runSender()
}

// handleTxnOffsetCommit (TxnOffsetCommitHandler): partitions committed
// leave the request; it is retried with the rest.
func (p *Client) handleTxnOffsetCommit(m *proto.TxnOffsetCommitResponse) {
	r, ok := p.txnAnswer(m.CorrelationID)
	if !ok {
		return
	}
	var retry, lookup, pidMappingLost bool
	var abortable, fatal string
	left := r.offsets[:0]
	for _, o := range r.offsets {
		err := proto.NetworkException // not answered: retried
		for _, pr := range m.Partitions {
			if pr.TopicPartition == o.TopicPartition {
				err = pr.Error
			}
		}
		switch err {
		case proto.None:
			continue
		case proto.CoordinatorNotAvailable, proto.NotCoordinator, proto.RequestTimedOut:
			retry, lookup = true, true
		case proto.CoordinatorLoadInProgress, proto.UnknownTopicOrPartition, proto.ConcurrentTransactions, proto.NetworkException:
			retry = true
		case proto.UnknownMemberID, proto.IllegalGeneration, proto.FencedInstanceID, proto.StaleMemberEpoch,
			proto.FencedMemberEpoch, proto.UnknownProducerID, proto.InvalidProducerIDMapping, proto.TransactionAbortable:
			abortable = "CommitFailedException: " + err.String()
			pidMappingLost = pidMappingLost || err == proto.InvalidProducerIDMapping
		case proto.ProducerFenced, proto.InvalidProducerEpoch:
			fatal = proto.ProducerFenced.String()
		default:
			fatal = "TxnOffsetCommit: " + err.String()
		}
		left = append(left, o)
	}
	r.offsets = left
	switch {
	case fatal != "":
		p.fatalError(fatal)
	case abortable != "":
		// The error first, then the answer: the application that hears
		// the failure aborts at once, and the abort must know why.
		p.abortableError(abortable)
		p.txn.pidMappingLost = p.txn.pidMappingLost || pidMappingLost
		p.txnDone(r, history.Fail, abortable)
	case retry:
		p.retryTxn(lookup)
		return
	default:
		p.txnDone(r, history.OK, "")
	}
	p.runSender()
}

// txnStart resets the transactional state for a new process.
func (p *Client) txnStart() {
	p.txn = txnManager{}
}
