package txn

import (
	"slices"
	"strconv"

	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// markerChannel is TransactionMarkerChannelManager: the commit or abort
// markers of the transactions in PrepareCommit / PrepareAbort, sent to the
// leaders of their partitions, one WriteTxnMarkers per broker carrying
// every transaction's markers queued for it; a partition whose marker is
// written leaves the transaction, and once none is left the coordinator
// writes CompleteCommit / CompleteAbort. A partition whose leader is
// unknown, or whose leader answered a retriable error, is sent again after
// retry.backoff.ms; a partition that no longer exists is dropped; a
// coordinator-fenced answer stops the transaction's markers (a newer
// coordinator owns it).
type markerChannel struct {
	c        *coordinator
	queue    []queuedMarker // to send at the next flush, in order
	retries  []queuedMarker // to send again once the backoff is over
	flushSet bool
	retrySet bool
	inflight map[uint64]*markerRequest
}

// markerTxn is a transaction whose markers are being written: the
// coordinator epoch they carry, and the Complete* transit to write once
// they are (Kafka's PendingCompleteTxn).
type markerTxn struct {
	part, coordEpoch int32
	meta             *txnMetadata
	producerID       int64
	producerEpoch    int16
	commit           bool
	// noEpochBump: an end that kept the epoch (no-epoch-bump-on-abort,
	// delayed-end-txn), whose markers the partitions check as transaction
	// version 1's.
	noEpochBump bool
	complete    transit
	// completing: its Complete* is being written (Kafka removes the
	// transaction from transactionsWithPendingMarkers first, so a second
	// partition's answer does not write it again).
	completing bool
}

// queuedMarker is one transaction's marker for one partition.
type queuedMarker struct {
	txn *markerTxn
	tp  proto.TopicPartition
}

// markerRequest is a WriteTxnMarkers in flight.
type markerRequest struct {
	to    sim.NodeID
	items []queuedMarker
	timer sim.TimerID
}

// The channel's timers.
type (
	markerFlush   struct{ Retry bool }
	markerTimeout struct{ Correlation uint64 }
	completeRetry struct {
		ID               string
		Part, CoordEpoch int32
	}
)

func (t markerFlush) String() string {
	if t.Retry {
		return "txn.markerRetry"
	}
	return "txn.markerFlush"
}
func (t markerTimeout) String() string {
	return "txn.markerTimeout {correlation:" + strconv.FormatUint(t.Correlation, 10) + "}"
}
func (t completeRetry) String() string {
	return "txn.completeRetry {" + t.ID + " p:" + strconv.Itoa(int(t.Part)) + " epoch:" + strconv.Itoa(int(t.CoordEpoch)) + "}"
}

// add is addTxnMarkersToSend: m was written in PrepareCommit or
// PrepareAbort; complete is its Complete* (now pending).
func (mc *markerChannel) add(p *txnPartition, m *txnMetadata, commit bool, complete transit) {
	m.completeTransit = complete
	tx := &markerTxn{part: p.p, coordEpoch: p.epoch, meta: m, producerID: m.producerID, producerEpoch: m.producerEpoch,
		commit: commit, complete: complete, noEpochBump: (mc.c.cfg.NoEpochBumpOnAbort && !commit || mc.c.cfg.DelayedEndTxn) && m.producerEpoch == m.lastProducerEpoch}
	if len(m.partitions) == 0 {
		mc.maybeComplete(tx)
		return
	}
	for _, tp := range m.partitions {
		mc.queue = append(mc.queue, queuedMarker{txn: tx, tp: tp})
	}
	mc.scheduleFlush()
}

// valid reports whether the transaction is still this coordinator's to
// complete (removeMarkersForTxnTopicPartition drops the rest).
func (mc *markerChannel) valid(tx *markerTxn) bool {
	return mc.c.owns(tx.part, tx.coordEpoch, tx.meta) && tx.meta.pending == tx.complete.State
}

// scheduleFlush has the queue sent in an event of its own (Kafka's
// sender thread drains it).
func (mc *markerChannel) scheduleFlush() {
	if mc.flushSet {
		return
	}
	mc.flushSet = true
	mc.c.t.After(0, markerFlush{})
}

func (mc *markerChannel) onTimer(t sim.Timer) {
	switch t := t.(type) {
	case markerFlush:
		if t.Retry {
			mc.retrySet = false
			mc.queue = append(mc.queue, mc.retries...)
			mc.retries = nil
		} else {
			mc.flushSet = false
		}
		mc.flush()
	case markerTimeout:
		if r, ok := mc.inflight[t.Correlation]; ok {
			delete(mc.inflight, t.Correlation)
			mc.retry(r.items)
		}
	case completeRetry:
		p, ok := mc.c.parts[t.Part]
		if !ok || p.epoch != t.CoordEpoch || p.loading {
			return
		}
		if m := p.txns[t.ID]; m != nil && (m.pending == CompleteCommit || m.pending == CompleteAbort) {
			mc.appendComplete(p, m)
		}
	}
}

// flush sends what is queued: the markers of each destination broker in
// one request, brokers in the order their first marker was queued.
func (mc *markerChannel) flush() {
	queue := mc.queue
	mc.queue = nil
	var order []sim.NodeID
	byNode := map[sim.NodeID][]queuedMarker{}
	var later []queuedMarker
	var touched []*markerTxn
	for _, q := range queue {
		if !mc.valid(q.txn) {
			continue
		}
		_, node, exists, ok := mc.c.t.PartitionLeader(metadata.TopicPartition{Topic: q.tp.Topic, Partition: q.tp.Partition})
		switch {
		case !exists:
			// The partition is gone (its topic deleted): its marker is
			// skipped.
			q.txn.meta.removePartition(q.tp)
			touched = append(touched, q.txn)
		case !ok:
			later = append(later, q) // the unknown-broker queue, tried again
		default:
			if _, seen := byNode[node]; !seen {
				order = append(order, node)
			}
			byNode[node] = append(byNode[node], q)
		}
	}
	for _, node := range order {
		mc.send(node, byNode[node])
	}
	mc.retry(later)
	for _, tx := range touched {
		mc.maybeComplete(tx)
	}
}

// send sends one broker's markers: one TxnMarker per transaction.
func (mc *markerChannel) send(node sim.NodeID, items []queuedMarker) {
	mc.c.corr++
	corr := mc.c.corr
	req := &proto.WriteTxnMarkersRequest{CorrelationID: corr}
	for _, q := range items {
		i := slices.IndexFunc(req.Markers, func(m proto.TxnMarker) bool { return m.ProducerID == q.txn.producerID })
		if i < 0 {
			req.Markers = append(req.Markers, proto.TxnMarker{ProducerID: q.txn.producerID, ProducerEpoch: q.txn.producerEpoch,
				Committed: q.txn.commit, CoordinatorEpoch: q.txn.coordEpoch, NoEpochBump: q.txn.noEpochBump})
			i = len(req.Markers) - 1
		}
		req.Markers[i].Partitions = append(req.Markers[i].Partitions, q.tp)
	}
	timer := mc.c.t.After(mc.c.cfg.RequestTimeout, markerTimeout{Correlation: corr})
	mc.inflight[corr] = &markerRequest{to: node, items: items, timer: timer}
	mc.c.t.Send(node, req)
}

// answered is TransactionMarkerRequestCompletionHandler.
func (mc *markerChannel) answered(m *proto.WriteTxnMarkersResponse) {
	r, ok := mc.inflight[m.CorrelationID]
	if !ok {
		return
	}
	delete(mc.inflight, m.CorrelationID)
	mc.c.t.Cancel(r.timer)
	var again []queuedMarker
	var touched []*markerTxn
	for _, q := range r.items {
		if !mc.valid(q.txn) {
			continue
		}
		err := proto.UnknownServerError // no answer for it: sent again
		for _, res := range m.Markers {
			if res.ProducerID != q.txn.producerID {
				continue
			}
			for _, pr := range res.Partitions {
				if pr.TopicPartition == q.tp {
					err = pr.Error
				}
			}
		}
		switch err {
		case proto.None:
			q.txn.meta.removePartition(q.tp)
			touched = append(touched, q.txn)
		case proto.InvalidProducerEpoch, proto.TransactionCoordinatorFenced:
			// A newer coordinator or producer epoch owns the partition's
			// producer state: this coordinator stops sending the
			// transaction's markers (TransactionMarkerRequestCompletionHandler's
			// abortSending: removeMarkersForTxnId, and no
			// maybeWriteTxnCompletion), leaving it Prepare* with its
			// Complete* pending. Kafka 4.x has nothing that completes it
			// then: abortTimedOutTransactions (timedOutTransactions) takes
			// only Ongoing transactions with no pending transition, and
			// every client request is CONCURRENT_TRANSACTIONS. After
			// __transaction_state lost records (an unclean election) the
			// partitions can hold an epoch the coordinator never
			// reached, and a reload fails the same way.
			q.txn.complete.State = noState
			q.txn.meta.markersAbandoned = true
		default:
			// NOT_LEADER_OR_FOLLOWER, UNKNOWN_TOPIC_OR_PARTITION,
			// NOT_ENOUGH_REPLICAS(_AFTER_APPEND), REQUEST_TIMED_OUT,
			// KAFKA_STORAGE_ERROR...: sent again to the leader as the
			// metadata then has it.
			again = append(again, q)
		}
	}
	mc.retry(again)
	for _, tx := range touched {
		mc.maybeComplete(tx)
	}
}

// retry queues markers to be sent again after the backoff.
func (mc *markerChannel) retry(items []queuedMarker) {
	if len(items) == 0 {
		return
	}
	mc.retries = append(mc.retries, items...)
	if !mc.retrySet {
		mc.retrySet = true
		mc.c.t.After(mc.c.cfg.RetryBackoff, markerFlush{Retry: true})
	}
}

// disconnected: the requests in flight to peer are sent again (Kafka's
// completion handler re-enqueues a disconnected request's markers).
func (mc *markerChannel) disconnected(peer sim.NodeID) {
	var corrs []uint64
	for corr, r := range mc.inflight { // kafkasim:orderless: sorted below
		if r.to == peer {
			corrs = append(corrs, corr)
		}
	}
	slices.Sort(corrs)
	for _, corr := range corrs {
		r := mc.inflight[corr]
		delete(mc.inflight, corr)
		mc.c.t.Cancel(r.timer)
		mc.retry(r.items)
	}
}

// maybeComplete writes Complete* once the transaction has no partition
// left (maybeWriteTxnCompletion), once: Kafka removes the transaction from
// transactionsWithPendingMarkers before it writes, so that the answers of
// two of its partitions in one response do not both write it.
func (mc *markerChannel) maybeComplete(tx *markerTxn) {
	if tx.completing || !mc.valid(tx) || len(tx.meta.partitions) > 0 {
		return
	}
	tx.completing = true
	p := mc.c.parts[tx.part]
	mc.appendComplete(p, tx.meta)
}

// appendComplete writes the pending Complete* (tryAppendToLog): again
// after the backoff on COORDINATOR_NOT_AVAILABLE; given up when the
// coordinator moved.
func (mc *markerChannel) appendComplete(p *txnPartition, m *txnMetadata) {
	t := m.completeTransit // prepared with the markers
	part, epoch := p.p, p.epoch
	mc.c.appendToLog(p, m, t, true, func(err proto.ErrorCode) {
		if err == proto.CoordinatorNotAvailable && mc.c.owns(part, epoch, m) {
			mc.c.t.After(mc.c.cfg.RetryBackoff, completeRetry{ID: m.id, Part: part, CoordEpoch: epoch})
		}
	})
}
