package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// tinySweep writes and loads a sweep of batch-compression: compression.type
// gzip (passes) and none (fails its bytes-per-record expectation, so the
// failed runs' scenarios travel too) against min.insync.replicas 1 and 4
// (above the replication factor: a cell that cannot run), with seeds per
// cell and a plot of each kind that needs no pair.
func tinySweep(t *testing.T, dir, name string, seeds string) *File {
	t.Helper()
	base, err := filepath.Abs("../scenarios/batch-compression.yaml")
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(dir, 0o755)
	file := filepath.Join(dir, name+".yaml")
	body := "name: " + name + "\nbase: " + base + "\nseeds: " + seeds + "\naxes:\n  compression.type: [gzip, none]\n  min.insync.replicas: [1, 4]\n" +
		"plots:\n  - { kind: lines, x: compression.type, y: bytes-per-record, where: { min.insync.replicas: 1 } }\n" +
		"  - { kind: heatmap, x: compression.type, y: min.insync.replicas, z: availability }\n"
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	sw, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	return sw
}

// runSweep runs a sweep (or a shard of it) and writes its outputs, as
// "kafkasim sweep" does.
func runSweep(t *testing.T, sw *File, out string, k, n int) *Summary {
	t.Helper()
	res, err := Run(sw, Options{Parallel: 1, Out: out, ShardIndex: k, ShardCount: n})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Report(res, sw.Plots, Info{Name: sw.Name, File: sw.File, Base: sw.BasePath, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// files lists every file under dir, relative to it.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, path)
			out = append(out, filepath.ToSlash(rel))
		}
		return err
	})
	return out
}

// Three shards of a sweep, merged, are the sweep one machine runs whole:
// the same runs/ files, byte for byte the same runs.csv, cells.csv, plots
// and index.html, and the same summary.json but for where it is, which
// shards it holds and how long they took. Each shard runs every third run
// of the grid (cell, then seed), so 2 cells × 3 seeds split 2, 2, 2 even
// though 3 does not divide the cells.
func TestMergeOfShardsIsTheWholeSweep(t *testing.T) {
	root := t.TempDir()
	sw := tinySweep(t, root, "tiny", "3")
	whole := runSweep(t, sw, filepath.Join(root, "whole"), 0, 0)
	if whole.Runs.Finished != 6 || whole.Runs.Failed != 3 || whole.Cells.Invalid != 2 || whole.Shard != "" {
		t.Fatalf("the whole sweep: %+v", whole.Runs)
	}
	var dirs []string
	for k := range 3 {
		dir := filepath.Join(root, "shard", string(rune('0'+k)))
		sum := runSweep(t, sw, dir, k, 3)
		if sum.Shard != string(rune('0'+k))+"/3" || !slices.Contains(sum.Notes, "shard "+sum.Shard+": these outputs hold this shard's runs only; kafkasim sweep merge joins the shards' folders into the whole sweep") || sum.Runs.Planned != 2 || sum.Runs.Finished != 2 || sum.SweepDigest != whole.SweepDigest {
			t.Fatalf("shard %d/3: shard %q, runs %+v, digest %s (whole: %s)", k, sum.Shard, sum.Runs, sum.SweepDigest, whole.SweepDigest)
		}
		// Shard k ran seed 1+k of each valid cell: runs k and 3+k.
		if got := files(t, filepath.Join(dir, "tiny", "runs")); !reflect.DeepEqual(got, []string{
			"compression.type=gzip_min.insync.replicas=1/seed-" + string(rune('1'+k)) + ".json",
			"compression.type=none_min.insync.replicas=1/seed-" + string(rune('1'+k)) + ".json",
			"compression.type=none_min.insync.replicas=1/seed-" + string(rune('1'+k)) + ".yaml",
		}) {
			t.Fatalf("shard %d/3 ran %v", k, got)
		}
		dirs = append(dirs, dir)
	}
	out := filepath.Join(root, "merged")
	merged, err := Merge([]string{dirs[2], dirs[0], dirs[1]}, out, false)
	if err != nil {
		t.Fatal(err)
	}
	a, b := filepath.Join(root, "whole", "tiny"), filepath.Join(out, "tiny")
	if fa, fb := files(t, a), files(t, b); !reflect.DeepEqual(fa, fb) {
		t.Fatalf("the merged sweep's files differ from the whole sweep's:\n%v\n%v", fa, fb)
	}
	for _, f := range files(t, a) {
		if f == "summary.json" {
			continue
		}
		da, _ := os.ReadFile(filepath.Join(a, f))
		db, _ := os.ReadFile(filepath.Join(b, f))
		if !bytes.Equal(da, db) {
			t.Errorf("%s differs:\n%s\nmerged:\n%s", f, da, db)
		}
	}
	if len(merged.Plots) != 2 || merged.Shard != "0..2/3" || len(merged.Shards) != 3 || merged.Shards[0].Dir != dirs[2] || merged.Shards[0].Runs != 2 {
		t.Errorf("merged: plots %d, shard %q, shards %+v", len(merged.Plots), merged.Shard, merged.Shards)
	}
	var maxWall, cpu int64
	for _, s := range merged.Shards {
		maxWall = max(maxWall, s.WallNs)
	}
	for _, d := range dirs {
		var s Summary
		raw, _ := os.ReadFile(filepath.Join(d, "tiny", "summary.json"))
		json.Unmarshal(raw, &s)
		cpu += s.CPUNs
	}
	if merged.WallNs != maxWall || (merged.CPUNs != cpu && merged.CPUNs != 0) {
		t.Errorf("merged wall %d cpu %d; want the longest shard's %d and the sum %d", merged.WallNs, merged.CPUNs, maxWall, cpu)
	}
	// summary.json: the same, but for the fields that say where and how
	// long.
	read := func(dir string) map[string]any {
		raw, err := os.ReadFile(filepath.Join(dir, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"dir", "wall_ns", "cpu_ns", "shard", "shards"} {
			delete(m, k)
		}
		return m
	}
	if sa, sb := read(a), read(b); !reflect.DeepEqual(sa, sb) {
		ja, _ := json.MarshalIndent(sa, "", " ")
		jb, _ := json.MarshalIndent(sb, "", " ")
		t.Errorf("summary.json differs:\n%s\nmerged:\n%s", ja, jb)
	}

	// --partial: two of three shards, each cell with the runs of those.
	part, err := Merge([]string{dirs[0], dirs[2]}, filepath.Join(root, "partial"), true)
	if err != nil {
		t.Fatal(err)
	}
	if part.Shard != "0,2/3" || part.Runs.Planned != 4 || part.Runs.Finished != 4 || part.CellResults[0].Runs != 2 {
		t.Errorf("partial: shard %q, runs %+v, cells %+v", part.Shard, part.Runs, part.CellResults)
	}
	// A merged sweep merges again with the shard it lacked.
	again, err := Merge([]string{filepath.Join(root, "partial"), dirs[1]}, filepath.Join(root, "again"), false)
	if err != nil {
		t.Fatal(err)
	}
	if again.Shard != "0..2/3" || len(again.Shards) != 3 || again.Runs.Finished != 6 {
		t.Errorf("merged again: %q %+v", again.Shard, again.Runs)
	}
	runs, _ := os.ReadFile(filepath.Join(root, "again", "tiny", "runs.csv"))
	if want, _ := os.ReadFile(filepath.Join(a, "runs.csv")); !bytes.Equal(runs, want) {
		t.Errorf("merged again: runs.csv differs:\n%s", runs)
	}
}

// Merge refuses, writing nothing, what is not one sweep's shards, each once,
// all of them (unless partial), and finished.
func TestMergeRefuses(t *testing.T) {
	root := t.TempDir()
	sw := tinySweep(t, root, "tiny", "1")
	shard := func(name string, sw *File, k, n int) string {
		dir := filepath.Join(root, name)
		runSweep(t, sw, dir, k, n)
		return dir
	}
	s0, s1, s2 := shard("s0", sw, 0, 3), shard("s1", sw, 1, 3), shard("s2", sw, 2, 3)
	ofTwo := shard("two", sw, 1, 2)
	whole := shard("whole", sw, 0, 0)
	other := shard("other", tinySweep(t, filepath.Join(root, "file2"), "tiny", "2"), 2, 3)
	again := filepath.Join(root, "again", "tiny")
	copyTree(t, filepath.Join(s1, "tiny"), again)
	lost := filepath.Join(root, "lost", "tiny")
	copyTree(t, filepath.Join(s1, "tiny"), lost)
	os.Remove(filepath.Join(lost, "runs", "compression.type=none_min.insync.replicas=1", "seed-1.yaml"))
	stopped := filepath.Join(root, "stopped", "tiny")
	copyTree(t, filepath.Join(s2, "tiny"), stopped)
	raw, _ := os.ReadFile(filepath.Join(stopped, "summary.json"))
	os.WriteFile(filepath.Join(stopped, "summary.json"), bytes.Replace(raw, []byte(`"interrupted": false`), []byte(`"interrupted": true`), 1), 0o644)
	empty := filepath.Join(root, "empty")
	os.MkdirAll(empty, 0o755)
	for _, c := range []struct {
		name string
		dirs []string
		want string
	}{
		{"no summary", []string{s0, s1, empty}, empty + ": no summary.json (not a sweep's output folder)"},
		{"a whole sweep", []string{s0, s1, whole}, "not a shard: the sweep ran whole"},
		{"a different sweep", []string{s0, s1, other}, "the shards disagree on seeds_per_cell: \"1\" in " + s0 + ", \"2\" in " + other},
		{"a different N", []string{s0, s1, ofTwo}, "the shards disagree on the shard count N: \"3\" in " + s0 + ", \"2\" in " + ofTwo},
		{"a shard twice", []string{s0, s1, again, s2}, "shard 1/3 appears twice: in " + s1 + " and in " + again},
		{"a shard missing", []string{s0, s2}, "sweep merge: shard 1/3 missing (merge every shard, or pass --partial)"},
		{"a failed run's scenario missing", []string{s0, lost, s2}, lost + ": the scenario of the failed run of cell compression.type=none,min.insync.replicas=1, seed 1"},
		{"an interrupted shard", []string{s0, s1, stopped}, stopped + ": shard 2/3 was interrupted"},
	} {
		out := filepath.Join(root, "out")
		_, err := Merge(c.dirs, out, false)
		var refused *MergeError
		if !errors.As(err, &refused) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want a refusal with %q", c.name, err, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s: %s was written", c.name, out)
		}
	}
	// A different grid under the same name and seeds: the digest tells.
	sw2 := tinySweep(t, filepath.Join(root, "file3"), "tiny", "1")
	sw2.Axes[0].Values = []string{"none", "gzip"}
	moved := shard("moved", sw2, 2, 3)
	if _, err := Merge([]string{s0, s1, moved}, filepath.Join(root, "out"), false); err == nil ||
		!strings.Contains(err.Error(), "the shards disagree on sweep_digest (the grid, the base or the plots differ)") {
		t.Errorf("a different grid: %v", err)
	}
	// The merged folder is never one of the shards'.
	if _, err := Merge([]string{s0, s1, s2}, s0, false); err == nil || !strings.Contains(err.Error(), "is one of the shards' folders") {
		t.Errorf("--out a shard's folder: %v", err)
	}
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	for _, f := range files(t, from) {
		data, err := os.ReadFile(filepath.Join(from, f))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Dir(filepath.Join(to, f)), 0o755)
		if err := os.WriteFile(filepath.Join(to, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
