package fuzz

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"time"

	"kafkasim/internal/cputime"
	"kafkasim/internal/plural"
	"kafkasim/runner"
	"kafkasim/scenarios"
)

// Options configure a campaign. Parallelism lives here, between runs: each
// run is one goroutine's deterministic world.
type Options struct {
	// Base, when set, fixes the cluster, topics and clients; the fuzzer
	// draws seeds and fault schedules around it.
	Base *scenarios.Scenario
	// Bugs are bug-zoo switches to turn on in every run.
	Bugs []string
	// Runs bounds the campaign by count, Time by wall time (one of them,
	// or both: whichever ends first).
	Runs int
	Time time.Duration
	// Parallel is the number of runs at once (default: every core).
	Parallel int
	// ShardIndex of ShardCount: this campaign runs seeds SeedStart+i with
	// i % ShardCount == ShardIndex, so that machines split a seed range.
	ShardIndex, ShardCount int
	SeedStart              uint64
	// Out is where counterexamples and the summary go.
	Out string
	// ShrinkRuns bounds the runs spent shrinking one failure; ShrinkMax
	// bounds how many failures are shrunk (the rest are kept as drawn).
	ShrinkRuns, ShrinkMax int
	// Progress is called after every run.
	Progress func(done, failures int)
	// Stop, when closed, ends the campaign early; what was found is kept.
	Stop <-chan struct{}
	// GroupPercent is the share of seeds (0..100) that draw consumer
	// groups.
	GroupPercent int
	// ProcessorPercent is the share of seeds (0..100) that draw a stream
	// processor and faults on it.
	ProcessorPercent int
	// MaxFailures, when positive, ends the campaign once it has found that
	// many failures (runs already started finish).
	MaxFailures int
}

// Summary is the campaign's summary.json.
type Summary struct {
	Runs                 int     `json:"runs"`
	Failures             int     `json:"failures"`
	WallNs               int64   `json:"wall_ns"`
	RunsPerSecond        float64 `json:"runs_per_second"`
	RunsPerSecondPerCore float64 `json:"runs_per_second_per_core"`
	// CPUNs is the CPU time the campaign's process used (user and system,
	// every thread), and RunsPerCPUSecond runs over it: the rate per core
	// actually used, which RunsPerSecondPerCore (a share of the wall
	// clock) overstates when one worker's collector or checker spills onto
	// an idle core. Both 0 where the platform does not tell (extensions of
	// the summary, docs/run-store.md).
	CPUNs            int64    `json:"cpu_ns"`
	RunsPerCPUSecond float64  `json:"runs_per_cpu_second"`
	Parallel         int      `json:"parallel"`
	Shard            string   `json:"shard"`
	SeedStart        uint64   `json:"seed_start"`
	Bugs             []string `json:"bugs"`
	Base             string   `json:"base,omitempty"`
	MaxFailures      int      `json:"max_failures,omitempty"`
	// GroupPercent and ProcessorPercent are --groups and --processors, so
	// that shards merged (Merge) are known to have drawn alike.
	GroupPercent         int     `json:"groups"`
	ProcessorPercent     int     `json:"processors"`
	TimeToFirstFailureNs int64   `json:"time_to_first_failure_ns"` // -1: none
	Found                []Found `json:"found"`
	Interrupted          bool    `json:"interrupted"`
	Events               uint64  `json:"events"`
	SimTimeNs            int64   `json:"sim_time_ns"`
	// Shards, in a merged campaign only (Merge), is each shard merged.
	Shards  []ShardRun `json:"shards,omitempty"`
	started time.Time  `json:"-"`
}

// Found is one counterexample.
type Found struct {
	Seed uint64 `json:"seed"`
	// Failure is the failure of the scenario as drawn; Shown is the
	// failure the written (shrunk) file shows when run, which its header
	// names: the same kind, perhaps through other records (an extension;
	// absent when the file was not run again).
	Failure *Failure `json:"failure"`
	Shown   *Failure `json:"shown,omitempty"`
	// File is the shrunk scenario, Original the scenario as drawn.
	File     string `json:"file"`
	Original string `json:"original"`
	// Faults before and after shrinking, runs spent shrinking, and
	// whether the written file replays to the same failure.
	FaultsDrawn int  `json:"faults_drawn"`
	Faults      int  `json:"faults"`
	ShrinkRuns  int  `json:"shrink_runs"`
	Replays     bool `json:"replays"`
	// ReplayChecked is false when the campaign's time ran out (or it was
	// interrupted) before the written file was run again (an extension).
	ReplayChecked bool `json:"replay_checked"`
	// In a merged campaign only (Merge): the failure's Signature, and the
	// Seeds (ascending, this one first) of every failure that shared it,
	// Shared of them.
	Signature string   `json:"signature,omitempty"`
	Shared    int      `json:"shared,omitempty"`
	Seeds     []uint64 `json:"seeds,omitempty"`
}

// SeedAt is the seed of the campaign's i-th run: shard K of N takes the
// seeds start + i·N + K, so N shards cover one range without overlap.
func (o Options) SeedAt(i int) uint64 {
	n := max(o.ShardCount, 1)
	return o.SeedStart + uint64(i)*uint64(n) + uint64(o.ShardIndex)
}

// runOne runs a scenario and judges it.
func runOne(s *scenarios.Scenario) (*runner.Result, *Failure) {
	res, err := runner.Run(s, runner.Options{})
	if err != nil {
		return nil, &Failure{Kind: "crash", Detail: err.Error()}
	}
	return res, Judge(res)
}

// Campaign runs the search.
func Campaign(opts Options) (*Summary, error) {
	if opts.Parallel <= 0 {
		opts.Parallel = runtime.NumCPU()
	}
	if opts.ShardCount <= 0 {
		opts.ShardCount = 1
	}
	if opts.ShrinkRuns <= 0 {
		opts.ShrinkRuns = 150
	}
	if opts.ShrinkMax <= 0 {
		opts.ShrinkMax = 5
	}
	if opts.Runs <= 0 && opts.Time <= 0 {
		opts.Runs = 100
	}
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return nil, err
	}
	sum := &Summary{Parallel: opts.Parallel, Shard: fmt.Sprintf("%d/%d", opts.ShardIndex, opts.ShardCount),
		SeedStart: opts.SeedStart, Bugs: append([]string{}, opts.Bugs...), TimeToFirstFailureNs: -1, Found: []Found{},
		GroupPercent: opts.GroupPercent, ProcessorPercent: opts.ProcessorPercent,
		started: time.Now()}
	cpuBefore, cpuKnown := cputime.Process()
	if opts.Base != nil {
		sum.Base = opts.Base.Name
	}
	sum.MaxFailures = max(opts.MaxFailures, 0)
	deadline := time.Time{}
	if opts.Time > 0 {
		deadline = sum.started.Add(opts.Time)
	}
	// stopped: the campaign's time is up or it was interrupted. Shrinking
	// stops there too and keeps what it has (the campaign ends within a run
	// or two of either).
	stopped := func() bool {
		if !deadline.IsZero() && time.Now().After(deadline) {
			return true
		}
		select {
		case <-opts.Stop:
			return true
		default:
			return false
		}
	}
	seeds := make(chan uint64)
	var mu sync.Mutex
	var wg sync.WaitGroup
	var genErr error
	shrunk := 0
	for range opts.Parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seed := range seeds {
				if opts.MaxFailures > 0 {
					mu.Lock()
					enough := sum.Failures >= opts.MaxFailures
					mu.Unlock()
					if enough {
						continue // handed out before the last failure was counted
					}
				}
				s, err := GenerateMix(seed, opts.Base, opts.Bugs, opts.GroupPercent, opts.ProcessorPercent)
				if err != nil {
					mu.Lock()
					genErr = fmt.Errorf("seed %d: the generator drew an invalid scenario: %w", seed, err)
					mu.Unlock()
					continue
				}
				res, fail := runOne(s)
				mu.Lock()
				sum.Runs++
				if res != nil {
					sum.Events += res.Events
					sum.SimTimeNs += int64(res.SimTime)
				}
				doShrink := false
				if fail != nil {
					sum.Failures++
					if sum.TimeToFirstFailureNs < 0 {
						sum.TimeToFirstFailureNs = int64(time.Since(sum.started))
					}
					doShrink = shrunk < opts.ShrinkMax
					if doShrink {
						shrunk++
					}
				}
				runs, fails := sum.Runs, sum.Failures
				mu.Unlock()
				if opts.Progress != nil {
					opts.Progress(runs, fails)
				}
				if fail == nil {
					continue
				}
				found := record(opts, s, fail, doShrink, stopped)
				mu.Lock()
				sum.Found = append(sum.Found, found)
				mu.Unlock()
			}
		}()
	}
	interrupted := false
dispatch:
	for i := 0; opts.Runs <= 0 || i < opts.Runs; i++ {
		if !deadline.IsZero() && time.Now().After(deadline) {
			break
		}
		if opts.MaxFailures > 0 {
			mu.Lock()
			enough := sum.Failures >= opts.MaxFailures
			mu.Unlock()
			if enough {
				break
			}
		}
		seed := opts.SeedAt(i)
		select {
		case seeds <- seed:
		case <-opts.Stop:
			interrupted = true
			break dispatch
		}
	}
	close(seeds)
	wg.Wait()
	sum.Interrupted = interrupted
	wall := time.Since(sum.started)
	sum.WallNs = int64(wall)
	if wall > 0 {
		sum.RunsPerSecond = float64(sum.Runs) / wall.Seconds()
		sum.RunsPerSecondPerCore = sum.RunsPerSecond / float64(min(opts.Parallel, runtime.NumCPU()))
	}
	if cpuAfter, ok := cputime.Process(); ok && cpuKnown && cpuAfter > cpuBefore {
		sum.CPUNs = int64(cpuAfter - cpuBefore)
		sum.RunsPerCPUSecond = float64(sum.Runs) / (cpuAfter - cpuBefore).Seconds()
	}
	sort.Slice(sum.Found, func(i, j int) bool { return sum.Found[i].Seed < sum.Found[j].Seed })
	data, _ := json.MarshalIndent(sum, "", "  ")
	if err := os.WriteFile(filepath.Join(opts.Out, "summary.json"), append(data, '\n'), 0o644); err != nil {
		return sum, err
	}
	return sum, genErr
}

// record writes a counterexample: the scenario as drawn, and shrunk, each a
// scenario file whose run fails (its expect block keeps the default: no
// violation, converged).
func record(opts Options, s *scenarios.Scenario, fail *Failure, shrink bool, stop func() bool) Found {
	f := Found{Seed: s.Seed, Failure: fail, FaultsDrawn: len(s.Faults), Faults: len(s.Faults)}
	name := "seed-" + strconv.FormatUint(s.Seed, 10)
	f.Original = filepath.Join(opts.Out, name+".drawn.yaml")
	writeScenario(f.Original, s, fail, "as drawn")
	final := s
	if shrink {
		final, f.ShrinkRuns = Shrink(s, fail, opts.ShrinkRuns, stop, func(c *scenarios.Scenario) *Failure {
			_, g := runOne(c)
			return g
		})
		final.Name = s.Name + "-shrunk"
	}
	f.Faults = len(final.Faults)
	f.File = filepath.Join(opts.Out, name+".yaml")
	how := fmt.Sprintf("shrunk from %s in %s", plural.Count(len(s.Faults), "fault"), plural.Count(f.ShrinkRuns, "run"))
	if shrink && stop() {
		how += ", cut short when the campaign's time ran out or it was interrupted"
	}
	if !shrink {
		how = fmt.Sprintf("not shrunk: only the first %d failures of a campaign are", opts.ShrinkMax)
	}
	if stop() {
		// Out of time: the file as it stands, not run again (a failing
		// run can take seconds: a liveness failure waits out its healing).
		writeScenario(f.File, final, fail, how)
		return f
	}
	// The header tells the failure the file itself shows (a shrunk
	// scenario fails the same way, with other records).
	_, own := runOne(final)
	header := fail
	if own != nil {
		header = own
		f.Shown = own
	}
	writeScenario(f.File, final, header, how)
	// The file must replay to the same failure.
	if again, err := scenarios.LoadFile(f.File); err == nil {
		_, g := runOne(again)
		f.Replays, f.ReplayChecked = fail.same(g), true
	}
	return f
}

func writeScenario(path string, s *scenarios.Scenario, fail *Failure, how string) {
	data, err := s.Resolved()
	if err != nil {
		return
	}
	header := fmt.Sprintf("# kafkasim fuzz counterexample (%s): %s failure\n# %s\n# Replay: kafkasim run %s\n", how, fail.Kind, fail.Detail, path)
	os.WriteFile(path, append([]byte(header), data...), 0o644)
}
