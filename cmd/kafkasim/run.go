package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"kafkasim/history"
	"kafkasim/runner"
	"kafkasim/scenarios"
)

// exitInterrupted is the exit code of a command Ctrl-C stopped, as shells
// report a process SIGINT ended (128 + 2).
const exitInterrupted = 130

func newRunCommand() *cobra.Command {
	var (
		seed             uint64
		seedList         string
		out              string
		asJSON           bool
		checkDeterminism bool
		quiet            bool
		prof             profileFlags
		historyMemory    int64
		spillBlock       int
	)
	cmd := &cobra.Command{
		Use:   "run SCENARIO... [--seed N | --seeds A..B]",
		Short: "Run scenarios, check their histories, write run stores and print summaries",
		Long: `run builds the cluster a scenario describes, runs its fault phase (scheduled
faults and the nemesis), heals everything and lets the cluster settle, reads every
partition to its end, and checks the history: which anomalies happened, and
whether each is a cost the configuration permits or a broken guarantee.

SCENARIO is a file, or the name of a bundled scenario (kafkasim scenarios list):
'kafkasim run acks-all-safe' works from any folder. The seed is the scenario's
'seed:' (1 when it has none) unless --seed gives another; --seeds runs several
(1..20, or 3,7,9), and several SCENARIOs run one after the other: one line per
run, then a total.

Each run writes OUT/<scenario>/seed-<N>/ (scenario.yaml, history.jsonl.gz,
trace.jsonl.gz, summary.json, report.html, plots), replacing an earlier run of
the same scenario and seed (it says so). Exit 0 when every run's expectations
held, 1 when one failed, 2 on bad input, 3 when the simulator itself failed;
Ctrl-C stops the run in progress, removes its partial run store and exits 130.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageWithHelp(cmd, "run: name a scenario: a file, or a bundled scenario (kafkasim scenarios list)")
			}
			return nil
		},
		ValidArgsFunction: completeScenarios,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("seed") && seedList != "" {
				return usage("--seed and --seeds: give one or the other")
			}
			var seeds []uint64
			switch {
			case seedList != "":
				var err error
				if seeds, err = parseSeeds(seedList); err != nil {
					return usage("--seeds %q: %v", seedList, err)
				}
			case cmd.Flags().Changed("seed"):
				seeds = []uint64{seed}
			}
			// Every file is loaded (and every error reported) before the
			// first run starts.
			var loaded []*scenarios.Scenario
			var bad []error
			for _, a := range args {
				s, err := scenarios.Open(a)
				if err != nil {
					bad = append(bad, err)
					continue
				}
				loaded = append(loaded, s)
			}
			if len(bad) > 0 {
				return inputError(errors.Join(bad...))
			}
			var jobs []*scenarios.Scenario
			for _, s := range loaded {
				if seeds == nil {
					jobs = append(jobs, s)
					continue
				}
				for _, n := range seeds {
					c := *s
					c.Seed = n
					jobs = append(jobs, &c)
				}
			}
			endProfiles, err := prof.begin(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer endProfiles()
			interrupted, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stopSignals()
			opts := runOptions{out: out, quiet: quiet, determinism: checkDeterminism, stop: interrupted.Done(), stderr: cmd.ErrOrStderr(),
				spill: history.SpillConfig{Budget: historyMemory, BlockOps: spillBlock}}
			w := cmd.OutOrStdout()
			if len(jobs) == 1 {
				o := runOne(jobs[0], opts)
				if o.err != nil {
					return o.err
				}
				if asJSON {
					return writeJSON(w, o.res.Summary(versionString()))
				}
				printRun(w, o)
				return exitFor(o.res)
			}
			return runMany(w, jobs, opts, asJSON)
		},
	}
	cmd.Flags().Uint64Var(&seed, "seed", 0, "the run's seed (default: the scenario's seed:, which is 1 when it has none)")
	cmd.Flags().StringVar(&seedList, "seeds", "", "run these seeds: A..B, or a list A,B,C (ranges allowed in it)")
	cmd.Flags().StringVar(&out, "out", "runs", "the run store's root folder")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print summary.json to stdout instead of the text summary (several runs: one object with every run's)")
	cmd.Flags().BoolVar(&checkDeterminism, "check-determinism", false, "run twice and fail (exit 3) if the trace hashes differ")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "no progress output")
	// A long run's history holds hundreds of megabytes: past this, its
	// older operations go to a file beside the run store. Short runs
	// never reach it. Hidden: for measuring, and (with a tiny budget and
	// blocks) for holding the spilled history to the same run store.
	cmd.Flags().Int64Var(&historyMemory, "history-memory", DefaultHistoryMemory, "bytes of history kept in memory before the older operations spill to disk (0: all in memory)")
	cmd.Flags().IntVar(&spillBlock, "history-spill-block", 0, "operations spilled at once (a power of two up to 32768; 0: 32768)")
	cmd.Flags().MarkHidden("history-memory")
	cmd.Flags().MarkHidden("history-spill-block")
	prof.register(cmd)
	return cmd
}

// DefaultHistoryMemory is kafkasim run's history budget (--history-memory):
// an hour of the reference load records 27 M operations, some 1.3 GB with
// the record batches its polls point into; a minute of it, 22 MB. Past the
// budget the history spills as it grows, so a larger one only delays that:
// 32 MiB rather than 128 took 54 MB off the hour's live heap at the end of
// its simulation, a short run never spills.
const DefaultHistoryMemory = 32 << 20

type runOptions struct {
	spill       history.SpillConfig
	out         string
	quiet       bool
	determinism bool
	stop        <-chan struct{}
	stderr      io.Writer
}

// runOutcome is one run as the command saw it.
type runOutcome struct {
	res      *runner.Result
	dir      string
	replaced bool // an earlier run store of this scenario and seed was replaced
	// reproduced: --check-determinism ran it again with the same trace hash.
	reproduced bool
	err        error
}

// runOne runs a scenario with progress, writes its run store, and checks
// determinism when asked. err is the exit error when the run could not
// complete (interrupted, the simulator failed to start, the store could
// not be written, the trace hash not reproduced).
func runOne(s *scenarios.Scenario, o runOptions) runOutcome {
	store, err := runner.CreateStore(o.out, s.Name, s.Seed)
	if err != nil {
		return runOutcome{err: usage("cannot write the run store under %s: %v", o.out, err)}
	}
	total := s.Duration + s.Settle
	bar := newProgress(o.stderr, o.quiet, fmt.Sprintf("%s seed %d", s.Name, s.Seed), "sim-s", int64(total/time.Second))
	spill := o.spill
	spill.Dir = store.SpillDir()
	res, err := runner.Run(s, runner.Options{Trace: store.Trace(), Clock: time.Now, Stop: o.stop, HistorySpill: spill,
		BeforeChecks: func(rec runner.Recorded) {
			releaseSimulationMemory()
			store.Recorded(rec) // the history and plots written while the checks run
		},
		Progress: func(now, _ time.Duration) { bar.set(int64(now/time.Second), int64(total/time.Second), "") }})
	bar.finish()
	if err == nil && (res.Interrupted || stopped(o.stop)) {
		store.Abort()
		at := ""
		if res.Interrupted {
			at = fmt.Sprintf(" at simulated %v", res.SimTime.Round(time.Millisecond))
		}
		return runOutcome{res: res, err: &exitError{code: exitInterrupted,
			err: fmt.Errorf("interrupted: %s seed %d stopped%s; its partial run store was removed", s.Name, s.Seed, at)}}
	}
	if err != nil {
		store.Abort()
		return runOutcome{err: simulatorFailed("%v", err)}
	}
	if err := store.Finish(res, versionString()); err != nil {
		return runOutcome{err: simulatorFailed("writing the run store: %v", err)}
	}
	outcome := runOutcome{res: res, dir: store.Dir, replaced: store.Replaced}
	if o.determinism {
		again, err := runner.Run(s, runner.Options{Clock: time.Now, Stop: o.stop, HistorySpill: history.SpillConfig{Budget: o.spill.Budget, BlockOps: o.spill.BlockOps}})
		switch {
		case err == nil && again.Interrupted:
			outcome.err = &exitError{code: exitInterrupted, err: fmt.Errorf("interrupted: the determinism check of %s seed %d did not finish", s.Name, s.Seed)}
		case err != nil:
			outcome.err = simulatorFailed("determinism check: %v", err)
		case again.TraceHash != res.TraceHash || again.Events != res.Events:
			outcome.err = simulatorFailed("determinism check failed: %s seed %d gave trace hash %016x (%d events), then %016x (%d events)",
				s.Name, s.Seed, res.TraceHash, res.Events, again.TraceHash, again.Events)
		default:
			outcome.reproduced = true
		}
	}
	return outcome
}

func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// inputError maps a scenario error to exit 2; its text already names file,
// line and key.
func inputError(err error) error {
	var es scenarios.Errors
	var e *scenarios.Error
	if errors.As(err, &es) || errors.As(err, &e) {
		return &exitError{code: exitUsage, err: err}
	}
	return usage("%v", err)
}

// exitFor is the exit error of a run's verdict (nil when it passed).
func exitFor(res *runner.Result) error {
	switch res.Verdict {
	case runner.Pass:
		return nil
	case runner.Crash:
		return simulatorFailed("%s", res.Headline())
	case runner.Liveness:
		return failed("liveness failure: the cluster did not converge after healing: %s", res.ConvergeDetail)
	}
	return failed("%s", res.Headline())
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// fileExists reports whether path names a regular file.
func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
