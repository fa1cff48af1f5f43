package txn

import (
	"math"
	"slices"
	"time"

	"kafkasim/model/proto"
)

// txnMetadata is one transactional id as its coordinator holds it
// (Kafka's TransactionMetadata). Every change is prepared first
// (prepare*, which sets pending: Kafka's pendingState), written to
// __transaction_state, and applied once the write is committed
// (completeTransitionTo); while a transition is pending, requests for the
// id are answered CONCURRENT_TRANSACTIONS. Only transaction version 2 is
// modelled: every commit and abort bumps the epoch.
type txnMetadata struct {
	id                string
	producerID        int64
	prevProducerID    int64
	nextProducerID    int64
	producerEpoch     int16
	lastProducerEpoch int16
	timeout           time.Duration
	state             State
	partitions        []proto.TopicPartition // sorted, no duplicates
	startTime         time.Duration          // -1: no transaction open
	lastUpdate        time.Duration

	pending             State
	hasFailedEpochFence bool
	// completeTransit is the pending Complete* while the markers are
	// written.
	completeTransit transit
	// markersAbandoned: a partition answered the markers
	// INVALID_PRODUCER_EPOCH or TRANSACTION_COORDINATOR_FENCED and this
	// coordinator sends them no more (the completion handler's
	// abortSending): the transaction stays Prepare* with its Complete*
	// pending until another coordinator loads it (the god view's
	// StalledTransactions).
	markersAbandoned bool
}

// transit is a prepared change (Kafka's TxnTransitMetadata): the whole
// metadata as it will be once written.
type transit struct {
	ProducerID        int64
	PrevProducerID    int64
	NextProducerID    int64
	ProducerEpoch     int16
	LastProducerEpoch int16
	Timeout           time.Duration
	State             State
	Partitions        []proto.TopicPartition
	StartTime         time.Duration
	LastUpdate        time.Duration
}

// epochExhausted is TransactionMetadata.isEpochExhausted: Short.MAX_VALUE
// is kept back so that the coordinator can always fence.
func epochExhausted(e int16) bool { return e >= math.MaxInt16-1 }

func newMetadata(id string, producerID int64, timeout time.Duration, now time.Duration) *txnMetadata {
	return &txnMetadata{id: id, producerID: producerID, prevProducerID: proto.NoProducerID, nextProducerID: proto.NoProducerID,
		producerEpoch: proto.NoProducerEpoch, lastProducerEpoch: proto.NoProducerEpoch, timeout: timeout, state: Empty,
		startTime: -1, lastUpdate: now, pending: noState}
}

func (m *txnMetadata) transitionPending() bool { return m.pending != noState }

// base is the transit that changes nothing but the state.
func (m *txnMetadata) base(to State) transit {
	return transit{ProducerID: m.producerID, PrevProducerID: m.prevProducerID, NextProducerID: m.nextProducerID,
		ProducerEpoch: m.producerEpoch, LastProducerEpoch: m.lastProducerEpoch, Timeout: m.timeout, State: to,
		Partitions: slices.Clone(m.partitions), StartTime: m.startTime, LastUpdate: m.lastUpdate}
}

// prepareTransitionTo is TransactionMetadata.prepareTransitionTo: the
// target must be reachable from the current state and no other transition
// pending. Anything else is a coordinator bug (Kafka throws
// IllegalStateException), so it panics.
func (m *txnMetadata) prepareTransitionTo(t transit) transit {
	if m.transitionPending() {
		panic("txn: " + m.id + ": transition to " + t.State.String() + " while " + m.pending.String() + " is pending")
	}
	if t.ProducerID < 0 || (t.State != Dead && t.ProducerEpoch < 0) {
		panic("txn: " + m.id + ": transition with no producer id or epoch")
	}
	if !ValidTransition(m.state, t.State) {
		panic("txn: " + m.id + ": illegal transition from " + m.state.String() + " to " + t.State.String())
	}
	t.PrevProducerID = m.producerID
	m.pending = t.State
	return t
}

// prepareFenceProducerEpoch bumps the epoch to fence the producer of an
// Ongoing transaction before aborting it, unless an earlier fence's write
// failed (its epoch was never told to anyone).
func (m *txnMetadata) prepareFenceProducerEpoch() transit {
	t := m.base(PrepareEpochFence)
	if !m.hasFailedEpochFence && m.producerEpoch != math.MaxInt16 {
		t.ProducerEpoch = m.producerEpoch + 1
	}
	return m.prepareTransitionTo(t)
}

// prepareIncrementProducerEpoch is InitProducerId's bump of an id with no
// transaction open. expected is the KIP-360 epoch the producer has (ok
// false: a new instance). It fails PRODUCER_FENCED for an epoch neither
// current nor the last one.
func (m *txnMetadata) prepareIncrementProducerEpoch(timeout time.Duration, expected int16, hasExpected bool, now time.Duration) (transit, proto.ErrorCode) {
	if epochExhausted(m.producerEpoch) {
		panic("txn: " + m.id + ": no producer epoch left to increment")
	}
	t := m.base(Empty)
	bumped := m.producerEpoch + 1
	switch {
	case !hasExpected:
		t.ProducerEpoch, t.LastProducerEpoch = bumped, proto.NoProducerEpoch
	case m.producerEpoch == proto.NoProducerEpoch || expected == m.producerEpoch:
		t.ProducerEpoch, t.LastProducerEpoch = bumped, m.producerEpoch
	case expected == m.lastProducerEpoch:
		// A retry of a bump that succeeded: the same epoch again.
	default:
		return transit{}, proto.ProducerFenced
	}
	t.Timeout, t.Partitions, t.StartTime, t.LastUpdate = timeout, nil, -1, now
	return m.prepareTransitionTo(t), proto.None
}

// prepareProducerIDRotation gives the id a new producer id at epoch 0
// when the epoch is exhausted.
func (m *txnMetadata) prepareProducerIDRotation(newID int64, timeout time.Duration, now time.Duration, recordLastEpoch bool) transit {
	t := m.base(Empty)
	t.ProducerID, t.ProducerEpoch, t.LastProducerEpoch = newID, 0, proto.NoProducerEpoch
	if recordLastEpoch {
		t.LastProducerEpoch = m.producerEpoch
	}
	t.Timeout, t.Partitions, t.StartTime, t.LastUpdate = timeout, nil, -1, now
	return m.prepareTransitionTo(t)
}

// prepareAddPartitions starts the transaction (its start time is now) or
// extends it.
func (m *txnMetadata) prepareAddPartitions(add []proto.TopicPartition, now time.Duration) transit {
	t := m.base(Ongoing)
	if m.state == Empty || m.state == CompleteCommit || m.state == CompleteAbort {
		t.StartTime = now
	}
	t.Partitions = unionPartitions(t.Partitions, add)
	t.LastUpdate = now
	return m.prepareTransitionTo(t)
}

// prepareAbortOrCommit is PrepareCommit or PrepareAbort with transaction
// version 2's epoch bump (none when an abort finds the epoch at
// Short.MAX_VALUE already); nextProducerID is the producer id the
// producer goes on with when the bump exhausts the epoch. fenced: the
// abort of a transaction whose epoch a fence bumped already, which bumps
// it no more (KAFKA-19367). keepEpoch is the bug zoo's
// no-epoch-bump-on-abort: transaction version 1's abort, which keeps the
// epoch.
func (m *txnMetadata) prepareAbortOrCommit(to State, nextProducerID int64, now time.Duration, noPartitionAdded, fenced, keepEpoch bool) transit {
	t := m.base(to)
	if !fenced {
		if !keepEpoch && !(m.producerEpoch == math.MaxInt16 && to == PrepareAbort) {
			t.ProducerEpoch = m.producerEpoch + 1
		}
		t.LastProducerEpoch = m.producerEpoch
	}
	if noPartitionAdded {
		t.StartTime = now
	}
	t.NextProducerID, t.LastUpdate = nextProducerID, now
	return m.prepareTransitionTo(t)
}

// prepareComplete is CompleteCommit or CompleteAbort once every marker is
// written: with an exhausted epoch, the next producer id at epoch 0.
func (m *txnMetadata) prepareComplete(now time.Duration) transit {
	m.hasFailedEpochFence = false
	to := CompleteAbort
	if m.state == PrepareCommit {
		to = CompleteCommit
	}
	t := m.base(to)
	if m.nextProducerID != proto.NoProducerID {
		t.ProducerID, t.ProducerEpoch = m.nextProducerID, 0
	}
	t.NextProducerID, t.Partitions, t.LastUpdate = proto.NoProducerID, nil, now
	return m.prepareTransitionTo(t)
}

// completeTransitionTo applies a written transit (TransactionMetadata's
// completeTransitionTo, whose consistency checks are left out).
func (m *txnMetadata) completeTransitionTo(t transit) {
	if m.pending != t.State {
		panic("txn: " + m.id + ": completing " + t.State.String() + " while " + m.pending.String() + " is pending")
	}
	m.producerID, m.prevProducerID, m.nextProducerID = t.ProducerID, t.PrevProducerID, t.NextProducerID
	m.producerEpoch, m.lastProducerEpoch = t.ProducerEpoch, t.LastProducerEpoch
	m.timeout, m.partitions, m.startTime, m.lastUpdate = t.Timeout, slices.Clone(t.Partitions), t.StartTime, t.LastUpdate
	m.state, m.pending = t.State, noState
}

// removePartition drops a partition whose marker is written.
func (m *txnMetadata) removePartition(tp proto.TopicPartition) {
	if m.state != PrepareCommit && m.state != PrepareAbort {
		panic("txn: " + m.id + ": a marker acknowledged in state " + m.state.String())
	}
	m.partitions = slices.DeleteFunc(m.partitions, func(p proto.TopicPartition) bool { return p == tp })
}

func lessTP(a, b proto.TopicPartition) int {
	if a.Topic != b.Topic {
		if a.Topic < b.Topic {
			return -1
		}
		return 1
	}
	return int(a.Partition) - int(b.Partition)
}

// unionPartitions is a ∪ b, sorted.
func unionPartitions(a, b []proto.TopicPartition) []proto.TopicPartition {
	out := append(slices.Clone(a), b...)
	slices.SortFunc(out, lessTP)
	return slices.Compact(out)
}

// subset reports whether every partition of b is in a.
func subset(b, a []proto.TopicPartition) bool {
	for _, p := range b {
		if !slices.Contains(a, p) {
			return false
		}
	}
	return true
}
