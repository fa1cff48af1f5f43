package checker

import (
	"testing"

	"kafkasim/godview"
	"kafkasim/history"
)

// What an unclean election of __transaction_state costs the partitions its
// transactional ids wrote (fuzz seed 90531).

// txnStateLoss is a loss in __transaction_state at time at.
func txnStateLoss(at int64) godview.Fact {
	return godview.Fact{Kind: godview.Loss, Partition: "__transaction_state-3", From: 127, To: 135, Records: 8, Cause: "unclean-election", At: at}
}

// A coordinator that lost the records of a transactional id's later epochs
// hands the same producer id and epoch out again; the new producer's first
// batch to a partition (sequence 0) is taken for a retry of the earlier
// producer's batch with the same sequences, acknowledged with its offset
// and never written. The god view sees the leader answer it as a
// duplicate of a different batch; only after a __transaction_state loss is
// that a cost Kafka permits.
func TestMistakenDuplicateAfterTxnStateLoss(t *testing.T) {
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	lossAt := h.t + 500
	h.send("p-0", "b", 0, 0, history.OK) // acknowledged at a's offset, never written
	answeredAt := h.t - 100
	h.poll("kafkasim-final-0", true, rec{0, 0, "a"})

	judged := []string{InconsistentOffsets, NonmonotonicSend, LostAckedWrite}
	dup := godview.Fact{Kind: godview.MistakenDuplicate, Partition: "t-0", From: 0, To: 1, Producer: 0, At: answeredAt}
	for _, c := range []struct {
		name    string
		facts   []godview.Fact
		verdict string
	}{
		{"the simulator saw nothing", nil, Violation},
		{"a duplicate answered without a __transaction_state loss", []godview.Fact{dup}, Violation},
		{"a __transaction_state loss, no duplicate answered", []godview.Fact{txnStateLoss(lossAt)}, Violation},
		{"the loss after the answer", []godview.Fact{dup, txnStateLoss(answeredAt + 1)}, Violation},
		{"a duplicate answered at another offset", []godview.Fact{txnStateLoss(lossAt), {Kind: godview.MistakenDuplicate, Partition: "t-0", From: 1, To: 2, At: answeredAt}}, Violation},
		{"the loss, then the duplicate answered", []godview.Fact{txnStateLoss(lossAt), dup}, Permitted},
	} {
		cfg := strict
		cfg.Happened = godview.Seen(c.facts...)
		r := Check(h.ops, cfg)
		for _, typ := range judged {
			expectCount(t, r, typ, 1)
			a, _ := r.Anomaly(typ)
			if a.Verdict != c.verdict {
				t.Fatalf("%s: %s is %s, want %s (%s)\n%s", c.name, typ, a.Verdict, c.verdict, a.Because, r.Summary())
			}
			if c.verdict == Permitted && !containsWord(a.Because, "findDuplicateBatch") {
				t.Fatalf("%s: %s's reason names Kafka's duplicate check: %q", c.name, typ, a.Because)
			}
		}
		// The log is no linearizable sequence either; its verdict follows
		// the offset's.
		expectCount(t, r, Nonlinearizable, 1)
		if a, _ := r.Anomaly(Nonlinearizable); a.Verdict != c.verdict {
			t.Fatalf("%s: nonlinearizable is %s, want %s\n%s", c.name, a.Verdict, c.verdict, r.Summary())
		}
	}
}

// A coordinator that lost a transaction's PrepareCommit before its markers
// reached a partition reloads the transaction as Ongoing and aborts it,
// although its commit was acknowledged: a read_committed reader then
// rightly passes over its record, which final reads (read_uncommitted)
// still hold.
func TestReadCommittedSkipOfACommitTheCoordinatorLost(t *testing.T) {
	build := func(readBeforeLoss bool) (*hb, int64, int64) {
		h := &hb{}
		h.send("p-1", "z", 0, 0, history.OK)
		h.txnBegin("p-0")
		h.tsend("p-0", "a", 0, 1)
		h.txnEnd("p-0", history.FTxnCommit, history.OK)
		committedAt := h.t
		h.send("p-1", "b", 0, 2, history.OK)
		if readBeforeLoss {
			h.pollIso("r-1", rc, false, rec{0, 0, "z"}, rec{0, 1, "a"})
		}
		lossAt := h.t + 500
		h.pollIso("r-0", rc, false, rec{0, 0, "z"})
		h.pollIso("r-0", rc, false, rec{0, 2, "b"}) // over a
		h.pollIso("kafkasim-final-0", ru, true, rec{0, 0, "z"}, rec{0, 1, "a"}, rec{0, 2, "b"})
		return h, committedAt, lossAt
	}
	h, committedAt, lossAt := build(false)
	for _, c := range []struct {
		name    string
		facts   []godview.Fact
		verdict string
	}{
		{"the simulator saw nothing", nil, Violation},
		{"the loss before the commit was acknowledged", []godview.Fact{txnStateLoss(committedAt - 500)}, Violation},
		{"the loss after the skip", []godview.Fact{txnStateLoss(h.t + 1)}, Violation},
		{"a loss elsewhere", []godview.Fact{{Kind: godview.Loss, Partition: "__consumer_offsets-3", From: 0, To: 1, Cause: "unclean-election", At: lossAt}}, Violation},
		{"the loss between the acknowledgement and the skip", []godview.Fact{txnStateLoss(lossAt)}, Permitted},
	} {
		cfg := strict
		cfg.Happened = godview.Seen(c.facts...)
		r := Check(h.ops, cfg)
		expectCount(t, r, PollSkip, 1)
		if a, _ := r.Anomaly(PollSkip); a.Verdict != c.verdict || a.Example.Value != "a" {
			t.Fatalf("%s: poll-skip %s over %q, want %s over a (%s)\n%s", c.name, a.Verdict, a.Example.Value, c.verdict, a.Because, r.Summary())
		}
	}

	// A read_committed poll returned the record before the loss: its
	// COMMIT marker was written, and the loss cannot have undone it.
	h, _, lossAt = build(true)
	cfg := strict
	cfg.Happened = godview.Seen(txnStateLoss(lossAt))
	r := Check(h.ops, cfg)
	expectCount(t, r, PollSkip, 1)
	expectVerdict(t, r, PollSkip, Violation)
}

// A read_committed reader passed over offsets 2 and 3 (control records or
// an aborted transaction's, which no poll returns); an unclean election
// after the jump lost them with the rest of the log from 2, and made the
// new leader's never-committed records of an older epoch, e and f, the log
// there (god view Resurrected at the election). Final reads hold e and f at
// offsets the reader passed: what it passed over went with the loss, and no
// reader can have read e and f before (fuzz seed 102592). Without the
// resurrection by that very election, the new leader's entries there may
// have been readable before the jump: a skip.
func TestSkipOverWhatALaterElectionReplacedWithResurrectedRecords(t *testing.T) {
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.send("p-0", "b", 0, 1, history.OK)
	h.send("p-1", "e", 0, -1, history.Info) // to a deposed leader, never committed
	h.send("p-1", "f", 0, -1, history.Info)
	h.send("p-0", "d", 0, 4, history.OK)
	h.pollIso("r-0", rc, false, rec{0, 0, "a"}, rec{0, 1, "b"}, rec{0, 4, "d"}) // over 2, 3
	lossAt := h.t + 500
	h.t += 1000
	h.send("p-0", "g", 0, 4, history.OK)
	h.pollIso("kafkasim-final-0", ru, true, rec{0, 0, "a"}, rec{0, 1, "b"}, rec{0, 2, "e"}, rec{0, 3, "f"}, rec{0, 4, "g"})

	loss := func(at int64) godview.Fact {
		return godview.Fact{Kind: godview.Loss, At: at, Partition: "t-0", From: 2, To: 5, Records: 3, Cause: "unclean-election", LeaderEnd: 4}
	}
	res := func(at, from, to int64) godview.Fact {
		return godview.Fact{Kind: godview.Resurrected, At: at, Partition: "t-0", From: from, To: to}
	}
	for _, c := range []struct {
		name  string
		facts []godview.Fact
		want  string
	}{
		{"lost after the jump, resurrected by that election", []godview.Fact{loss(lossAt), res(lossAt, 2, 4)}, Permitted},
		{"lost after the jump, nothing resurrected", []godview.Fact{loss(lossAt)}, Violation},
		{"resurrected by a later election", []godview.Fact{loss(lossAt), res(lossAt+100, 2, 4)}, Violation},
		{"resurrected elsewhere", []godview.Fact{loss(lossAt), res(lossAt, 4, 5)}, Violation},
		{"lost before the jump", []godview.Fact{loss(1), res(1, 2, 4)}, Violation},
	} {
		cfg := strict
		cfg.Happened = godview.Seen(c.facts...)
		r := Check(h.ops, cfg)
		got := ""
		for _, typ := range []string{PollSkip, IntPollSkip} {
			if a, ok := r.Anomaly(typ); ok && (got == "" || a.Verdict == Violation) {
				got = a.Verdict
			}
		}
		if got != c.want {
			t.Fatalf("%s: the skip is %q, want %s\n%s", c.name, got, c.want, r.Summary())
		}
	}
}
