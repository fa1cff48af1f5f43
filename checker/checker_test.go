package checker

import (
	"strings"
	"testing"

	"kafkasim/godview"
	"kafkasim/history"
)

// hb builds histories for tests.
type hb struct {
	ops []history.Op
	t   int64
}

func (h *hb) add(process string, typ history.Type, f string, v history.Value) {
	h.t += 1000
	h.ops = append(h.ops, history.Op{Index: int64(len(h.ops)), Time: h.t, Process: process, Type: typ, F: f, Value: v})
}

func (h *hb) send(process, value string, partition int32, offset int64, outcome history.Type) {
	v := history.NoValue()
	v.Topic, v.Value = "t", value
	h.add(process, history.Invoke, history.FSend, v)
	if outcome == history.Invoke {
		return // never completed
	}
	if outcome == history.OK {
		v.Partition, v.Offset = partition, offset
	}
	h.add(process, outcome, history.FSend, v)
}

type rec struct {
	p   int32
	off int64
	v   string
}

func (h *hb) poll(process string, final bool, recs ...rec) {
	v := history.NoValue()
	v.Final = final
	h.add(process, history.Invoke, history.FPoll, v)
	v.HasRecords = true
	for _, r := range recs {
		v.Records = append(v.Records, history.Record{Topic: "t", Partition: r.p, Offset: r.off, Value: r.v})
	}
	h.add(process, history.OK, history.FPoll, v)
}

var strict = Config{
	Producers: []ProducerGuarantees{{Prefix: "p", Acks: "all", Idempotence: true, MaxInFlight: 5, Retries: 100}},
	Topics:    []TopicGuarantees{{Name: "t", ReplicationFactor: 3, MinInsyncReplicas: 2}},
}

// godViewLosses is a god view that saw the losses ls and nothing else.
func godViewLosses(ls ...DataLoss) godview.List {
	for i := range ls {
		ls[i].Kind = godview.Loss
	}
	return godview.Seen(ls...)
}

func expectCount(t *testing.T, r *Report, typ string, n int) {
	t.Helper()
	if got := r.Count(typ); got != n {
		t.Fatalf("%s: %d findings, want %d\n%s", typ, got, n, r.Summary())
	}
}

func expectVerdict(t *testing.T, r *Report, typ, verdict string) {
	t.Helper()
	a, ok := r.Anomaly(typ)
	if !ok || a.Verdict != verdict {
		t.Fatalf("%s: want verdict %s, got %+v\n%s", typ, verdict, a, r.Summary())
	}
}

func TestCleanHistoryHasNoAnomalies(t *testing.T) {
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.send("p-0", "b", 0, 1, history.OK)
	h.send("p-1", "c", 1, 0, history.OK)
	h.send("p-1", "d", 1, -1, history.Fail)
	h.send("p-1", "e", 1, -1, history.Info)
	h.poll("c-0", false, rec{0, 0, "a"})
	h.poll("c-0", false, rec{0, 1, "b"}, rec{1, 0, "c"})
	h.poll("c-1", true, rec{0, 0, "a"}, rec{0, 1, "b"}, rec{1, 0, "c"})
	r := Check(h.ops, strict)
	if len(r.Anomalies) != 0 || r.Violations != 0 {
		t.Fatalf("want nothing, got\n%s", r.Summary())
	}
	if r.Stats.Attempted != 5 || r.Stats.Acked != 3 || r.Stats.Failed != 1 || r.Stats.Indeterminate != 1 {
		t.Fatalf("stats %+v", r.Stats)
	}
}

func TestLostAckedWriteAgainstFinalReads(t *testing.T) {
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.send("p-0", "b", 0, 1, history.OK)
	h.poll("c-0", true, rec{0, 0, "a"})
	r := Check(h.ops, strict)
	expectCount(t, r, LostAckedWrite, 1)
	expectVerdict(t, r, LostAckedWrite, Violation)
	if r.Stats.LostAcked != 1 {
		t.Fatal("stats count the loss")
	}
	// The same history with acks=1 is a permitted loss.
	cfg := strict
	cfg.Producers = []ProducerGuarantees{{Prefix: "p", Acks: "1"}}
	expectVerdict(t, Check(h.ops, cfg), LostAckedWrite, Permitted)
	// And with a loss the simulator saw as an unclean election.
	cfg = strict
	cfg.Happened = godViewLosses(DataLoss{Partition: "t-0", From: 1, To: 2, Cause: "unclean-election"})
	expectVerdict(t, Check(h.ops, cfg), LostAckedWrite, Permitted)
	cfg.Happened = godViewLosses(DataLoss{Partition: "t-0", From: 1, To: 2, Cause: "power-loss"})
	cfg.Topics = []TopicGuarantees{{Name: "t", ReplicationFactor: 3, MinInsyncReplicas: 2, FlushEveryMessage: true}}
	expectVerdict(t, Check(h.ops, cfg), LostAckedWrite, Violation)
}

// Final reads end at the high watermark they met. A record past their end
// that polls read only after they began (the high watermark still moving:
// a follower copying a backlog, fuzz seed 204672) or that was acknowledged
// only after they began says nothing about loss: unseen. Read before they
// began, it was committed then, and its absence is a loss.
func TestPastTheEndOfFinalReads(t *testing.T) {
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.send("p-0", "b", 0, 1, history.OK)
	h.poll("c-1", true, rec{0, 0, "a"})
	h.poll("c-0", false, rec{0, 0, "a"}, rec{0, 1, "b"})
	h.send("p-0", "c", 0, 2, history.OK)
	r := Check(h.ops, strict)
	expectCount(t, r, LostAckedWrite, 0)
	expectCount(t, r, Unseen, 2)
	if r.Violations != 0 {
		t.Fatalf("no violation, got\n%s", r.Summary())
	}
	h = &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.send("p-0", "b", 0, 1, history.OK)
	h.poll("c-0", false, rec{0, 0, "a"}, rec{0, 1, "b"})
	h.poll("c-1", true, rec{0, 0, "a"})
	r = Check(h.ops, strict)
	expectCount(t, r, LostAckedWrite, 1)
	expectVerdict(t, r, LostAckedWrite, Violation)
}

func TestLostVersusUnseenWithoutFinalReads(t *testing.T) {
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.send("p-0", "b", 0, 1, history.OK)
	h.send("p-0", "c", 0, 2, history.OK)
	h.poll("c-0", false, rec{0, 0, "a"})
	r := Check(h.ops, strict)
	expectCount(t, r, Unseen, 2) // nobody read past offset 0: b and c may just be unread
	expectCount(t, r, LostAckedWrite, 0)
	h.poll("c-0", false, rec{0, 2, "c"})
	r = Check(h.ops, strict)
	expectCount(t, r, LostAckedWrite, 1) // reads went past offset 1 and never saw b
	expectCount(t, r, Unseen, 0)
}

func TestDuplicate(t *testing.T) {
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.poll("c-0", false, rec{0, 0, "a"}, rec{0, 1, "a"})
	r := Check(h.ops, strict)
	expectCount(t, r, Duplicate, 1)
	expectVerdict(t, r, Duplicate, Violation)
	cfg := strict
	cfg.Producers = []ProducerGuarantees{{Prefix: "p", Acks: "all", Idempotence: false, MaxInFlight: 5, Retries: 3}}
	expectVerdict(t, Check(h.ops, cfg), Duplicate, Permitted)
	clean := &hb{}
	clean.send("p-0", "a", 0, 0, history.OK)
	clean.poll("c-0", false, rec{0, 0, "a"})
	clean.poll("c-1", false, rec{0, 0, "a"}) // two readers reading one record is not a duplicate
	expectCount(t, Check(clean.ops, strict), Duplicate, 0)
}

// A power loss of every replica takes the log and the producer state built
// from it: the retry of a batch whose written copy was lost (its answer never
// came) is accepted as new, at a reused offset. The log holds it once.
func TestDuplicateOfALostCopyAfterALoss(t *testing.T) {
	cfg := strict
	cfg.Happened = godViewLosses(DataLoss{Partition: "t-0", From: 0, To: 3, Cause: "power-loss"})
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.send("p-0", "b", 0, 1, history.OK)
	cv := history.NoValue()
	cv.Topic, cv.Value = "t", "c"
	h.add("p-0", history.Invoke, history.FSend, cv)
	h.poll("c-0", false, rec{0, 0, "a"}, rec{0, 1, "b"}, rec{0, 2, "c"}) // c written at 2, its answer lost
	cv.Partition, cv.Offset = 0, 0
	h.add("p-0", history.OK, history.FSend, cv) // the retry, after the loss, lands at 0
	h.poll("c-1", true, rec{0, 0, "c"})
	r := Check(h.ops, cfg)
	expectCount(t, r, Duplicate, 1)
	expectVerdict(t, r, Duplicate, Permitted)
	// Two copies still in the log: the loss explains only the third.
	both := &hb{ops: append([]history.Op(nil), h.ops[:len(h.ops)-2]...), t: h.t}
	both.poll("c-1", true, rec{0, 0, "c"}, rec{0, 1, "c"})
	expectVerdict(t, Check(both.ops, cfg), Duplicate, Violation)
	// Without the god view's loss, a violation.
	expectVerdict(t, Check(h.ops, strict), Duplicate, Violation)
}

// A duplicate the god view explains by a leader's producer state is
// permitted only with a copy in the range it names:
//   - forgotten batches: a leader whose state, rebuilt at a restart, no
//     longer holds a committed batch answers its retry
//     OUT_OF_ORDER_SEQUENCE_NUMBER; the producer bumps its epoch and writes it
//     again (fuzz seed 1001912 with the fix for 3009149);
//   - forgotten producers: a leader whose state forgot a producer (retention
//     deleted its batches below the log start and a reload found no snapshot
//     that still had it) takes the retry of a committed batch as new, at any
//     sequence, as Kafka does (fuzz seed 4009935).
func TestDuplicateOfABatchALeaderForgot(t *testing.T) {
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.send("p-0", "b", 0, 2, history.OK)
	h.poll("c-0", false, rec{0, 0, "a"}, rec{0, 1, "b"}, rec{0, 2, "b"})
	for _, c := range []struct {
		name string
		kind godview.Kind
	}{
		{"forgotten batches", godview.ForgottenBatch},
		{"forgotten producers", godview.ForgottenProducer},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := strict
			cfg.Happened = godview.Seen(godview.Fact{Kind: c.kind, Partition: "t-0", From: 1, To: 2})
			r := Check(h.ops, cfg)
			expectCount(t, r, Duplicate, 1)
			expectVerdict(t, r, Duplicate, Permitted)
			// A range elsewhere (another offset, another partition) excuses
			// nothing, nor does a history without the god view.
			cfg.Happened = godview.Seen(godview.Fact{Kind: c.kind, Partition: "t-0", From: 0, To: 1}, godview.Fact{Kind: c.kind, Partition: "t-1", From: 1, To: 2})
			expectVerdict(t, Check(h.ops, cfg), Duplicate, Violation)
			expectVerdict(t, Check(h.ops, strict), Duplicate, Violation)
		})
	}
}

func TestInconsistentOffsets(t *testing.T) {
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.send("p-0", "b", 0, 1, history.OK)
	h.poll("c-0", false, rec{0, 0, "a"})
	h.poll("c-1", false, rec{0, 0, "b"})
	r := Check(h.ops, strict)
	expectCount(t, r, InconsistentOffsets, 1)
	expectVerdict(t, r, InconsistentOffsets, Violation)
	cfg := strict
	cfg.Happened = godViewLosses(DataLoss{Partition: "t-0", From: 0, To: 2, Cause: "unclean-election"})
	expectVerdict(t, Check(h.ops, cfg), InconsistentOffsets, Permitted)
}

func TestPollOrdering(t *testing.T) {
	h := &hb{}
	for i, v := range []string{"a", "b", "c", "d"} {
		h.send("p-0", v, 0, int64(i), history.OK)
	}
	h.poll("c-0", false, rec{0, 0, "a"}, rec{0, 1, "b"})
	h.poll("c-0", false, rec{0, 3, "d"}) // skipped c at 2
	h.poll("c-0", false, rec{0, 1, "b"}) // went back
	h.poll("c-1", false, rec{0, 0, "a"}, rec{0, 2, "c"}, rec{0, 1, "b"})
	r := Check(h.ops, strict)
	expectCount(t, r, PollSkip, 1)
	expectCount(t, r, NonmonotonicPoll, 1)
	expectCount(t, r, IntPollSkip, 1)
	expectCount(t, r, IntNonmonotonicPoll, 1)
	expectVerdict(t, r, PollSkip, Violation)

	ok := &hb{}
	for i, v := range []string{"a", "b", "c"} {
		ok.send("p-0", v, 0, int64(i), history.OK)
	}
	ok.poll("c-0", false, rec{0, 0, "a"})
	ok.poll("c-0", false, rec{0, 1, "b"}, rec{0, 2, "c"})
	restart := history.NoValue()
	ok.add("c-0", history.Invoke, history.FRestart, restart)
	ok.poll("c-0", false, rec{0, 0, "a"}) // a restarted reader may start over
	ok.poll("c-0", true, rec{0, 0, "a"})  // so may final reads
	r = Check(ok.ops, strict)
	for _, typ := range []string{PollSkip, NonmonotonicPoll, IntPollSkip, IntNonmonotonicPoll} {
		expectCount(t, r, typ, 0)
	}
}

func TestPollSkipOverOffsetsThatDoNotExistIsFine(t *testing.T) {
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.send("p-0", "b", 0, 5, history.OK) // compaction or aborted transactions leave gaps
	h.poll("c-0", false, rec{0, 0, "a"}, rec{0, 5, "b"})
	expectCount(t, Check(h.ops, strict), IntPollSkip, 0)
}

func TestNonmonotonicSend(t *testing.T) {
	h := &hb{}
	h.send("p-0", "z", 0, 0, history.OK)
	h.send("p-0", "a", 0, 5, history.OK)
	h.send("p-0", "b", 0, 3, history.OK)
	h.send("p-1", "c", 0, 4, history.OK) // another producer may interleave
	r := Check(h.ops, strict)
	expectCount(t, r, NonmonotonicSend, 1)
	expectVerdict(t, r, NonmonotonicSend, Violation)
	cfg := strict
	cfg.Producers = []ProducerGuarantees{{Prefix: "p", Acks: "1", Idempotence: false, MaxInFlight: 5, Retries: 3}}
	expectVerdict(t, Check(h.ops, cfg), NonmonotonicSend, Permitted)
}

// A leader that holds no state for an idempotent producer takes its batch
// at any sequence (KIP-360): when the producer's first batch in a partition
// (a partition just added, say) is refused without being appended
// (NOT_ENOUGH_REPLICAS) and the next one, in flight beside it, is taken,
// the first lands after it, once an epoch bump restarts its sequences (fuzz
// seed 438). From the history alone, that is told by no record of the
// producer lying below the one that landed first; with the god view, by the
// simulator seeing the leader append it from a producer it did not know, at
// a sequence other than 0.
func TestNonmonotonicSendOfAProducersFirstBatch(t *testing.T) {
	h := &hb{}
	h.send("p-0", "a", 0, 5, history.OK)
	h.send("p-0", "b", 0, 0, history.OK)
	h.send("p-1", "c", 0, 1, history.OK) // another producer's records below are no evidence
	expectVerdict(t, Check(h.ops, strict), NonmonotonicSend, Permitted)
	one := strict
	one.Producers = []ProducerGuarantees{{Prefix: "p", Acks: "all", Idempotence: true, MaxInFlight: 1, Retries: 100}}
	expectVerdict(t, Check(h.ops, one), NonmonotonicSend, Violation) // one batch in flight per partition
	god := strict
	god.Happened = godview.Seen()
	expectVerdict(t, Check(h.ops, god), NonmonotonicSend, Violation) // the simulator saw nothing of the kind
	god.Happened = godview.Seen(godview.Fact{Kind: godview.UnknownProducerAppend, Partition: "t-0", From: 0, To: 1})
	expectVerdict(t, Check(h.ops, god), NonmonotonicSend, Permitted)
	god.Happened = godview.Seen(godview.Fact{Kind: godview.UnknownProducerAppend, Partition: "t-0", From: 5, To: 6}) // the earlier send's batch: not the one
	expectVerdict(t, Check(h.ops, god), NonmonotonicSend, Violation)

	// A record of the producer read below the one that landed first: the
	// leader knew the producer.
	h2 := &hb{}
	h2.send("p-0", "y", 0, -1, history.Info)
	h2.send("p-0", "a", 0, 5, history.OK)
	h2.send("p-0", "b", 0, 3, history.OK)
	h2.poll("c-0", false, rec{0, 2, "y"})
	expectVerdict(t, Check(h2.ops, strict), NonmonotonicSend, Violation)
}

func TestAbortedAndPhantomReads(t *testing.T) {
	h := &hb{}
	h.send("p-0", "a", 0, -1, history.Fail)
	h.send("p-0", "b", 0, -1, history.Info)
	h.poll("c-0", false, rec{0, 0, "a"}, rec{0, 1, "b"}, rec{0, 2, "zzz"})
	r := Check(h.ops, strict)
	expectCount(t, r, AbortedRead, 1) // b was indeterminate: reading it is fine
	expectCount(t, r, PhantomRead, 1)
	expectVerdict(t, r, AbortedRead, Violation)
}

func TestPendingSendIsIndeterminate(t *testing.T) {
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.Invoke) // the producer crashed
	h.poll("c-0", true, rec{0, 0, "a"})
	r := Check(h.ops, strict)
	if len(r.Anomalies) != 0 || r.Stats.Indeterminate != 1 {
		t.Fatalf("a send never completed may or may not have happened: %+v\n%s", r.Stats, r.Summary())
	}
}

func TestCommittedDataLossIsAViolationEvenWithAcks1(t *testing.T) {
	acks1 := strict
	acks1.Producers = []ProducerGuarantees{{Prefix: "p", Acks: "1"}}
	// Never read, then lost: acks=1 permits it.
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.send("p-0", "b", 0, 0, history.OK) // the offset was reused by the new leader
	h.poll("c-0", true, rec{0, 0, "b"})
	r := Check(h.ops, acks1)
	expectVerdict(t, r, LostAckedWrite, Permitted)
	expectVerdict(t, r, InconsistentOffsets, Permitted)
	// Read first (so it was committed), then lost: not permitted.
	h = &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.poll("c-0", false, rec{0, 0, "a"})
	h.send("p-0", "b", 0, 0, history.OK)
	h.poll("c-0", true, rec{0, 0, "b"})
	r = Check(h.ops, acks1)
	expectVerdict(t, r, LostAckedWrite, Violation)
	expectVerdict(t, r, InconsistentOffsets, Violation)
}

func TestSkippingARecordThatSurvivedIsAViolationEvenAfterALoss(t *testing.T) {
	cfg := strict
	cfg.Happened = godViewLosses(DataLoss{Partition: "t-0", From: 2, To: 4, Cause: "unclean-election"})
	h := &hb{}
	for i, v := range []string{"a", "b", "c", "d"} {
		h.send("p-0", v, 0, int64(i), history.OK)
	}
	h.poll("c-0", false, rec{0, 0, "a"}, rec{0, 1, "b"}, rec{0, 2, "c"}, rec{0, 3, "d"})
	// After the unclean election the log ends at 2; new writes e, f, g land
	// at 2, 3, 4. A reader that does not validate its position goes on at 4.
	for i, v := range []string{"e", "f", "g"} {
		h.send("p-0", v, 0, int64(2+i), history.OK)
	}
	h.poll("c-0", false, rec{0, 4, "g"})
	h.poll("c-1", true, rec{0, 0, "a"}, rec{0, 1, "b"}, rec{0, 2, "e"}, rec{0, 3, "f"}, rec{0, 4, "g"})
	r := Check(h.ops, cfg)
	expectVerdict(t, r, PollSkip, Violation)
	// A reader that went back to 2 and read e, f, g is fine.
	ok := &hb{ops: append([]history.Op(nil), h.ops[:len(h.ops)-2]...), t: h.t}
	ok.poll("c-0", false, rec{0, 2, "e"}, rec{0, 3, "f"}, rec{0, 4, "g"})
	ok.poll("c-1", true, rec{0, 0, "a"}, rec{0, 1, "b"}, rec{0, 2, "e"}, rec{0, 3, "f"}, rec{0, 4, "g"})
	r = Check(ok.ops, cfg)
	expectCount(t, r, PollSkip, 0)
	expectVerdict(t, r, NonmonotonicPoll, Permitted)
}

// readOverADeposedLeadersTail: c-0 read committed c, d at 2, 3, written
// by the leader of the next epoch where the deposed leader held uncommitted
// e, f; the final reader c-1 finds e, f there.
func readOverADeposedLeadersTail() *hb {
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.send("p-0", "b", 0, 1, history.OK)
	h.send("p-0", "e", 0, 2, history.Info) // to the deposed leader, never committed
	h.send("p-0", "f", 0, 3, history.Info)
	h.send("p-0", "c", 0, 2, history.OK) // the leader of the next epoch
	h.send("p-0", "d", 0, 3, history.OK)
	h.poll("c-0", false, rec{0, 0, "a"}, rec{0, 1, "b"}, rec{0, 2, "c"}, rec{0, 3, "d"})
	h.send("p-0", "g", 0, 4, history.OK)
	h.poll("c-0", false, rec{0, 4, "g"})
	h.poll("c-1", true, rec{0, 0, "a"}, rec{0, 1, "b"}, rec{0, 2, "e"}, rec{0, 3, "f"}, rec{0, 4, "g"})
	return h
}

// A reader read committed records that an unclean election lost; the new
// leader already held other records there, of an older epoch, below the end
// offset it gives for the reader's epoch: KIP-320 validation finds no
// truncation and the reader goes on past them (fuzz seed 204388).
func TestSkippingARecordTheNewLeaderHeldBelowTheReadersEpochIsPermitted(t *testing.T) {
	cfg := strict
	cfg.Happened = godViewLosses(DataLoss{Partition: "t-0", From: 2, To: 4, Cause: "unclean-election", LeaderEnd: 4})
	h := readOverADeposedLeadersTail()
	r := Check(h.ops, cfg)
	expectVerdict(t, r, PollSkip, Permitted)
	// Without the new leader's log end the skip stays a violation.
	cfg.Happened = godViewLosses(DataLoss{Partition: "t-0", From: 2, To: 4, Cause: "unclean-election"})
	r = Check(h.ops, cfg)
	expectVerdict(t, r, PollSkip, Violation)
}

// The same replacement in two elections (fuzz seed 317990): a reader read
// committed c, d at 2, 3 (a leader of epoch 2 wrote them, while the deposed
// leader of epoch 1 held uncommitted e, f there); an unclean election lost
// 2.. (its leader ended at 2, so the loss alone does not reach 2, 3); a
// later unclean election made the deposed leader's e, f the log again
// (Resurrected). Its epoch cache ends epoch 1 at 4, so KIP-320 validation of
// the reader (epoch 2) truncates it to 4, past e and f. Only a resurrection
// at the offset, after the loss, excuses the skip.
func TestSkippingARecordResurrectedAfterTheLossOfWhatTheReaderReadIsPermitted(t *testing.T) {
	h := readOverADeposedLeadersTail()
	loss := DataLoss{Kind: godview.Loss, At: 10, Partition: "t-0", From: 2, To: 4, Records: 2, Cause: "unclean-election", LeaderEnd: 2}
	res := func(at, from, to int64) godview.Fact {
		return godview.Fact{Kind: godview.Resurrected, At: at, Partition: "t-0", From: from, To: to}
	}
	for _, c := range []struct {
		name  string
		facts []godview.Fact
		want  string
	}{
		{"lost, then resurrected", []godview.Fact{loss, res(20, 2, 4)}, Permitted},
		{"lost, never resurrected", []godview.Fact{loss}, Violation},
		{"resurrected before the loss", []godview.Fact{res(5, 2, 4), loss}, Violation},
		{"resurrected elsewhere", []godview.Fact{loss, res(20, 4, 6)}, Violation},
		{"resurrected, the offset not lost", []godview.Fact{{Kind: godview.Loss, At: 10, Partition: "t-0", From: 4, To: 6, Records: 2,
			Cause: "unclean-election", LeaderEnd: 4}, res(20, 2, 4)}, Violation},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := strict
			cfg.Happened = godview.Seen(c.facts...)
			expectVerdict(t, Check(h.ops, cfg), PollSkip, c.want)
		})
	}
}

// A deposed leader, paused through its replacement's unclean election,
// wakes and answers a fetch the reader had sent it before the election with
// a record it alone holds (then lost); the reader, already moved to the new
// leader and fetching there from the same position, takes the answer (the
// fetch began at its position) and goes on at the new leader past the
// record the new leader holds there (fuzz seed 216882). Only the god view's
// record of that read, by that reader and at that offset, excuses the skip.
func TestSkippingWhatADeposedLeadersAnswerStoodInForIsPermittedOnlyWithTheGodView(t *testing.T) {
	h := &hb{}
	h.send("p-0", "x", 0, 0, history.OK) // the deposed leader's, acks=1
	h.send("p-1", "y", 0, 0, history.OK) // the new leader's
	h.poll("c-0", false, rec{0, 0, "x"})
	h.send("p-1", "z", 0, 1, history.OK)
	h.poll("c-0", false, rec{0, 1, "z"})
	h.poll("c-1", true, rec{0, 0, "y"}, rec{0, 1, "z"})
	loss := DataLoss{Kind: godview.Loss, Partition: "t-0", From: 0, To: 1, Records: 1, Cause: "unclean-election"}
	stale := godview.Fact{Kind: godview.StaleLeaderRead, Partition: "t-0", From: 0, To: 1, Process: "c-0"}
	for _, c := range []struct {
		name  string
		facts []godview.Fact
		want  string
	}{
		{"no record of the read", []godview.Fact{loss}, Violation},
		{"the reader took the deposed leader's answer", []godview.Fact{loss, stale}, Permitted},
		{"another reader did", []godview.Fact{loss, {Kind: godview.StaleLeaderRead, Partition: "t-0", From: 0, To: 1, Process: "c-2"}}, Violation},
		{"at other offsets", []godview.Fact{loss, {Kind: godview.StaleLeaderRead, Partition: "t-0", From: 1, To: 2, Process: "c-0"}}, Violation},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := strict
			cfg.Happened = godview.Seen(c.facts...)
			expectVerdict(t, Check(h.ops, cfg), PollSkip, c.want)
		})
	}
}

// A record the god view sees in the leader's log above a high watermark
// that cannot advance (a stuck replica keeps the ISR below min ISR) is
// unseen, not lost, even though a poll read it before the final reads
// (under the old leader, whose high watermark had passed it); without that
// god view the same history is a lost write.
func TestHeldBackAboveAStuckHighWatermarkIsUnseen(t *testing.T) {
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.send("p-0", "b", 0, 1, history.OK)
	h.poll("c-0", false, rec{0, 0, "a"}, rec{0, 1, "b"})
	h.poll("c-1", true, rec{0, 0, "a"})
	cfg := strict
	cfg.Happened = godview.Seen(godview.Fact{Kind: godview.HeldBack, Partition: "t-0", From: 1, To: 2})
	r := Check(h.ops, cfg)
	expectCount(t, r, LostAckedWrite, 0)
	expectCount(t, r, Unseen, 1)
	if r.Violations != 0 {
		t.Fatalf("no violation, got\n%s", r.Summary())
	}
	cfg.Happened = godview.Seen(godview.Fact{Kind: godview.HeldBack, Partition: "t-0", From: 2, To: 3}) // not where b is
	r = Check(h.ops, cfg)
	expectCount(t, r, LostAckedWrite, 1)
	expectVerdict(t, r, LostAckedWrite, Violation)
}

// A write acknowledged after a loss was not taken by it: its verdict follows
// the loss that came after its acknowledgement (here a disk wipe, permitted
// even with flush.messages=1), not an earlier power loss that reached the
// same offset (which with flush.messages=1 would be a violation).
func TestLostWriteIsJudgedByTheLossAfterItsAcknowledgement(t *testing.T) {
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK) // acknowledged at t=2000
	h.send("p-0", "b", 0, 1, history.OK) // at t=4000
	h.send("p-0", "c", 0, 2, history.OK)
	h.poll("c-1", true, rec{0, 2, "c"})
	cfg := strict
	cfg.Topics = []TopicGuarantees{{Name: "t", ReplicationFactor: 3, MinInsyncReplicas: 2, FlushEveryMessage: true}}
	cfg.Happened = godViewLosses(
		DataLoss{Partition: "t-0", From: 1, To: 2, Cause: "power-loss", At: 1500},
		DataLoss{Partition: "t-0", From: 0, To: 2, Cause: "disk-wipe", At: 5000},
	)
	r := Check(h.ops, cfg)
	expectCount(t, r, LostAckedWrite, 2)
	expectVerdict(t, r, LostAckedWrite, Permitted)
	cfg.Happened = godViewLosses( // times unknown: the first loss reaching b decides, a violation
		DataLoss{Partition: "t-0", From: 1, To: 2, Cause: "power-loss", At: 1500},
		DataLoss{Partition: "t-0", From: 0, To: 2, Cause: "disk-wipe"},
	)
	r = Check(h.ops, cfg)
	expectVerdict(t, r, LostAckedWrite, Violation)
}

// A producer process that died completes its open sends info (the world
// records it): each may or may not have happened, so one that final reads
// hold and one they do not are both fine, and neither is a failed write. A
// reader that died and came back (crash and restart pairs) may start over.
func TestSendsOfADeadProcessAreIndeterminate(t *testing.T) {
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	for _, v := range []string{"b", "c"} {
		x := history.NoValue()
		x.Topic, x.Value = "t", v
		h.add("p-0", history.Invoke, history.FSend, x)
	}
	h.poll("c-0", false, rec{0, 0, "a"}, rec{0, 1, "b"})
	for _, v := range []string{"b", "c"} {
		x := history.NoValue()
		x.Topic, x.Value, x.Error = "t", v, "process died: killed"
		h.add("p-0", history.Info, history.FSend, x)
	}
	for _, proc := range []string{"p-0", "c-0"} {
		crash := history.NoValue()
		crash.Error = "process died: killed"
		h.add(proc, history.Invoke, history.FCrash, crash)
		h.add(proc, history.OK, history.FCrash, crash)
		h.add(proc, history.Invoke, history.FRestart, history.NoValue())
		h.add(proc, history.OK, history.FRestart, history.NoValue())
	}
	h.send("p-0", "d", 0, 2, history.OK)
	h.poll("c-0", false, rec{0, 0, "a"}) // a restarted reader may start over
	h.poll("f-0", true, rec{0, 0, "a"}, rec{0, 1, "b"}, rec{0, 2, "d"})
	r := Check(h.ops, strict)
	if len(r.Anomalies) != 0 || r.Stats.Indeterminate != 2 || r.Stats.Failed != 0 {
		t.Fatalf("sends of a dead process are indeterminate: %+v\n%s", r.Stats, r.Summary())
	}
}

// The leader a reader fetched from had deleted offset 1 (retention) and
// answered OFFSET_OUT_OF_RANGE at the reader's position; auto.offset.reset
// moved it to that leader's log start, 2. A replica whose own retention had
// not gone as far later led, and final reads hold offset 1 again (fuzz seed
// 364903: an unclean election of a follower cut off before the leader's
// retention ran). Only the god view's record of that reset, by that reader
// and over that offset, excuses the skip.
func TestSkippingWhatTheLeaderSaidWasOutOfRangeIsPermittedOnlyWithTheGodView(t *testing.T) {
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.send("p-0", "b", 0, 1, history.OK)
	h.send("p-0", "c", 0, 2, history.OK)
	h.poll("c-0", false, rec{0, 0, "a"})
	h.poll("c-0", false, rec{0, 2, "c"})
	h.poll("c-1", true, rec{0, 0, "a"}, rec{0, 1, "b"}, rec{0, 2, "c"})
	reset := func(proc string, from, to int64) godview.Fact {
		return godview.Fact{Kind: godview.OutOfRangeReset, Partition: "t-0", From: from, To: to, Process: proc}
	}
	for _, c := range []struct {
		name  string
		facts []godview.Fact
		want  string
	}{
		{"no record of the reset", nil, Violation},
		{"the reader's position was reset past the record", []godview.Fact{reset("c-0", 1, 2)}, Permitted},
		{"another reader's was", []godview.Fact{reset("c-2", 1, 2)}, Violation},
		{"at other offsets", []godview.Fact{reset("c-0", 2, 3)}, Violation},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := strict
			cfg.Happened = godview.Seen(c.facts...)
			expectVerdict(t, Check(h.ops, cfg), PollSkip, c.want)
		})
	}
}

// An idempotent producer's record whose committed batch a leader's producer
// state forgot (rebuilt at a restart) is answered OUT_OF_ORDER_SEQUENCE_NUMBER
// on a retry and sent again under a bumped epoch: it was written in send
// order (offset 0) and again after the next record (offset 2), and its
// acknowledgement names the later copy (fuzz seed 400111). With the god
// view seeing that batch forgotten, the reordering follows from the
// permitted duplicate; without it, or with the batch forgotten elsewhere, it
// is a violation.
func TestNonmonotonicSendOfARecordResentAfterItsBatchWasForgotten(t *testing.T) {
	h := &hb{}
	h.send("p-0", "a", 0, 2, history.OK)
	h.send("p-0", "b", 0, 1, history.OK)
	h.poll("c-0", true, rec{0, 0, "a"}, rec{0, 1, "b"}, rec{0, 2, "a"})
	god := strict
	god.Happened = godview.Seen()
	expectVerdict(t, Check(h.ops, god), NonmonotonicSend, Violation)
	god.Happened = godview.Seen(godview.Fact{Kind: godview.ForgottenBatch, Partition: "t-0", From: 0, To: 1})
	expectVerdict(t, Check(h.ops, god), NonmonotonicSend, Permitted)
	god.Happened = godview.Seen(godview.Fact{Kind: godview.ForgottenBatch, Partition: "t-0", From: 1, To: 2}) // not the earlier record's batch
	expectVerdict(t, Check(h.ops, god), NonmonotonicSend, Violation)
}

// A read_committed reader passed over offset 1 (a transaction's commit
// marker: nothing the history knows stood there); later the partition lost
// committed data at an unclean election whose leader held nothing, and a
// record sent before the jump, waiting out the outage, took offset 1 (fuzz
// seed 10735). What final reads hold there came after the loss; what the
// reader passed over went with it. A record seen at the offset before the
// loss, a loss before the jump, or a new leader whose log reached the offset
// (its older-epoch entry there was in a log before the jump) excuses nothing.
func TestSkippingAnOffsetReusedAfterALossThatFollowedTheJumpIsPermitted(t *testing.T) {
	build := func(xSeenBefore, lossBeforeJump bool, leaderEnd int64) *Report {
		h := &hb{}
		h.send("p-0", "a", 0, 0, history.OK)
		x := history.NoValue()
		x.Topic, x.Value = "t", "x"
		h.add("p-1", history.Invoke, history.FSend, x) // x waits out the outage
		if xSeenBefore {
			h.poll("c-1", false, rec{0, 1, "x"})
		}
		h.send("p-0", "c", 0, 2, history.OK)
		lossAt := h.t + 500
		if !lossBeforeJump {
			h.poll("c-0", false, rec{0, 0, "a"})
			h.poll("c-0", false, rec{0, 2, "c"}) // jumps 0 → 2
			lossAt = h.t + 500
		}
		h.t += 1000
		h.send("p-2", "w", 0, 0, history.OK) // the new log
		x.Partition, x.Offset = 0, 1
		h.add("p-1", history.OK, history.FSend, x)
		if lossBeforeJump {
			h.poll("c-0", false, rec{0, 0, "a"})
			h.poll("c-0", false, rec{0, 2, "c"})
		}
		h.poll("final", true, rec{0, 0, "w"}, rec{0, 1, "x"})
		cfg := strict
		cfg.Happened = godViewLosses(DataLoss{Partition: "t-0", From: 0, To: 3, Records: 2, Cause: "power-loss", ExposedBy: "unclean-election", At: lossAt, LeaderEnd: leaderEnd})
		return Check(h.ops, cfg)
	}
	r := build(false, false, 0)
	expectVerdict(t, r, PollSkip, Permitted)
	if a, _ := r.Anomaly(PollSkip); !strings.Contains(a.Because, "appended after the loss") {
		t.Fatalf("because %q", a.Because)
	}
	expectVerdict(t, build(true, false, 0), PollSkip, Violation)
	expectVerdict(t, build(false, true, 0), PollSkip, Violation)
	expectVerdict(t, build(false, false, 2), PollSkip, Violation)
}
