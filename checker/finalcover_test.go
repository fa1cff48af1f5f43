package checker

import (
	"strings"
	"testing"

	"kafkasim/history"
)

// finalTo is a final poll of t-0 that says how far it read (positions) and,
// when end >= 0, the end offset it reads to (end_offsets).
func (h *hb) finalTo(position, end int64, recs ...rec) {
	v := history.NoValue()
	v.Final = true
	h.add("final-0", history.Invoke, history.FPoll, v)
	v.HasRecords = true
	x := v.X()
	x.LogStartOffsets = map[string]int64{"t-0": 0}
	if position >= 0 {
		x.Positions = map[string]int64{"t-0": position}
	}
	if end >= 0 {
		x.EndOffsets = map[string]int64{"t-0": end}
	}
	for _, r := range recs {
		v.Records = append(v.Records, history.Record{Topic: "t", Partition: r.p, Offset: r.off, Value: r.v})
	}
	h.add("final-0", history.OK, history.FPoll, v)
}

// unseenDetails are the details of the unseen findings' examples.
func unseenDetails(r *Report) string {
	a, ok := r.Anomaly(Unseen)
	if !ok {
		return ""
	}
	var ds []string
	for _, e := range a.Examples {
		ds = append(ds, e.Detail)
	}
	return strings.Join(ds, "\n")
}

// Final reads that reached the partition's end (their position at its end
// offset) judge every acknowledged write: one missing below where they got
// to is lost, and so is one acknowledged before they began above their end
// (a truncation took it).
func TestFinalReadsThatReachedTheEndJudgeWhatIsMissing(t *testing.T) {
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.send("p-0", "b", 0, 1, history.OK)
	h.send("p-0", "c", 0, 2, history.OK)
	h.finalTo(3, 3, rec{0, 0, "a"}, rec{0, 2, "c"})
	r := Check(h.ops, strict)
	expectCount(t, r, LostAckedWrite, 1)
	expectVerdict(t, r, LostAckedWrite, Violation)
	if a, _ := r.Anomaly(LostAckedWrite); a.Example.Value != "b" {
		t.Fatalf("want b lost, got %+v", a.Example)
	}

	h = &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.send("p-0", "b", 0, 1, history.OK)
	h.send("p-0", "c", 0, 5, history.OK)
	h.finalTo(-1, 2) // the end first, then the poll that reached it
	h.finalTo(2, -1, rec{0, 0, "a"}, rec{0, 1, "b"})
	r = Check(h.ops, strict)
	expectCount(t, r, LostAckedWrite, 1)
	if a, _ := r.Anomaly(LostAckedWrite); a.Example.Value != "c" {
		t.Fatalf("want c (above the end the final reads reached) lost, got %+v", a.Example)
	}
}

// A final reader that stopped short of a partition's end (starved of its
// leader, or a run that ended first) judges only the offsets below its
// position: a write missing there is lost, one at or above it is not judged
// (unseen, saying why), whatever the final polls' log start offsets or
// records name.
func TestFinalReadsThatStoppedShortJudgeOnlyBelowWhereTheyGot(t *testing.T) {
	build := func() *hb {
		h := &hb{}
		h.send("p-0", "a", 0, 0, history.OK)
		h.send("p-0", "b", 0, 1, history.OK)
		h.send("p-0", "c", 0, 2, history.OK)
		h.send("p-0", "d", 0, 3, history.OK)
		return h
	}
	h := build()
	h.finalTo(1, 4, rec{0, 0, "a"})
	r := Check(h.ops, strict)
	expectCount(t, r, LostAckedWrite, 0)
	expectCount(t, r, Unseen, 3)
	if r.Violations != 0 {
		t.Fatalf("no violation, got\n%s", r.Summary())
	}
	if d := unseenDetails(r); !strings.Contains(d, "not judged by the final reads: they stopped at offset 1 of t-0, short of its end") {
		t.Fatalf("unseen should say the final reads stopped short, got\n%s", d)
	}

	// An empty final poll that never learned the end: nothing judged.
	h = build()
	h.finalTo(0, -1)
	r = Check(h.ops, strict)
	expectCount(t, r, LostAckedWrite, 0)
	expectCount(t, r, Unseen, 4)

	// Missing below where they got to: lost.
	h = build()
	h.finalTo(3, 4, rec{0, 0, "a"}, rec{0, 2, "c"})
	r = Check(h.ops, strict)
	expectCount(t, r, LostAckedWrite, 1)
	expectVerdict(t, r, LostAckedWrite, Violation)
	if a, _ := r.Anomaly(LostAckedWrite); a.Example.Value != "b" {
		t.Fatalf("want b lost, got %+v", a.Example)
	}
	expectCount(t, r, Unseen, 1) // d, at offset 3, not reached
}

// A history without positions or end offsets (an older one) is checked as
// before: a final poll covers the partitions it names, so the same starved
// final reader makes what it did not read lost; a write acknowledged after
// the final reads began, beyond their end, is still unseen.
func TestFinalReadsWithoutPositionsCoverWhatTheyName(t *testing.T) {
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.send("p-0", "b", 0, 1, history.OK)
	h.finalFrom(map[string]int64{"t-0": 0}, rec{0, 0, "a"})
	h.send("p-0", "c", 0, 2, history.OK)
	r := Check(h.ops, strict)
	expectCount(t, r, LostAckedWrite, 1)
	if a, _ := r.Anomaly(LostAckedWrite); a.Example.Value != "b" {
		t.Fatalf("want b lost, got %+v", a.Example)
	}
	expectCount(t, r, Unseen, 1)

	// An empty final poll without an assignment, in a history of one
	// topic, covers everything.
	h = &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.poll("final-0", true)
	expectCount(t, Check(h.ops, strict), LostAckedWrite, 1)
}

// acks=0 sends have no offset: only final reads that reached their
// partition's end judge them.
func TestAcksZeroSendsAreJudgedOnlyByFinalReadsThatReachedTheEnd(t *testing.T) {
	cfg := strict
	cfg.Producers = []ProducerGuarantees{{Prefix: "p", Acks: "0"}}
	build := func() *hb {
		h := &hb{}
		for _, v := range []string{"a", "b"} {
			s := history.NoValue()
			s.Topic, s.Value = "t", v
			h.add("p-0", history.Invoke, history.FSend, s)
			s.Partition = 0
			h.add("p-0", history.Info, history.FSend, s)
		}
		return h
	}
	h := build()
	h.finalTo(1, 2, rec{0, 0, "a"})
	expectCount(t, Check(h.ops, cfg), LostAckedWrite, 0)
	h = build()
	h.finalTo(1, 1, rec{0, 0, "a"})
	expectCount(t, Check(h.ops, cfg), LostAckedWrite, 1)
}

// A final reader that says it records how far it got, but never learned a
// position (the partition's leader is gone: its final polls come back
// empty, the first with an empty positions), covers nothing: its writes are
// unseen. The same empty polls without the field cover everything, as an
// older history's do, and the writes are lost.
func TestEmptyFinalPollsThatSayNothingOfPositionsJudgeNothing(t *testing.T) {
	for _, announced := range []bool{true, false} {
		h := &hb{}
		h.send("p-0", "a", 0, 0, history.OK)
		h.send("p-0", "b", 0, 1, history.OK)
		v := history.NoValue()
		v.Final = true
		h.add("final-0", history.Invoke, history.FPoll, v)
		v.HasRecords = true
		if announced {
			v.X().Positions = map[string]int64{}
		}
		h.add("final-0", history.OK, history.FPoll, v)
		r := Check(h.ops, strict)
		if announced {
			expectCount(t, r, LostAckedWrite, 0)
			expectCount(t, r, Unseen, 2)
		} else {
			expectCount(t, r, LostAckedWrite, 2)
		}
	}
}
