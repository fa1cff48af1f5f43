package fuzz

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Three shards of seeds 1..12, merged, are the unsharded campaign over the
// same seeds: the same runs, failures, events and simulated time, the same
// failing seeds under the same deduplicated counterexamples, every seed
// covered once. hw-truncation fails half of these seeds, all the same way.
func TestMergeOfShardsIsTheUnshardedCampaign(t *testing.T) {
	if testing.Short() {
		t.Skip("runs dozens of simulations")
	}
	const seeds, n = 12, 3
	// One shrink run a failure: merging is tested here, not shrinking.
	opts := Options{Runs: seeds, Parallel: 1, SeedStart: 1, Bugs: []string{"hw-truncation"}, ShrinkRuns: 1}
	opts.Out = t.TempDir()
	whole, err := Campaign(opts)
	if err != nil {
		t.Fatal(err)
	}
	if whole.Failures < 2 {
		t.Fatalf("the unsharded campaign found %d failures: nothing to merge", whole.Failures)
	}
	root := t.TempDir()
	var dirs []string
	var shards []*Summary
	for k := range n {
		o := opts
		o.Runs, o.ShardIndex, o.ShardCount = seeds/n, k, n
		o.Out = filepath.Join(root, "shard-"+strconv.Itoa(k))
		sum, err := Campaign(o)
		if err != nil {
			t.Fatal(err)
		}
		dirs, shards = append(dirs, o.Out), append(shards, sum)
	}
	out := filepath.Join(root, "merged")
	merged, err := Merge(dirs, out, false)
	if err != nil {
		t.Fatal(err)
	}
	if merged.Runs != whole.Runs || merged.Failures != whole.Failures || merged.Events != whole.Events || merged.SimTimeNs != whole.SimTimeNs {
		t.Fatalf("merged: %d runs, %d failures, %d events, %d ns simulated; unsharded: %d, %d, %d, %d",
			merged.Runs, merged.Failures, merged.Events, merged.SimTimeNs, whole.Runs, whole.Failures, whole.Events, whole.SimTimeNs)
	}
	if merged.Shard != "0..2/3" || merged.SeedStart != 1 || !slices.Equal(merged.Bugs, opts.Bugs) {
		t.Fatalf("merged shard %q, seed_start %d, bugs %v", merged.Shard, merged.SeedStart, merged.Bugs)
	}
	// Seeds covered: every seed of 1..12 by exactly one shard.
	covered := map[uint64]int{}
	for _, r := range merged.Shards {
		set, count, err := shardSet(r.Shard)
		if err != nil || len(set) != 1 {
			t.Fatalf("shard %q: %v", r.Shard, err)
		}
		o := Options{SeedStart: merged.SeedStart, ShardIndex: set[0], ShardCount: count}
		for i := range r.Runs {
			covered[o.SeedAt(i)]++
		}
	}
	for s := uint64(1); s <= seeds; s++ {
		if covered[s] != 1 {
			t.Fatalf("seed %d covered %d times by the merged shards %+v", s, covered[s], merged.Shards)
		}
	}
	if len(covered) != seeds {
		t.Fatalf("the shards covered %d seeds, want %d", len(covered), seeds)
	}
	// The found entries: the unsharded campaign's, deduplicated alike.
	want := Dedup(whole.Found)
	if len(merged.Found) != len(want) {
		t.Fatalf("merged found %d signatures, the unsharded campaign %d", len(merged.Found), len(want))
	}
	shared := 0
	for i, f := range merged.Found {
		w := want[i]
		if f.Seed != w.Seed || f.Signature != w.Signature || !slices.Equal(f.Seeds, w.Seeds) || f.Shared != len(f.Seeds) ||
			!reflect.DeepEqual(f.Failure, w.Failure) || f.Seed != f.Seeds[0] {
			t.Fatalf("merged found %d: seed %d %q seeds %v shared %d %+v; unsharded: seed %d %q seeds %v %+v",
				i, f.Seed, f.Signature, f.Seeds, f.Shared, f.Failure, w.Seed, w.Signature, w.Seeds, w.Failure)
		}
		shared += f.Shared
	}
	if shared != whole.Failures || len(merged.Found) >= whole.Failures {
		t.Fatalf("%d failures under %d signatures sharing %d seeds: want every failure counted once, some deduplicated", whole.Failures, len(merged.Found), shared)
	}
	// The figures of a campaign run in parallel.
	var first int64 = -1
	var wall int64
	for _, s := range shards {
		wall = max(wall, s.WallNs)
		if s.TimeToFirstFailureNs >= 0 && (first < 0 || s.TimeToFirstFailureNs < first) {
			first = s.TimeToFirstFailureNs
		}
	}
	if merged.WallNs != wall || merged.TimeToFirstFailureNs != first || merged.Parallel != n {
		t.Fatalf("merged wall %d, first failure %d, parallel %d; want %d, %d, %d", merged.WallNs, merged.TimeToFirstFailureNs, merged.Parallel, wall, first, n)
	}
	// summary.json is what Merge returned, and every counterexample file of
	// every shard is beside it, its replay line naming it there.
	raw, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var written Summary
	if err := json.Unmarshal(raw, &written); err != nil || !reflect.DeepEqual(written.Found, merged.Found) || written.Runs != merged.Runs {
		t.Fatalf("summary.json (%v): %s", err, raw)
	}
	for _, f := range merged.Found {
		for _, s := range f.Seeds {
			for _, name := range []string{"seed-" + strconv.FormatUint(s, 10) + ".yaml", "seed-" + strconv.FormatUint(s, 10) + ".drawn.yaml"} {
				data, err := os.ReadFile(filepath.Join(out, name))
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(data), "# Replay: kafkasim run "+filepath.Join(out, name)+"\n") {
					t.Fatalf("%s does not name where it now is:\n%s", name, strings.SplitN(string(data), "\n", 4)[:3])
				}
			}
		}
		if filepath.Dir(f.File) != out || filepath.Dir(f.Original) != out {
			t.Fatalf("found entry points to %s and %s, not into %s", f.File, f.Original, out)
		}
	}
}

// A violation's signature is its broken guarantees; a liveness failure's or
// a crash's its first clause, numbers aside.
func TestSignature(t *testing.T) {
	for _, c := range []struct {
		f    Failure
		want string
	}{
		{Failure{Kind: "violation", What: []string{"lost-write", "committed-data-kept"}, Detail: "committed-data-kept at 5s"}, "violation: committed-data-kept,lost-write"},
		{Failure{Kind: "liveness", Detail: "producer p-1 cannot write after the heal: of 5 probe writes, 3 acknowledged"}, "liveness: producer p-# cannot write after the heal"},
		{Failure{Kind: "crash", Detail: "seed 12: index out of range [3]\ngoroutine 1"}, "crash: seed #"},
	} {
		if got := Signature(&c.f); got != c.want {
			t.Errorf("Signature(%+v) = %q, want %q", c.f, got, c.want)
		}
	}
	a := Failure{Kind: "liveness", Detail: "producer p-0 cannot write after the heal: of 7 probe writes"}
	b := Failure{Kind: "liveness", Detail: "final reads did not reach every partition's end within 30s: orders-0"}
	if Signature(&a) == Signature(&b) {
		t.Fatalf("two liveness failures of different kinds share %q", Signature(&a))
	}
}

func TestShardString(t *testing.T) {
	for _, c := range []struct {
		set  []int
		want string
	}{{[]int{2}, "2/4"}, {[]int{3, 0, 1, 2}, "0..3/4"}, {[]int{0, 1, 3}, "0..1,3/4"}, {[]int{0, 2}, "0,2/4"}} {
		got := ShardString(c.set, 4)
		if got != c.want {
			t.Errorf("ShardString(%v, 4) = %q, want %q", c.set, got, c.want)
		}
		set, n, err := shardSet(got)
		if slices.Sort(c.set); err != nil || n != 4 || !slices.Equal(set, c.set) {
			t.Errorf("shardSet(%q) = %v, %d, %v", got, set, n, err)
		}
	}
}
