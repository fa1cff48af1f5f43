package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A sweep whose runs fail their expectations says which (cell, seed,
// verdict, headline, the file that replays it) and exits 1; --json prints
// the summary instead; counts read "1 cell", "1 seed". Before, it printed
// "2 cells × 1 seeds: 2 runs now" and exited 0.
func TestSweepReportsFailedRuns(t *testing.T) {
	dir := t.TempDir()
	base, err := filepath.Abs("../../scenarios/batch-compression.yaml")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "failing.yaml")
	os.WriteFile(file, []byte("name: failing\nbase: "+base+"\nseeds: 1\naxes:\n  compression.type: [gzip, none]\n"+
		"plots:\n  - { kind: lines, x: compression.type, y: bytes-per-record }\n"), 0o644)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := kafkasim(t, "sweep", file, "--quiet", "--out", out)
	if code != 1 {
		t.Fatalf("exit %d, want 1: %s %s", code, stdout, stderr)
	}
	scenario := filepath.Join(out, "failing", "runs", "compression.type=none", "seed-1.yaml")
	for _, w := range []string{
		"sweep failing: 2 cells × 1 seed: 2 runs now, 0 resumed; 1 passed, 1 failed\n",
		"  fail: cell compression.type=none, seed 1: expectation failed — bytes-per-record(batched): want <40, got",
		"    replay: kafkasim run " + scenario + "\n",
		"/{runs.csv,cells.csv,summary.json,index.html} and 1 plot\n",
	} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, stdout)
		}
	}
	if !strings.Contains(stderr, "1 run of 2 did not pass") {
		t.Errorf("stderr %q", stderr)
	}
	// The replay file runs as a scenario, and fails the same way.
	if code, stdout, _ := kafkasim(t, "run", scenario, "--quiet", "--out", filepath.Join(dir, "replay")); code != 1 ||
		!strings.Contains(stdout, "bytes-per-record(batched)") {
		t.Errorf("replaying the failed run: exit %d\n%s", code, stdout)
	}

	code, stdout, _ = kafkasim(t, "sweep", file, "--quiet", "--out", out, "--json")
	var sum struct {
		Sweep    string `json:"sweep"`
		ExitCode int    `json:"exit_code"`
		Runs     struct {
			Resumed, Passed, Failed int
		} `json:"runs"`
		FailedRuns []struct {
			Cell, Verdict, Headline, Scenario string
			Seed                              uint64
		} `json:"failed_runs"`
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("--json: %v\n%s", err, stdout)
	}
	if code != 1 || sum.Sweep != "failing" || sum.ExitCode != 1 || sum.Runs.Resumed != 2 || sum.Runs.Failed != 1 ||
		len(sum.FailedRuns) != 1 || sum.FailedRuns[0].Scenario != "runs/compression.type=none/seed-1.yaml" {
		t.Errorf("--json: exit %d, %+v", code, sum)
	}

	// Every run passing: exit 0.
	os.WriteFile(file, []byte("name: passing\nbase: "+base+"\nseeds: 1\naxes:\n  compression.type: [gzip]\n"), 0o644)
	if code, stdout, stderr := kafkasim(t, "sweep", file, "--quiet", "--out", out); code != 0 ||
		!strings.Contains(stdout, "1 cell × 1 seed: 1 run now, 0 resumed; 1 passed\n") {
		t.Errorf("passing sweep: exit %d\n%s%s", code, stdout, stderr)
	}
}
