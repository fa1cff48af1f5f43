package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"kafkasim/internal/shardset"
	"kafkasim/runner"
)

// MergeError is a refusal to merge: a folder that is not a sweep shard's
// output, shards of different sweeps or of different N, a shard twice or
// one missing. Nothing was written.
type MergeError struct{ msg string }

func (e *MergeError) Error() string { return e.msg }

func refuse(format string, args ...any) error {
	return &MergeError{msg: fmt.Sprintf(format, args...)}
}

// mergeShard is one shard's folder as Merge reads it.
type mergeShard struct {
	given  string // the folder as given
	folder string // the sweep's folder: given, or the one sweep under it
	sum    *Summary
	set    []int
	n      int
}

// mergeCopy is one file of a shard's runs/ to copy into the merged folder.
type mergeCopy struct{ from, to string }

// Merge joins the folders of a sweep's shards ("kafkasim sweep --shard
// K/N") into one sweep folder, OUT/<name>/ under out: every shard's runs/
// copied there, and runs.csv, cells.csv, the plots, index.html and
// summary.json built from those runs exactly as one machine's sweep of the
// whole grid would have built them. Each dir is a shard's sweep folder
// (holding its summary.json) or the --out root holding it. It refuses (a
// *MergeError, nothing written) a folder without a sweep shard's
// summary.json, shards of different sweeps (name, version, N, seeds, grid,
// base or plots), an interrupted shard, a shard index twice, a run missing
// from its shard's folder, and, unless partial, a shard of N missing. The
// summary is returned with any error writing the outputs, as Report does.
func Merge(dirs []string, out string, partial bool) (*Summary, error) {
	if len(dirs) == 0 {
		return nil, refuse("sweep merge: no shard folders given")
	}
	var shards []*mergeShard
	for _, dir := range dirs {
		s, err := readShard(dir)
		if err != nil {
			return nil, err
		}
		shards = append(shards, s)
	}
	first := shards[0]
	for _, s := range shards[1:] {
		for _, c := range []struct {
			what string
			a, b any
		}{
			{"the sweep", first.sum.Sweep, s.sum.Sweep},
			{"the shard count N", first.n, s.n},
			{"seeds_per_cell", first.sum.SeedsPerCell, s.sum.SeedsPerCell},
			{"version", first.sum.Version, s.sum.Version},
			{"sweep_digest (the grid, the base or the plots differ)", first.sum.SweepDigest, s.sum.SweepDigest},
		} {
			if c.a != c.b {
				return nil, refuse("sweep merge: the shards disagree on %s: %q in %s, %q in %s", c.what, fmt.Sprint(c.a), first.given, fmt.Sprint(c.b), s.given)
			}
		}
	}
	owner := map[int]*mergeShard{}
	var indices []int
	for _, s := range shards {
		for _, k := range s.set {
			if d, dup := owner[k]; dup {
				return nil, refuse("sweep merge: shard %d/%d appears twice: in %s and in %s", k, s.n, d.given, s.given)
			}
			owner[k] = s
			indices = append(indices, k)
		}
	}
	n := first.n
	if !partial && len(indices) < n {
		var missing []int
		for k := range n {
			if owner[k] == nil {
				missing = append(missing, k)
			}
		}
		return nil, refuse("sweep merge: shard %s missing (merge every shard, or pass --partial)", shardset.String(missing, n))
	}
	dir := filepath.Join(out, first.sum.Sweep)
	outAbs, _ := filepath.Abs(dir)
	for _, s := range shards {
		if abs, _ := filepath.Abs(s.folder); abs == outAbs {
			return nil, refuse("sweep merge: --out %s is one of the shards' folders", out)
		}
	}

	// The grid, from the first shard's summary: its cells in order, those
	// that cannot run, and each valid cell's first seed.
	sum := first.sum
	res := &Result{Dir: dir, Seeds: sum.SeedsPerCell, Digest: sum.SweepDigest, Shard: shardset.String(indices, n), Records: map[string][]RunRecord{}}
	for _, a := range sum.Axes {
		res.Axes = append(res.Axes, Axis{Name: a.Name, Values: a.Values})
	}
	invalid := map[string]string{}
	for _, c := range sum.InvalidCells {
		invalid[c.Cell] = c.Reason
	}
	firstSeed := map[string]uint64{}
	for _, c := range sum.CellResults {
		firstSeed[c.Cell] = c.FirstSeed
	}
	var plans []*cellPlan
	for _, c := range gridCells(res.Axes) {
		reason, bad := invalid[c.ID]
		seed, ok := firstSeed[c.ID]
		if bad == ok {
			return nil, refuse("%s: summary.json's cells do not match its axes (cell %s)", first.given, c.ID)
		}
		if bad {
			c.Invalid = reason
			res.Notes = append(res.Notes, invalidNote(c))
		}
		c.Seed = seed
		plans = append(plans, &cellPlan{cell: c})
	}
	if len(plans) != len(sum.InvalidCells)+len(sum.CellResults) {
		return nil, refuse("%s: summary.json's cells do not match its axes", first.given)
	}

	// Every run of the merged shards, from the folder of the shard it fell
	// to, in the order Run numbers them.
	var copies []mergeCopy
	var drop []string
	index := 0
	for _, p := range plans {
		if p.cell.Invalid != "" {
			continue
		}
		for i := range res.Seeds {
			index++
			s := owner[(index-1)%n]
			if s == nil {
				continue
			}
			seed := p.cell.Seed + uint64(i)
			from := recordPath(s.folder, p.cell.ID, seed)
			rel, _ := filepath.Rel(s.folder, from)
			rec, ok := readRecord(from)
			if !ok {
				return nil, refuse("%s: the run of cell %s, seed %d (%s) is missing or unreadable", s.given, p.cell.ID, seed, filepath.ToSlash(rel))
			}
			if rec.Cell != p.cell.ID || rec.Seed != seed {
				return nil, refuse("%s: %s is the run of cell %s, seed %d, not of cell %s, seed %d", s.given, filepath.ToSlash(rel), rec.Cell, rec.Seed, p.cell.ID, seed)
			}
			to := recordPath(dir, p.cell.ID, seed)
			copies = append(copies, mergeCopy{from: from, to: to})
			if rec.Verdict == runner.Pass {
				drop = append(drop, replayPath(to))
			} else {
				replay := replayPath(from)
				if st, err := os.Stat(replay); err != nil || !st.Mode().IsRegular() {
					return nil, refuse("%s: the scenario of the failed run of cell %s, seed %d (%s) is missing", s.given, p.cell.ID, seed, filepath.ToSlash(replayPath(rel)))
				}
				copies = append(copies, mergeCopy{from: replay, to: replayPath(to)})
			}
			res.Records[p.cell.ID] = append(res.Records[p.cell.ID], rec)
		}
	}

	cpuKnown := true
	for _, s := range shards {
		res.Planned += s.sum.Runs.Planned
		res.Runs += s.sum.Runs.Now
		res.Resumed += s.sum.Runs.Resumed
		res.WallNs = max(res.WallNs, s.sum.WallNs)
		res.CPUNs += s.sum.CPUNs
		cpuKnown = cpuKnown && (s.sum.CPUNs > 0 || s.sum.Runs.Now == 0)
		if len(s.sum.Shards) > 0 {
			res.Shards = append(res.Shards, s.sum.Shards...) // a merged sweep merged again
		} else {
			res.Shards = append(res.Shards, SummaryShard{Dir: s.given, Shard: s.sum.Shard, Runs: s.sum.Runs.Finished, WallNs: s.sum.WallNs})
		}
	}
	if !cpuKnown {
		res.CPUNs = 0
	}

	// Everything checked: write.
	if err := os.MkdirAll(filepath.Join(dir, "runs"), 0o755); err != nil {
		return nil, err
	}
	for _, c := range copies {
		if err := copyFile(c.from, c.to); err != nil {
			return nil, err
		}
	}
	for _, path := range drop { // left by an earlier, failing version of the run
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	if err := assemble(res, plans, res.Records); err != nil {
		return nil, err
	}
	return Report(res, plotSpecs(sum.PlotSpecs), Info{Name: sum.Sweep, File: sum.File, Base: sum.Base, Version: sum.Version})
}

// readShard reads a shard's summary.json: in dir, or in the one sweep
// folder under dir (a shard's --out).
func readShard(dir string) (*mergeShard, error) {
	folder := dir
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); errors.Is(err, fs.ErrNotExist) {
		entries, _ := os.ReadDir(dir)
		var sweeps []string
		for _, e := range entries {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), "summary.json")); e.IsDir() && err == nil {
				sweeps = append(sweeps, e.Name())
			}
		}
		switch len(sweeps) {
		case 0:
			return nil, refuse("%s: no summary.json (not a sweep's output folder)", dir)
		case 1:
			folder = filepath.Join(dir, sweeps[0])
		default:
			return nil, refuse("%s: holds %d sweeps (%s): give the folder of the one to merge", dir, len(sweeps), strings.Join(sweeps, ", "))
		}
	}
	path := filepath.Join(folder, "summary.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, refuse("%s: %v", path, err)
	}
	var sum Summary
	if err := json.Unmarshal(raw, &sum); err != nil {
		return nil, refuse("%s: does not parse: %v", path, err)
	}
	if sum.Sweep == "" || sum.SweepDigest == "" {
		return nil, refuse("%s: not a sweep's summary (no sweep or sweep_digest)", path)
	}
	if sum.Shard == "" {
		return nil, refuse("%s: not a shard: the sweep ran whole (run each shard with --shard K/N)", path)
	}
	set, n, err := shardset.Parse(sum.Shard)
	if err != nil {
		return nil, refuse("%s: %v", path, err)
	}
	if sum.Interrupted {
		return nil, refuse("%s: shard %s was interrupted: run its command again to finish it, then merge", dir, sum.Shard)
	}
	return &mergeShard{given: dir, folder: folder, sum: &sum, set: slices.Clone(set), n: n}, nil
}

// copyFile copies a run's file into the merged folder, atomically.
func copyFile(from, to string) error {
	data, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return writeBytesAtomic(to, data)
}
