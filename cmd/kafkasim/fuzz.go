package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"kafkasim/fuzz"
	"kafkasim/internal/plural"
	"kafkasim/internal/shardset"
	"kafkasim/model/cluster"
	"kafkasim/scenarios"
)

func newFuzzCommand() *cobra.Command {
	var (
		base      string
		runs      int
		duration  time.Duration
		parallel  int
		shard     string
		out       string
		bugs      []string
		seedStart uint64
		quiet     bool
		maxFails  int
		groups    int
		procs     int
		asJSON    bool
	)
	cmd := &cobra.Command{
		Use:   "fuzz [--base SCENARIO.yaml] [--runs N | --time DURATION] [--parallel P] [--shard K/N] [--max-failures N] [--out DIR]",
		Short: "Search random configurations and fault schedules for broken guarantees; shrink every failure to a replayable scenario",
		Long: `fuzz draws whole scenarios from seeds — cluster shape, topic, broker and client
configurations, and a swarm fault schedule (per seed some fault kinds are off and
the rest get very different rates) — runs each, and checks the property: no
guarantee the configuration promises breaks (permitted anomalies are fine), no
god-view invariant breaks, and the cluster heals once the faults stop.

Every failure is shrunk (fewest faults, clients, brokers, shortest run that still
fails the same way) and written to OUT as seed-<N>.yaml, a scenario that
'kafkasim run' replays to the same failure, beside seed-<N>.drawn.yaml as drawn.
OUT/summary.json holds the campaign: runs, failures, runs per second, time to
first failure. Ctrl-C (or SIGTERM) stops the campaign and keeps what was found; so does
--max-failures N once N failures are found.

--base fuzzes around your own scenario (its cluster, topics and clients; fresh
seeds and fault schedules). --bugs switches bug-zoo entries on. --shard K/N (0 <= K < N)
runs the seeds start+K, start+N+K, start+2N+K, ..., so that N machines split one
seed range without overlap; 'kafkasim fuzz merge DIR...' joins their outputs.
Exit 0 when no failure was found, 1 when one was, 2 for a bad flag or --base
scenario, 3 when the simulator itself failed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if groups < 0 || groups > 100 {
				return usage("--groups %d: want a percentage of seeds, 0..100", groups)
			}
			if procs < 0 || procs > 100 {
				return usage("--processors %d: want a percentage of seeds, 0..100", procs)
			}
			opts := fuzz.Options{Runs: runs, Time: duration, Parallel: parallel, Out: out, SeedStart: seedStart, MaxFailures: maxFails,
				GroupPercent: groups, ProcessorPercent: procs}
			if base != "" {
				s, err := scenarios.Open(base)
				if err != nil {
					return inputError(err)
				}
				opts.Base = s
			}
			for _, b := range bugs {
				for _, one := range strings.Split(b, ",") {
					one = strings.TrimSpace(one)
					if one == "" {
						continue
					}
					found := false
					for _, k := range cluster.KnownBugs {
						found = found || k == one
					}
					if !found {
						return usage("--bugs: unknown or not modelled bug %q (modelled: %s)", one, strings.Join(cluster.KnownBugs, ", "))
					}
					opts.Bugs = append(opts.Bugs, one)
				}
			}
			if shard != "" {
				ki, ni, err := shardset.ParseFlag(shard)
				if err != nil {
					return usage("%v", err)
				}
				opts.ShardIndex, opts.ShardCount = ki, ni
			}
			if runs < 0 || duration < 0 || parallel < 0 || opts.MaxFailures < 0 {
				return usage("--runs, --time, --parallel and --max-failures must not be negative")
			}
			if out == "" {
				out = "runs/fuzz"
				opts.Out = out
			}
			if runs == 0 && duration == 0 {
				opts.Runs = 100
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return usage("--out: cannot write counterexamples under %s: %v", out, err)
			}
			var bar *progress
			opts.Progress, bar = fuzzProgress(cmd.ErrOrStderr(), quiet, opts.Runs, duration)
			// Ctrl-C stops dispatching; what finished is kept. So does
			// SIGTERM: a cancelled CI job or a Kubernetes pod being
			// stopped gets it first.
			interrupted, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stopSignals()
			opts.Stop = interrupted.Done()
			sum, err := fuzz.Campaign(opts)
			bar.finish()
			if err != nil {
				return simulatorFailed("%v", err)
			}
			w := cmd.OutOrStdout()
			if asJSON {
				if err := writeJSON(w, sum); err != nil {
					return err
				}
			} else {
				printCampaign(w, sum, out)
			}
			if sum.Failures > 0 {
				return failed("fuzzing found %s", plural.Count(sum.Failures, "failure"))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&base, "base", "", "fuzz around this scenario's cluster, topics and clients (a file, or a bundled scenario's name)")
	cmd.Flags().IntVar(&runs, "runs", 0, "number of runs (default 100 unless --time is given)")
	cmd.Flags().DurationVar(&duration, "time", 0, "stop after this much wall time")
	cmd.Flags().IntVar(&parallel, "parallel", 0, "runs at once (default: every core)")
	cmd.Flags().StringVar(&shard, "shard", "", "K/N: run only the seeds i with i mod N = K")
	cmd.Flags().StringVar(&out, "out", "runs/fuzz", "where counterexamples and summary.json go")
	cmd.Flags().StringSliceVar(&bugs, "bugs", nil, "bug-zoo switches to turn on (comma separated)")
	cmd.Flags().Uint64Var(&seedStart, "seed-start", 1, "the first seed of the range")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "no progress output")
	cmd.Flags().IntVar(&maxFails, "max-failures", 0, "stop once this many failures are found (0: never)")
	cmd.Flags().IntVar(&groups, "groups", 30, "percentage of seeds (0..100) that draw consumer groups and member faults (0: none)")
	cmd.Flags().IntVar(&procs, "processors", 0, "percentage of seeds (0..100) that draw a stream processor (exactly-once or at-least-once) and faults on it (0: none)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the campaign's summary.json to stdout instead of the text summary")
	cmd.RegisterFlagCompletionFunc("bugs", completeBugs)
	cmd.AddCommand(newFuzzMergeCommand())
	return cmd
}

// fuzzProgress reports a campaign's advance: by runs when their number
// bounds it, by wall time when only --time does (its number of runs is not
// known ahead).
func fuzzProgress(stderr io.Writer, quiet bool, runs int, limit time.Duration) (func(done, failures int), *progress) {
	if runs > 0 {
		bar := newProgress(stderr, quiet, "fuzz", "runs", int64(runs))
		return func(done, failures int) {
			bar.set(int64(done), int64(runs), plural.Count(failures, "failure"))
		}, bar
	}
	secs := int64(max(limit/time.Second, 1))
	bar := newProgress(stderr, quiet, "fuzz", "s", secs)
	started := time.Now()
	return func(done, failures int) {
		elapsed := min(int64(time.Since(started)/time.Second), secs)
		bar.set(elapsed, secs, plural.Count(done, "run")+", "+plural.Count(failures, "failure"))
	}, bar
}

// printCampaign is the text summary of a campaign: its figures, then each
// counterexample as the written file shows it.
func printCampaign(w io.Writer, sum *fuzz.Summary, out string) {
	fmt.Fprintf(w, "fuzz: %s in %v (%.2f runs/s, %.2f per core, %.2f per CPU-second), %s", plural.Count(sum.Runs, "run"),
		time.Duration(sum.WallNs).Round(time.Millisecond), sum.RunsPerSecond, sum.RunsPerSecondPerCore, sum.RunsPerCPUSecond, plural.Count(sum.Failures, "failure"))
	if sum.TimeToFirstFailureNs >= 0 {
		fmt.Fprintf(w, ", first after %v", time.Duration(sum.TimeToFirstFailureNs).Round(time.Millisecond))
	}
	if sum.Interrupted {
		fmt.Fprint(w, " (interrupted)")
	}
	fmt.Fprintln(w)
	for _, f := range sum.Found {
		replays := fmt.Sprint(f.Replays)
		if !f.ReplayChecked {
			replays = "not checked, time ran out"
		}
		shown := f.Failure
		if f.Shown != nil {
			shown = f.Shown
		}
		fmt.Fprintf(w, "  seed %d: %s — %s\n", f.Seed, shown.Kind, cutLongWords(shown.Detail))
		if shown != f.Failure && shown.Detail != f.Failure.Detail {
			fmt.Fprintf(w, "    as drawn: %s — %s\n", f.Failure.Kind, cutLongWords(f.Failure.Detail))
		}
		fmt.Fprintf(w, "    %s (%s, drawn with %d; replays: %s); run it: kafkasim run %s\n", f.File, plural.Count(f.Faults, "fault"), f.FaultsDrawn, replays, f.File)
		if f.Shared > 1 {
			// A merged campaign (fuzz merge) lists a signature once.
			seeds := make([]string, len(f.Seeds))
			for i, s := range f.Seeds {
				seeds[i] = strconv.FormatUint(s, 10)
			}
			fmt.Fprintf(w, "    %s share its signature (%s): %s\n", plural.Count(f.Shared, "seed"), f.Signature, strings.Join(seeds, ", "))
		}
	}
	fmt.Fprintf(w, "  summary: %s\n", filepath.Join(out, "summary.json"))
}
