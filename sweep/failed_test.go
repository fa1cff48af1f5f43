package sweep

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"kafkasim/runner"
	"kafkasim/scenarios"
)

// A run whose expectations fail is reported with its cell, seed, verdict and
// headline, in the result, summary.json and index.html, and its scenario is
// written where the report says: running that file replays the run (the
// same trace). Before, such a sweep said only how many runs it made.
func TestFailedRunsAreReportedAndReplayable(t *testing.T) {
	// batch-compression expects the batched producer under 40 bytes per
	// record: without compression it fails.
	sw := smallSweep(t, "failing", "compression.type", "gzip", "none")
	res, err := Run(sw, Options{Parallel: 1, Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failed) != 1 {
		t.Fatalf("failed runs = %+v, want the compression.type=none run", res.Failed)
	}
	f := res.Failed[0]
	if f.Cell != "compression.type=none" || f.Seed != 1 || f.Verdict != runner.Fail || f.Values["compression.type"] != "none" ||
		!strings.Contains(f.Headline, "expectation failed — bytes-per-record(batched): want <40, got") {
		t.Fatalf("failed run = %+v", f)
	}
	if c := res.Cells[1]; c.Failed != 1 || res.Cells[0].Failed != 0 {
		t.Errorf("cells' failed counts = %d, %d; want 0, 1", res.Cells[0].Failed, c.Failed)
	}

	// The scenario replays the run.
	path := filepath.Join(res.Dir, filepath.FromSlash(f.Scenario))
	s, err := scenarios.LoadFile(path)
	if err != nil {
		t.Fatalf("the failed run's scenario does not load: %v", err)
	}
	if s.Seed != f.Seed || !strings.Contains(s.Description, "compression.type=none") {
		t.Errorf("scenario seed %d, description %q", s.Seed, s.Description)
	}
	r, err := runner.Run(s, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec := res.Records[f.Cell][0]
	if got := fmt.Sprintf("%016x", r.TraceHash); got != rec.TraceHash || r.Verdict != runner.Fail {
		t.Errorf("replay: trace %s, verdict %s; the sweep's run had %s, %s", got, r.Verdict, rec.TraceHash, rec.Verdict)
	}
	// A passing run leaves no scenario behind.
	if _, err := os.Stat(filepath.Join(res.Dir, "runs", "compression.type=gzip", "seed-1.yaml")); !os.IsNotExist(err) {
		t.Errorf("a passing run's scenario was written: %v", err)
	}

	sum, err := Report(res, []PlotSpec{{Kind: "lines", X: "compression.type", Y: "bytes-per-record"}}, Info{Name: sw.Name})
	if err != nil {
		t.Fatal(err)
	}
	if sum.ExitCode != 1 || sum.Runs.Failed != 1 || sum.Runs.Passed != 1 || sum.Runs.Finished != 2 || sum.Runs.Planned != 2 ||
		len(sum.FailedRuns) != 1 || !reflect.DeepEqual(sum.FailedRuns[0], f) {
		t.Errorf("summary = %+v", sum)
	}
	data, err := os.ReadFile(filepath.Join(res.Dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(data, &back); err != nil || back.ExitCode != 1 || len(back.FailedRuns) != 1 ||
		back.FailedRuns[0].Scenario != f.Scenario || len(back.CellResults) != 2 {
		t.Errorf("summary.json (%v):\n%s", err, data)
	}
	page, err := os.ReadFile(filepath.Join(res.Dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`<section id="failed">`, "1 run of 2 did not pass", "bytes-per-record(batched): want &lt;40",
		`<a href="runs/compression.type=none/seed-1.yaml">`} {
		if !strings.Contains(string(page), w) {
			t.Errorf("index.html lacks %q", w)
		}
	}

	// The same cell passing later (the expectation dropped) removes the
	// scenario of its earlier failure.
	base := copyScenario(sw.Base)
	base.Expect = nil
	sw.Base = base
	again, err := Run(sw, Options{Parallel: 1, Out: filepath.Dir(res.Dir)})
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Failed) != 0 || again.Runs != 2 {
		t.Fatalf("without the expectation: %d failed, %d runs", len(again.Failed), again.Runs)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("the scenario of a run that now passes is still there: %v", err)
	}
}

// A metric that an axis moves in no run gets a note: the plot of it along
// that axis shows nothing (compression.type moves bytes, not time).
func TestInertNotes(t *testing.T) {
	sw := smallSweep(t, "inert", "compression.type", "gzip", "none")
	base := copyScenario(sw.Base)
	base.Expect = nil
	sw.Base = base
	res, err := Run(sw, Options{Parallel: 1, Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	notes := InertNotes(res, []PlotSpec{
		{Kind: "lines", X: "compression.type", Y: "p99-produce-latency-ms"},
		{Kind: "lines", X: "compression.type", Y: "bytes-per-record"},
		{Kind: "heatmap", X: "compression.type", Y: "compression.type", Z: "p99-produce-latency-ms"},
	})
	if len(notes) != 1 || !strings.Contains(notes[0], "lines-p99-produce-latency-ms-vs-compression-type: compression.type does not move p99-produce-latency-ms in any run") {
		t.Fatalf("notes = %q", notes)
	}
}
