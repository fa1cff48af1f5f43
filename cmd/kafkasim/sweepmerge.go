package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"kafkasim/internal/plural"
	"kafkasim/sweep"
)

func newSweepMergeCommand() *cobra.Command {
	var (
		out     string
		partial bool
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "merge DIR... [--out DIR] [--partial] [--json]",
		Short: "Join the outputs of a sweep's shards (sweep --shard K/N) into one sweep",
		Long: `merge joins the output folders of one sweep's shards, each written by a
'kafkasim sweep SWEEP.yaml --shard K/N --out DIR' (give that DIR, or the sweep's
folder DIR/<name> in it), into one sweep folder, OUT/<name>/: every shard's
runs/ copied there, and runs.csv, cells.csv, the plots, index.html and
summary.json built from those runs exactly as one machine's sweep of the whole
grid would have written them. It runs nothing, and needs neither the sweep file
nor its base: the shards' summary.json files describe the grid and the plots.
In summary.json the runs counts are summed, wall_ns is the longest shard's (they
ran at once) and cpu_ns the shards' summed.

It refuses, writing nothing, a folder without a sweep shard's summary.json,
shards of different sweeps (name, version, N, seeds per cell, or sweep_digest:
the grid, the base or the plots), an interrupted shard, a shard index twice, a
run missing from its shard's folder, and, unless --partial, a missing shard.
A DIR holding a pattern no shell expanded (/results/sweep/shard-*, as a
container without a shell passes it) is expanded by merge itself.
Exit 0 when every run passed, 1 when a run did not, 2 when it refuses, 3 when a
run crashed or a plot could not be drawn.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, dirs []string) error {
			sum, err := sweep.Merge(expandDirGlobs(dirs), out, partial)
			var refused *sweep.MergeError
			if errors.As(err, &refused) {
				return usage("%v", err)
			}
			if sum == nil {
				return usage("sweep merge: cannot write under %s: %v", out, err)
			}
			w := cmd.OutOrStdout()
			if asJSON {
				if jerr := writeJSON(w, sum); jerr != nil {
					return simulatorFailed("%v", jerr)
				}
			} else {
				fmt.Fprintf(w, "merged %s (%s) into %s\n", plural.Count(len(sum.Shards), "shard"), sum.Shard, filepath.Join(out, sum.Sweep))
				printSweep(w, sum, sum.Cells.Total, sum.SeedsPerCell)
			}
			return sweepExit(sum, err)
		},
	}
	cmd.Flags().StringVar(&out, "out", "runs/sweeps", "the output root: the merged sweep goes to OUT/<name>/")
	cmd.Flags().BoolVar(&partial, "partial", false, "merge even when some shards of N are missing")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the merged summary.json to stdout instead of the text summary")
	return cmd
}
