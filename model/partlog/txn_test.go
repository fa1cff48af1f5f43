package partlog

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"kafkasim/model/proto"
	"kafkasim/model/record"
)

// txnStep is one append of a transactions script: a transactional batch
// of pid ('d'), a non-transactional batch of no producer ('n'), a commit
// ('c') or abort ('a') marker of pid written with epoch.
type txnStep struct {
	kind  byte
	pid   int64
	epoch int16
}

// seqs numbers each producer's batches per epoch.
type txnScript struct {
	b    *logBench
	seqs map[[2]int64]int32
}

func (s *txnScript) run(t *testing.T, steps ...txnStep) {
	t.Helper()
	for _, st := range steps {
		var bt *record.Batch
		switch st.kind {
		case 'n':
			bt = record.New([]record.Record{{Key: "k", HasKey: true, Value: "plain"}}, record.Producer{ID: record.NoProducer}, false, record.CompressionNone)
		case 'd':
			k := [2]int64{st.pid, int64(st.epoch)}
			bt = record.New([]record.Record{{Key: fmt.Sprintf("k%d", st.pid), HasKey: true, Value: "txn"}},
				record.Producer{ID: st.pid, Epoch: st.epoch, BaseSequence: s.seqs[k]}, true, record.CompressionNone)
			s.seqs[k]++
		case 'c', 'a':
			bt = record.NewControl(st.pid, st.epoch, st.kind == 'c', 0, 0)
		}
		bt = bt.Stamped(s.b.log.LEO(), 0)
		if err := s.b.log.Append([]*record.Batch{bt}, true); err != nil {
			t.Fatal(err)
		}
	}
}

func newTxnScript(cfg Config) *txnScript {
	return &txnScript{b: newLogBench(1, cfg, false), seqs: map[[2]int64]int32{}}
}

func d(pid int64, epoch int16) txnStep { return txnStep{'d', pid, epoch} }
func c(pid int64, epoch int16) txnStep { return txnStep{'c', pid, epoch} }
func a(pid int64, epoch int16) txnStep { return txnStep{'a', pid, epoch} }

var n = txnStep{kind: 'n'}

// The LSO is the first offset of the earliest undecided transaction, or of
// a decided one whose marker the high watermark has not passed, capped by
// the high watermark.
func TestLastStableOffset(t *testing.T) {
	for _, tc := range []struct {
		name    string
		steps   []txnStep
		hw      int64 // -1: the log end
		wantLSO int64
		aborted []AbortedTxn
	}{
		{"no transactions", []txnStep{n, n}, -1, 2, nil},
		{"one open", []txnStep{n, d(1, 0), n, d(1, 0)}, -1, 1, nil},
		{"committed", []txnStep{n, d(1, 0), d(1, 0), c(1, 1)}, -1, 4, nil},
		{"committed, marker not replicated", []txnStep{n, d(1, 0), d(1, 0), c(1, 1)}, 3, 1, nil},
		{"aborted", []txnStep{d(1, 0), n, a(1, 1)}, -1, 3, []AbortedTxn{{1, 0, 2, 3}}},
		{"two interleaved, the first decided", []txnStep{d(1, 0), d(2, 0), d(1, 0), a(1, 1), d(2, 0)}, -1, 1,
			[]AbortedTxn{{1, 0, 3, 1}}},
		{"two interleaved, both decided", []txnStep{d(1, 0), d(2, 0), a(1, 1), a(2, 1)}, -1, 4,
			[]AbortedTxn{{1, 0, 2, 1}, {2, 1, 3, 4}}},
		{"a second transaction after a commit", []txnStep{d(1, 0), c(1, 1), n, d(1, 1)}, -1, 3, nil},
		{"an empty transaction's marker decides nothing", []txnStep{n, c(1, 1), n}, -1, 3, nil},
		{"capped by the high watermark", []txnStep{n, n, n, d(1, 0)}, 2, 2, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTxnScript(DefaultConfig())
			s.run(t, tc.steps...)
			hw := tc.hw
			if hw < 0 {
				hw = s.b.log.LEO()
			}
			if got := s.b.log.LastStableOffset(hw); got != tc.wantLSO {
				t.Errorf("LSO at hw %d = %d, want %d", hw, got, tc.wantLSO)
			}
			if got := s.b.log.AbortedTransactions(); !slices.Equal(got, tc.aborted) {
				t.Errorf("aborted = %v, want %v", got, tc.aborted)
			}
		})
	}
}

// A read_committed fetch of [from, upTo) gets the aborted transactions
// whose marker is at or after from and whose first offset is below upTo.
func TestCollectAbortedTransactions(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SegmentBytes = 200 // a few batches a segment
	s := newTxnScript(cfg)
	// 0 d1, 1 d2, 2 a1, 3 n, 4 d1, 5 c1, 6 d3, 7 n, 8 a3, 9 a2
	s.run(t, d(1, 0), d(2, 0), a(1, 1), n, d(1, 1), c(1, 2), d(3, 0), n, a(3, 1), a(2, 1))
	if s.b.log.Segments() < 3 {
		t.Fatalf("want several segments, have %d", s.b.log.Segments())
	}
	a1, a3, a2 := AbortedTxn{1, 0, 2, 1}, AbortedTxn{3, 6, 8, 1}, AbortedTxn{2, 1, 9, 10}
	for _, tc := range []struct {
		from, upTo int64
		want       []AbortedTxn
	}{
		{0, 10, []AbortedTxn{a1, a3, a2}},
		{0, 1, []AbortedTxn{a1}},
		{3, 6, []AbortedTxn{a2}},
		{3, 7, []AbortedTxn{a3, a2}},
		{9, 10, []AbortedTxn{a2}},
		{10, 10, nil},
	} {
		if got := s.b.log.CollectAbortedTransactions(tc.from, tc.upTo); !slices.Equal(got, tc.want) {
			t.Errorf("[%d, %d): %v, want %v", tc.from, tc.upTo, got, tc.want)
		}
	}
}

// The index and the ongoing transactions survive a roll, a truncation
// (entries of markers cut go; the transactions they decided are open
// again), restarts clean and unclean, and retention.
func TestAbortedIndexAcrossRollTruncationRestartRetention(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SegmentBytes = 1 // a segment per batch: every append rolls
	cfg.RetentionTime = time.Millisecond
	s := newTxnScript(cfg)
	// 0 d1, 1 d2, 2 a1, 3 n, 4 d1, 5 a1, 6 d2
	s.run(t, d(1, 0), d(2, 0), a(1, 1), n, d(1, 1), a(1, 2), d(2, 0))
	l := func() *Log { return s.b.log }
	want := []AbortedTxn{{1, 0, 2, 1}, {1, 4, 5, 1}}
	check := func(what string, aborted []AbortedTxn, lso int64) {
		t.Helper()
		if got := l().AbortedTransactions(); !slices.Equal(got, aborted) {
			t.Errorf("%s: aborted %v, want %v", what, got, aborted)
		}
		if got := l().LastStableOffset(l().LEO()); got != lso {
			t.Errorf("%s: LSO %d, want %d", what, got, lso)
		}
	}
	check("after rolls", want, 1)

	// An unclean restart rebuilds the index from the log, the ongoing
	// transaction from the snapshots and the log.
	s.b.wait(time.Second)
	s.b.ck = Checkpoints{RecoveryPoint: 3}
	s.b.crash(false)
	check("after an unclean restart", want, 1)

	// A clean one loads the snapshot at the log end: it carries producer
	// 2's ongoing transaction.
	l().Close()
	s.b.wait(time.Second)
	s.b.ck = Checkpoints{RecoveryPoint: l().LEO(), Clean: true}
	s.b.crash(true)
	check("after a clean restart", want, 1)
	if first, _, ok := l().Producers().OngoingTxn(2); !ok || first != 1 {
		t.Errorf("producer 2's ongoing transaction from %d (%v), want 1", first, ok)
	}

	// A truncation below the second abort marker drops its entry: producer
	// 1's transaction from 4 is open again.
	l().TruncateTo(5)
	check("after truncating to 5", want[:1], 1)
	if first, _, ok := l().Producers().OngoingTxn(1); !ok || first != 4 {
		t.Errorf("producer 1's ongoing transaction from %d (%v), want 4", first, ok)
	}
	// Below the first marker: producer 1's first transaction is open again.
	l().TruncateTo(2)
	check("after truncating to 2", nil, 0)

	// Retention takes a segment's index with it.
	s.run(t, a(1, 1), a(2, 1), n) // 2 a1 (0..2), 3 a2 (1..3), 4 n
	check("decided again", []AbortedTxn{{1, 0, 2, 1}, {2, 1, 3, 4}}, 5)
	if got := l().DeleteOldSegments(3, 1<<40); got != 3 {
		t.Fatalf("retention deleted %d segments, want 3", got)
	}
	check("after retention", []AbortedTxn{{2, 1, 3, 4}}, 5)
	if got := l().CollectAbortedTransactions(3, 5); !slices.Equal(got, []AbortedTxn{{2, 1, 3, 4}}) {
		t.Errorf("collect after retention: %v", got)
	}
}

// Compaction drops the records of aborted transactions, keeps the markers
// and the committed records, and stops at the first unstable offset.
func TestCompactionDropsAbortedTransactions(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SegmentBytes = 1
	cfg.Compact = true
	s := newTxnScript(cfg)
	// 0 d1, 1 d2, 2 a1, 3 d1 (epoch 1), 4 c1, 5 d3, 6 n
	s.run(t, d(1, 0), d(2, 0), a(1, 1), d(1, 1), c(1, 2), d(3, 0), n)
	s.run(t, a(2, 1), c(3, 1), n) // 7 a2, 8 c3, 9 n
	removed := s.b.log.Compact(s.b.log.LEO())
	var left []int64
	s.b.log.Scan(0, s.b.log.LEO(), func(b *record.Batch) bool { left = append(left, b.BaseOffset); return true })
	// Dropped: 0 (aborted) and 1 (aborted: producer 2's last data batch,
	// but not its last batch, the marker is). 6 stays: the 9 that
	// supersedes it is in the active segment, which the cleaner does not
	// read.
	if want := []int64{2, 3, 4, 5, 6, 7, 8, 9}; !slices.Equal(left, want) {
		t.Errorf("batches left %v, want %v (removed %d)", left, want, removed)
	}
	// An open transaction holds the cleaner back.
	s2 := newTxnScript(cfg)
	s2.run(t, d(1, 0), d(2, 0), a(2, 1), n, n)
	s2.b.log.Compact(s2.b.log.LEO())
	var left2 []int64
	s2.b.log.Scan(0, s2.b.log.LEO(), func(b *record.Batch) bool { left2 = append(left2, b.BaseOffset); return true })
	if want := []int64{0, 1, 2, 3, 4}; !slices.Equal(left2, want) {
		t.Errorf("with a transaction open from 0: batches left %v, want %v", left2, want)
	}
}

// A leader refuses what a fenced producer or coordinator writes.
func TestTransactionFencing(t *testing.T) {
	s := newTxnScript(DefaultConfig())
	s.run(t, d(1, 3), d(1, 3)) // producer 1 in epoch 3, a transaction open
	ps := s.b.log.Producers()
	data := func(epoch int16, seq int32, txn bool) *record.Batch {
		return record.New([]record.Record{{Key: "k", HasKey: true}}, record.Producer{ID: 1, Epoch: epoch, BaseSequence: seq}, txn, record.CompressionNone)
	}
	for _, tc := range []struct {
		name string
		err  proto.ErrorCode
		got  func() proto.ErrorCode
	}{
		{"an older epoch's batch", proto.InvalidProducerEpoch, func() proto.ErrorCode { _, e := ps.Check(data(2, 0, true)); return e }},
		{"the next batch", proto.None, func() proto.ErrorCode { _, e := ps.Check(data(3, 2, true)); return e }},
		{"a non-transactional batch mid-transaction", proto.InvalidTxnState, func() proto.ErrorCode { _, e := ps.Check(data(3, 2, false)); return e }},
		{"a marker of the same epoch, the transaction open", proto.InvalidProducerEpoch, func() proto.ErrorCode { return ps.CheckMarker(1, 3, 0, false) }},
		{"a marker of an older epoch", proto.InvalidProducerEpoch, func() proto.ErrorCode { return ps.CheckMarker(1, 2, 0, false) }},
		{"an unbumped marker of the same epoch (no-epoch-bump-on-abort)", proto.None, func() proto.ErrorCode { return ps.CheckMarker(1, 3, 0, true) }},
		{"an unbumped marker of an older epoch", proto.InvalidProducerEpoch, func() proto.ErrorCode { return ps.CheckMarker(1, 2, 0, true) }},
		{"the bumped epoch's marker", proto.None, func() proto.ErrorCode { return ps.CheckMarker(1, 4, 0, false) }},
		{"a marker for a producer never seen", proto.None, func() proto.ErrorCode { return ps.CheckMarker(9, 0, 0, false) }},
		{"a transactional batch of a producer never seen, not at 0", proto.OutOfOrderSequenceNumber, func() proto.ErrorCode {
			_, e := ps.Check(record.New([]record.Record{{}}, record.Producer{ID: 9, BaseSequence: 3}, true, record.CompressionNone))
			return e
		}},
		{"a coordinator's batch without sequence", proto.None, func() proto.ErrorCode { _, e := ps.Check(data(3, -1, true)); return e }},
		{"a coordinator's batch of an older epoch", proto.InvalidProducerEpoch, func() proto.ErrorCode { _, e := ps.Check(data(2, -1, true)); return e }},
	} {
		if got := tc.got(); got != tc.err {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.err)
		}
	}
	s.run(t, txnStep{'c', 1, 4}) // coordinator epoch 0
	e := ps.Entry(1)
	if e.Epoch != 4 || e.TxnFirstOffset != -1 || len(e.Batches) != 0 || e.CoordinatorEpoch != 0 {
		t.Fatalf("after the commit: %+v", e)
	}
	for _, tc := range []struct {
		name string
		err  proto.ErrorCode
		got  func() proto.ErrorCode
	}{
		{"a retry of the marker", proto.None, func() proto.ErrorCode { return ps.CheckMarker(1, 4, 0, false) }},
		{"the new epoch's first batch not at 0", proto.OutOfOrderSequenceNumber, func() proto.ErrorCode { _, e := ps.Check(data(4, 2, true)); return e }},
		{"the new epoch's first batch", proto.None, func() proto.ErrorCode { _, e := ps.Check(data(4, 0, true)); return e }},
		{"the old epoch's batch", proto.InvalidProducerEpoch, func() proto.ErrorCode { _, e := ps.Check(data(3, 2, true)); return e }},
	} {
		if got := tc.got(); got != tc.err {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.err)
		}
	}
	// A marker from a newer coordinator raises the bar.
	s.run(t, d(1, 4))
	if err := ps.CheckMarker(1, 5, 7, false); err != proto.None {
		t.Fatalf("marker of coordinator epoch 7: %v", err)
	}
	s.b.log.Append([]*record.Batch{record.NewControl(1, 5, false, 7, 0).Stamped(s.b.log.LEO(), 0)}, true)
	s.run(t, txnStep{'d', 1, 5})
	if err := ps.CheckMarker(1, 6, 6, false); err != proto.TransactionCoordinatorFenced {
		t.Fatalf("marker of coordinator epoch 6 after 7: %v, want TRANSACTION_COORDINATOR_FENCED", err)
	}
}

// A transaction left open whose start the log start has passed (a hanging
// transaction, its first batch deleted): the LSO is the log start, not
// the deleted first offset (UnifiedLog.updateFirstUnstableOffset), so a
// read_committed reader at the log start is at the LSO.
func TestLastStableOffsetNotBelowTheLogStart(t *testing.T) {
	s := newTxnScript(DefaultConfig())
	s.run(t, n, d(1, 0), n, n, n)
	hw := s.b.log.LEO()
	if got := s.b.log.LastStableOffset(hw); got != 1 {
		t.Fatalf("LSO = %d, want 1", got)
	}
	s.b.log.MaybeIncrementLogStartOffset(3)
	if got := s.b.log.LastStableOffset(hw); got != 3 {
		t.Fatalf("LSO after the log start moved to 3 = %d, want 3 (the log start)", got)
	}
	if got := s.b.log.LastStableOffset(2); got != 2 {
		t.Fatalf("LSO at hw 2 below the log start = %d, want 2 (capped by the high watermark)", got)
	}
}
