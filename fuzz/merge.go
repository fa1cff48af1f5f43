package fuzz

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"kafkasim/internal/shardset"
)

// ShardRun is one shard of a merged campaign (Summary.Shards): the folder it
// was merged from, as given, and its own figures.
type ShardRun struct {
	Dir      string `json:"dir"`
	Shard    string `json:"shard"`
	Runs     int    `json:"runs"`
	Failures int    `json:"failures"`
	WallNs   int64  `json:"wall_ns"`
}

// MergeError is a refusal to merge: a folder that is not a shard's output,
// shards that were not run alike, a shard twice or one missing. Nothing was
// written.
type MergeError struct{ msg string }

func (e *MergeError) Error() string { return e.msg }

func refuse(format string, args ...any) error {
	return &MergeError{msg: fmt.Sprintf(format, args...)}
}

var digits = regexp.MustCompile(`[0-9]+`)

// Signature names a failure the same for every seed that fails the same
// way, so that a merged campaign lists it once: a violation by the
// guarantees it broke ("violation: committed-data-kept,..."), a liveness
// failure or a crash by the first line of its detail up to its first ": "
// (the clause before the particulars), every number in it replaced by '#'
// ("liveness: producer p-# cannot write after the heal").
func Signature(f *Failure) string {
	if f == nil {
		return ""
	}
	if f.Kind == "violation" && len(f.What) > 0 {
		what := slices.Clone(f.What)
		sort.Strings(what)
		return "violation: " + strings.Join(slices.Compact(what), ",")
	}
	line := firstLine(f.Detail)
	if i := strings.Index(line, ": "); i >= 0 {
		line = line[:i]
	}
	return f.Kind + ": " + digits.ReplaceAllString(strings.TrimSpace(line), "#")
}

// shardSet parses a summary's shard, "K/N" or a merged campaign's
// "0..2,5/8": the indices it ran, of N.
func shardSet(s string) ([]int, int, error) { return shardset.Parse(s) }

// ShardString writes a set of shard indices of n as a summary's shard does:
// "2/4" for one, ranges joined by commas for more ("0..3/4", "0..1,3/4").
func ShardString(set []int, n int) string { return shardset.String(set, n) }

type shardIn struct {
	dir string
	sum *Summary
	set []int
	n   int
}

// copyPlan is one counterexample file to copy into the merged folder.
type copyPlan struct{ from, to, oldPath string }

// Merge joins the outputs of a campaign's shards (each dir holding a
// shard's summary.json and counterexamples) into one campaign in out: one
// summary.json in the schema of a single campaign's, and every
// counterexample file beside it. It refuses (a *MergeError, nothing
// written) a folder without a readable summary, shards run differently, a
// shard index twice, and, unless partial, a shard of N missing.
func Merge(dirs []string, out string, partial bool) (*Summary, error) {
	if len(dirs) == 0 {
		return nil, refuse("fuzz merge: no shard folders given")
	}
	var shards []shardIn
	for _, dir := range dirs {
		path := filepath.Join(dir, "summary.json")
		raw, err := os.ReadFile(path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, refuse("%s: no summary.json (not a fuzz output folder)", dir)
		}
		if err != nil {
			return nil, refuse("%s: %v", path, err)
		}
		var sum Summary
		if err := json.Unmarshal(raw, &sum); err != nil {
			return nil, refuse("%s: does not parse: %v", path, err)
		}
		set, n, err := shardSet(sum.Shard)
		if err != nil {
			return nil, refuse("%s: %v", path, err)
		}
		shards = append(shards, shardIn{dir: dir, sum: &sum, set: set, n: n})
	}
	first := shards[0]
	sortedBugs := func(b []string) string {
		b = slices.Clone(b)
		sort.Strings(b)
		return strings.Join(b, ",")
	}
	for _, s := range shards[1:] {
		for _, c := range []struct {
			what string
			a, b any
		}{
			{"the shard count N", first.n, s.n},
			{"seed_start", first.sum.SeedStart, s.sum.SeedStart},
			{"bugs", sortedBugs(first.sum.Bugs), sortedBugs(s.sum.Bugs)},
			{"base", first.sum.Base, s.sum.Base},
			{"groups", first.sum.GroupPercent, s.sum.GroupPercent},
			{"processors", first.sum.ProcessorPercent, s.sum.ProcessorPercent},
			{"max_failures", first.sum.MaxFailures, s.sum.MaxFailures},
		} {
			if c.a != c.b {
				return nil, refuse("fuzz merge: the shards disagree on %s: %q in %s, %q in %s", c.what, fmt.Sprint(c.a), first.dir, fmt.Sprint(c.b), s.dir)
			}
		}
	}
	owner := map[int]string{}
	var indices []int
	for _, s := range shards {
		for _, k := range s.set {
			if d, dup := owner[k]; dup {
				return nil, refuse("fuzz merge: shard %d/%d appears twice: in %s and in %s", k, s.n, d, s.dir)
			}
			owner[k] = s.dir
			indices = append(indices, k)
		}
	}
	if !partial && len(indices) < first.n {
		var missing []int
		for k := range first.n {
			if _, ok := owner[k]; !ok {
				missing = append(missing, k)
			}
		}
		return nil, refuse("fuzz merge: shard %s missing (merge every shard, or pass --partial)", ShardString(missing, first.n))
	}
	outAbs, _ := filepath.Abs(out)
	for _, s := range shards {
		if abs, _ := filepath.Abs(s.dir); abs == outAbs {
			return nil, refuse("fuzz merge: --out %s is one of the shards' folders", out)
		}
	}

	m := &Summary{Shard: ShardString(indices, first.n), SeedStart: first.sum.SeedStart, Bugs: slices.Clone(first.sum.Bugs),
		Base: first.sum.Base, MaxFailures: first.sum.MaxFailures, GroupPercent: first.sum.GroupPercent,
		ProcessorPercent: first.sum.ProcessorPercent, TimeToFirstFailureNs: -1, Found: []Found{}}
	if m.Bugs == nil {
		m.Bugs = []string{}
	}
	cores := 0.0
	cpuKnown := true
	var found []Found
	var copies []copyPlan
	written := map[string]string{}
	for _, s := range shards {
		sum := s.sum
		m.Runs += sum.Runs
		m.Failures += sum.Failures
		m.WallNs = max(m.WallNs, sum.WallNs)
		m.CPUNs += sum.CPUNs
		cpuKnown = cpuKnown && (sum.CPUNs > 0 || sum.Runs == 0)
		m.Parallel += sum.Parallel
		// The workers with a core of their own: what the shard divided its
		// rate by.
		if sum.RunsPerSecondPerCore > 0 {
			cores += sum.RunsPerSecond / sum.RunsPerSecondPerCore
		} else {
			cores += float64(max(sum.Parallel, 1))
		}
		m.Events += sum.Events
		m.SimTimeNs += sum.SimTimeNs
		m.Interrupted = m.Interrupted || sum.Interrupted
		if t := sum.TimeToFirstFailureNs; t >= 0 && (m.TimeToFirstFailureNs < 0 || t < m.TimeToFirstFailureNs) {
			m.TimeToFirstFailureNs = t
		}
		if len(sum.Shards) > 0 {
			m.Shards = append(m.Shards, sum.Shards...) // a merged campaign merged again
		} else {
			m.Shards = append(m.Shards, ShardRun{Dir: s.dir, Shard: sum.Shard, Runs: sum.Runs, Failures: sum.Failures, WallNs: sum.WallNs})
		}
		for _, f := range sum.Found {
			for _, p := range []*string{&f.File, &f.Original} {
				if *p == "" {
					continue
				}
				name := filepath.Base(*p)
				from := filepath.Join(s.dir, name)
				if st, err := os.Stat(from); err != nil || !st.Mode().IsRegular() {
					return nil, refuse("%s: counterexample %s of seed %d is missing", s.dir, name, f.Seed)
				}
				if d, dup := written[name]; dup {
					return nil, refuse("fuzz merge: %s is in both %s and %s", name, d, s.dir)
				}
				written[name] = s.dir
				to := filepath.Join(out, name)
				copies = append(copies, copyPlan{from: from, to: to, oldPath: *p})
				*p = to
			}
			found = append(found, f)
		}
	}
	if m.WallNs > 0 {
		m.RunsPerSecond = float64(m.Runs) / (float64(m.WallNs) / 1e9)
		m.RunsPerSecondPerCore = m.RunsPerSecond / cores
	}
	if cpuKnown && m.CPUNs > 0 {
		m.RunsPerCPUSecond = float64(m.Runs) / (float64(m.CPUNs) / 1e9)
	} else {
		m.CPUNs = 0
	}
	m.Found = Dedup(found)

	// Everything checked: write.
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	for _, c := range copies {
		data, err := os.ReadFile(c.from)
		if err != nil {
			return nil, err
		}
		// The header's replay line names the file where it now is.
		data = []byte(strings.Replace(string(data), "# Replay: kafkasim run "+c.oldPath+"\n", "# Replay: kafkasim run "+c.to+"\n", 1))
		if err := os.WriteFile(c.to, data, 0o644); err != nil {
			return nil, err
		}
	}
	data, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(out, "summary.json"), append(data, '\n'), 0o644); err != nil {
		return nil, err
	}
	return m, nil
}

// Dedup keeps one counterexample per Signature, the lowest seed's, with
// the seeds of all that shared it (a merged campaign's found entries carry
// their own seeds already); the result is ordered by seed.
func Dedup(found []Found) []Found {
	bySig := map[string]int{}
	out := []Found{}
	sorted := slices.Clone(found)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Seed < sorted[j].Seed })
	for _, f := range sorted {
		seeds := f.Seeds
		if len(seeds) == 0 {
			seeds = []uint64{f.Seed}
		}
		sig := Signature(f.Failure)
		if i, ok := bySig[sig]; ok {
			out[i].Seeds = append(out[i].Seeds, seeds...)
			continue
		}
		f.Signature = sig
		f.Seeds = slices.Clone(seeds)
		bySig[sig] = len(out)
		out = append(out, f)
	}
	for i := range out {
		slices.Sort(out[i].Seeds)
		out[i].Seeds = slices.Compact(out[i].Seeds)
		out[i].Shared = len(out[i].Seeds)
	}
	return out
}
