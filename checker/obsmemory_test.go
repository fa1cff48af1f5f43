package checker

import (
	"testing"

	"kafkasim/history"
)

// Two polls that share their operations' indexes (Check's callers may pass
// such a history) are two reads: each keeps its own records for
// linearizability, where one poll returning both would have skipped a
// record.
func TestReadsOfPollsSharingAnIndexKeepTheirOwnRecords(t *testing.T) {
	build := func(shared bool) []history.Op {
		h := &hb{}
		h.send("p-0", "a", 0, 0, history.OK)
		h.send("p-0", "b", 0, 1, history.OK)
		h.send("p-0", "c", 0, 2, history.OK)
		if !shared {
			h.poll("c-0", false, rec{0, 0, "a"}, rec{0, 2, "c"})
			return h.ops
		}
		h.poll("c-0", false, rec{0, 0, "a"})
		h.poll("c-1", false, rec{0, 2, "c"})
		n := len(h.ops)
		h.ops[n-2].Index, h.ops[n-1].Index = h.ops[n-4].Index, h.ops[n-3].Index
		return h.ops
	}
	r := Check(build(false), strict)
	if _, ok := r.Anomaly(Nonlinearizable); !ok {
		t.Fatalf("one poll returning offsets 0 and 2 but not 1 should not be linearizable:\n%s", r.Summary())
	}
	r = Check(build(true), strict)
	expectCount(t, r, Nonlinearizable, 0)
	if r.Linearizability.Checked != 1 {
		t.Fatalf("%+v\n%s", r.Linearizability, r.Summary())
	}
}

// An observation's process and flags come from its session, or its send:
// a reader that changes isolation within a session has each poll's
// observations say its own.
func TestObservationFlagsAreEachPolls(t *testing.T) {
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.send("p-0", "b", 0, 1, history.OK)
	poll := func(iso string, final bool, recs ...rec) {
		v := history.NoValue()
		v.Final, v.Isolation = final, iso
		h.add("c-0", history.Invoke, history.FPoll, v)
		v.HasRecords = true
		for _, r := range recs {
			v.Records = append(v.Records, history.Record{Topic: "t", Partition: r.p, Offset: r.off, Value: r.v})
		}
		h.add("c-0", history.OK, history.FPoll, v)
	}
	poll(readCommitted, false, rec{0, 0, "a"})
	poll("read_uncommitted", false, rec{0, 1, "b"})
	poll("read_uncommitted", true, rec{0, 0, "a"})
	poll(readCommitted, true, rec{0, 1, "b"})
	a := newAnalyzer(&strict)
	for i := range h.ops {
		a.add(&h.ops[i])
	}
	a.placeAcks()
	a.build()
	po := a.parts[a.partByName("t-0")]
	var obs []observation
	for ob := range po.all() {
		obs = append(obs, *ob)
	}
	// In version order: each offset's acknowledgement (the earliest
	// operation), then its reads.
	want := []uint8{0, obsRead | obsRC, obsRead | obsFinal, 0, obsRead, obsRead | obsFinal | obsRC}
	if len(obs) != len(want) {
		t.Fatalf("%d observations, want %d", len(obs), len(want))
	}
	if obs[1].sess != obs[4].sess || obs[2].sess != obs[5].sess {
		t.Fatalf("the polls should share a session each two: %+v", obs)
	}
	c0, _ := a.proc("c-0")
	p0, _ := a.proc("p-0")
	for i := range obs {
		ob := &obs[i]
		if got := a.obsFlags(ob); got != want[i] {
			t.Errorf("observation %d (%+v): flags %b, want %b", i, *ob, got, want[i])
		}
		proc := c0
		if want[i] == 0 {
			proc = p0
		}
		if got := a.obsProc(ob); got != proc {
			t.Errorf("observation %d: process %d, want %d", i, got, proc)
		}
	}
}
