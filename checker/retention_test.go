package checker

import (
	"testing"

	"kafkasim/godview"
	"kafkasim/history"
)

// keyed sends a keyed record.
func (h *hb) keyed(process, value, key string, partition int32, offset int64) {
	v := history.NoValue()
	v.Topic, v.Value, v.Key, v.HasKey = "t", value, key, true
	h.add(process, history.Invoke, history.FSend, v)
	v.Partition, v.Offset = partition, offset
	h.add(process, history.OK, history.FSend, v)
}

// finalFrom is a final poll that says where the log started.
func (h *hb) finalFrom(starts map[string]int64, recs ...rec) {
	v := history.NoValue()
	v.Final = true
	h.add("final-0", history.Invoke, history.FPoll, v)
	v.HasRecords = true
	v.X().LogStartOffsets = starts
	for _, r := range recs {
		v.Records = append(v.Records, history.Record{Topic: "t", Partition: r.p, Offset: r.off, Value: r.v})
	}
	h.add("final-0", history.OK, history.FPoll, v)
}

// finalOfT0 is a final read of t-0 from logStart to end, of the records
// sendsTo(0, "a0", "a1", ...) wrote there.
func (h *hb) finalOfT0(logStart, end int64) {
	var recs []rec
	for off := logStart; off < end; off++ {
		recs = append(recs, rec{0, off, "a" + itoa(off)})
	}
	h.finalFrom(map[string]int64{"t-0": logStart}, recs...)
}

func TestRecordsBelowTheLogStartWereDeletedNotLost(t *testing.T) {
	h := &hb{}
	for i, v := range []string{"a", "b", "c", "d"} {
		h.send("p-0", v, 0, int64(i), history.OK)
	}
	// The reader read a, then was away; retention deleted a..c; it jumps
	// to d (auto.offset.reset to the log start).
	h.poll("c-0", false, rec{0, 0, "a"})
	h.poll("c-0", false, rec{0, 3, "d"})
	h.finalFrom(map[string]int64{"t-0": 3}, rec{0, 3, "d"})
	r := Check(h.ops, strict)
	expectCount(t, r, LostAckedWrite, 0)
	if r.Stats.Deleted != 3 {
		t.Fatalf("deleted by retention: %d, want 3 (a, b and c are below the log start)", r.Stats.Deleted)
	}
	expectCount(t, r, PollSkip, 1)
	expectVerdict(t, r, PollSkip, Permitted)

	// The same jump when the log still starts at 0 is a skip over records
	// that exist, and missing records are lost.
	h2 := &hb{}
	for i, v := range []string{"a", "b", "c", "d"} {
		h2.send("p-0", v, 0, int64(i), history.OK)
	}
	h2.poll("c-0", false, rec{0, 0, "a"})
	h2.poll("c-0", false, rec{0, 3, "d"})
	h2.finalFrom(map[string]int64{"t-0": 0}, rec{0, 0, "a"}, rec{0, 1, "b"}, rec{0, 3, "d"})
	r = Check(h2.ops, strict)
	expectCount(t, r, LostAckedWrite, 1) // c
	expectVerdict(t, r, LostAckedWrite, Violation)
	expectVerdict(t, r, PollSkip, Violation)
}

func TestCompactionSupersedesButDoesNotLose(t *testing.T) {
	build := func() *hb {
		h := &hb{}
		h.keyed("p-0", "a", "k1", 0, 0)
		h.keyed("p-0", "b", "k2", 0, 1)
		h.keyed("p-0", "c", "k1", 0, 2) // supersedes a
		h.finalFrom(map[string]int64{"t-0": 0}, rec{0, 2, "c"})
		return h
	}
	compacted := strict
	compacted.Topics = []TopicGuarantees{{Name: "t", ReplicationFactor: 3, MinInsyncReplicas: 2, Compact: true}}
	r := Check(build().ops, compacted)
	// a is superseded by c; b has no later record of k2: it is lost.
	expectCount(t, r, LostAckedWrite, 1)
	if a, _ := r.Anomaly(LostAckedWrite); a.Example.Value != "b" {
		t.Fatalf("the lost record is %q, want b", a.Example.Value)
	}
	if r.Stats.Compacted != 1 || r.Stats.LostAcked != 1 {
		t.Fatalf("compacted %d lost %d, want 1 and 1", r.Stats.Compacted, r.Stats.LostAcked)
	}
	// Without compaction both are lost.
	expectCount(t, Check(build().ops, strict), LostAckedWrite, 2)
}

func TestKeyOrderAcrossPartitions(t *testing.T) {
	build := func() *hb {
		h := &hb{}
		h.keyed("p-0", "a", "k1", 0, 0)
		h.keyed("p-0", "b", "k1", 1, 0) // the key moved to partition 1
		h.poll("c-0", false, rec{1, 0, "b"})
		h.poll("c-0", false, rec{0, 0, "a"}) // read the older one after
		return h
	}
	r := Check(build().ops, strict)
	expectCount(t, r, KeyOrder, 1)
	expectVerdict(t, r, KeyOrder, Violation)

	added := strict
	added.Happened = godview.Scheduled(godview.Fact{Kind: godview.PartitionsAdded, Topic: "t"})
	expectVerdict(t, Check(build().ops, added), KeyOrder, Permitted)

	// In send order, or re-read within one partition, is no finding.
	ok := &hb{}
	ok.keyed("p-0", "a", "k1", 0, 0)
	ok.keyed("p-0", "b", "k1", 1, 0)
	ok.keyed("p-0", "c", "k1", 1, 1)
	ok.poll("c-0", false, rec{0, 0, "a"}, rec{1, 0, "b"}, rec{1, 1, "c"})
	ok.poll("c-0", false, rec{1, 0, "b"}) // a seek back within partition 1
	restart := history.NoValue()
	ok.add("c-0", history.Invoke, history.FRestart, restart)
	ok.poll("c-0", false, rec{0, 0, "a"}, rec{1, 1, "c"}) // a new session, in order again
	expectCount(t, Check(ok.ops, strict), KeyOrder, 0)
}

// A retried acks=1 batch: its first attempt survives at one offset, the
// acknowledged copy at another was lost with its leader, and a later record
// took that offset. Two values at one offset, permitted with acks=1; the
// same history from an acks=all producer is a violation.
func TestLostAcknowledgedCopyAtAReusedOffset(t *testing.T) {
	h := &hb{}
	h.send("p-0", "a", 0, 5, history.OK) // acknowledged at 5 (the retry)
	h.send("p-0", "b", 0, 6, history.OK)
	h.poll("c-0", false, rec{0, 3, "a"}, rec{0, 5, "x"})
	h.finalFrom(map[string]int64{"t-0": 0}, rec{0, 3, "a"}, rec{0, 5, "x"}, rec{0, 6, "b"})
	acks1 := strict
	acks1.Producers = []ProducerGuarantees{{Prefix: "p", Acks: "1", Idempotence: false, MaxInFlight: 5, Retries: 100}}
	r := Check(h.ops, acks1)
	expectCount(t, r, InconsistentOffsets, 1)
	expectVerdict(t, r, InconsistentOffsets, Permitted)
	expectVerdict(t, Check(h.ops, strict), InconsistentOffsets, Violation)
}

// A record superseded by a later one of its key that was committed (read)
// and then lost with the log it stood in (a corrupt batch cut at recovery):
// the cleaner of the replica that lost it had removed the older one first,
// so both are gone (fuzz seed 3004353). The older one was compacted away;
// the later one's loss is judged on its own.
func TestCompactionSupersededByALaterLostRecord(t *testing.T) {
	build := func(readLater bool) *hb {
		h := &hb{}
		h.keyed("p-0", "a", "k1", 0, 0)
		h.keyed("p-0", "b", "k2", 0, 1)
		h.keyed("p-0", "c", "k1", 0, 2) // supersedes a
		if readLater {
			h.poll("c-0", false, rec{0, 0, "a"}, rec{0, 1, "b"}, rec{0, 2, "c"})
		} else {
			h.poll("c-0", false, rec{0, 0, "a"}, rec{0, 1, "b"})
		}
		h.finalFrom(map[string]int64{"t-0": 0}, rec{0, 1, "b"})
		return h
	}
	compacted := strict
	compacted.Topics = []TopicGuarantees{{Name: "t", ReplicationFactor: 3, MinInsyncReplicas: 2, Compact: true}}
	compacted.Happened = godViewLosses(DataLoss{Partition: "t-0", From: 2, To: 3, Cause: "disk-corruption"})
	r := Check(build(true).ops, compacted)
	expectCount(t, r, LostAckedWrite, 1)
	expectVerdict(t, r, LostAckedWrite, Permitted)
	if a, _ := r.Anomaly(LostAckedWrite); a.Example.Value != "c" {
		t.Fatalf("the lost record is %q, want c", a.Example.Value)
	}
	if r.Stats.Compacted != 1 {
		t.Fatalf("compacted %d, want 1 (a)", r.Stats.Compacted)
	}

	// Lost with no loss the god view saw: the later record's loss is the
	// violation; the older one still followed it.
	noLoss := compacted
	noLoss.Happened = godview.Seen()
	r = Check(build(true).ops, noLoss)
	expectCount(t, r, LostAckedWrite, 1)
	expectVerdict(t, r, LostAckedWrite, Violation)

	// A later record nobody read, at an offset no loss covers, need not
	// have been committed: the cleaner could not have removed a for it, and
	// a's loss is a violation of its own.
	r = Check(build(false).ops, noLoss)
	expectCount(t, r, LostAckedWrite, 2)
	expectVerdict(t, r, LostAckedWrite, Violation)

	// Without compaction both are lost.
	expectCount(t, Check(build(true).ops, compacted.withoutCompaction()), LostAckedWrite, 2)
}

func (c Config) withoutCompaction() Config {
	c.Topics = []TopicGuarantees{{Name: "t", ReplicationFactor: 3, MinInsyncReplicas: 2}}
	return c
}

// A deposed leader resumed from a pause appends a queued acks=1 write at its
// own log end and acknowledges it at an offset where a reader had already
// read a committed record (fuzz seed 3008800). With the god view seeing no
// committed data lost there, the offset was not taken again: the late
// acknowledgement came from a log that diverged, and the committed record,
// superseded by a later one of its key, was compacted away, not lost.
func TestLateAcknowledgementAtACommittedOffset(t *testing.T) {
	build := func(readLate bool) *hb {
		h := &hb{}
		h.add("p-0", history.Invoke, history.FSend, keyedValue("z", "k1")) // queued at the paused leader
		h.keyed("p-0", "a", "k1", 0, 5)
		h.poll("c-0", false, rec{0, 5, "a"})
		h.keyed("p-0", "b", "k1", 0, 6) // supersedes a
		v := keyedValue("z", "k1")
		v.Partition, v.Offset = 0, 5
		h.add("p-0", history.OK, history.FSend, v) // the deposed leader's answer
		if readLate {
			h.poll("c-1", false, rec{0, 5, "z"})
		}
		h.finalFrom(map[string]int64{"t-0": 0}, rec{0, 6, "b"})
		return h
	}
	cfg := strict
	cfg.Producers = []ProducerGuarantees{{Prefix: "p", Acks: "1", Idempotence: false, MaxInFlight: 5, Retries: 100}}
	cfg.Topics = []TopicGuarantees{{Name: "t", ReplicationFactor: 3, MinInsyncReplicas: 1, Compact: true}}
	cfg.Happened = godview.Seen()
	r := Check(build(false).ops, cfg)
	expectCount(t, r, LostAckedWrite, 0)
	expectVerdict(t, r, InconsistentOffsets, Permitted)

	// Without the god view nothing says the offset was not reused: a is
	// judged lost.
	noGod := cfg
	noGod.Happened = godview.List{}
	expectCount(t, Check(build(false).ops, noGod), LostAckedWrite, 1)
	// Nor when the god view saw committed data lost there.
	lossy := cfg
	lossy.Happened = godViewLosses(DataLoss{Partition: "t-0", From: 5, To: 6, Cause: "unclean-election"})
	expectCount(t, Check(build(false).ops, lossy), LostAckedWrite, 1)
	// A reader that read the other record at the offset afterwards saw the
	// offset taken again: a was lost, and the run says so.
	r = Check(build(true).ops, cfg)
	expectCount(t, r, LostAckedWrite, 1)
	expectVerdict(t, r, LostAckedWrite, Violation)
}

func keyedValue(value, key string) history.Value {
	v := history.NoValue()
	v.Topic, v.Value, v.Key, v.HasKey = "t", value, key, true
	return v
}
