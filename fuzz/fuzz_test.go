package fuzz

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"kafkasim/internal/cputime"
	"kafkasim/scenarios"
	"kafkasim/sim"
)

// The generator draws valid scenarios, the same for the same seed.
func TestGeneratorIsValidAndDeterministic(t *testing.T) {
	kinds := map[string]bool{}
	for seed := uint64(1); seed <= 300; seed++ {
		a, err := Generate(seed, nil, nil)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		b, _ := Generate(seed, nil, nil)
		ya, _ := a.Resolved()
		yb, _ := b.Resolved()
		if !bytes.Equal(ya, yb) {
			t.Fatalf("seed %d drew two different scenarios", seed)
		}
		for _, f := range a.Faults {
			kinds[f.Key] = true
		}
	}
	for _, k := range faultKinds {
		if !kinds[k] {
			t.Errorf("300 seeds never drew a %s fault", k)
		}
	}
	base, err := scenarios.LoadFile("../scenarios/acks-all-safe.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Generate(7, base, []string{"hw-truncation"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Seed != 7 || len(s.Topics) != 1 || s.Topics[0].Partitions != 3 || len(s.Bugs) != 1 {
		t.Fatalf("around a base: seed %d topics %+v bugs %v", s.Seed, s.Topics, s.Bugs)
	}
}

// Shrinking keeps the failure and drops what does not matter: a bug-zoo
// schedule padded with irrelevant faults shrinks to a schedule from which
// no fault can be removed without the failure going away.
func TestShrinkIsOneMinimal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs dozens of simulations")
	}
	s, err := scenarios.LoadFile("../scenarios/bugzoo/producer-state-not-replicated.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Irrelevant padding: a slow link and a clock jump on a reader.
	s.Faults = append(s.Faults,
		scenarios.ScheduledFault{At: 3e9, Fault: sim.Fault{Kind: sim.FaultSlowNetwork, Target: "c-0", Latency: 2e6, For: 1e9}, Key: "slow-network"},
		scenarios.ScheduledFault{At: 4e9, Fault: sim.Fault{Kind: sim.FaultClock, Target: "c-0", ClockJump: 1e9, For: 1e9}, Key: "clock"})
	s, err = scenarios.Normalize(s)
	if err != nil {
		t.Fatal(err)
	}
	_, want := runOne(s)
	if want == nil || want.Kind != "violation" {
		t.Fatalf("the padded scenario must fail: %+v", want)
	}
	runs := 0
	judge := func(c *scenarios.Scenario) *Failure { runs++; _, f := runOne(c); return f }
	small, _ := Shrink(s, want, 60, nil, judge)
	if len(small.Faults) >= len(s.Faults) {
		t.Fatalf("shrinking kept %d of %d faults", len(small.Faults), len(s.Faults))
	}
	if _, got := runOne(small); !want.same(got) {
		t.Fatalf("the shrunk scenario fails differently: %+v", got)
	}
	for i := range small.Faults {
		c := clone(small)
		c.Faults = append(append([]scenarios.ScheduledFault{}, small.Faults[:i]...), small.Faults[i+1:]...)
		n, err := scenarios.Normalize(c)
		if err != nil {
			t.Fatal(err)
		}
		if _, got := runOne(n); want.same(got) {
			t.Fatalf("fault %d (%s at %v) can go and it still fails: not 1-minimal", i, small.Faults[i].Key, small.Faults[i].At)
		}
	}
	t.Logf("%d faults shrunk to %d in %d runs", len(s.Faults), len(small.Faults), runs)
}

func TestCampaignWritesItsSummaryAndShardsSplitSeeds(t *testing.T) {
	out := t.TempDir()
	sum, err := Campaign(Options{Runs: 4, Parallel: 2, ShardIndex: 1, ShardCount: 3, SeedStart: 10, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Runs != 4 || sum.Shard != "1/3" || sum.RunsPerSecond <= 0 {
		t.Fatalf("summary: %+v", sum)
	}
	if _, measured := cputime.Process(); measured {
		// Four runs take a CPU-second or so; the rate per CPU-second is
		// the runs over exactly that time.
		cpu := time.Duration(sum.CPUNs)
		if cpu <= 0 || math.Abs(sum.RunsPerCPUSecond-4/cpu.Seconds()) > 1e-9*sum.RunsPerCPUSecond {
			t.Fatalf("CPU figures: %v used, %.3f runs per CPU-second", cpu, sum.RunsPerCPUSecond)
		}
	}
	data, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back Summary
	if err := json.Unmarshal(data, &back); err != nil || back.Runs != 4 {
		t.Fatalf("summary.json: %v %+v", err, back)
	}
	for _, f := range sum.Found {
		if (f.Seed-10)%3 != 1 {
			t.Fatalf("shard 1/3 ran seed %d", f.Seed)
		}
		if _, err := scenarios.LoadFile(f.File); err != nil {
			t.Fatalf("counterexample %s does not load: %v", f.File, err)
		}
	}
	// Three shards cover seeds 10..39 once each.
	seen := map[uint64]int{}
	for k := range 3 {
		o := Options{SeedStart: 10, ShardIndex: k, ShardCount: 3}
		for i := range 10 {
			seen[o.SeedAt(i)]++
		}
	}
	for seed := uint64(10); seed < 40; seed++ {
		if seen[seed] != 1 {
			t.Fatalf("seed %d ran %d times across the shards", seed, seen[seed])
		}
	}
	if len(seen) != 30 {
		t.Fatalf("the shards ran %d distinct seeds, want 30", len(seen))
	}
}
