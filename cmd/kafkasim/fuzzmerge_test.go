package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"kafkasim/fuzz"
)

// writeShard writes a shard's fuzz output as 'kafkasim fuzz --shard K/N'
// leaves it: summary.json and, for each failing seed, its two files.
func writeShard(t *testing.T, dir string, k, n int, seedStart uint64, failing ...uint64) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sum := fuzz.Summary{Runs: 4, Failures: len(failing), WallNs: int64(1+k) * 1e9, RunsPerSecond: 4 / float64(1+k), RunsPerSecondPerCore: 4 / float64(1+k),
		CPUNs: 2e9, RunsPerCPUSecond: 2, Parallel: 1, Shard: strconv.Itoa(k) + "/" + strconv.Itoa(n), SeedStart: seedStart,
		Bugs: []string{"hw-truncation"}, GroupPercent: 30, TimeToFirstFailureNs: -1, Found: []fuzz.Found{}, Events: 1000, SimTimeNs: 4e9}
	for _, s := range failing {
		name := "seed-" + strconv.FormatUint(s, 10)
		f := fuzz.Found{Seed: s, Failure: &fuzz.Failure{Kind: "violation", What: []string{"committed-data-kept"}, Detail: "committed-data-kept at 1s"},
			File: "runs/fuzz/" + name + ".yaml", Original: "runs/fuzz/" + name + ".drawn.yaml", Replays: true, ReplayChecked: true}
		sum.Found = append(sum.Found, f)
		sum.TimeToFirstFailureNs = 5e8
		for _, file := range []string{f.File, f.Original} {
			body := "# kafkasim fuzz counterexample: violation failure\n# committed-data-kept at 1s\n# Replay: kafkasim run " + file + "\nname: x\n"
			os.WriteFile(filepath.Join(dir, filepath.Base(file)), []byte(body), 0o644)
		}
	}
	data, _ := json.Marshal(sum)
	if err := os.WriteFile(filepath.Join(dir, "summary.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// fuzz merge joins every shard of N into one summary and one folder of
// counterexamples, and exits 1 since the campaign found failures.
func TestFuzzMergeJoinsShards(t *testing.T) {
	root := t.TempDir()
	a := writeShard(t, filepath.Join(root, "a"), 0, 2, 1, 3)
	b := writeShard(t, filepath.Join(root, "b"), 1, 2, 1, 2, 6)
	out := filepath.Join(root, "merged")
	code, stdout, stderr := kafkasim(t, "fuzz", "merge", a, b, "--out", out)
	if code != 1 || !strings.Contains(stderr, "3 failures") {
		t.Fatalf("exit %d, want 1: %s %s", code, stdout, stderr)
	}
	var sum fuzz.Summary
	raw, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	if err := json.Unmarshal(raw, &sum); err != nil {
		t.Fatal(err)
	}
	if sum.Runs != 8 || sum.Failures != 3 || sum.WallNs != 2e9 || sum.CPUNs != 4e9 || sum.Shard != "0..1/2" || sum.Events != 2000 ||
		len(sum.Found) != 1 || sum.Found[0].Seed != 2 || sum.Found[0].Shared != 3 || sum.RunsPerSecond != 4 || sum.RunsPerSecondPerCore != 2 {
		t.Fatalf("merged summary: %s", raw)
	}
	for _, s := range []string{"2", "3", "6"} {
		if _, err := os.Stat(filepath.Join(out, "seed-"+s+".yaml")); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(stdout, "3 seeds share its signature (violation: committed-data-kept): 2, 3, 6") {
		t.Fatalf("stdout: %s", stdout)
	}
}

// fuzz merge refuses, in one line with exit 2 and writing nothing, what is
// not one campaign's shards, each once and all of them (unless --partial).
func TestFuzzMergeRefuses(t *testing.T) {
	root := t.TempDir()
	s0 := writeShard(t, filepath.Join(root, "s0"), 0, 3, 1, 3)
	s1 := writeShard(t, filepath.Join(root, "s1"), 1, 3, 1)
	s2 := writeShard(t, filepath.Join(root, "s2"), 2, 3, 1)
	again := writeShard(t, filepath.Join(root, "again"), 1, 3, 1)
	other := writeShard(t, filepath.Join(root, "other"), 2, 3, 101)
	ofFour := writeShard(t, filepath.Join(root, "four"), 2, 4, 1)
	empty := filepath.Join(root, "empty")
	os.MkdirAll(empty, 0o755)
	broken := filepath.Join(root, "broken")
	os.MkdirAll(broken, 0o755)
	os.WriteFile(filepath.Join(broken, "summary.json"), []byte(`{"runs": 3,`), 0o644)
	lost := writeShard(t, filepath.Join(root, "lost"), 2, 3, 1, 5)
	os.Remove(filepath.Join(lost, "seed-5.yaml"))
	for _, c := range []struct {
		name string
		dirs []string
		want string
	}{
		{"no summary", []string{s0, s1, empty}, empty + ": no summary.json"},
		{"summary does not parse", []string{s0, s1, broken}, filepath.Join(broken, "summary.json") + ": does not parse"},
		{"seed_start differs", []string{s0, s1, other}, "the shards disagree on seed_start: \"1\" in " + s0 + ", \"101\" in " + other},
		{"shard count differs", []string{s0, s1, ofFour}, "the shards disagree on the shard count N: \"3\" in " + s0 + ", \"4\" in " + ofFour},
		{"shard twice", []string{s0, s1, again, s2}, "shard 1/3 appears twice: in " + s1 + " and in " + again},
		{"shard missing", []string{s0, s2}, "shard 1/3 missing (merge every shard, or pass --partial)"},
		{"counterexample missing", []string{s0, s1, lost}, lost + ": counterexample seed-5.yaml of seed 5 is missing"},
	} {
		out := filepath.Join(root, "out")
		code, stdout, stderr := kafkasim(t, append([]string{"fuzz", "merge", "--out", out}, c.dirs...)...)
		if code != 2 || stderr != "kafkasim: "+strings.SplitN(stderr, ": ", 2)[1] || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", c.name, code, stdout, stderr, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s: %s was written", c.name, out)
		}
	}
	// --partial merges what there is, and says which shards it holds.
	out := filepath.Join(root, "partial")
	code, stdout, stderr := kafkasim(t, "fuzz", "merge", "--partial", "--json", "--out", out, s2, s0)
	var sum fuzz.Summary
	if err := json.Unmarshal([]byte(stdout), &sum); code != 1 || err != nil || sum.Shard != "0,2/3" || sum.Runs != 8 {
		t.Fatalf("--partial: exit %d (%v) %s %s", code, err, stdout, stderr)
	}
	// The merged folder is never one of the shards'.
	if code, _, stderr := kafkasim(t, "fuzz", "merge", "--out", s0, s0, s1, s2); code != 2 || !strings.Contains(stderr, "is one of the shards' folders") {
		t.Fatalf("--out a shard's folder: exit %d %s", code, stderr)
	}
}

// A pattern no shell expanded (a Kubernetes Job's args, a distroless image)
// is expanded by fuzz merge itself; one that matches nothing is refused by
// its name.
func TestFuzzMergeExpandsUnexpandedPattern(t *testing.T) {
	root := t.TempDir()
	for k := range 3 {
		writeShard(t, filepath.Join(root, "shard-"+strconv.Itoa(k)), k, 3, 1)
	}
	out := filepath.Join(root, "merged")
	code, stdout, stderr := kafkasim(t, "fuzz", "merge", filepath.Join(root, "shard-*"), "--out", out)
	if code != 0 || !strings.Contains(stdout, "merged 3 shards (0..2/3)") {
		t.Fatalf("exit %d, want 0 and 3 shards merged: %s %s", code, stdout, stderr)
	}
	none := filepath.Join(root, "nothing-*")
	code, _, stderr = kafkasim(t, "fuzz", "merge", none, "--out", filepath.Join(root, "merged2"))
	if code != 2 || !strings.Contains(stderr, none) {
		t.Fatalf("exit %d, want 2 naming %s: %s", code, none, stderr)
	}
}
