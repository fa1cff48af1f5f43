package sweep

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"kafkasim/scenarios"
)

// A seed-offset axis moves the seeds a cell runs (the worker used to run
// every cell at the base's seeds), and every anomaly type's count is a
// metric of every cell — zero where it never happened — so a plot of one
// that never happened draws zeros instead of failing.
func TestSeedOffsetAndZeroAnomalyCounts(t *testing.T) {
	sw := smallSweep(t, "offset", "seed-offset", "0", "100")
	out := t.TempDir()
	res, err := Run(sw, Options{Parallel: 1, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(res.Dir, "runs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 3 {
		t.Fatalf("runs.csv:\n%s", data)
	}
	head := strings.Split(lines[0], ",")
	col := func(name string) int {
		for i, h := range head {
			if h == name {
				return i
			}
		}
		t.Fatalf("runs.csv has no column %q: %s", name, lines[0])
		return -1
	}
	a, b := strings.Split(lines[1], ","), strings.Split(lines[2], ",")
	if a[col("seed")] == b[col("seed")] || a[col("trace_hash")] == b[col("trace_hash")] {
		t.Fatalf("seed-offset 0 and 100 ran the same seed:\n%s", data)
	}
	// A sweep without a consumer group has no group metric: its files
	// stay as they were before groups existed.
	for _, m := range GroupMetrics {
		if strings.Contains(lines[0], ","+m+",") {
			t.Fatalf("runs.csv of a sweep without a group has %s: %s", m, lines[0])
		}
	}
	if a[col("nonmonotonic-send")] != "0" {
		t.Fatalf("nonmonotonic-send = %q, want 0", a[col("nonmonotonic-send")])
	}
	// Measured from the run's history: acknowledged sends took time.
	for _, row := range [][]string{a, b} {
		if p99, err := strconv.ParseFloat(row[col("p99-produce-latency-ms")], 64); err != nil || p99 <= 0 {
			t.Fatalf("p99-produce-latency-ms = %q, want a positive latency:\n%s", row[col("p99-produce-latency-ms")], data)
		}
	}
	if _, err := WritePlots(res.Dir, res.Axes, res.Cells, []PlotSpec{{Kind: "lines", X: "seed-offset", Y: "nonmonotonic-send"}}); err != nil {
		t.Fatalf("a plot of a count that is zero everywhere: %v", err)
	}
}

// A resumed sweep reuses a run's record only while its cell's scenario is
// the one that run ran: change the base and the cells run again.
func TestResumeRerunsChangedCells(t *testing.T) {
	sw := smallSweep(t, "resume", "compression.type", "none", "gzip")
	out := t.TempDir()
	if _, err := Run(sw, Options{Parallel: 1, Out: out}); err != nil {
		t.Fatal(err)
	}
	again, err := Run(sw, Options{Parallel: 1, Out: out})
	if err != nil || again.Runs != 0 || again.Resumed != 2 {
		t.Fatalf("unchanged: %d runs, %d resumed (%v); want 0 and 2", again.Runs, again.Resumed, err)
	}
	changed := *sw.Base
	changed.Producers = append([]scenarios.Producer{}, sw.Base.Producers...)
	changed.Producers[0].Rate *= 2
	sw.Base = &changed
	third, err := Run(sw, Options{Parallel: 1, Out: out})
	if err != nil || third.Runs != 2 || third.Resumed != 0 {
		t.Fatalf("base changed: %d runs, %d resumed (%v); want 2 and 0", third.Runs, third.Resumed, err)
	}
}

// smallSweep is a sweep of one axis over the smallest bundled scenario, one
// seed per cell.
func smallSweep(t *testing.T, name, axis string, values ...string) *File {
	t.Helper()
	base, err := scenarios.LoadFile("../scenarios/batch-compression.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return &File{Name: name, Base: base, Seeds: 1, Axes: []Axis{{Name: axis, Values: values}}}
}
