package checker

import (
	"slices"
	"testing"

	"kafkasim/history"
)

// txn opens a transaction on a process and returns the index of its
// txn-begin invocation.
func (h *hb) txnBegin(process string) int64 {
	v := history.NoValue()
	v.X().TransactionalID = "tx-" + process
	at := int64(len(h.ops))
	h.add(process, history.Invoke, history.FTxnBegin, v)
	h.add(process, history.OK, history.FTxnBegin, v)
	return at
}

// tsend is a transactional send; it returns the indexes of its invocation
// and completion.
func (h *hb) tsend(process, value string, partition int32, offset int64) (int64, int64) {
	v := history.NoValue()
	v.Topic, v.Value = "t", value
	v.X().TransactionalID = "tx-" + process
	at := int64(len(h.ops))
	h.add(process, history.Invoke, history.FSend, v)
	v.Partition, v.Offset = partition, offset
	h.add(process, history.OK, history.FSend, v)
	return at, at + 1
}

// txnEnd invokes a commit or an abort and completes it with outcome
// (history.Invoke: never completes); it returns the two indexes.
func (h *hb) txnEnd(process, f string, outcome history.Type, sends ...history.Send) (int64, int64) {
	v := history.NoValue()
	v.X().TransactionalID = "tx-" + process
	at := int64(len(h.ops))
	h.add(process, history.Invoke, f, v)
	if outcome == history.Invoke {
		return at, -1
	}
	if sends != nil {
		v.Ext.Sends = sends
	}
	h.add(process, outcome, f, v)
	return at, at + 1
}

// pollIso polls with an isolation level; it returns the completion's index.
func (h *hb) pollIso(process, iso string, final bool, recs ...rec) int64 {
	v := history.NoValue()
	v.Isolation, v.Final = iso, final
	h.add(process, history.Invoke, history.FPoll, v)
	v.HasRecords = true
	for _, r := range recs {
		v.Records = append(v.Records, history.Record{Topic: "t", Partition: r.p, Offset: r.off, Value: r.v})
	}
	h.add(process, history.OK, history.FPoll, v)
	return int64(len(h.ops) - 1)
}

const rc, ru = "read_committed", "read_uncommitted"

func expectOps(t *testing.T, r *Report, typ string, want ...int64) {
	t.Helper()
	a, ok := r.Anomaly(typ)
	if !ok {
		t.Fatalf("%s: not found\n%s", typ, r.Summary())
	}
	got := a.Example.Ops
	if !slices.Equal(got, want) {
		t.Fatalf("%s: example ops %v, want %v (%s)\n%s", typ, got, want, a.Example, r.Summary())
	}
}

func TestCommittedTransactionsWritesAreAcknowledgedAndCanBeLost(t *testing.T) {
	build := func(finalHoldsB bool) (*hb, int64, int64) {
		h := &hb{}
		h.txnBegin("p-0")
		h.tsend("p-0", "a", 0, 0)
		_, bDone := h.tsend("p-0", "b", 0, 1)
		_, commit := h.txnEnd("p-0", history.FTxnCommit, history.OK)
		// An aborted transaction's records are not acknowledged writes:
		// their absence from the final reads is no loss.
		h.txnBegin("p-1")
		h.tsend("p-1", "x", 0, 3)
		h.txnEnd("p-1", history.FTxnAbort, history.OK)
		recs := []rec{{0, 0, "a"}}
		if finalHoldsB {
			recs = append(recs, rec{0, 1, "b"})
		}
		h.pollIso("final-0", rc, true, recs...)
		return h, bDone, commit
	}
	h, bDone, commit := build(false)
	r := Check(h.ops, strict)
	expectCount(t, r, LostAckedWrite, 1)
	expectVerdict(t, r, LostAckedWrite, Violation)
	expectOps(t, r, LostAckedWrite, bDone-1, bDone, commit)
	if a, _ := r.Anomaly(LostAckedWrite); a.Example.Value != "b" {
		t.Fatalf("lost %q, want b", a.Example.Value)
	}
	if r.Stats.Acked != 2 || r.Stats.Failed != 0 || r.Stats.Aborted != 1 || r.Stats.Availability != 1 || r.Stats.TxnCommitted != 1 || r.Stats.TxnAborted != 1 {
		t.Fatalf("stats %+v", r.Stats)
	}
	h, _, _ = build(true)
	r = Check(h.ops, strict)
	if len(r.Anomalies) != 0 {
		t.Fatalf("a committed transaction wholly in the final reads and an aborted one not: nothing to report\n%s", r.Summary())
	}
}

func TestTransactionKnownOnlyFromItsCommit(t *testing.T) {
	// A recorder that logs transactions, not their sends: the commit lists
	// them with their positions.
	build := func(final ...rec) []history.Op {
		h := &hb{}
		h.txnBegin("p-0")
		h.txnEnd("p-0", history.FTxnCommit, history.OK,
			history.Send{Topic: "t", Partition: 0, Value: "a", Offset: 0},
			history.Send{Topic: "t", Partition: 0, Value: "b", Offset: 1})
		h.pollIso("final-0", rc, true, final...)
		return h.ops
	}
	r := Check(build(rec{0, 0, "a"}), strict)
	expectCount(t, r, LostAckedWrite, 1)
	expectOps(t, r, LostAckedWrite, 0, 3, 3) // begun at 0, committed at 3 (the commit places the send)
	r = Check(build(rec{0, 0, "a"}, rec{0, 1, "b"}), strict)
	expectCount(t, r, LostAckedWrite, 0)
	if r.Stats.Acked != 2 {
		t.Fatalf("stats %+v", r.Stats)
	}
}

func TestAbortedRead(t *testing.T) {
	build := func(iso string, abortWith string, outcome history.Type) (*hb, int64, []int64) {
		h := &hb{}
		h.txnBegin("p-0")
		inv, done := h.tsend("p-0", "a", 0, 0)
		ai, ad := h.txnEnd("p-0", abortWith, outcome)
		poll := h.pollIso("c-0", iso, false, rec{0, 0, "a"})
		return h, poll, []int64{inv, done, ai, ad}
	}
	// txn-abort ok: read_committed must never return its record.
	h, poll, ops := build(rc, history.FTxnAbort, history.OK)
	r := Check(h.ops, strict)
	expectCount(t, r, AbortedRead, 1)
	expectVerdict(t, r, AbortedRead, Violation)
	expectOps(t, r, AbortedRead, sortedUnique(append(ops, poll))...)
	// A failed commit aborts too.
	h, _, _ = build(rc, history.FTxnCommit, history.Fail)
	expectVerdict(t, Check(h.ops, strict), AbortedRead, Violation)
	// read_uncommitted returns aborted records: permitted, and said so.
	h, _, _ = build(ru, history.FTxnAbort, history.OK)
	r = Check(h.ops, strict)
	expectVerdict(t, r, AbortedRead, Permitted)
	if a, _ := r.Anomaly(AbortedRead); a.Because == "" || !containsWord(a.Because, "read_uncommitted") {
		t.Fatalf("the reason names the isolation level: %q", a.Because)
	}
	// A committed transaction read after its commit: nothing.
	h, _, _ = build(rc, history.FTxnCommit, history.OK)
	r = Check(h.ops, strict)
	for _, typ := range []string{AbortedRead, UncommittedRead, PrecommittedRead} {
		expectCount(t, r, typ, 0)
	}
}

// CountOf counts the findings a client's instances took part in: an
// aborted record read by two readers at one isolation level is one
// finding, which counts for each reader's client (the expectation
// aborted-read(NAME)); a client none of whose instances read it counts 0.
func TestAbortedReadCountsForEachReader(t *testing.T) {
	h := &hb{}
	h.txnBegin("p-0")
	h.tsend("p-0", "a", 0, 0)
	h.txnEnd("p-0", history.FTxnAbort, history.OK)
	h.pollIso("kafkasim-final-0", ru, true, rec{0, 0, "a"})
	h.pollIso("r-1", ru, false, rec{0, 0, "a"})
	h.pollIso("c-0", rc, false)
	r := Check(h.ops, strict)
	expectCount(t, r, AbortedRead, 1)
	for client, want := range map[string]int{"kafkasim-final": 1, "r": 1, "r-1": 1, "c": 0, "p": 0, "r-": 0, "": 0} { // kafkasim:orderless: independent cases
		if got := r.CountOf(AbortedRead, client); got != want {
			t.Errorf("CountOf(aborted-read, %q) = %d, want %d", client, got, want)
		}
	}
	if got := r.CountOf(Duplicate, "r"); got != 0 {
		t.Errorf("CountOf(duplicate, r) = %d", got)
	}
}

func TestInstanceOf(t *testing.T) {
	for _, c := range []struct {
		process, client string
		want            bool
	}{{"r-0", "r", true}, {"r-12", "r", true}, {"r", "r", true}, {"r-1-0", "r", false}, {"r-1-0", "r-1", true}, {"rr-0", "r", false}, {"r-", "r", false}, {"r-x", "r", false}} {
		if got := InstanceOf(c.process, c.client); got != c.want {
			t.Errorf("InstanceOf(%q, %q) = %v", c.process, c.client, got)
		}
	}
}

func containsWord(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if s[i:i+len(w)] == w {
			return true
		}
	}
	return false
}

func TestUncommittedRead(t *testing.T) {
	build := func(iso string, commit history.Type) (*hb, int64, []int64) {
		h := &hb{}
		h.txnBegin("p-0")
		inv, done := h.tsend("p-0", "a", 0, 0)
		ops := []int64{inv, done}
		if commit != history.Fail {
			ci, cd := h.txnEnd("p-0", history.FTxnCommit, commit)
			ops = append(ops, ci)
			if cd >= 0 {
				ops = append(ops, cd)
			}
		} else {
			crash := history.NoValue()
			h.add("p-0", history.Invoke, history.FCrash, crash) // the producer died mid-transaction
		}
		poll := h.pollIso("c-0", iso, false, rec{0, 0, "a"})
		return h, poll, ops
	}
	// Never committed (the producer crashed), read at read_committed.
	h, poll, ops := build(rc, history.Fail)
	r := Check(h.ops, strict)
	expectCount(t, r, UncommittedRead, 1)
	expectVerdict(t, r, UncommittedRead, Violation)
	expectOps(t, r, UncommittedRead, append(ops, poll)...)
	if r.Stats.TxnNeverCommitted != 1 {
		t.Fatalf("stats %+v", r.Stats)
	}
	// At read_uncommitted that is what the reader asked for.
	h, _, _ = build(ru, history.Fail)
	expectCount(t, Check(h.ops, strict), UncommittedRead, 0)
	// A commit whose outcome is unknown, read after it was invoked: the read
	// shows it committed.
	for _, outcome := range []history.Type{history.Info, history.Invoke} {
		h, _, _ = build(rc, outcome)
		r = Check(h.ops, strict)
		expectCount(t, r, UncommittedRead, 0)
		expectCount(t, r, PrecommittedRead, 0)
		if r.Stats.TxnCommitted != 1 {
			t.Fatalf("a read_committed read is evidence of the commit: %+v", r.Stats)
		}
	}
}

func TestPrecommittedRead(t *testing.T) {
	build := func(readFirst bool) (*hb, []int64) {
		h := &hb{}
		h.txnBegin("p-0")
		inv, done := h.tsend("p-0", "a", 0, 0)
		var poll int64
		if readFirst {
			poll = h.pollIso("c-0", rc, false, rec{0, 0, "a"})
		}
		ci, cd := h.txnEnd("p-0", history.FTxnCommit, history.OK)
		if !readFirst {
			poll = h.pollIso("c-0", rc, false, rec{0, 0, "a"})
		}
		return h, []int64{poll, inv, done, ci, cd}
	}
	h, ops := build(true)
	r := Check(h.ops, strict)
	expectCount(t, r, PrecommittedRead, 1)
	expectVerdict(t, r, PrecommittedRead, Violation)
	expectOps(t, r, PrecommittedRead, sortedUnique(ops)...)
	h, _ = build(false)
	expectCount(t, Check(h.ops, strict), PrecommittedRead, 0)
}

func TestReadCommittedReaderSkipsAbortedRecords(t *testing.T) {
	build := func(iso string) []history.Op {
		h := &hb{}
		h.send("p-9", "a", 0, 0, history.OK)
		h.txnBegin("p-0")
		h.tsend("p-0", "x", 0, 1)
		h.txnEnd("p-0", history.FTxnAbort, history.OK)
		h.send("p-9", "b", 0, 3, history.OK) // offset 2 holds the abort marker
		h.pollIso("c-0", iso, false, rec{0, 0, "a"})
		h.pollIso("c-0", iso, false, rec{0, 3, "b"})
		h.pollIso("c-0", iso, false) // nothing new
		return h.ops
	}
	// read_committed filters the aborted record out: no skip.
	r := Check(build(rc), strict)
	expectCount(t, r, PollSkip, 0)
	// read_uncommitted returns it: jumping over it is a skip.
	r = Check(build(ru), strict)
	expectCount(t, r, PollSkip, 1)
	if a, _ := r.Anomaly(PollSkip); a.Example.Offset != 1 {
		t.Fatalf("skipped offset %d, want 1", a.Example.Offset)
	}
}

// Two producers' transactions interleave in two partitions in opposite
// orders: a write cycle Kafka permits (transactions are not isolated).
func TestG0OfConcurrentTransactionsIsPermitted(t *testing.T) {
	h := &hb{}
	b0 := h.txnBegin("p-0")
	b1 := h.txnBegin("p-1")
	h.tsend("p-0", "a0", 0, 0)
	h.tsend("p-1", "b0", 0, 1)
	h.tsend("p-1", "b1", 1, 0)
	h.tsend("p-0", "a1", 1, 1)
	_, e0 := h.txnEnd("p-0", history.FTxnCommit, history.OK)
	_, e1 := h.txnEnd("p-1", history.FTxnCommit, history.OK)
	h.pollIso("final-0", rc, true, rec{0, 0, "a0"}, rec{0, 1, "b0"}, rec{1, 0, "b1"}, rec{1, 1, "a1"})
	r := Check(h.ops, strict)
	expectCount(t, r, G0, 1)
	expectVerdict(t, r, G0, Permitted)
	expectOps(t, r, G0, b0, b1, e0, e1)
	expectCount(t, r, G1c, 0)
	if r.Violations != 0 {
		t.Fatalf("nothing broke\n%s", r.Summary())
	}

	// The same order in both partitions: no cycle.
	ok := &hb{}
	ok.txnBegin("p-0")
	ok.txnBegin("p-1")
	ok.tsend("p-0", "a0", 0, 0)
	ok.tsend("p-1", "b0", 0, 1)
	ok.tsend("p-0", "a1", 1, 0)
	ok.tsend("p-1", "b1", 1, 1)
	ok.txnEnd("p-0", history.FTxnCommit, history.OK)
	ok.txnEnd("p-1", history.FTxnCommit, history.OK)
	r = Check(ok.ops, strict)
	expectCount(t, r, G0, 0)
}

// A transaction that began after another committed has a record before the
// other's in a log: impossible, whatever the isolation.
func TestG0AgainstRealTimeIsAViolation(t *testing.T) {
	build := func(t2Offset int64) (*Report, []int64) {
		h := &hb{}
		b1 := h.txnBegin("p-0")
		h.tsend("p-0", "a", 0, 1)
		_, e1 := h.txnEnd("p-0", history.FTxnCommit, history.OK)
		b2 := h.txnBegin("p-1") // begins after T1's commit was acknowledged
		h.tsend("p-1", "b", 0, t2Offset)
		_, e2 := h.txnEnd("p-1", history.FTxnCommit, history.OK)
		return Check(h.ops, strict), []int64{b1, e1, b2, e2}
	}
	r, ops := build(0)
	expectCount(t, r, G0, 1)
	expectVerdict(t, r, G0, Violation)
	expectOps(t, r, G0, ops...)
	r, _ = build(2)
	expectCount(t, r, G0, 0)
	// The same cycle in a partition that lost committed data: its offsets
	// were reused, and their order no longer tells append order.
	h := &hb{}
	h.txnBegin("p-0")
	h.tsend("p-0", "a", 0, 1)
	h.txnEnd("p-0", history.FTxnCommit, history.OK)
	h.txnBegin("p-1")
	h.tsend("p-1", "b", 0, 0)
	h.txnEnd("p-1", history.FTxnCommit, history.OK)
	lost := strict
	lost.Happened = godViewLosses(DataLoss{Partition: "t-0", From: 0, To: 2, Cause: "power-loss"})
	r = Check(h.ops, lost)
	expectCount(t, r, G0, 1)
	expectVerdict(t, r, G0, Permitted)
	// A loss elsewhere excuses nothing.
	other := strict
	other.Happened = godViewLosses(DataLoss{Partition: "t-1", From: 0, To: 2, Cause: "power-loss"})
	expectVerdict(t, Check(h.ops, other), G0, Violation)
}

func TestG1c(t *testing.T) {
	// T1 read T2's record although T2 began after T1's commit was
	// acknowledged: a read from the future, a violation at any isolation.
	future := func(readB bool) (*Report, []int64) {
		h := &hb{}
		b1 := h.txnBegin("p-0")
		if readB {
			h.pollIso("p-0", ru, false, rec{1, 0, "b"})
		} else {
			h.pollIso("p-0", ru, false)
		}
		h.tsend("p-0", "a", 0, 0)
		_, e1 := h.txnEnd("p-0", history.FTxnCommit, history.OK)
		b2 := h.txnBegin("p-1")
		h.tsend("p-1", "b", 1, 0)
		_, e2 := h.txnEnd("p-1", history.FTxnCommit, history.OK)
		return Check(h.ops, strict), []int64{b1, e1, b2, e2}
	}
	r, ops := future(true)
	expectCount(t, r, G1c, 1)
	expectVerdict(t, r, G1c, Violation)
	expectOps(t, r, G1c, ops...)
	r, _ = future(false)
	expectCount(t, r, G1c, 0)

	// At read_uncommitted two concurrent transactions may each read the
	// other's records: a cycle, permitted.
	mutual := func(iso string) (*Report, []int64) {
		h := &hb{}
		b1 := h.txnBegin("p-0")
		b2 := h.txnBegin("p-1")
		h.tsend("p-0", "a", 0, 0)
		h.tsend("p-1", "b", 1, 0)
		h.pollIso("p-0", iso, false, rec{1, 0, "b"})
		h.pollIso("p-1", iso, false, rec{0, 0, "a"})
		_, e1 := h.txnEnd("p-0", history.FTxnCommit, history.OK)
		_, e2 := h.txnEnd("p-1", history.FTxnCommit, history.OK)
		return Check(h.ops, strict), []int64{b1, b2, e1, e2}
	}
	r, ops = mutual(ru)
	expectCount(t, r, G1c, 1)
	expectVerdict(t, r, G1c, Permitted)
	expectOps(t, r, G1c, ops...)
	// At read_committed each read came before the other's commit: a
	// violation (and two precommitted reads).
	r, _ = mutual(rc)
	expectVerdict(t, r, G1c, Violation)
	expectCount(t, r, PrecommittedRead, 2)
}
