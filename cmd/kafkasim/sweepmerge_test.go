package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A bad --shard exits 2 with one line naming it, before anything is written.
func TestSweepShardFlag(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	for _, shard := range []string{"3/3", "-1/3", "1", "a/b", "0/0", "1/2/3", "/2", "2/"} {
		code, stdout, stderr := kafkasim(t, "sweep", "../../docs/examples/acks-sweep.yaml", "--quiet", "--out", out, "--shard", shard)
		if code != 2 || stdout != "" || stderr != "kafkasim: --shard \""+shard+"\": want K/N with 0 <= K < N\n" {
			t.Errorf("--shard %s: exit %d, stdout %q, stderr %q", shard, code, stdout, stderr)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s was written", out)
	}
}

// Two machines' shards of a sweep, merged on a third, give the sweep one
// machine would have run: the console names the shards, and runs.csv is
// the whole sweep's. What is not one sweep's shards, each once and all of
// them, is refused with exit 2, one line, and nothing written.
func TestSweepMergeCommand(t *testing.T) {
	root := t.TempDir()
	file := "../../docs/examples/acks-sweep.yaml"
	sweep := func(out string, args ...string) {
		t.Helper()
		if code, stdout, stderr := kafkasim(t, append([]string{"sweep", file, "--quiet", "--parallel", "1", "--seeds", "1", "--out", out}, args...)...); code != 0 {
			t.Fatalf("sweep %v: exit %d %s %s", args, code, stdout, stderr)
		}
	}
	whole := filepath.Join(root, "whole")
	sweep(whole)
	s0, s1 := filepath.Join(root, "s0"), filepath.Join(root, "s1")
	sweep(s0, "--shard", "0/2")
	sweep(s1, "--shard", "1/2")
	other := filepath.Join(root, "other")
	sweep(other, "--shard", "1/3")
	merged := filepath.Join(root, "merged")
	// Each DIR is a shard's --out, or the sweep's folder in it.
	code, stdout, stderr := kafkasim(t, "sweep", "merge", s0, filepath.Join(s1, "acks-sweep"), "--out", merged)
	if code != 0 || !strings.HasPrefix(stdout, "merged 2 shards (0..1/2) into "+filepath.Join(merged, "acks-sweep")+"\n"+
		"sweep acks-sweep, shard 0..1/2: 4 cells × 1 seed: 4 runs now, 0 resumed; 4 passed\n") {
		t.Fatalf("merge: exit %d\n%s%s", code, stdout, stderr)
	}
	a, _ := os.ReadFile(filepath.Join(whole, "acks-sweep", "runs.csv"))
	b, _ := os.ReadFile(filepath.Join(merged, "acks-sweep", "runs.csv"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("runs.csv: whole\n%s\nmerged\n%s", a, b)
	}
	code, stdout, _ = kafkasim(t, "sweep", "merge", "--json", s0, s1, "--out", merged)
	var sum struct {
		Shard  string `json:"shard"`
		Shards []struct {
			Dir string `json:"dir"`
		} `json:"shards"`
	}
	if err := json.Unmarshal([]byte(stdout), &sum); code != 0 || err != nil || sum.Shard != "0..1/2" || len(sum.Shards) != 2 || sum.Shards[1].Dir != s1 {
		t.Errorf("merge --json: exit %d %v\n%s", code, err, stdout)
	}

	empty := filepath.Join(root, "empty")
	os.MkdirAll(empty, 0o755)
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no summary", []string{s0, empty}, empty + ": no summary.json (not a sweep's output folder)"},
		{"a whole sweep", []string{s0, whole}, "not a shard: the sweep ran whole"},
		{"a different N", []string{s0, other}, "the shards disagree on the shard count N: \"2\" in " + s0 + ", \"3\" in " + other},
		{"a shard twice", []string{s0, s1, s0}, "shard 0/2 appears twice: in " + s0 + " and in " + s0},
		{"a shard missing", []string{s1}, "sweep merge: shard 0/2 missing (merge every shard, or pass --partial)"},
		{"no folder", nil, "requires at least 1 arg"},
	} {
		out := filepath.Join(root, "out")
		code, stdout, stderr := kafkasim(t, append([]string{"sweep", "merge", "--out", out}, c.args...)...)
		if code != 2 || stdout != "" || !strings.HasPrefix(stderr, "kafkasim: ") || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", c.name, code, stdout, stderr, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s: %s was written", c.name, out)
		}
	}
	// --partial merges what there is.
	code, stdout, _ = kafkasim(t, "sweep", "merge", "--partial", "--out", filepath.Join(root, "partial"), s1)
	if code != 0 || !strings.Contains(stdout, "merged 1 shard (1/2)") || !strings.Contains(stdout, "2 runs now") {
		t.Errorf("--partial: exit %d\n%s", code, stdout)
	}
}
