package sim_test

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"kafkasim/sim"
	"kafkasim/sim/demo"
)

func runDemo(t testing.TB, seed uint64, nemesis bool) demo.Result {
	t.Helper()
	cfg := demo.DefaultClusterConfig(seed)
	cfg.Nemesis = nemesis
	c, err := demo.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c.Run()
}

func TestSameSeedSameTraceHash(t *testing.T) {
	for _, nemesis := range []bool{false, true} {
		for seed := uint64(1); seed <= 5; seed++ {
			a, b := runDemo(t, seed, nemesis), runDemo(t, seed, nemesis)
			if a.TraceHash != b.TraceHash || a.Steps != b.Steps {
				t.Fatalf("seed %d nemesis %v: runs differ: %x/%d vs %x/%d", seed, nemesis, a.TraceHash, a.Steps, b.TraceHash, b.Steps)
			}
			if a.Steps < 1000 {
				t.Fatalf("seed %d: only %d events: the demo did not run", seed, a.Steps)
			}
		}
	}
}

func TestDifferentSeedsDifferentTraceHashes(t *testing.T) {
	seen := map[uint64]uint64{}
	for seed := uint64(1); seed <= 30; seed++ {
		h := runDemo(t, seed, true).TraceHash
		if prev, dup := seen[h]; dup {
			t.Fatalf("seeds %d and %d gave the same trace hash %x", prev, seed, h)
		}
		seen[h] = seed
	}
}

// TestTraceHashIndependentOfGOMAXPROCS runs the same seeds concurrently under
// GOMAXPROCS 1 and 4, many runs at once, and demands identical hashes: a run
// must not depend on scheduling of goroutines, on which OS thread it lands,
// or on other runs in the same process.
func TestTraceHashIndependentOfGOMAXPROCS(t *testing.T) {
	seeds := []uint64{1, 2, 3, 42, 1 << 40}
	want := map[uint64]uint64{}
	for _, s := range seeds {
		want[s] = runDemo(t, s, true).TraceHash
	}
	for _, procs := range []int{1, 4} {
		prev := runtime.GOMAXPROCS(procs)
		var wg sync.WaitGroup
		var mu sync.Mutex
		got := map[uint64][]uint64{}
		for range 3 {
			for _, s := range seeds {
				wg.Add(1)
				go func() {
					defer wg.Done()
					h := runDemo(t, s, true).TraceHash
					mu.Lock()
					got[s] = append(got[s], h)
					mu.Unlock()
				}()
			}
		}
		wg.Wait()
		runtime.GOMAXPROCS(prev)
		for _, s := range seeds {
			for _, h := range got[s] {
				if h != want[s] {
					t.Fatalf("GOMAXPROCS=%d seed %d: hash %x, want %x", procs, s, h, want[s])
				}
			}
		}
	}
}

func TestDemoConvergesAfterHeal(t *testing.T) {
	for seed := uint64(1); seed <= 10; seed++ {
		r := runDemo(t, seed, true)
		if !r.Converged {
			t.Fatalf("seed %d: the demo did not converge after the heal: %+v", seed, r)
		}
	}
}

func TestDemoFaultsFire(t *testing.T) {
	cfg := demo.DefaultClusterConfig(3)
	c, err := demo.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.Run()
	applied := map[sim.FaultKind]bool{}
	for _, rec := range c.World.FaultLog() {
		if rec.Skipped != "" {
			t.Errorf("fault %s at %v skipped: %s", rec.Fault, rec.At, rec.Skipped)
		}
		if !rec.Undo {
			applied[rec.Fault.Kind] = true
		}
	}
	for _, f := range cfg.Faults {
		if !applied[f.Fault.Kind] {
			t.Errorf("scheduled %s never fired", f.Fault)
		}
	}
	// rack(a) holds node-0 and node-3: both lost power once.
	for _, name := range []string{"node-0", "node-3"} {
		id, _ := c.World.Lookup(name)
		if c.World.ProcessStats(id).PowerLosses == 0 {
			t.Errorf("%s in rack a did not lose power", name)
		}
	}
}

// TestNemesisSwarmPlanDependsOnSeed checks that swarm testing really varies
// the fault mix across seeds: some rules are off for some seeds and on for
// others, and rates differ.
func TestNemesisSwarmPlanDependsOnSeed(t *testing.T) {
	onCount := make([]int, len(demo.DemoNemesis()))
	rates := map[float64]bool{}
	for seed := uint64(1); seed <= 40; seed++ {
		cfg := demo.DefaultClusterConfig(seed)
		cfg.Nemesis = true
		c, err := demo.Build(cfg)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := demo.Build(cfg)
		if c.Plan.String() != again.Plan.String() {
			t.Fatalf("seed %d: the plan is not a function of the seed", seed)
		}
		anyOn := false
		for i, r := range c.Plan.Rules {
			if r.Enabled {
				onCount[i]++
				anyOn = true
				rates[r.RateFactor] = true
			}
		}
		if !anyOn {
			t.Fatalf("seed %d: swarm switched every rule off", seed)
		}
	}
	for i, n := range onCount {
		if n == 0 || n == 40 {
			t.Errorf("rule %d on in %d of 40 seeds: swarm should vary it", i, n)
		}
	}
	if len(rates) < 20 {
		t.Errorf("only %d distinct rates across seeds", len(rates))
	}
}

func TestNemesisStopsInjectingAfterStop(t *testing.T) {
	cfg := demo.DefaultClusterConfig(9)
	cfg.Faults = nil
	cfg.Nemesis = true
	c, err := demo.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.Run()
	injected := 0
	for _, rec := range c.World.FaultLog() {
		if rec.Origin != "heal" && !rec.Undo {
			injected++
			if rec.At >= cfg.Duration {
				t.Fatalf("nemesis fault at %v, after the fault phase ended at %v", rec.At, cfg.Duration)
			}
		}
	}
	if injected < 3 {
		t.Fatalf("nemesis injected only %d faults in %v", injected, cfg.Duration)
	}
}

func TestTraceRecordsEvents(t *testing.T) {
	buf := &sim.TraceBuffer{RecordsMax: 100_000}
	cfg := demo.DefaultClusterConfig(1)
	cfg.Trace = buf
	c, err := demo.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	traced := c.Run()
	if plain := runDemo(t, 1, false); plain.TraceHash != traced.TraceHash {
		t.Fatal("tracing must not change the run")
	}
	kinds := map[string]int{}
	for _, r := range buf.Records {
		kinds[r.Kind]++
	}
	for _, k := range []string{"deliver", "timer", "fsync", "fault", "fault-end", "boot", "crash"} {
		if kinds[k] == 0 {
			t.Errorf("no %q records in the trace: %v", k, kinds)
		}
	}
	_ = time.Second
}
