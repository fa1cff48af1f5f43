package txn

import (
	"math"
	"slices"
	"strconv"
	"time"

	"kafkasim/internal/kafkahash"
	"kafkasim/model/broker"
	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// topics is what the coordinator uses of its broker: *broker.InternalTopics
// (an interface so that the coordinator is tested against a log the test
// drives).
type topics interface {
	BrokerID() int32
	Send(to sim.NodeID, m sim.Message)
	Now() time.Duration
	After(d time.Duration, t sim.Timer) sim.TimerID
	Cancel(id sim.TimerID)
	Partitions() int
	Leader(partition int32) (int32, sim.NodeID, bool)
	Append(tp metadata.TopicPartition, b *record.Batch, acks int16, timeout time.Duration, done func(broker.AppendResult)) broker.AppendResult
	Read(tp metadata.TopicPartition, from, to int64, maxBytes int, isolation broker.FetchIsolation) broker.LogRead
	CreateTopic(proto.CreatableTopic)
	PartitionLeader(tp metadata.TopicPartition) (int32, sim.NodeID, bool, bool)
	Controller() (sim.NodeID, int64)
}

// coordinator is the transaction coordinator of one broker start: the
// transactional ids of the partitions of __transaction_state this broker
// leads (TransactionStateManager's transactionMetadataCache), the markers
// being written (TransactionMarkerChannelManager) and the producer-id
// blocks (RPCProducerIdManager).
type coordinator struct {
	cfg     Config
	t       topics
	parts   map[int32]*txnPartition
	pids    pidManager
	markers markerChannel
	corr    uint64 // the correlation ids of the coordinator's own requests
	// abortArmed: the timed-out transaction abort runs (while this broker
	// leads a partition).
	abortArmed bool
}

// txnPartition is a partition of __transaction_state this broker leads:
// loading until the log is read, then its transactional ids. epoch is
// the coordinator epoch (the partition's leader epoch).
type txnPartition struct {
	p        int32
	epoch    int32
	loading  bool
	loadFrom int64
	txns     map[string]*txnMetadata
}

var (
	_ broker.RequestHandler    = (*coordinator)(nil)
	_ broker.TimerHandler      = (*coordinator)(nil)
	_ broker.DisconnectHandler = (*coordinator)(nil)
)

func newCoordinator(cfg Config, t topics) *coordinator {
	c := &coordinator{cfg: cfg, t: t, parts: map[int32]*txnPartition{}}
	c.pids.c = c
	c.markers = markerChannel{c: c, inflight: map[uint64]*markerRequest{}}
	return c
}

// The coordinator's timers.
type (
	loadTimer struct{ Partition, Epoch int32 }
	abortTick struct{}
)

func (t loadTimer) String() string {
	return "txn.load {p:" + strconv.Itoa(int(t.Partition)) + " epoch:" + strconv.Itoa(int(t.Epoch)) + "}"
}
func (abortTick) String() string { return "txn.abortTimedOut" }

func (c *coordinator) tp(p int32) metadata.TopicPartition {
	return metadata.TopicPartition{Topic: Topic, Partition: p}
}

func (c *coordinator) numPartitions() int {
	if n := c.t.Partitions(); n > 0 {
		return n
	}
	return c.cfg.NumPartitions
}

// partitionFor is TransactionStateManager.partitionFor.
func (c *coordinator) partitionFor(id string) int32 {
	return kafkahash.CoordinatorPartition(id, c.numPartitions())
}

// OnBecomeLeader loads the partition (TransactionCoordinator.onElection:
// its markers in flight are dropped first, then
// loadTransactionsForTxnTopicPartition); a newer epoch replaces an older
// one's state.
func (c *coordinator) OnBecomeLeader(tp metadata.TopicPartition, epoch int32) {
	if p, ok := c.parts[tp.Partition]; ok && p.epoch >= epoch {
		return
	}
	p := &txnPartition{p: tp.Partition, epoch: epoch, loading: true, txns: map[string]*txnMetadata{}}
	c.parts[tp.Partition] = p
	c.t.After(0, loadTimer{Partition: tp.Partition, Epoch: epoch})
	if !c.abortArmed {
		c.abortArmed = true
		c.t.After(c.cfg.AbortTimedOutInterval, abortTick{})
	}
}

// OnResign drops the partition's transactional ids
// (removeTransactionsForTxnTopicPartition: unless they are of a newer
// epoch than the one resigned in); their markers are dropped as they come
// up (removeMarkersForTxnTopicPartition).
func (c *coordinator) OnResign(tp metadata.TopicPartition, epoch int32) {
	p, ok := c.parts[tp.Partition]
	if !ok || (epoch != broker.NoLeaderEpoch && p.epoch > epoch) {
		return
	}
	delete(c.parts, tp.Partition)
}

// OnTimer hands back the coordinator's timers.
func (c *coordinator) OnTimer(t sim.Timer) {
	switch t := t.(type) {
	case loadTimer:
		if p, ok := c.parts[t.Partition]; ok && p.epoch == t.Epoch && p.loading {
			c.loadChunk(p)
		}
	case abortTick:
		c.abortTimedOutTransactions()
		if len(c.parts) > 0 {
			c.t.After(c.cfg.AbortTimedOutInterval, abortTick{})
		} else {
			c.abortArmed = false
		}
	case markerFlush, markerTimeout, completeRetry:
		c.markers.onTimer(t)
	case pidTimeout:
		c.pids.timedOut(t)
	}
}

// OnDisconnected: the requests in flight to peer get no answer.
func (c *coordinator) OnDisconnected(peer sim.NodeID) {
	c.markers.disconnected(peer)
	c.pids.disconnected(peer)
}

// Handles takes FindCoordinator for transactional ids, a transactional
// InitProducerId (an idempotent one is the broker's), AddPartitionsToTxn,
// EndTxn and DescribeTransactions, and the answers to its own
// WriteTxnMarkers and AllocateProducerIds.
func (c *coordinator) Handles(m sim.Message) bool {
	switch m := m.(type) {
	case *proto.FindCoordinatorRequest:
		return m.KeyType == proto.CoordinatorKeyTransaction
	case *proto.InitProducerIDRequest:
		return m.TransactionalID != ""
	case *proto.AddPartitionsToTxnRequest, *proto.EndTxnRequest, *proto.DescribeTransactionsRequest,
		*proto.WriteTxnMarkersResponse, *proto.AllocateProducerIdsResponse:
		return true
	}
	return false
}

// HandleRequest serves m.
func (c *coordinator) HandleRequest(from sim.NodeID, m sim.Message) {
	switch m := m.(type) {
	case *proto.FindCoordinatorRequest:
		c.findCoordinator(from, m)
	case *proto.InitProducerIDRequest:
		c.initProducerID(from, m)
	case *proto.AddPartitionsToTxnRequest:
		c.addPartitions(from, m)
	case *proto.EndTxnRequest:
		c.endTxn(from, m)
	case *proto.DescribeTransactionsRequest:
		c.describe(from, m)
	case *proto.WriteTxnMarkersResponse:
		c.markers.answered(m)
	case *proto.AllocateProducerIdsResponse:
		c.pids.answered(m)
	}
}

// findCoordinator is KafkaApis.getCoordinator for a transactional id: the
// leader of its partition as this broker's metadata has it; while the
// topic does not exist, COORDINATOR_NOT_AVAILABLE after asking the
// controller to create it.
func (c *coordinator) findCoordinator(from sim.NodeID, m *proto.FindCoordinatorRequest) {
	resp := &proto.FindCoordinatorResponse{CorrelationID: m.CorrelationID, Key: m.Key, Error: proto.CoordinatorNotAvailable, NodeID: -1, Node: sim.NoNode}
	if c.t.Partitions() == 0 {
		c.t.CreateTopic(c.cfg.stateTopic())
	} else if b, node, ok := c.t.Leader(kafkahash.CoordinatorPartition(m.Key, c.t.Partitions())); ok {
		resp.Error, resp.NodeID, resp.Node = proto.None, b, node
	}
	c.t.Send(from, resp)
}

// lookup is TransactionStateManager.getTransactionState: NOT_COORDINATOR
// when this broker does not lead the id's partition,
// COORDINATOR_LOAD_IN_PROGRESS while it loads it; the metadata is nil for
// an id it does not hold.
func (c *coordinator) lookup(id string) (*txnPartition, *txnMetadata, proto.ErrorCode) {
	p, ok := c.parts[c.partitionFor(id)]
	if !ok {
		return nil, nil, proto.NotCoordinator
	}
	if p.loading {
		return p, nil, proto.CoordinatorLoadInProgress
	}
	return p, p.txns[id], proto.None
}

// owns reports whether m is still the metadata of a loaded partition in
// epoch: the check Kafka makes when an append's answer comes back.
func (c *coordinator) owns(part, epoch int32, m *txnMetadata) bool {
	p, ok := c.parts[part]
	return ok && p.epoch == epoch && !p.loading && p.txns[m.id] == m
}

// normalize maps an append's error to the client's
// (TransactionStateManager.appendTransactionToLog's updateCacheCallback).
func normalize(err proto.ErrorCode) proto.ErrorCode {
	switch err {
	case proto.UnknownTopicOrPartition, proto.NotEnoughReplicas, proto.NotEnoughReplicasAfterAppend, proto.RequestTimedOut:
		return proto.CoordinatorNotAvailable
	case proto.NotLeaderOrFollower, proto.KafkaStorageError:
		return proto.NotCoordinator
	case proto.CorruptMessage:
		return proto.UnknownServerError
	}
	return err
}

// appendToLog is TransactionStateManager.appendTransactionToLog: the
// transit as one record, acks=all with the transaction's timeout (so below
// transaction.state.log.min.isr it fails at once), applied to the
// metadata once committed if this broker still coordinates the id in the
// same epoch (NOT_COORDINATOR otherwise). A failure clears the pending
// transition, unless retryNotAvailable and it is COORDINATOR_NOT_AVAILABLE
// (the marker channel's completion, which appends again).
func (c *coordinator) appendToLog(p *txnPartition, m *txnMetadata, t transit, retryNotAvailable bool, done func(proto.ErrorCode)) {
	part, epoch := p.p, p.epoch
	finish := func(err proto.ErrorCode) {
		err = normalize(err)
		owned := c.owns(part, epoch, m)
		if err == proto.None {
			if !owned {
				done(proto.NotCoordinator)
				return
			}
			m.completeTransitionTo(t)
			done(proto.None)
			return
		}
		if owned && !(retryNotAvailable && err == proto.CoordinatorNotAvailable) {
			m.pending = noState
		}
		done(err)
	}
	rec := record.Record{Key: encodeKey(m.id), HasKey: true, Value: encodeValue(t), Timestamp: c.t.Now().Milliseconds()}
	b := record.New([]record.Record{rec}, record.Producer{ID: record.NoProducer}, false, record.CompressionNone)
	res := c.t.Append(c.tp(part), b, proto.AcksAll, t.Timeout, func(r broker.AppendResult) { finish(r.Error) })
	if res.Error != proto.None {
		finish(res.Error)
	}
}

// initProducerID is TransactionCoordinator.handleInitProducerId for a
// transactional id.
func (c *coordinator) initProducerID(from sim.NodeID, m *proto.InitProducerIDRequest) {
	reply := func(err proto.ErrorCode, pid int64, epoch int16) {
		if err != proto.None {
			pid, epoch = proto.NoProducerID, proto.NoProducerEpoch
		}
		c.t.Send(from, &proto.InitProducerIDResponse{CorrelationID: m.CorrelationID, Error: err, ProducerID: pid, ProducerEpoch: epoch})
	}
	// KafkaApis.handleInitProducerIdRequest: an id and an epoch, or
	// neither.
	hasExpected := m.ProducerID != proto.NoProducerID
	if hasExpected != (m.ProducerEpoch != proto.NoProducerEpoch) {
		reply(proto.InvalidRequest, 0, 0)
		return
	}
	if m.TransactionTimeout <= 0 || m.TransactionTimeout > c.cfg.MaxTimeout {
		reply(proto.InvalidTransactionTimeout, 0, 0)
		return
	}
	p, meta, err := c.lookup(m.TransactionalID)
	if err != proto.None {
		reply(err, 0, 0)
		return
	}
	if meta == nil {
		pid, err := c.pids.generate()
		if err != proto.None {
			reply(err, 0, 0)
			return
		}
		meta = newMetadata(m.TransactionalID, pid, m.TransactionTimeout, c.t.Now())
		p.txns[meta.id] = meta
	}
	t, err := c.prepareInitProducerIDTransit(meta, m.TransactionTimeout, hasExpected, m.ProducerID, m.ProducerEpoch)
	if err != proto.None {
		reply(err, 0, 0)
		return
	}
	if t.State == PrepareEpochFence {
		// Abort the open transaction of the fenced instance first; the
		// producer retries on CONCURRENT_TRANSACTIONS and bumps the epoch
		// once the abort is complete.
		c.endTransaction(meta.id, t.ProducerID, t.ProducerEpoch, false, false, func(err proto.ErrorCode, _ int64, _ int16) {
			if err == proto.None {
				err = proto.ConcurrentTransactions
			}
			reply(err, 0, 0)
		})
		return
	}
	c.appendToLog(p, meta, t, false, func(err proto.ErrorCode) { reply(err, t.ProducerID, t.ProducerEpoch) })
}

// prepareInitProducerIDTransit is TransactionCoordinator's
// prepareInitProducerIdTransit.
func (c *coordinator) prepareInitProducerIDTransit(m *txnMetadata, timeout time.Duration, hasExpected bool, expID int64, expEpoch int16) (transit, proto.ErrorCode) {
	// KIP-360: a producer that names its id and epoch is fenced unless
	// the id is new (-1 epoch), the id is current (its epoch is checked
	// at the bump), or it is the previous id and its epoch was exhausted
	// (a retry of a rotation whose answer was lost).
	validID := m.producerEpoch == proto.NoProducerEpoch || expID == m.producerID ||
		(expID == m.prevProducerID && epochExhausted(expEpoch))
	switch {
	case m.transitionPending():
		return transit{}, proto.ConcurrentTransactions
	case hasExpected && !validID:
		return transit{}, proto.ProducerFenced
	}
	switch m.state {
	case PrepareAbort, PrepareCommit:
		return transit{}, proto.ConcurrentTransactions
	case CompleteAbort, CompleteCommit, Empty:
		if epochExhausted(m.producerEpoch) && (!hasExpected || expEpoch == m.producerEpoch) {
			pid, err := c.pids.generate()
			if err != proto.None {
				return transit{}, err
			}
			return m.prepareProducerIDRotation(pid, timeout, c.t.Now(), hasExpected), proto.None
		}
		return m.prepareIncrementProducerEpoch(timeout, expEpoch, hasExpected, c.t.Now())
	case Ongoing:
		// The bumped epoch is never told to the producer: it retries, and
		// bumps again once the abort is complete.
		return m.prepareFenceProducerEpoch(), proto.None
	}
	panic("txn: " + m.id + ": InitProducerId in state " + m.state.String())
}

// addPartitions is TransactionCoordinator.handleAddPartitionsToTransaction
// (and handleVerifyPartitionsInTransaction with VerifyOnly).
func (c *coordinator) addPartitions(from sim.NodeID, m *proto.AddPartitionsToTxnRequest) {
	reply := func(err proto.ErrorCode, per func(proto.TopicPartition) proto.ErrorCode) {
		r := &proto.AddPartitionsToTxnResponse{CorrelationID: m.CorrelationID, Error: err}
		for _, tp := range m.Partitions {
			pe := err
			if per != nil {
				pe = per(tp)
			}
			r.Partitions = append(r.Partitions, proto.TxnPartitionResult{TopicPartition: tp, Error: pe})
		}
		c.t.Send(from, r)
	}
	if m.TransactionalID == "" {
		reply(proto.InvalidRequest, nil)
		return
	}
	// KafkaApis.handleAddPartitionsToTxnRequest checks every partition
	// against the broker's metadata cache before the coordinator sees the
	// request: one it does not hold (a topic created after the broker's
	// metadata, or deleted) fails the whole request, UNKNOWN_TOPIC_OR_PARTITION
	// for it and OPERATION_NOT_ATTEMPTED for the others. Were it added,
	// its marker would be skipped as a deleted partition's
	// (TransactionMarkerChannelManager.addTxnMarkersToBrokerQueue), and
	// the transaction completed with its records undecided there.
	if slices.ContainsFunc(m.Partitions, func(tp proto.TopicPartition) bool { return !c.partitionExists(tp) }) {
		reply(proto.None, func(tp proto.TopicPartition) proto.ErrorCode {
			if c.partitionExists(tp) {
				return proto.OperationNotAttempted
			}
			return proto.UnknownTopicOrPartition
		})
		return
	}
	p, meta, err := c.lookup(m.TransactionalID)
	switch {
	case err != proto.None:
	case meta == nil || meta.producerID != m.ProducerID:
		err = proto.InvalidProducerIDMapping
	case meta.producerEpoch != m.ProducerEpoch:
		err = proto.ProducerFenced
	case m.VerifyOnly:
		if meta.state == PrepareCommit || meta.state == PrepareAbort {
			err = proto.ConcurrentTransactions
			break
		}
		reply(proto.None, func(tp proto.TopicPartition) proto.ErrorCode {
			if slices.Contains(meta.partitions, tp) {
				return proto.None
			}
			return proto.TransactionAbortable
		})
		return
	case meta.transitionPending(), meta.state == PrepareCommit, meta.state == PrepareAbort:
		err = proto.ConcurrentTransactions
	case meta.state == Ongoing && subset(m.Partitions, meta.partitions):
		// Already in the transaction: answered at once.
	default:
		t := meta.prepareAddPartitions(m.Partitions, c.t.Now())
		c.appendToLog(p, meta, t, false, func(err proto.ErrorCode) { reply(err, nil) })
		return
	}
	reply(err, nil)
}

// partitionExists reports whether the broker's metadata holds tp
// (MetadataCache.contains).
func (c *coordinator) partitionExists(tp proto.TopicPartition) bool {
	_, _, exists, _ := c.t.PartitionLeader(metadata.TopicPartition{Topic: tp.Topic, Partition: tp.Partition})
	return exists
}

// endTxn is TransactionCoordinator.handleEndTransaction.
func (c *coordinator) endTxn(from sim.NodeID, m *proto.EndTxnRequest) {
	c.endTransaction(m.TransactionalID, m.ProducerID, m.ProducerEpoch, m.Committed, true, func(err proto.ErrorCode, pid int64, epoch int16) {
		if err != proto.None {
			pid, epoch = proto.NoProducerID, proto.NoProducerEpoch
		}
		c.t.Send(from, &proto.EndTxnResponse{CorrelationID: m.CorrelationID, Error: err, ProducerID: pid, ProducerEpoch: epoch})
	})
}

// endTransaction is TransactionCoordinator.endTransaction with transaction
// version 2: PrepareCommit or PrepareAbort written with the epoch bumped,
// answered once committed with the producer id and epoch the producer goes
// on with, then the markers. A retry that finds its own bump (the epoch
// one above the request's) is told NONE once complete,
// CONCURRENT_TRANSACTIONS while the markers are written. Not from a
// client, it is the abort of a fenced or timed-out transaction, whose
// epoch the fence bumped.
func (c *coordinator) endTransaction(id string, pid int64, epoch int16, commit, fromClient bool, done func(proto.ErrorCode, int64, int16)) {
	if id == "" {
		done(proto.InvalidRequest, 0, 0)
		return
	}
	p, meta, err := c.lookup(id)
	if err == proto.None && meta == nil {
		err = proto.InvalidProducerIDMapping
	}
	if err != proto.None {
		done(err, 0, 0)
		return
	}
	pidCopy, epochCopy := meta.producerID, meta.producerEpoch
	isEpochFence := meta.pending == PrepareEpochFence
	// tv1: the bug zoo's delayed-end-txn (KAFKA-17754). A client's end is
	// handled as transaction version 1's: the epoch is not bumped, so the
	// request's must be the producer's own, and a Complete* of the same
	// result at it is a retry. An EndTxn of the producer's last
	// transaction that arrives late (the client timed it out and retried)
	// then passes the epoch check of its next one, and ends that one.
	tv1 := c.cfg.DelayedEndTxn && fromClient && !isEpochFence
	retryOnOverflow := !tv1 && !isEpochFence && meta.prevProducerID == pid && epoch == math.MaxInt16-1 && meta.producerEpoch == 0
	retryOnEpochBump := !tv1 && !isEpochFence && meta.producerEpoch == epoch+1
	var validEpoch bool
	if tv1 {
		validEpoch = epoch == meta.producerEpoch
	} else if !isEpochFence {
		switch meta.state {
		case PrepareCommit, PrepareAbort:
			validEpoch = retryOnEpochBump
		case CompleteCommit, CompleteAbort:
			validEpoch = retryOnEpochBump || retryOnOverflow || epoch == meta.producerEpoch
		default:
			validEpoch = epoch == meta.producerEpoch
		}
	} else {
		validEpoch = (!fromClient || epoch == meta.producerEpoch) && epoch >= meta.producerEpoch
	}
	isRetry := retryOnEpochBump || retryOnOverflow || tv1
	// keepEpoch: the bug zoo's no-epoch-bump-on-abort. A client's abort
	// keeps the producer epoch (transaction version 1, before KIP-890's
	// per-transaction bump): a produce of the aborted transaction that
	// is still on its way carries the epoch the producer goes on with.
	keepEpoch := (c.cfg.NoEpochBumpOnAbort && !commit && !isEpochFence) || tv1
	prepare := func(next State, noPartitionAdded bool) (transit, proto.ErrorCode) {
		nextPID := proto.NoProducerID
		if !keepEpoch && !isEpochFence && epochExhausted(meta.producerEpoch) {
			id, err := c.pids.generate()
			if err != proto.None {
				return transit{}, err
			}
			nextPID = id
		}
		bump := true
		if next == PrepareAbort && isEpochFence {
			meta.pending, meta.producerEpoch, meta.lastProducerEpoch = noState, epoch, proto.NoProducerEpoch
			// KAFKA-19367: the fence bumped the epoch already; the abort
			// does not bump it again. A fenced producer's own abort that
			// comes later (epoch one below) is then a retry of it.
			bump = false
		}
		return meta.prepareAbortOrCommit(next, nextPID, c.t.Now(), noPartitionAdded, !bump, keepEpoch), proto.None
	}
	var t transit
	switch {
	case meta.producerID != pid && !retryOnOverflow:
		err = proto.InvalidProducerIDMapping
	case meta.transitionPending() && meta.pending != PrepareEpochFence:
		// KAFKA-18464: before the epoch check, so that an abort sent
		// while the previous transaction's Complete* is being written is
		// told to retry, not fenced by the bump it has not seen.
		err = proto.ConcurrentTransactions
	case !validEpoch:
		err = proto.ProducerFenced
	case meta.state == Ongoing:
		next := PrepareAbort
		if commit {
			next = PrepareCommit
		}
		t, err = prepare(next, false)
	case meta.state == CompleteAbort && commit && isRetry && !tv1:
		// KAFKA-20785: a commit at the epoch before a coordinator-side
		// abort (the transaction timed out) is fenced, which applications
		// recover from, not INVALID_TXN_STATE, which is fatal to them.
		err = proto.ProducerFenced
	case meta.state == CompleteCommit && commit, meta.state == CompleteAbort && !commit:
		if !isRetry {
			if commit {
				err = proto.InvalidTxnState
				break
			}
			t, err = prepare(PrepareAbort, true) // an abort with nothing to abort
			break
		}
		done(proto.None, pidCopy, epochCopy)
		return
	case meta.state == CompleteCommit: // an abort
		if isRetry {
			err = proto.InvalidTxnState
			break
		}
		t, err = prepare(PrepareAbort, true)
	case meta.state == PrepareCommit && commit, meta.state == PrepareAbort && !commit:
		err = proto.ConcurrentTransactions
	case meta.state == Empty && !commit:
		t, err = prepare(PrepareAbort, true)
	default:
		err = proto.InvalidTxnState
	}
	if err != proto.None {
		done(err, 0, 0)
		return
	}
	coordEpoch := p.epoch
	c.appendToLog(p, meta, t, false, func(err proto.ErrorCode) {
		if err != proto.None {
			if isEpochFence && c.owns(p.p, coordEpoch, meta) {
				meta.hasFailedEpochFence = true
			}
			done(err, 0, 0)
			return
		}
		// sendTxnMarkersCallback: the metadata is Prepare* now.
		switch {
		case meta.producerID != pid:
			err = proto.InvalidProducerIDMapping
		case meta.producerEpoch != epoch && meta.producerEpoch != epoch+1:
			err = proto.ProducerFenced
		case meta.transitionPending():
			err = proto.ConcurrentTransactions
		case meta.state == PrepareCommit && commit, meta.state == PrepareAbort && !commit:
		default:
			err = proto.InvalidTxnState
		}
		if err != proto.None {
			done(err, 0, 0)
			return
		}
		// The producer goes on with the bumped epoch, or with the next
		// producer id at epoch 0 when the bump exhausted the epoch.
		if meta.nextProducerID != proto.NoProducerID {
			done(proto.None, meta.nextProducerID, 0)
		} else {
			done(proto.None, meta.producerID, meta.producerEpoch)
		}
		c.markers.add(p, meta, commit, meta.prepareComplete(c.t.Now()))
	})
}

// abortTimedOutTransactions is TransactionCoordinator's
// abortTimedOutTransactions, every
// transaction.abort.timed.out.transaction.cleanup.interval.ms: an Ongoing
// transaction older than its timeout is fenced (the epoch bumped) and
// aborted, partitions and ids in order.
func (c *coordinator) abortTimedOutTransactions() {
	now := c.t.Now()
	for _, part := range sortedKeys(c.parts) {
		p := c.parts[part]
		if p.loading {
			continue
		}
		for _, id := range sortedKeys(p.txns) {
			m := p.txns[id]
			if m.state != Ongoing || m.transitionPending() || m.startTime+m.timeout >= now {
				continue
			}
			t := m.prepareFenceProducerEpoch()
			c.endTransaction(id, t.ProducerID, t.ProducerEpoch, false, false, func(proto.ErrorCode, int64, int16) {})
		}
	}
}

// describe is handleDescribeTransactions.
func (c *coordinator) describe(from sim.NodeID, m *proto.DescribeTransactionsRequest) {
	r := &proto.DescribeTransactionsResponse{CorrelationID: m.CorrelationID}
	for _, id := range m.TransactionalIDs {
		d := proto.TransactionDescription{TransactionalID: id, ProducerID: proto.NoProducerID, ProducerEpoch: proto.NoProducerEpoch, StartTime: -1}
		_, meta, err := c.lookup(id)
		switch {
		case id == "":
			d.Error = proto.InvalidRequest
		case err != proto.None:
			d.Error = err
		case meta == nil || meta.state == Dead:
			d.Error = proto.TransactionalIDNotFound
		default:
			d.State, d.ProducerID, d.ProducerEpoch = meta.state.String(), meta.producerID, meta.producerEpoch
			d.TransactionTimeout, d.StartTime, d.Partitions = meta.timeout, meta.startTime, slices.Clone(meta.partitions)
		}
		r.Transactions = append(r.Transactions, d)
	}
	c.t.Send(from, r)
}

// loadChunk reads and replays the next chunk of the partition
// (loadTransactionMetadata: from the log start to the log end, in chunks
// of transaction.state.log.load.buffer.size); requests meanwhile are
// answered COORDINATOR_LOAD_IN_PROGRESS.
func (c *coordinator) loadChunk(p *txnPartition) {
	r := c.t.Read(c.tp(p.p), p.loadFrom, math.MaxInt64, c.cfg.LoadBufferSize, broker.IsolationLogEnd)
	if r.Error == proto.OffsetOutOfRange && p.loadFrom < r.LogStartOffset {
		p.loadFrom = r.LogStartOffset
		c.t.After(0, loadTimer{Partition: p.p, Epoch: p.epoch})
		return
	}
	if r.Error != proto.None {
		return // no longer the leader: the resignation follows
	}
	for _, b := range r.Batches {
		b.EachRecord(func(_ int, _ int64, key []byte, hasKey bool, value []byte) {
			if !hasKey {
				return
			}
			id, t, ok, err := decodeRecord(key, value)
			if err != nil {
				panic("txn: " + Topic + "-" + strconv.Itoa(int(p.p)) + ": a record the coordinator cannot read: " + err.Error())
			}
			if !ok {
				delete(p.txns, id)
				return
			}
			p.txns[id] = fromRecord(id, t)
		})
		p.loadFrom = b.NextOffset()
	}
	if len(r.Batches) > 0 && p.loadFrom < r.LogEndOffset {
		c.t.After(0, loadTimer{Partition: p.p, Epoch: p.epoch})
		return
	}
	c.loaded(p)
}

// loaded makes the partition's ids served, and resumes the markers of
// every transaction the log left in PrepareCommit or PrepareAbort
// (loadTransactionsForTxnTopicPartition's transactionsPendingForCompletion).
func (c *coordinator) loaded(p *txnPartition) {
	p.loading = false
	for _, id := range sortedKeys(p.txns) {
		m := p.txns[id]
		if m.state == PrepareCommit || m.state == PrepareAbort {
			c.markers.add(p, m, m.state == PrepareCommit, m.prepareComplete(c.t.Now()))
		}
	}
}

func sortedKeys[K int32 | string, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m { // kafkasim:orderless: sorted below
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Describer is the god view of a coordinator (the simulator's checks read
// it; no Kafka API).
type Describer interface {
	// DescribeTransaction is id as this coordinator holds it (ok false:
	// not held, or its partition still loading).
	DescribeTransaction(id string) (proto.TransactionDescription, bool)
}

// DescribeTransaction implements Describer.
func (c *coordinator) DescribeTransaction(id string) (proto.TransactionDescription, bool) {
	_, meta, err := c.lookup(id)
	if err != proto.None || meta == nil {
		return proto.TransactionDescription{}, false
	}
	return proto.TransactionDescription{TransactionalID: id, State: meta.state.String(), ProducerID: meta.producerID,
		ProducerEpoch: meta.producerEpoch, TransactionTimeout: meta.timeout, StartTime: meta.startTime,
		Partitions: slices.Clone(meta.partitions)}, true
}
