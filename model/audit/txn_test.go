package audit

import (
	"kafkasim/godview"
	"testing"

	"kafkasim/model/metadata"
	"kafkasim/model/partlog"
	"kafkasim/model/record"
)

var txnTP = metadata.TopicPartition{Topic: "orders", Partition: 0}

// txnBatch is a one-record transactional batch of producer (pid, epoch).
func txnBatch(pid int64, epoch int16, seq int32) *record.Batch {
	return record.New([]record.Record{{Value: "v"}}, record.Producer{ID: pid, Epoch: epoch, BaseSequence: seq}, true, record.CompressionNone)
}

// appendAll appends batches to l as a leader of epoch 0 would have (no
// checks: a broken model's log), and has the audit see each high
// watermark move as the leader's.
func appendAll(t *testing.T, a *Audit, l *partlog.Log, batches ...*record.Batch) {
	t.Helper()
	for _, b := range batches {
		if err := l.Append([]*record.Batch{b.Stamped(l.LEO(), 0)}, true); err != nil {
			t.Fatal(err)
		}
		hw := l.LEO()
		l.OnHighWatermarkUpdated(hw)
		a.ReplicaHW(1, txnTP, 0, true, hw, l)
	}
}

func TestTxnInvariantsHold(t *testing.T) {
	a, logs := replicaLogs(t, nil)
	a.SetTransactions()
	// Two transactions interleaved, one committed and one aborted, then
	// the first producer's next transaction at its bumped epoch.
	appendAll(t, a, logs[0], txnBatch(7, 0, 0), txnBatch(8, 0, 0),
		record.NewControl(7, 1, true, 0, 0), record.NewControl(8, 1, false, 0, 0),
		txnBatch(7, 1, 0), record.NewControl(7, 2, true, 0, 0))
	if a.Total() != 0 {
		t.Fatalf("violations on a well-formed transactional log: %v", a.Violations())
	}
	if got := len(a.TxnInvariants()); got != 4 {
		t.Fatalf("TxnInvariants = %d names, want 4", got)
	}
	// A new leader epoch may start its LSO lower (a new leader's high
	// watermark may lag).
	a.LeaderLSO(1, txnTP, 0, 6, 6)
	a.LeaderLSO(2, txnTP, 1, 4, 5)
	a.Marker(metadata.TopicPartition{Topic: "orders", Partition: 1}, 3, 7, 2, true) // the same outcome elsewhere
	if a.Total() != 0 {
		t.Fatalf("violations: %v", a.Violations())
	}
}

func TestTxnInvariantsNotCheckedWithoutTransactions(t *testing.T) {
	a, logs := replicaLogs(t, nil)
	appendAll(t, a, logs[0], txnBatch(7, 0, 0), record.NewControl(7, 1, false, 0, 0), txnBatch(7, 0, 1))
	a.LeaderLSO(1, txnTP, 0, 9, 3)
	if a.Total() != 0 || a.TxnInvariants() != nil {
		t.Fatalf("a cluster without a transaction coordinator: %v, %v", a.Violations(), a.TxnInvariants())
	}
}

func TestFencedEpochAppendedFires(t *testing.T) {
	a, logs := replicaLogs(t, nil)
	a.SetTransactions()
	// The coordinator aborted producer 7's transaction at epoch 1 (a new
	// instance fenced it), and a broken leader then took the zombie's write
	// at epoch 0.
	appendAll(t, a, logs[0], txnBatch(7, 0, 0), record.NewControl(7, 1, false, 0, 0), txnBatch(7, 0, 1))
	if a.Count(FencedEpochNotAppended) != 1 || a.Total() != 1 {
		t.Fatalf("fenced-epoch-not-appended: %d, violations %v", a.Count(FencedEpochNotAppended), a.Violations())
	}
}

// A marker that ends no transaction on its partition (a retried marker
// there) decides nothing: only the disagreement of deciding markers fires.
func TestTxnMarkersDisagreeFires(t *testing.T) {
	a, logs := replicaLogs(t, nil)
	a.SetTransactions()
	appendAll(t, a, logs[0], txnBatch(7, 0, 0), record.NewControl(7, 1, true, 0, 0), record.NewControl(7, 1, false, 0, 0))
	if a.Total() != 0 {
		t.Fatalf("a marker ending nothing was judged: %v", a.Violations())
	}
	a.Marker(metadata.TopicPartition{Topic: "orders", Partition: 1}, 5, 7, 1, false)
	if a.Count(TxnMarkersAgree) != 1 || a.Total() != 1 {
		t.Fatalf("txn-markers-agree: %d, violations %v", a.Count(TxnMarkersAgree), a.Violations())
	}
}

// A loss of __transaction_state's committed data may take the epoch bump
// that ended a transaction: the coordinator, reloaded without it, ends a
// later transaction under the same producer epoch, and the two outcomes
// may differ. A loss elsewhere excuses nothing.
func TestTxnMarkersAfterATransactionStateLoss(t *testing.T) {
	for _, c := range []struct {
		lost  string
		fires bool
	}{{"__transaction_state-13", false}, {"orders-5", true}} {
		a, _ := replicaLogs(t, nil)
		a.SetTransactions()
		a.Marker(metadata.TopicPartition{Topic: "orders", Partition: 1}, 5, 7, 1, false)
		a.facts = append(a.facts, godview.Fact{Kind: godview.Loss, Partition: c.lost, From: 3, To: 9, Cause: "unclean-election"})
		a.Marker(metadata.TopicPartition{Topic: "orders", Partition: 1}, 9, 7, 1, true)
		if got := a.Count(TxnMarkersAgree) == 1; got != c.fires {
			t.Fatalf("loss of %s: txn-markers-agree fired %v, want %v (%v)", c.lost, got, c.fires, a.Violations())
		}
	}
}

func TestLSOInvariantsFire(t *testing.T) {
	a, _ := replicaLogs(t, nil)
	a.SetTransactions()
	a.LeaderLSO(1, txnTP, 3, 5, 4)
	if a.Count(LSOAtMostHW) != 1 {
		t.Fatalf("lso-at-most-hw: %v", a.Violations())
	}
	a.LeaderLSO(1, txnTP, 3, 2, 6)
	if a.Count(LSOMonotonic) != 1 || a.Total() != 2 {
		t.Fatalf("lso-monotonic: %v", a.Violations())
	}
}

// TestOpenTransactionHoldsLSO: the LSO stays at an open transaction's first
// offset while the high watermark moves past it, and jumps once its marker
// is committed, without either invariant firing.
func TestOpenTransactionHoldsLSO(t *testing.T) {
	a, logs := replicaLogs(t, nil)
	a.SetTransactions()
	l := logs[0]
	appendAll(t, a, l, txnBatch(7, 0, 0), txnBatch(8, 0, 0))
	if got := l.LastStableOffset(2); got != 0 {
		t.Fatalf("LSO with transactions open at 0 and 1 = %d, want 0", got)
	}
	appendAll(t, a, l, record.NewControl(7, 1, true, 0, 0))
	if got := l.LastStableOffset(3); got != 1 {
		t.Fatalf("LSO after 7 commits = %d, want 1 (8's still open)", got)
	}
	appendAll(t, a, l, record.NewControl(8, 1, false, 0, 0))
	if got := l.LastStableOffset(4); got != 4 || a.Total() != 0 {
		t.Fatalf("LSO = %d, want 4; violations %v", got, a.Violations())
	}
}

// TestLostMarkerNamesTheLossThatTookIt: an unclean leader whose log holds a
// transaction's first batch but not the committed ABORT marker after it
// leaves the transaction open there for good (KAFKA-20716); LostMarker names
// the loss for the transaction at 0, and for nothing else: not a
// transaction begun after the loss at an offset it freed, not another
// producer, not when the new leader kept the marker and the loss took only
// a later batch.
func TestLostMarkerNamesTheLossThatTookIt(t *testing.T) {
	for _, keptMarker := range []bool{false, true} {
		a, logs := replicaLogs(t, nil, nil)
		a.SetTransactions()
		committed := []*record.Batch{txnBatch(7, 0, 0), txnBatch(8, 0, 0), record.NewControl(7, 1, false, 0, 0), txnBatch(8, 0, 1)}
		appendAll(t, a, logs[0], committed...)
		kept := committed[:1]
		if keptMarker {
			kept = committed[:3]
		}
		for _, b := range kept {
			if err := logs[1].Append([]*record.Batch{b.Stamped(logs[1].LEO(), 0)}, true); err != nil {
				t.Fatal(err)
			}
		}
		a.PartitionLeader(2, txnTP, 1, logs[1], true)
		if ls := a.Losses(); len(ls) != 1 || ls[0].Cause != CauseUncleanElection || ls[0].From != int64(len(kept)) {
			t.Fatalf("keptMarker %v: losses %+v, want one to the unclean election from %d", keptMarker, ls, len(kept))
		}
		cause, exposedBy, ok := a.LostMarker(txnTP, 7, 0)
		if keptMarker {
			if ok {
				t.Fatalf("the new leader kept the marker, yet LostMarker says %s lost it", cause)
			}
			continue
		}
		if !ok || cause != CauseUncleanElection || exposedBy != "" {
			t.Fatalf("LostMarker(7, 0) = %q, %q, %v; want the unclean election's loss", cause, exposedBy, ok)
		}
		if _, _, ok := a.LostMarker(txnTP, 7, 1); ok {
			t.Fatal("a transaction begun after the loss at the offset it freed was not ended by the lost marker")
		}
		if _, _, ok := a.LostMarker(txnTP, 8, 0); ok {
			t.Fatal("producer 8 had no marker to lose")
		}
	}
}
