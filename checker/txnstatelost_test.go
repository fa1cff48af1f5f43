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
		if a, ok := r.Anomaly(Nonlinearizable); ok && a.Verdict != c.verdict {
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
