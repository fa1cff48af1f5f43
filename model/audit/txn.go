package audit

import (
	"fmt"
	"kafkasim/godview"
	"strings"

	"kafkasim/model/metadata"
	"kafkasim/model/partlog"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// Transactions' invariants, checked when the cluster runs a transaction
// coordinator (SetTransactions):
//
//   - lso-at-most-hw: a leader's last stable offset never exceeds its high
//     watermark (UnifiedLog.lastStableOffset: the first unstable offset
//     when below it, else the high watermark);
//   - lso-monotonic: within one leader epoch, a leader's last stable offset
//     never goes back (a read_committed reader never meets a record it was
//     told was stable become unstable again);
//   - txn-markers-agree: the committed markers of one transaction (producer
//     id and epoch: with transaction version 2 the coordinator bumps the
//     epoch at each end, so the pair names one transaction) are all COMMIT
//     or all ABORT, on every partition it wrote
//     (TransactionMarkerChannelManager writes one outcome everywhere);
//   - fenced-epoch-not-appended: no committed transactional batch carries a
//     producer epoch below one already committed for its producer on the
//     partition (ProducerAppendInfo.checkProducerEpoch refuses a fenced
//     zombie's write with INVALID_PRODUCER_EPOCH).
const (
	LSOAtMostHW            = "lso-at-most-hw"
	LSOMonotonic           = "lso-monotonic"
	TxnMarkersAgree        = "txn-markers-agree"
	FencedEpochNotAppended = "fenced-epoch-not-appended"
)

var txnInvariants = []string{LSOAtMostHW, LSOMonotonic, TxnMarkersAgree, FencedEpochNotAppended}

// txnAudit is what the audit keeps of transactions.
type txnAudit struct {
	// lso: each leader's last stable offset, by broker and partition.
	lso map[lsoKey]lsoMark
	// markers: the outcome of each transaction's first committed marker.
	markers map[txnKey]markerSeen
	// epochs: the highest producer epoch committed, by partition and
	// producer.
	epochs map[pidKey]int16
	// open: a producer's transactional records committed on a partition
	// since its last marker there — the transaction a marker ends. A
	// marker with none (a coordinator's retry of a transaction's markers,
	// or an abort of a transaction that wrote nothing there) decides
	// nothing on that partition.
	open map[pidKey]bool
	// lostMarkers: the committed markers a permitted loss took, by
	// partition and producer, in the order the losses came (lostMarker).
	lostMarkers map[pidKey][]lostMarker
	// epochSpansTxns: the coordinator ends transactions without bumping
	// the epoch (transaction version 1: the bug zoo's delayed-end-txn), so
	// a producer id and epoch no longer name one transaction and
	// txn-markers-agree has nothing to key on: it is not checked.
	epochSpansTxns bool
}

type lsoKey struct {
	broker int32
	tp     metadata.TopicPartition
}

type lsoMark struct {
	leaderEpoch int32
	lso         int64
}

type txnKey struct {
	pid   int64
	epoch int16
}

type markerSeen struct {
	commit bool
	tp     metadata.TopicPartition
	offset int64
	// stateLosses counts the losses of __transaction_state's committed
	// data before it: one after it may have taken the epoch bump that
	// ended its transaction, and the coordinator, reloaded without it,
	// ends a later transaction under the same epoch.
	stateLosses int
}

// lostMarker is a committed transaction marker a permitted loss took: its
// offset, and the loss's fact (its index in facts: a later replica's
// recovery may name the loss's root cause after it was recorded,
// openedAfterElection).
type lostMarker struct {
	offset int64
	loss   int
}

type pidKey struct {
	tp  metadata.TopicPartition
	pid int64
}

// SetTransactions has the audit check the transactions' invariants: the
// cluster runs a transaction coordinator.
func (a *Audit) SetTransactions() {
	a.txn = &txnAudit{lso: map[lsoKey]lsoMark{}, markers: map[txnKey]markerSeen{}, epochs: map[pidKey]int16{}, open: map[pidKey]bool{},
		lostMarkers: map[pidKey][]lostMarker{}}
}

// SetTxnEpochSpansTransactions tells the audit that one producer epoch
// spans many transactions (transaction version 1's ends, the bug zoo's
// delayed-end-txn): txn-markers-agree, keyed on the epoch, is not checked.
func (a *Audit) SetTxnEpochSpansTransactions() {
	if a.txn != nil {
		a.txn.epochSpansTxns = true
	}
}

// TxnInvariants lists the transactions' invariants when the cluster runs a
// transaction coordinator, none otherwise (a run without transactions
// reports what it always did).
func (a *Audit) TxnInvariants() []string {
	if a.txn == nil {
		return nil
	}
	if a.txn.epochSpansTxns {
		return []string{LSOAtMostHW, LSOMonotonic, FencedEpochNotAppended}
	}
	return txnInvariants
}

// leaderHW checks a leader's last stable offset at its new high watermark
// (the LSO moves only with the high watermark: a marker decides a
// transaction once the high watermark passes it).
func (a *Audit) leaderHW(broker int32, tp metadata.TopicPartition, leaderEpoch int32, hw int64, log *partlog.Log) {
	if a.txn == nil || !log.Transactional() {
		return
	}
	a.LeaderLSO(broker, tp, leaderEpoch, log.LastStableOffset(hw), hw)
}

// LeaderLSO checks a leader's last stable offset lso at high watermark hw.
func (a *Audit) LeaderLSO(broker int32, tp metadata.TopicPartition, leaderEpoch int32, lso, hw int64) {
	if a.txn == nil {
		return
	}
	node := a.brokerNode(broker)
	if lso > hw {
		a.report(LSOAtMostHW, node, "%s's last stable offset %d is above its high watermark %d (leader epoch %d)", tp, lso, hw, leaderEpoch)
	}
	k := lsoKey{broker: broker, tp: tp}
	if prev, ok := a.txn.lso[k]; ok && prev.leaderEpoch == leaderEpoch && lso < prev.lso {
		a.report(LSOMonotonic, node, "%s's last stable offset went from %d back to %d in leader epoch %d", tp, prev.lso, lso, leaderEpoch)
	}
	a.txn.lso[k] = lsoMark{leaderEpoch: leaderEpoch, lso: lso}
}

// txnCommitted checks a transactional batch b of tp, just committed.
func (a *Audit) txnCommitted(tp metadata.TopicPartition, p *partitionAudit, b *record.Batch) {
	if a.txn == nil || !b.Transactional || b.ProducerID < 0 {
		return
	}
	// A loss Kafka permits (an unclean election, a power loss) may take a
	// committed marker away; what comes after it is not judged against it.
	lossy := len(p.uncleanElections) > 0 || p.powerLossFrom >= 0
	pk := pidKey{tp: tp, pid: b.ProducerID}
	if prev, ok := a.txn.epochs[pk]; ok && !b.Control && b.ProducerEpoch < prev && !lossy {
		a.report(FencedEpochNotAppended, a.partLeaderNode(tp, b.PartitionLeaderEpoch),
			"%s@%d: a transactional batch of producer %d at epoch %d, committed after its epoch %d", tp, b.BaseOffset, b.ProducerID, b.ProducerEpoch, prev)
	}
	if prev, ok := a.txn.epochs[pk]; !ok || b.ProducerEpoch > prev {
		a.txn.epochs[pk] = b.ProducerEpoch
	}
	if !b.Control {
		a.txn.open[pk] = true
		return
	}
	t, _, ok := b.Marker()
	if !ok || !a.txn.open[pk] {
		return
	}
	delete(a.txn.open, pk)
	a.marker(tp, b.BaseOffset, b.ProducerID, b.ProducerEpoch, t == record.ControlCommit, b.PartitionLeaderEpoch)
}

// Marker checks a committed end-transaction marker of producer (pid,
// epoch) at offset of tp against the transaction's others.
func (a *Audit) Marker(tp metadata.TopicPartition, offset, pid int64, epoch int16, commit bool) {
	a.marker(tp, offset, pid, epoch, commit, -1)
}

// marker is Marker, for a marker written in leaderEpoch (-1: unknown).
func (a *Audit) marker(tp metadata.TopicPartition, offset, pid int64, epoch int16, commit bool, leaderEpoch int32) {
	if a.txn == nil || a.txn.epochSpansTxns {
		return
	}
	k := txnKey{pid: pid, epoch: epoch}
	prev, ok := a.txn.markers[k]
	losses := a.txnStateLosses()
	if !ok || prev.stateLosses != losses {
		a.txn.markers[k] = markerSeen{commit: commit, tp: tp, offset: offset, stateLosses: losses}
		return
	}
	if prev.commit != commit {
		a.report(TxnMarkersAgree, a.partLeaderNode(tp, leaderEpoch), "producer %d epoch %d's transaction has %s at %s@%d and %s at %s@%d",
			pid, epoch, outcome(prev.commit), prev.tp, prev.offset, outcome(commit), tp, offset)
	}
}

func outcome(commit bool) string {
	if commit {
		return fmt.Sprint(record.ControlCommit)
	}
	return fmt.Sprint(record.ControlAbort)
}

// partLeaderNode is the node of tp's leader in leaderEpoch as the audit
// saw it, or none.
func (a *Audit) partLeaderNode(tp metadata.TopicPartition, leaderEpoch int32) sim.NodeID {
	if l, ok := a.partLeaders[epochLeader{epoch: leaderEpoch, tp: tp}]; ok {
		return a.brokerNode(l)
	}
	return sim.NoNode
}

// txnStateLosses counts the god view's losses of __transaction_state
// partitions' committed data so far.
func (a *Audit) txnStateLosses() int {
	n := 0
	for i := range a.facts {
		if f := &a.facts[i]; f.Kind == godview.Loss && strings.HasPrefix(f.Partition, "__transaction_state-") {
			n++
		}
	}
	return n
}

// lostMarker records that a permitted loss (facts[loss]) took producer
// pid's committed marker at offset of tp.
func (a *Audit) lostMarker(tp metadata.TopicPartition, pid, offset int64, loss int) {
	if a.txn == nil {
		return
	}
	k := pidKey{tp: tp, pid: pid}
	a.txn.lostMarkers[k] = append(a.txn.lostMarkers[k], lostMarker{offset: offset, loss: loss})
}

// LostMarker reports whether a permitted loss took a committed marker of
// producer pid on tp at an offset past first, with the record at first left
// in the log — the marker that ended the transaction whose first record
// stands at first (a producer has one transaction open on a partition at a
// time) — and the first such loss's cause and what exposed it. The
// coordinator had written that marker and completed the transaction: it
// never writes it again (TransactionMarkerChannelManager sends a
// transaction's markers once), so the partition, its producer state rebuilt
// from a log without the marker (ProducerStateManager.truncateAndReload),
// holds the transaction open for good: KIP-664's hanging transaction, which
// KAFKA-20716 documents for unclean elections.
func (a *Audit) LostMarker(tp metadata.TopicPartition, pid, first int64) (cause, exposedBy string, ok bool) {
	if a.txn == nil {
		return "", "", false
	}
	for _, m := range a.txn.lostMarkers[pidKey{tp: tp, pid: pid}] {
		// The record at first stood in the log the loss left (below what
		// it took, or in the new leader's own tail): one appended after
		// the loss, at an offset it freed, began a later transaction.
		if l := &a.facts[m.loss]; m.offset > first && first < max(l.From, l.LeaderEnd) {
			return l.Cause, l.ExposedBy, true
		}
	}
	return "", "", false
}
