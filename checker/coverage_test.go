package checker

import (
	"testing"

	"kafkasim/history"
)

// Jepsen's rule for a write nobody read — reads went on past it — holds
// only for a reader that read across its offset. One that started above it
// (auto.offset.reset=latest, or a committed offset after a restart) says
// nothing about it.
func TestReadsPastAWriteMeanOneReaderReadAcrossIt(t *testing.T) {
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.poll("c-0", false) // nothing yet
	h.send("p-0", "b", 0, 1, history.OK)
	h.poll("c-0", false, rec{0, 1, "b"})
	// With auto.offset.reset=latest, c-0 began at the log end, past a.
	latest := strict
	latest.Consumers = []ConsumerGuarantees{{Prefix: "c", AutoOffsetReset: "latest"}}
	r := Check(h.ops, latest)
	expectCount(t, r, LostAckedWrite, 0)
	expectCount(t, r, Unseen, 1)
	// With earliest (the readers' default here), it began at the log start
	// and read past a without seeing it.
	r = Check(h.ops, strict)
	expectCount(t, r, LostAckedWrite, 1)
	expectVerdict(t, r, LostAckedWrite, Violation)
	// A group member starts at the group's committed offset: only a
	// session that read across a's offset says a is gone.
	g := &hb{}
	g.send("p-0", "a", 0, 0, history.OK)
	g.send("p-0", "b", 0, 1, history.OK)
	g.rebalance("c-0", history.FAssign, "g", "t-0")
	g.poll("c-0", false, rec{0, 1, "b"})
	r = Check(g.ops, strict)
	expectCount(t, r, LostAckedWrite, 0)
	g.send("p-0", "c", 0, 2, history.OK)
	g.poll("c-1", false, rec{0, 1, "b"}, rec{0, 2, "c"}) // no group, earliest: read from the log start, never saw a
	r = Check(g.ops, strict)
	expectCount(t, r, LostAckedWrite, 1)
	if a, _ := r.Anomaly(LostAckedWrite); a.Example.Value != "a" {
		t.Fatalf("lost %s, want a", a.Example.Value)
	}
}

// Final reads cover what their reader was assigned, or, without an
// assignment, every partition of the topics they returned records of — or,
// when they returned nothing at all, everything.
func TestWhatFinalReadsCover(t *testing.T) {
	assigned := func(h *hb, parts ...string) {
		h.rebalance("final", history.FAssign, "", parts...)
	}
	// Assigned t-0 only: a write to t-1 is not theirs to judge.
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.send("p-0", "b", 1, 0, history.OK)
	assigned(h, "t-0")
	h.poll("final", true, rec{0, 0, "a"})
	r := Check(h.ops, strict)
	expectCount(t, r, LostAckedWrite, 0)
	expectCount(t, r, Unseen, 1)
	// Assigned both: the write to t-1 is lost, though nothing of t-1 came
	// back.
	h = &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.send("p-0", "b", 1, 0, history.OK)
	assigned(h, "t-0", "t-1")
	h.poll("final", true, rec{0, 0, "a"})
	r = Check(h.ops, strict)
	expectCount(t, r, LostAckedWrite, 1)
	// No assignment, nothing returned: every partition was empty.
	h = &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.poll("final", true)
	r = Check(h.ops, strict)
	expectCount(t, r, LostAckedWrite, 1)
	expectVerdict(t, r, LostAckedWrite, Violation)
	// The same with a second topic in the history: what it read is
	// unknown, so nothing is lost, only unseen.
	v := history.NoValue()
	v.Topic, v.Value = "u", "z"
	h.ops = h.ops[:len(h.ops)-2] // drop the final poll
	h.add("p-0", history.Invoke, history.FSend, v)
	v.Partition, v.Offset = 0, 0
	h.add("p-0", history.OK, history.FSend, v)
	h.poll("final", true)
	r = Check(h.ops, strict)
	expectCount(t, r, LostAckedWrite, 0)
	expectCount(t, r, Unseen, 2)
	// No assignment, records of the topic: the whole topic is covered.
	h = &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.send("p-0", "b", 1, 0, history.OK)
	h.poll("final", true, rec{0, 0, "a"})
	r = Check(h.ops, strict)
	expectCount(t, r, LostAckedWrite, 1)
}

// Without the simulator's record of what happened, unclean.leader.election
// .enable=true means the configuration does not promise committed data
// survives: a loss is a cost of it. With acks=all and unclean elections off
// the same history breaks a guarantee.
func TestUncleanElectionPermitsLossWithoutAGodView(t *testing.T) {
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.poll("c-0", false, rec{0, 0, "a"})
	h.send("p-0", "b", 0, 1, history.OK)
	h.poll("final", true, rec{0, 0, "x"}, rec{0, 1, "b"})
	r := Check(h.ops, strict)
	expectVerdict(t, r, LostAckedWrite, Violation)
	expectVerdict(t, r, InconsistentOffsets, Violation)
	unclean := strict
	unclean.Topics = []TopicGuarantees{{Name: "t", ReplicationFactor: 3, MinInsyncReplicas: 2, Unclean: true}}
	r = Check(h.ops, unclean)
	expectVerdict(t, r, LostAckedWrite, Permitted)
	expectVerdict(t, r, InconsistentOffsets, Permitted)
}

// A history of reads alone: nothing shows who wrote what was read, so the
// logs are not judged (no phantom read, no linearizability).
func TestReadsAloneAreNotJudged(t *testing.T) {
	h := &hb{}
	h.poll("c-0", false, rec{0, 0, "old-1"}, rec{0, 1, "old-2"})
	h.poll("c-1", false, rec{0, 0, "old-1"})
	r := Check(h.ops, strict)
	if len(r.Anomalies) != 0 {
		t.Fatalf("reads alone: %s", r.Summary())
	}
}

// In a compacted topic the cleaner removes a record once a later one has its
// key: a reader that gets there afterwards jumps over its offset. Over a
// record whose key never comes again, the jump is a skip.
func TestSkipsOverCompactedRecords(t *testing.T) {
	build := func(laterKey string) *Report {
		h := &hb{}
		for i, k := range []string{"k0", "k1", "k2", laterKey} {
			h.sendKeyed("v"+itoa(int64(i)), k, int64(i))
		}
		h.poll("c-0", false, rec{0, 0, "v0"}, rec{0, 1, "v1"}, rec{0, 2, "v2"}, rec{0, 3, "v3"})
		h.poll("c-1", false, rec{0, 0, "v0"})
		h.poll("c-1", false, rec{0, 2, "v2"}, rec{0, 3, "v3"}) // jumps over offset 1 (k1)
		return Check(h.ops, compacted(strict))
	}
	if r := build("k1"); r.Count(PollSkip) != 0 {
		t.Fatalf("k1 comes again at 3: the cleaner may have removed offset 1\n%s", r.Summary())
	}
	r := build("k9")
	expectCount(t, r, PollSkip, 1)
	expectVerdict(t, r, PollSkip, Violation)
}

// acks=0: Kafka's producer reports a send done as soon as it is on the wire
// (offset -1). The history says info; the send counts as acknowledged for
// availability, and the final reads judge it: missing from them, it was
// lost, which acks=0 permits — unless a poll read it first (then it was
// committed, and committed data must not vanish).
func TestAcksZeroSendsAreJudgedByFinalReads(t *testing.T) {
	cfg := strict
	cfg.Producers = []ProducerGuarantees{{Prefix: "p", Acks: "0"}}
	h := &hb{}
	for _, v := range []string{"a", "b", "c"} {
		s := history.NoValue()
		s.Topic, s.Value = "t", v
		h.add("p-0", history.Invoke, history.FSend, s)
		s.Partition = 0
		h.add("p-0", history.Info, history.FSend, s)
	}
	h.poll("c-0", false, rec{0, 0, "a"}, rec{0, 1, "b"})
	h.poll("final", true, rec{0, 0, "a"})
	r := Check(h.ops, cfg)
	if r.Stats.Acked != 3 || r.Stats.Availability != 1 {
		t.Fatalf("acked %d, availability %v; want 3 and 1", r.Stats.Acked, r.Stats.Availability)
	}
	expectCount(t, r, LostAckedWrite, 2)
	var permitted, violated int
	for _, a := range r.Anomalies {
		if a.Type != LostAckedWrite {
			continue
		}
		switch a.Verdict {
		case Permitted:
			permitted += a.Count
		case Violation:
			violated += a.Count
		}
	}
	if permitted != 1 || violated != 1 {
		t.Fatalf("c (never read) should be a permitted loss and b (read) a violation; got %d permitted, %d violations\n%s", permitted, violated, r.Summary())
	}
}

// The cleaner never reuses an offset: a write whose offset a later one took
// was lost (acks=1 here: permitted), even in a compacted topic where a later
// record of its key exists; the later one at that offset, superseded in turn,
// was compacted. Retention likewise deletes only what was still there.
func TestAReusedOffsetIsALossNotCompactionOrRetention(t *testing.T) {
	cfg := compacted(strict)
	cfg.Producers = []ProducerGuarantees{{Prefix: "p", Acks: "1"}}
	h := &hb{}
	h.sendKeyed("a", "k", 0)
	h.sendKeyed("b", "k", 0) // a's leader failed before its followers copied it: b took offset 0
	h.sendKeyed("c", "k", 1)
	h.poll("final", true, rec{0, 1, "c"})
	r := Check(h.ops, cfg)
	expectCount(t, r, LostAckedWrite, 1)
	expectVerdict(t, r, LostAckedWrite, Permitted)
	if a, _ := r.Anomaly(LostAckedWrite); a.Example.Value != "a" {
		t.Fatalf("lost %s, want a", a.Example.Value)
	}
	if r.Stats.Compacted != 1 {
		t.Fatalf("compacted %d, want 1 (b, superseded by c)", r.Stats.Compacted)
	}
}

// Replicas compact on their own schedules: a reader of one leader may jump
// over a record its cleaner removed while the replica the final reads read
// from still holds it (fuzz seed 3758). Over a record whose key never comes
// again, that is a skip.
func TestFinalReadsHoldWhatAnotherReplicaCleaned(t *testing.T) {
	build := func(laterKey string) *Report {
		h := &hb{}
		for i, k := range []string{"k0", "k1", "k2", laterKey} {
			h.sendKeyed("v"+itoa(int64(i)), k, int64(i))
		}
		h.poll("c-0", false, rec{0, 0, "v0"}, rec{0, 2, "v2"}, rec{0, 3, "v3"}) // the old leader had cleaned offset 1
		h.poll("final", true, rec{0, 0, "v0"}, rec{0, 1, "v1"}, rec{0, 2, "v2"}, rec{0, 3, "v3"})
		return Check(h.ops, compacted(strict))
	}
	if r := build("k1"); r.Count(PollSkip)+r.Count(IntPollSkip) != 0 {
		t.Fatalf("k1 comes again at 3: a cleaner may have removed offset 1\n%s", r.Summary())
	}
	if r := build("k9"); r.Count(PollSkip)+r.Count(IntPollSkip) == 0 {
		t.Fatalf("k1 never comes again: jumping over offset 1 is a skip\n%s", r.Summary())
	}
}

// A skip is over the record that was at the offset then: one that took the
// offset later, after a loss emptied the log, is not "still in the log"
// (fuzz seed 1003856). acks=1 lost the skipped record: permitted.
func TestASkipIsJudgedByWhatWasThereThen(t *testing.T) {
	cfg := strict
	cfg.Producers = []ProducerGuarantees{{Prefix: "p", Acks: "1"}}
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.send("p-0", "b", 0, 1, history.OK)
	h.send("p-0", "c", 0, 2, history.OK)
	h.poll("c-0", false, rec{0, 0, "a"}, rec{0, 2, "c"}) // b was gone from the leader it read
	h.send("p-0", "d", 0, 1, history.OK)                 // the log was lost and its offsets reused
	h.poll("final", true, rec{0, 1, "d"})
	r := Check(h.ops, cfg)
	if a, ok := r.Anomaly(IntPollSkip); ok && a.Verdict == Violation {
		t.Fatalf("the skip over b is judged by d, which came later\n%s", r.Summary())
	}
}

// sendKeyed records p-0 sending value with key, acknowledged at t-0@offset.
func (h *hb) sendKeyed(value, key string, offset int64) {
	v := history.NoValue()
	v.Topic, v.Value, v.Key, v.HasKey = "t", value, key, true
	h.add("p-0", history.Invoke, history.FSend, v)
	v.Partition, v.Offset = 0, offset
	h.add("p-0", history.OK, history.FSend, v)
}

// compacted is cfg with topic t compacted.
func compacted(cfg Config) Config {
	cfg.Topics = []TopicGuarantees{{Name: "t", ReplicationFactor: 3, MinInsyncReplicas: 2, Compact: true}}
	return cfg
}

// One jump over a record is one skip, whichever checks see it: the step
// across it (checkSkips) and the record the final reads hold that the
// session never read (checkCoverage) are the same finding, of the kind of
// the step: int-poll-skip within one poll, poll-skip across polls.
func TestOneJumpIsOneSkip(t *testing.T) {
	build := func(polls ...[]rec) *Report {
		h := &hb{}
		for i, v := range []string{"a", "b", "c", "d"} {
			h.send("p-0", v, 0, int64(i), history.OK)
		}
		for _, recs := range polls {
			h.poll("c-0", false, recs...)
		}
		h.poll("final", true, rec{0, 0, "a"}, rec{0, 1, "b"}, rec{0, 2, "c"}, rec{0, 3, "d"})
		return Check(h.ops, strict)
	}
	r := build([]rec{{0, 0, "a"}}, []rec{{0, 2, "c"}, {0, 3, "d"}})
	expectCount(t, r, PollSkip, 1)
	expectCount(t, r, IntPollSkip, 0)
	expectVerdict(t, r, PollSkip, Violation)
	if a, _ := r.Anomaly(PollSkip); a.Example.Offset != 1 || a.Example.Value != "b" || a.Example.Process != "c-0" {
		t.Fatalf("skipped %s, want t-0@1 b by c-0", a.Example)
	}
	r = build([]rec{{0, 0, "a"}, {0, 2, "c"}, {0, 3, "d"}})
	expectCount(t, r, IntPollSkip, 1)
	expectCount(t, r, PollSkip, 0)
	// Over two records, still one jump.
	r = build([]rec{{0, 0, "a"}}, []rec{{0, 3, "d"}})
	expectCount(t, r, PollSkip, 1)
	// Two jumps, one within a poll and one across polls, are two skips.
	h := &hb{}
	for i, v := range []string{"a", "b", "c", "d", "e"} {
		h.send("p-0", v, 0, int64(i), history.OK)
	}
	h.poll("c-0", false, rec{0, 0, "a"}, rec{0, 2, "c"})
	h.poll("c-0", false, rec{0, 4, "e"})
	h.poll("final", true, rec{0, 0, "a"}, rec{0, 1, "b"}, rec{0, 2, "c"}, rec{0, 3, "d"}, rec{0, 4, "e"})
	r = Check(h.ops, strict)
	expectCount(t, r, IntPollSkip, 1)
	expectCount(t, r, PollSkip, 1)
}

// A jump over an offset whose acknowledged record is gone (acks=1 lost it:
// permitted) and over one the final reads still hold is one skip, judged by
// the record still in the log.
func TestAJumpIsJudgedByTheRecordStillInTheLog(t *testing.T) {
	cfg := strict
	cfg.Producers = []ProducerGuarantees{{Prefix: "p", Acks: "1"}}
	h := &hb{}
	for i, v := range []string{"a", "b", "c", "d"} {
		h.send("p-0", v, 0, int64(i), history.OK)
	}
	h.poll("c-0", false, rec{0, 0, "a"})
	h.poll("c-0", false, rec{0, 3, "d"})
	h.poll("final", true, rec{0, 0, "a"}, rec{0, 2, "c"}, rec{0, 3, "d"}) // b is gone
	r := Check(h.ops, cfg)
	expectCount(t, r, PollSkip, 1)
	expectVerdict(t, r, PollSkip, Violation)
	if a, _ := r.Anomaly(PollSkip); a.Example.Offset != 2 || a.Example.Value != "c" {
		t.Fatalf("skipped %s, want t-0@2 c", a.Example)
	}
}

// A reader that read an offset's record and got no further before a
// loss put another record there did not skip that one: it read the offset
// (the record it read was lost, which the lost-write and
// inconsistent-offsets rules judge). Reading on past the offset once the
// new record was there, without going back to it (KIP-320), is a skip.
func TestAReaderThatReadAnOffsetBeforeItWasReusedDidNotSkipIt(t *testing.T) {
	build := func(readOn bool) *Report {
		h := &hb{}
		h.send("p-0", "a", 0, 0, history.OK)
		h.send("p-0", "b", 0, -1, history.Info)
		h.poll("c-0", false, rec{0, 0, "a"}, rec{0, 1, "b"})
		h.send("p-1", "x", 0, 1, history.OK) // b was lost and its offset reused
		h.send("p-1", "y", 0, 2, history.OK)
		final := []rec{{0, 0, "a"}, {0, 1, "x"}}
		if readOn {
			h.poll("c-0", false, rec{0, 2, "y"})
			final = append(final, rec{0, 2, "y"})
		}
		h.poll("final", true, final...)
		return Check(h.ops, strict)
	}
	r := build(false)
	expectCount(t, r, PollSkip, 0)
	expectCount(t, r, InconsistentOffsets, 1)
	r = build(true)
	expectCount(t, r, PollSkip, 1)
	expectVerdict(t, r, PollSkip, Violation)
	if a, _ := r.Anomaly(PollSkip); a.Example.Offset != 1 || a.Example.Value != "x" {
		t.Fatalf("skipped %s, want t-0@1 x", a.Example)
	}
}

// A group member that read an offset's record, and read on past it only
// while the leaders still held that record, did not skip the record a loss
// later put there, even one sent before it read on (fuzz seeds 120 and 244
// with --groups): that record took the offset only once a leader without the
// one read was elected, when the god view saw the loss. Reading on past the
// offset in the new log after the loss, without going back (KIP-320), is
// still a skip. (Reading b after the loss is not reading on: a record of
// the lost log, fetched before the loss, may reach the application after
// it; TestReadsOfTheLostLogAreNotReadsPastTheNewOne.)
func TestAMemberThatReadOnBeforeTheLossDidNotSkipTheRecordThatReplacedIt(t *testing.T) {
	build := func(readOnAfterLoss bool) *Report {
		h := &hb{}
		h.send("p-0", "a", 0, 0, history.OK)
		h.send("p-0", "b", 0, 1, history.OK)
		h.rebalance("c-0", history.FAssign, "g", "t-0")
		h.poll("c-0", false, rec{0, 0, "a"})
		x := history.NoValue()
		x.Topic, x.Value = "t", "x"
		h.add("p-1", history.Invoke, history.FSend, x) // x, sent now, waits out the outage
		var lossAt int64
		final := []rec{{0, 0, "x"}}
		if readOnAfterLoss {
			lossAt = h.t + 500
			h.t += 1000
			h.send("p-2", "w", 0, 1, history.OK) // after x, in the new log
			h.poll("c-0", false, rec{0, 1, "w"})
			final = append(final, rec{0, 1, "w"})
		} else {
			h.poll("c-0", false, rec{0, 1, "b"})
			lossAt = h.t + 500
		}
		h.t += 1000
		x.Partition, x.Offset = 0, 0
		h.add("p-1", history.OK, history.FSend, x)
		h.rebalance("c-0", history.FRevoke, "g", "t-0")
		h.rebalance("c-0", history.FAssign, "g", "t-0")
		h.poll("c-0", false, rec{0, 0, "x"})
		h.poll("final", true, final...)
		cfg := strict
		cfg.Happened = godViewLosses(DataLoss{Partition: "t-0", From: 0, To: 2, Records: 2, Cause: "power-loss", At: lossAt})
		return Check(h.ops, cfg)
	}
	expectCount(t, build(false), PollSkip, 0)
	r := build(true)
	expectCount(t, r, PollSkip, 1)
	expectVerdict(t, r, PollSkip, Violation)
	if a, _ := r.Anomaly(PollSkip); a.Example.Offset != 0 || a.Example.Value != "x" {
		t.Fatalf("skipped %s, want t-0@0 x", a.Example)
	}
}

// Records a consumer fetched before a loss may reach the application after
// it (they waited in its buffer): reading on past an offset in the log the
// god view saw lost is not reading past it in the log that replaced it. A
// member that read the lost b and c, went back to the new log's start
// (KIP-320) and read x there before its session ended skipped nothing of
// the new log, though y, at b's offset, was sent before (fuzz --groups seed
// 20129). One that read on in the new log past y did skip it.
func TestReadsOfTheLostLogAreNotReadsPastTheNewOne(t *testing.T) {
	build := func(readOnInNewLog bool) *Report {
		h := &hb{}
		h.send("p-0", "a", 0, 0, history.OK)
		h.send("p-0", "b", 0, 1, history.OK)
		h.send("p-0", "c", 0, 2, history.OK)
		y := history.NoValue()
		y.Topic, y.Value = "t", "y"
		h.add("p-1", history.Invoke, history.FSend, y) // y waits out the outage
		h.rebalance("c-0", history.FAssign, "g", "t-0")
		h.poll("c-0", false, rec{0, 0, "a"})
		lossAt := h.t + 500
		h.t += 1000
		h.poll("c-0", false, rec{0, 1, "b"}, rec{0, 2, "c"}) // fetched before the loss
		h.send("p-2", "x", 0, 0, history.OK)
		h.poll("c-0", false, rec{0, 0, "x"})
		y.Partition, y.Offset = 0, 1
		h.add("p-1", history.OK, history.FSend, y)
		h.send("p-2", "z", 0, 2, history.OK)
		if readOnInNewLog {
			h.poll("c-0", false, rec{0, 2, "z"})
		}
		h.rebalance("c-0", history.FRevoke, "g", "t-0")
		h.poll("final", true, rec{0, 0, "x"}, rec{0, 1, "y"}, rec{0, 2, "z"})
		cfg := strict
		cfg.Happened = godViewLosses(DataLoss{Partition: "t-0", From: 0, To: 3, Records: 3, Cause: "power-loss", At: lossAt})
		return Check(h.ops, cfg)
	}
	if r := build(false); r.Count(PollSkip)+r.Count(IntPollSkip) != 0 {
		t.Fatalf("c-0 read nothing of the new log past offset 1\n%s", r.Summary())
	}
	r := build(true)
	expectCount(t, r, PollSkip, 1)
	expectVerdict(t, r, PollSkip, Violation)
	if a, _ := r.Anomaly(PollSkip); a.Example.Offset != 1 || a.Example.Value != "y" {
		t.Fatalf("skipped %s, want t-0@1 y", a.Example)
	}
}

// cleanedThenReplaced: a compacted partition where the deposed leader of
// epoch 0 holds e (key k2, sent, never acknowledged) at 1 and the leader of
// epoch 1 wrote c (cKey) there, then g (k3) at 2. c-0 read a at 0 and,
// the leader's cleaner having removed offset 1, jumped to g at 2. Then an
// unclean election made the deposed leader, whose log ends at 2, leader:
// the loss took 1 and 2, and the new leader's e stayed at 1 below the end
// offset it gives for c-0's epoch, so KIP-320 validation moved c-0 back to
// 2 only, where it read h (hKey). The final reads hold a, e, h (fuzz seed
// 325955).
func cleanedThenReplaced(cKey, hKey string) *Report {
	h := &hb{}
	h.sendKeyed("a", "k1", 0)
	e := history.NoValue()
	e.Topic, e.Value, e.Key, e.HasKey = "t", "e", "k2", true
	h.add("p-0", history.Invoke, history.FSend, e)
	h.add("p-0", history.Info, history.FSend, e)
	h.sendKeyed("c", cKey, 1)
	h.sendKeyed("g", "k3", 2)
	h.poll("c-0", false, rec{0, 0, "a"})
	h.poll("c-0", false, rec{0, 2, "g"})
	lossAt := h.t + 500
	h.t += 1000
	h.sendKeyed("h", hKey, 2)
	h.poll("c-0", false, rec{0, 2, "h"})
	h.poll("final", true, rec{0, 0, "a"}, rec{0, 1, "e"}, rec{0, 2, "h"})
	cfg := compacted(strict)
	cfg.Happened = godViewLosses(DataLoss{Partition: "t-0", From: 1, To: 3, Records: 2, Cause: "unclean-election", LeaderEnd: 2, At: lossAt})
	return Check(h.ops, cfg)
}

// A jump over an offset where two records were known before it (the log
// that a loss later replaced held one, the final reads hold the other) is
// the cleaner's if it may have removed either: both keys come again. If
// either never does, the jump skipped a record the cleaner could not have
// removed (fuzz seed 325955).
func TestAJumpOverAnOffsetOfTwoRecordsIsTheCleanersIfEitherCouldBeCleaned(t *testing.T) {
	r := cleanedThenReplaced("k3", "k2")
	if n := r.Count(PollSkip) + r.Count(IntPollSkip); n != 0 {
		t.Fatalf("c (k3 at 2) and e (k2 at 2) may both have been cleaned: no skip, got %d\n%s", n, r.Summary())
	}
	for _, c := range []struct{ name, cKey, hKey string }{
		{"c's key never comes again", "k9", "k2"},
		{"e's key never comes again", "k3", "k5"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := cleanedThenReplaced(c.cKey, c.hKey)
			expectCount(t, r, PollSkip, 1)
			expectVerdict(t, r, PollSkip, Violation)
		})
	}
}

// The records a jump can have passed over are those sent before it: one
// that took the offset later, after a loss, does not keep the cleaner from
// explaining the jump, whatever its key, and was not skipped unless the
// reader read on past the offset once it was there.
func TestAJumpIsExcusedByTheCleanerForWhatWasThereThen(t *testing.T) {
	build := func(xBefore, readOn bool) *Report {
		h := &hb{}
		h.sendKeyed("a", "k1", 0)
		if xBefore {
			h.sendKeyed("x", "k9", 1) // there before the jump; k9 never comes again
		}
		h.sendKeyed("b", "k2", 1)
		h.sendKeyed("c", "k2", 2)
		h.poll("c-0", false, rec{0, 0, "a"}, rec{0, 2, "c"}) // the cleaner removed b
		if !xBefore {
			h.sendKeyed("x", "k9", 1) // b and c were lost; x took offset 1
		}
		final := []rec{{0, 0, "a"}, {0, 1, "x"}}
		if readOn {
			h.sendKeyed("y", "k3", 2)
			h.poll("c-0", false, rec{0, 2, "y"}) // past x, without going back to it
			final = append(final, rec{0, 2, "y"})
		}
		h.poll("final", true, final...)
		cfg := compacted(strict)
		cfg.Producers = []ProducerGuarantees{{Prefix: "p", Acks: "1"}}
		return Check(h.ops, cfg)
	}
	if r := build(false, false); r.Count(PollSkip)+r.Count(IntPollSkip) != 0 {
		t.Fatalf("x took offset 1 after the jump, which the cleaner explains\n%s", r.Summary())
	}
	if r := build(false, true); r.Count(PollSkip)+r.Count(IntPollSkip) == 0 {
		t.Fatalf("c-0 read on past offset 1 once x was there: a skip\n%s", r.Summary())
	}
	if r := build(true, false); r.Count(PollSkip)+r.Count(IntPollSkip) == 0 {
		t.Fatalf("x, at offset 1 before the jump, could not have been cleaned: a skip\n%s", r.Summary())
	}
}

// goneBackThenCleaned: c-0 read a..d at 0..3 of a compacted partition; an
// unclean election lost 1..3 and the new leader's log took w, x (xKey), y
// (k3, c's key) and z (zKey) at 1..4. KIP-320 validation moved c-0 back to
// 1: it read w, then jumped from 1 to 3 over x, which its leader's cleaner
// had removed (z has x's key), while the replica the final reads read from
// still holds x (fuzz seed 393854).
func goneBackThenCleaned(xKey, zKey string) *Report {
	h := &hb{}
	for i, v := range []string{"a", "b", "c", "d"} {
		h.sendKeyed(v, "k"+itoa(int64(i+1)), int64(i))
	}
	h.poll("c-0", false, rec{0, 0, "a"}, rec{0, 1, "b"}, rec{0, 2, "c"}, rec{0, 3, "d"})
	lossAt := h.t + 500
	h.t += 1000
	h.sendKeyed("w", "k5", 1)
	h.sendKeyed("x", xKey, 2)
	h.sendKeyed("y", "k3", 3)
	h.sendKeyed("z", zKey, 4)
	h.poll("c-0", false, rec{0, 1, "w"}, rec{0, 3, "y"}, rec{0, 4, "z"})
	h.poll("final", true, rec{0, 0, "a"}, rec{0, 1, "w"}, rec{0, 2, "x"}, rec{0, 3, "y"}, rec{0, 4, "z"})
	cfg := compacted(strict)
	cfg.Producers = []ProducerGuarantees{{Prefix: "p", Acks: "1"}}
	cfg.Happened = godViewLosses(DataLoss{Partition: "t-0", From: 1, To: 4, Records: 3, Cause: "unclean-election", LeaderEnd: 1, At: lossAt})
	return Check(h.ops, cfg)
}

// A session that read another record at an offset before a loss, and,
// gone back, jumped over the offset in the new log where the cleaner may
// have removed the record, skipped nothing there, though the final reads
// hold the record. Over a record whose key never comes again, the jump is
// a skip.
func TestAJumpAfterGoingBackIsTheCleanersWhereTheReaderReadAnotherRecordBefore(t *testing.T) {
	if r := goneBackThenCleaned("k7", "k7"); r.Count(PollSkip)+r.Count(IntPollSkip) != 0 {
		t.Fatalf("z has x's key: c-0's leader may have cleaned x\n%s", r.Summary())
	}
	r := goneBackThenCleaned("k9", "k7")
	expectCount(t, r, IntPollSkip, 1)
	expectVerdict(t, r, IntPollSkip, Violation)
}
