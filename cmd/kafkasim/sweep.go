package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"kafkasim/internal/plural"
	"kafkasim/internal/shardset"
	"kafkasim/sweep"
)

// sweepFailuresShown is how many failed runs the console lists; summary.json
// and index.html list them all.
const sweepFailuresShown = 10

func newSweepCommand() *cobra.Command {
	var (
		seeds    int
		parallel int
		out      string
		quiet    bool
		asJSON   bool
		shard    string
	)
	cmd := &cobra.Command{
		Use:   "sweep SWEEP.yaml [--seeds N] [--parallel P] [--shard K/N] [--out DIR] [--json]",
		Short: "Run a grid of configurations × seeds; write runs.csv, cells.csv, plots, index.html and summary.json",
		Long: `sweep runs every cell of a sweep file's grid (the product of its axes, each a
Kafka key or one of kafkasim's fields, applied to a base scenario) with seeds
base-seed .. base-seed+N-1, in a pool of --parallel runs. It writes
OUT/<name>/runs.csv (one row per run), cells.csv (per cell: each metric's mean
and 95% interval), the plots (PNG and SVG), index.html and summary.json. Each
run's figures are kept under OUT/<name>/runs/, so an interrupted sweep (Ctrl-C)
resumes where it stopped. A cell whose configuration is impossible is reported
and skipped.

--shard K/N (0 <= K < N) runs one shard: numbering the runs of the grid's valid
cells in order (cell, then seed) from 0, those whose number i has i mod N = K,
so that N machines split even a sweep of few cells and many seeds. Each shard
writes its runs and its own (partial) outputs; 'kafkasim sweep merge DIR...'
joins the shards' folders into the sweep one machine would have written.

A run that does not pass is listed with its cell, seed, verdict and what
happened, and its scenario is written beside its figures
(OUT/<name>/runs/<cell>/seed-<N>.yaml): "kafkasim run" on that file replays it
with a full run store and report.

Exit codes: 0 when every run passed; 1 when a run's expectations failed
(verdict fail or liveness) — every output is still written, so a sweep over
configurations that lose data should not assert in its base what they break;
2 for a bad sweep file or flag; 3 when the simulator failed in a run (crash)
or a plot could not be drawn.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sw, err := sweep.Load(args[0])
			if err != nil {
				return inputError(err)
			}
			if seeds < 0 || parallel < 0 {
				return usage("--seeds and --parallel must not be negative")
			}
			opts := sweep.Options{Seeds: seeds, Parallel: parallel, Out: out}
			if shard != "" {
				k, n, err := shardset.ParseFlag(shard)
				if err != nil {
					return usage("%v", err)
				}
				opts.ShardIndex, opts.ShardCount = k, n
			}
			n := sw.Seeds
			if seeds > 0 {
				n = seeds
			}
			cells := 1
			for _, a := range sw.Axes {
				cells *= len(a.Values)
			}
			if err := os.MkdirAll(filepath.Join(out, sw.Name), 0o755); err != nil {
				return usage("--out: cannot write the sweep under %s: %v", out, err)
			}
			label := "sweep " + sw.Name
			if opts.ShardCount > 0 {
				label += " " + shard
			}
			bar := newProgress(cmd.ErrOrStderr(), quiet, label, "runs", int64(cells*n/max(opts.ShardCount, 1)))
			// Ctrl-C (or SIGTERM) stops dispatching; what finished is kept.
			interrupted, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stopSignals()
			opts.Stop = interrupted.Done()
			opts.Progress = func(done, total, failed int) {
				bar.set(int64(done), int64(total), fmt.Sprintf("%d failed", failed))
			}
			res, err := sweep.Run(sw, opts)
			bar.finish()
			if err != nil {
				return simulatorFailed("%v", err)
			}
			sum, err := sweep.Report(res, sw.Plots, sweep.Info{Name: sw.Name, File: args[0], Base: sw.BasePath, Version: versionString()})
			if asJSON {
				if jerr := writeJSON(cmd.OutOrStdout(), sum); jerr != nil {
					return simulatorFailed("%v", jerr)
				}
			} else {
				printSweep(cmd.OutOrStdout(), sum, cells, n)
			}
			return sweepExit(sum, err)
		},
	}
	cmd.Flags().IntVar(&seeds, "seeds", 0, "seeds per cell (overrides the file's)")
	cmd.Flags().IntVar(&parallel, "parallel", 0, "runs at once (default: every core)")
	cmd.Flags().StringVar(&shard, "shard", "", "K/N: run only the runs i (cell, then seed, from 0) with i mod N = K")
	cmd.Flags().StringVar(&out, "out", "runs/sweeps", "the output root")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "no progress output")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print summary.json to stdout instead of the text summary")
	cmd.AddCommand(newSweepMergeCommand())
	return cmd
}

// sweepExit is a sweep's exit, from its summary and the error writing its
// outputs: 3 when the simulator failed in a run or an output could not be
// written, 1 when a run did not pass.
func sweepExit(sum *sweep.Summary, err error) error {
	switch {
	case err != nil:
		return simulatorFailed("%v", err)
	case sum.ExitCode == exitSimulator:
		return simulatorFailed("the simulator failed in %s", plural.Count(sum.Runs.Crashed, "run"))
	case sum.ExitCode == exitFailed:
		return failed("%s of %d did not pass", plural.Count(sum.Runs.Failed+sum.Runs.Liveness, "run"), sum.Runs.Finished)
	}
	return nil
}

// printSweep is the console's account of a sweep: the counts, each failed
// run (the first few) with the file that replays it, the notes and where
// the outputs are.
func printSweep(w io.Writer, s *sweep.Summary, cells, seeds int) {
	shard := ""
	if s.Shard != "" {
		shard = ", shard " + s.Shard
	}
	fmt.Fprintf(w, "sweep %s%s: %s × %s: %s now, %d resumed", s.Sweep, shard, plural.Count(cells, "cell"), plural.Count(seeds, "seed"),
		plural.Count(s.Runs.Now, "run"), s.Runs.Resumed)
	if s.Runs.Finished > 0 {
		fmt.Fprintf(w, "; %d passed", s.Runs.Passed)
		for _, c := range []struct {
			n    int
			what string
		}{{s.Runs.Failed, "failed"}, {s.Runs.Liveness, "did not converge"}, {s.Runs.Crashed, "crashed"}} {
			if c.n > 0 {
				fmt.Fprintf(w, ", %d %s", c.n, c.what)
			}
		}
	}
	if s.Interrupted {
		fmt.Fprint(w, " (interrupted)")
	}
	fmt.Fprintln(w)
	for i, f := range s.FailedRuns {
		if i == sweepFailuresShown {
			fmt.Fprintf(w, "  … and %s more: every one is in %s and %s\n", plural.Count(len(s.FailedRuns)-i, "failed run"),
				filepath.Join(s.Dir, "summary.json"), filepath.Join(s.Dir, "index.html"))
			break
		}
		fmt.Fprintf(w, "  %s: cell %s, seed %d: %s\n", f.Verdict, f.Cell, f.Seed, f.Headline)
		fmt.Fprintf(w, "    replay: kafkasim run %s\n", filepath.Join(s.Dir, filepath.FromSlash(f.Scenario)))
	}
	for _, note := range s.Notes {
		fmt.Fprintf(w, "  note: %s\n", note)
	}
	fmt.Fprintf(w, "  %s/{runs.csv,cells.csv,summary.json,index.html} and %s\n", s.Dir, plural.Count(len(s.Plots), "plot"))
}
