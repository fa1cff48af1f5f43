package broker

import (
	"slices"
	"time"

	"kafkasim/internal/kafkahash"
	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// Transaction verification on the produce path, with transaction version 2
// (KIP-890): before a leader appends a transaction's first batch to a
// partition (the producer has no transaction open there at its epoch:
// UnifiedLog.maybeStartTransactionVerification), it asks the transaction
// coordinator to add the partition to the transaction, and appends only
// once the coordinator says so (ReplicaManager.appendRecordsWithTransactionVerification).
// The whole produce request waits, and its connection with it.
//
// Kafka's AddPartitionsToTxnManager sends the requests, one in flight per
// coordinator broker, the rest queued behind it (a transactional id's later
// request replacing its queued one: the older epoch's is fenced, the same
// epoch's retried); a disconnection or request.timeout.ms fails the one in
// flight with NETWORK_EXCEPTION. Here a request carries one transactional
// id (proto.AddPartitionsToTxnRequest), where Kafka's batches several.
//
// A coordinator still ending the producer's previous transaction answers
// CONCURRENT_TRANSACTIONS; with transaction version 2 the leader asks again
// itself, every add.partitions.to.txn.retry.backoff.ms, for as long as
// add.partitions.to.txn.retry.backoff.max.ms (at most request.timeout.ms)
// has not passed since its first ask, and only then answers the produce
// with the error (ReplicaManager.appendRecordsWithTransactionVerification's
// maybeRetryOnConcurrentTransactions: the produce backoff would add too
// much delay).

// verifyRequestTimeout is the inter-broker request.timeout.ms.
const verifyRequestTimeout = 30 * time.Second

// verifyCorrelationBit sets the produce verifications' correlation ids
// apart from a group coordinator's AddPartitionsToTxn requests on the same
// link, whose answers are the coordinator's.
const verifyCorrelationBit = 1 << 31

type txnVerifier struct {
	rm    *replicaManager
	base  uint64
	corr  uint64
	nodes []*verifyNode // in order of first use
	// retrying are the produces waiting to ask again, in order of their
	// timers; at most one per client connection (its produce holds it).
	retrying []*produceVerification
	retryID  uint64
}

// verifyNode is what goes to one coordinator broker.
type verifyNode struct {
	node     sim.NodeID
	inflight *verification
	queue    []*verification
}

// verification is one produce's request to the coordinator.
type verification struct {
	txnID string
	pid   int64
	epoch int16
	tps   []proto.TopicPartition
	done  func(errs []proto.ErrorCode) // parallel to tps
	corr  uint64
	timer sim.TimerID
}

// produceVerification is a produce waiting for its verification, kept
// while the leader waits to ask again.
type produceVerification struct {
	id      uint64
	from    sim.NodeID
	on      uint64
	m       *proto.ProduceRequest
	tps     []proto.TopicPartition
	pid     int64
	epoch   int16
	started time.Duration
}

// verifyRetry fires when a produce's verification is to be asked again.
type verifyRetry struct{ id uint64 }

// String is how the trace shows the timer.
func (t verifyRetry) String() string { return "broker.verifyRetry" }

type verifyTimeout struct {
	node sim.NodeID
	corr uint64
}

// String is how the trace shows the timer.
func (t verifyTimeout) String() string { return "broker.verifyTimeout" }

func (v *txnVerifier) init(rm *replicaManager) {
	v.rm = rm
	v.base = proto.CorrelationBase(rm.n.env.Incarnation()) | verifyCorrelationBit
	v.corr = v.base
}

// verify asks the coordinator of txnID to add tps to the transaction of
// (pid, epoch) and calls done with each partition's error: NONE, or the
// error the produce answers (verificationError).
func (v *txnVerifier) verify(txnID string, pid int64, epoch int16, tps []proto.TopicPartition, done func([]proto.ErrorCode)) {
	ver := &verification{txnID: txnID, pid: pid, epoch: epoch, tps: tps, done: done}
	node, ok := v.coordinatorNode(txnID)
	if !ok {
		ver.fail(proto.CoordinatorNotAvailable)
		return
	}
	var vn *verifyNode
	for _, x := range v.nodes {
		if x.node == node {
			vn = x
		}
	}
	if vn == nil {
		vn = &verifyNode{node: node}
		v.nodes = append(v.nodes, vn)
	}
	for i, q := range vn.queue {
		if q.txnID != txnID {
			continue
		}
		// AddPartitionsToTxnManager.addTxnData: one queued request per
		// transactional id.
		if epoch < q.epoch {
			ver.fail(proto.InvalidProducerEpoch)
			return
		}
		if epoch > q.epoch {
			q.fail(proto.InvalidProducerEpoch)
		} else {
			q.fail(proto.NetworkException)
		}
		vn.queue[i] = ver
		return
	}
	vn.queue = append(vn.queue, ver)
	v.maybeSend(vn)
}

// coordinatorNode is the leader of txnID's __transaction_state partition
// in this broker's metadata, if it is registered and unfenced
// (AddPartitionsToTxnManager.getTransactionCoordinator).
func (v *txnVerifier) coordinatorNode(txnID string) (sim.NodeID, bool) {
	im := v.rm.image()
	t, ok := im.Topics[TransactionStateTopic]
	if !ok || len(t.Partitions) == 0 {
		return sim.NoNode, false
	}
	p := im.Partition(metadata.TopicPartition{Topic: TransactionStateTopic, Partition: kafkahash.CoordinatorPartition(txnID, len(t.Partitions))})
	if p == nil || p.Leader < 0 {
		return sim.NoNode, false
	}
	b, registered := im.Brokers[p.Leader]
	node, listed := v.rm.n.cfg.Nodes[p.Leader]
	if !registered || b.Fenced || !listed {
		return sim.NoNode, false
	}
	return node, true
}

func (v *txnVerifier) maybeSend(vn *verifyNode) {
	if vn.inflight != nil || len(vn.queue) == 0 {
		return
	}
	ver := vn.queue[0]
	vn.queue = vn.queue[1:]
	v.corr++
	ver.corr = v.corr
	vn.inflight = ver
	v.rm.n.env.Send(vn.node, &proto.AddPartitionsToTxnRequest{CorrelationID: ver.corr, TransactionalID: ver.txnID,
		ProducerID: ver.pid, ProducerEpoch: ver.epoch, Partitions: ver.tps})
	ver.timer = v.rm.n.env.After(verifyRequestTimeout, verifyTimeout{node: vn.node, corr: ver.corr})
}

// answered takes the coordinator's answer to a verification; it reports
// whether r was one (else it is for a coordinator this broker hosts).
func (v *txnVerifier) answered(from sim.NodeID, r *proto.AddPartitionsToTxnResponse) bool {
	if r.CorrelationID <= v.base || r.CorrelationID > v.corr {
		return false
	}
	for _, vn := range v.nodes {
		if vn.node != from || vn.inflight == nil || vn.inflight.corr != r.CorrelationID {
			continue
		}
		ver := vn.inflight
		vn.inflight = nil
		v.rm.n.env.Cancel(ver.timer)
		errs := make([]proto.ErrorCode, len(ver.tps))
		for i, tp := range ver.tps {
			err := r.Error
			if err == proto.None {
				for _, pr := range r.Partitions {
					if pr.TopicPartition == tp {
						err = pr.Error
					}
				}
			}
			errs[i] = verificationError(err)
		}
		ver.done(errs)
		v.maybeSend(vn)
		return true
	}
	return true // a late answer to one that timed out or was disconnected
}

// disconnected fails the verification in flight to peer with
// NETWORK_EXCEPTION; the queued ones go on the next connection.
func (v *txnVerifier) disconnected(peer sim.NodeID) {
	for _, vn := range v.nodes {
		if vn.node == peer && vn.inflight != nil {
			ver := vn.inflight
			vn.inflight = nil
			v.rm.n.env.Cancel(ver.timer)
			ver.fail(proto.NetworkException)
			v.maybeSend(vn)
		}
	}
}

func (v *txnVerifier) timedOut(t verifyTimeout) {
	for _, vn := range v.nodes {
		if vn.node == t.node && vn.inflight != nil && vn.inflight.corr == t.corr {
			ver := vn.inflight
			vn.inflight = nil
			ver.fail(proto.NetworkException)
			v.maybeSend(vn)
		}
	}
}

// fail calls done with err for every partition.
func (ver *verification) fail(err proto.ErrorCode) {
	errs := make([]proto.ErrorCode, len(ver.tps))
	for i := range errs {
		errs[i] = verificationError(err)
	}
	ver.done(errs)
}

// verificationError is the produce's answer for the coordinator's error
// (AddPartitionsToTxnManager: PRODUCER_FENCED becomes INVALID_PRODUCER_EPOCH,
// which producers expect; ReplicaManager: the retriable coordinator errors
// become NOT_ENOUGH_REPLICAS, which a producer retries without a metadata
// refresh; with transaction version 2 CONCURRENT_TRANSACTIONS stays).
func verificationError(err proto.ErrorCode) proto.ErrorCode {
	switch err {
	case proto.ProducerFenced:
		return proto.InvalidProducerEpoch
	case proto.NetworkException, proto.CoordinatorLoadInProgress, proto.CoordinatorNotAvailable, proto.NotCoordinator:
		return proto.NotEnoughReplicas
	}
	return err
}

// verifyTransaction starts the verification of a transactional produce's
// partitions that need it; it reports whether it did (the produce then
// goes on once the coordinator answers).
func (rm *replicaManager) verifyTransaction(from sim.NodeID, on uint64, m *proto.ProduceRequest) bool {
	var tps []proto.TopicPartition
	pid, epoch := int64(-1), int16(-1)
	for _, pp := range m.Partitions {
		b := pp.Batch
		if b == nil || !b.Transactional || b.ProducerID < 0 {
			continue
		}
		p := rm.parts.get(metadata.TopicPartition{Topic: pp.Topic, Partition: pp.Partition})
		if rm.stopped || p == nil || !p.isLeader || p.log == nil {
			continue // the append answers
		}
		if _, e, ok := p.log.Producers().OngoingTxn(b.ProducerID); ok && e == b.ProducerEpoch {
			continue // UnifiedLog.hasOngoingTransaction: verified already
		}
		tps = append(tps, pp.TopicPartition)
		pid, epoch = b.ProducerID, b.ProducerEpoch
	}
	if len(tps) == 0 {
		return false
	}
	pv := &produceVerification{from: from, on: on, m: m, tps: tps, pid: pid, epoch: epoch, started: rm.n.env.Now()}
	rm.txnVerify.ask(pv)
	return true
}

// ask sends pv's verification; its answer goes on to the append, or, on
// CONCURRENT_TRANSACTIONS before the retry window closes, waits
// add.partitions.to.txn.retry.backoff.ms to ask again.
func (v *txnVerifier) ask(pv *produceVerification) {
	rm := v.rm
	window := min(rm.cfg.AddPartitionsRetryBackoffMax, verifyRequestTimeout)
	v.verify(pv.m.TransactionalID, pv.pid, pv.epoch, pv.tps, func(errs []proto.ErrorCode) {
		if rm.n.env.Now()-pv.started < window && slices.Contains(errs, proto.ConcurrentTransactions) {
			v.retryID++
			pv.id = v.retryID
			v.retrying = append(v.retrying, pv)
			rm.n.env.After(rm.cfg.AddPartitionsRetryBackoff, verifyRetry{id: pv.id})
			return
		}
		rm.appendProduce(pv.from, pv.on, pv.m, pv.tps, errs)
	})
}

// retry asks again for the produce whose backoff ended.
func (v *txnVerifier) retry(t verifyRetry) {
	i := slices.IndexFunc(v.retrying, func(pv *produceVerification) bool { return pv.id == t.id })
	if i < 0 {
		return
	}
	pv := v.retrying[i]
	v.retrying = slices.Delete(v.retrying, i, i+1)
	v.ask(pv)
}
