package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"kafkasim/scenarios"
	"kafkasim/sweep"
)

func newSweepCommand() *cobra.Command {
	var (
		seeds    int
		parallel int
		out      string
		quiet    bool
	)
	cmd := &cobra.Command{
		Use:   "sweep SWEEP.yaml [--seeds N] [--parallel P] [--out DIR]",
		Short: "Run a grid of configurations × seeds; write runs.csv, cells.csv, plots and index.html",
		Long: `sweep runs every cell of a sweep file's grid (SPEC.md §6: the product of its axes,
each a Kafka key or one of kafkasim's fields, applied to a base scenario) with
seeds base-seed .. base-seed+N-1, in a pool of --parallel runs. It writes
OUT/<name>/runs.csv (one row per run), cells.csv (per cell: each metric's mean
and 95% interval), the plots (PNG and SVG) and index.html. Each run's figures are
kept under OUT/<name>/runs/, so an interrupted sweep (Ctrl-C) resumes where it
stopped. A cell whose configuration is impossible is reported and skipped.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sw, err := scenarios.LoadSweepFile(args[0])
			if err != nil {
				return inputError(err)
			}
			if seeds < 0 || parallel < 0 {
				return usage("--seeds and --parallel must not be negative")
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
			bar := newProgress(cmd.ErrOrStderr(), quiet, "sweep "+sw.Name, "runs", int64(cells*n))
			// Ctrl-C (or SIGTERM) stops dispatching; what finished is kept.
			interrupted, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stopSignals()
			res, err := sweep.Run(sw, sweep.Options{Seeds: seeds, Parallel: parallel, Out: out, Stop: interrupted.Done(),
				Progress: func(done, total, failed int) {
					bar.set(int64(done), int64(total), fmt.Sprintf("%d failed", failed))
				}})
			bar.finish()
			if err != nil {
				return simulatorFailed("%v", err)
			}
			var specs []sweep.PlotSpec
			for _, p := range sw.Plots {
				specs = append(specs, sweep.PlotSpec{Kind: p.Kind, X: p.X, Y: p.Y, Z: p.Z, Label: p.Label, Series: p.Series})
			}
			plots, err := sweep.WritePlots(res.Dir, res.Axes, res.Cells, specs)
			if err != nil {
				return simulatorFailed("plots: %v", err)
			}
			f, err := os.Create(filepath.Join(res.Dir, "index.html"))
			if err != nil {
				return simulatorFailed("%v", err)
			}
			bw := bufio.NewWriter(f)
			werr := sweep.WriteIndex(bw, sw.Name, res.Axes, res.Cells, plots, res.Dir, res.Notes)
			if ferr := bw.Flush(); werr == nil {
				werr = ferr
			}
			f.Close()
			if werr != nil {
				return simulatorFailed("index.html: %v", werr)
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "sweep %s: %d cells × %d seeds: %d runs now, %d resumed\n", sw.Name, cells, n, res.Runs, res.Resumed)
			for _, note := range res.Notes {
				fmt.Fprintf(w, "  %s\n", note)
			}
			fmt.Fprintf(w, "  %s/{runs.csv,cells.csv,index.html} and %d plots\n", res.Dir, len(plots))
			return nil
		},
	}
	cmd.Flags().IntVar(&seeds, "seeds", 0, "seeds per cell (overrides the file's)")
	cmd.Flags().IntVar(&parallel, "parallel", 0, "runs at once (default: every core)")
	cmd.Flags().StringVar(&out, "out", "runs/sweeps", "the output root")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "no progress output")
	return cmd
}
