package sweep

import (
	"testing"

	"kafkasim/scenarios"
)

// The aggregated data obey the shapes Kafka's design implies, under the same
// faults (the same seeds draw the same nemesis): acks=1 loses at least as
// much as acks=all; min.insync.replicas=2 accepts no more writes than 1;
// flushing every message loses nothing to power loss.
func TestSweepShapesFollowKafkasDesign(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two small sweeps")
	}
	load := func(name string, axes ...scenarios.SweepAxis) *scenarios.SweepFile {
		sw, err := scenarios.LoadSweepFile("../sweeps/durability-vs-availability.yaml")
		if err != nil {
			t.Fatal(err)
		}
		sw.Name, sw.Axes = name, axes
		return sw
	}
	cellOf := func(res *Result, values map[string]string) Cell {
		for _, c := range res.Cells {
			match := true
			for k, v := range values {
				match = match && c.Values[k] == v
			}
			if match {
				return c
			}
		}
		t.Fatalf("no cell %v", values)
		return Cell{}
	}
	lost := func(c Cell) float64 { return c.Metrics["lost-acked-fraction"].Mean }
	avail := func(c Cell) float64 { return c.Metrics["availability"].Mean }

	// Crashes and partitions, no power loss: acks and min ISR.
	sw := load("shapes-acks", scenarios.SweepAxis{Name: "acks", Values: []string{"1", "all"}},
		scenarios.SweepAxis{Name: "min.insync.replicas", Values: []string{"1", "2"}})
	base := *sw.Base
	base.Nemesis = base.Nemesis[:2] // crash and partition rules only
	sw.Base = &base
	out := t.TempDir()
	res, err := Run(sw, Options{Seeds: 4, Parallel: 2, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"1", "2"} {
		a1 := cellOf(res, map[string]string{"acks": "1", "min.insync.replicas": m})
		aAll := cellOf(res, map[string]string{"acks": "all", "min.insync.replicas": m})
		if lost(a1) < lost(aAll) {
			t.Errorf("min ISR %s: acks=1 lost %.4f < acks=all %.4f", m, lost(a1), lost(aAll))
		}
		if lost(aAll) != 0 {
			t.Errorf("min ISR %s: acks=all lost %.4f without any power loss", m, lost(aAll))
		}
	}
	// Availability is a mean over seeds, so the claim is statistical: min
	// ISR 2 must not be significantly more available than min ISR 1 — its
	// 95% interval must not lie wholly above min ISR 1's. (When no fault
	// leaves a single replica in the ISR the two are equal in expectation,
	// and a point comparison would only test the noise.)
	if m1, m2 := cellOf(res, map[string]string{"acks": "all", "min.insync.replicas": "1"}),
		cellOf(res, map[string]string{"acks": "all", "min.insync.replicas": "2"}); m2.Metrics["availability"].Lo > m1.Metrics["availability"].Hi+1e-9 {
		t.Errorf("min ISR 2 accepted %.4f [%.4f, %.4f], significantly more than min ISR 1 %.4f [%.4f, %.4f]",
			avail(m2), m2.Metrics["availability"].Lo, m2.Metrics["availability"].Hi,
			avail(m1), m1.Metrics["availability"].Lo, m1.Metrics["availability"].Hi)
	}
	// Resuming: a second run finds every record and runs nothing.
	again, err := Run(sw, Options{Seeds: 4, Parallel: 2, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if again.Runs != 0 || again.Resumed != 16 {
		t.Fatalf("resume: %d runs, %d resumed; want 0 and 16", again.Runs, again.Resumed)
	}

	// Rack power loss: the flush policy.
	never, every := "9223372036854775807", "1"
	sw = load("shapes-flush", scenarios.SweepAxis{Name: "log.flush.interval.messages", Values: []string{never, every}})
	res, err = Run(sw, Options{Seeds: 3, Parallel: 2, Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if c := cellOf(res, map[string]string{"log.flush.interval.messages": every}); lost(c) != 0 {
		t.Errorf("flush every message: lost %.4f of acknowledged writes to power loss", lost(c))
	}
	if c := cellOf(res, map[string]string{"log.flush.interval.messages": never}); lost(c) == 0 {
		t.Errorf("default flush policy: nothing lost, so the power losses did not bite")
	}
}
