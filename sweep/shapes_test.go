package sweep

import (
	"math"
	"testing"
)

// The bundled durability sweep's base teaches a lesson along every axis, and
// its plot titles state them; the data must show each one on the sweep's
// first seeds (the same seeds draw the same faults in every cell):
//
//   - acks=all with min.insync.replicas=2, ELR on and unclean election off
//     loses nothing, flushed or not;
//   - ELR off loses acknowledged writes (the last replica's page cache),
//     unless every message is flushed;
//   - min.insync.replicas=1 loses them too, unless every message is
//     flushed, and accepts significantly more writes than 2;
//   - unclean election loses writes even when every message is flushed;
//   - acks=1 loses writes even when every message is flushed.
func TestSweepShapesFollowKafkasDesign(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two small sweeps")
	}
	const never, every = "9223372036854775807", "1"
	load := func(name string, fixed map[string]string, axes ...Axis) *File {
		sw, err := Load("../sweeps/durability-vs-availability.yaml")
		if err != nil {
			t.Fatal(err)
		}
		base := copyScenario(sw.Base)
		for _, k := range []string{"acks", "min.insync.replicas", "unclean.leader.election.enable",
			"eligible.leader.replicas.enable", "log.flush.interval.messages"} {
			if v, ok := fixed[k]; ok {
				if err := base.Apply(k, v); err != nil {
					t.Fatal(err)
				}
			}
		}
		sw.Name, sw.Base, sw.Axes, sw.Plots = name, base, axes, nil
		return sw
	}
	run := func(sw *File) *Result {
		res, err := Run(sw, Options{Seeds: 5, Parallel: 2, Out: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		return res
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
	lost := func(c Cell) float64 { return c.Metrics["lost-acked"].Mean }

	res := run(load("shapes-acks-all", map[string]string{"acks": "all", "unclean.leader.election.enable": "false"},
		Axis{Name: "min.insync.replicas", Values: []string{"1", "2"}},
		Axis{Name: "eligible.leader.replicas.enable", Values: []string{"true", "false"}},
		Axis{Name: "log.flush.interval.messages", Values: []string{never, every}}))
	cell := func(isr, elr, flush string) Cell {
		return cellOf(res, map[string]string{"min.insync.replicas": isr, "eligible.leader.replicas.enable": elr, "log.flush.interval.messages": flush})
	}
	for _, flush := range []string{never, every} {
		if c := cell("2", "true", flush); lost(c) != 0 {
			t.Errorf("acks=all, min ISR 2, ELR on, flush %s: lost %v acknowledged writes", flush, lost(c))
		}
		for _, c := range []Cell{cell("2", "false", flush), cell("1", "true", flush)} {
			if flush == every && lost(c) != 0 {
				t.Errorf("%s: lost %v acknowledged writes although every message is flushed", c.ID, lost(c))
			}
			if flush == never && lost(c) == 0 {
				t.Errorf("%s: lost nothing: the base never reaches the last replica standing", c.ID)
			}
		}
	}
	// Every cell meets the same faults seed by seed, so availability is
	// compared seed by seed: min ISR 1 minus min ISR 2, whose mean's 95%
	// interval must lie wholly above 0.
	if lo, mean, hi := pairedDifference(t, res, cell("1", "true", never), cell("2", "true", never), "availability"); lo <= 0 {
		t.Errorf("min ISR 2 accepted %.3f less than min ISR 1 [%.3f, %.3f], seed by seed: not significantly less", mean, lo, hi)
	}

	res = run(load("shapes-flushed", map[string]string{"min.insync.replicas": "2", "eligible.leader.replicas.enable": "true",
		"log.flush.interval.messages": every},
		Axis{Name: "acks", Values: []string{"1", "all"}},
		Axis{Name: "unclean.leader.election.enable", Values: []string{"false", "true"}}))
	for _, c := range res.Cells {
		safe := c.Values["acks"] == "all" && c.Values["unclean.leader.election.enable"] == "false"
		if safe != (lost(c) == 0) {
			t.Errorf("flushed, min ISR 2, ELR on, %s: lost %v acknowledged writes", c.ID, lost(c))
		}
	}
}

// pairedDifference is the mean of a's metric less b's over the seeds both
// ran, with its 95% interval (Student's t).
func pairedDifference(t *testing.T, res *Result, a, b Cell, metric string) (lo, mean, hi float64) {
	t.Helper()
	bySeed := map[uint64]float64{}
	for _, r := range res.Records[b.ID] {
		bySeed[r.Seed] = r.Metrics[metric]
	}
	var diffs []float64
	for _, r := range res.Records[a.ID] {
		if v, ok := bySeed[r.Seed]; ok {
			diffs = append(diffs, r.Metrics[metric]-v)
		}
	}
	if len(diffs) < 2 {
		t.Fatalf("%d paired runs of %s and %s", len(diffs), a.ID, b.ID)
	}
	n := float64(len(diffs))
	for _, d := range diffs {
		mean += d / n
	}
	var ss float64
	for _, d := range diffs {
		ss += (d - mean) * (d - mean)
	}
	// t quantiles (0.975) for 1..9 degrees of freedom; 2 beyond.
	tq := []float64{12.71, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262}
	q := 2.0
	if df := len(diffs) - 1; df <= len(tq) {
		q = tq[df-1]
	}
	half := q * math.Sqrt(ss/(n-1)/n)
	return mean - half, mean, mean + half
}
