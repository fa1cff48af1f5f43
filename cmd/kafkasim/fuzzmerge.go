package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"kafkasim/fuzz"
	"kafkasim/internal/plural"
)

func newFuzzMergeCommand() *cobra.Command {
	var (
		out     string
		partial bool
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "merge DIR... [--out DIR] [--partial] [--json]",
		Short: "Join the outputs of a campaign's shards (fuzz --shard K/N) into one campaign",
		Long: `merge joins the output folders of one campaign's shards, each holding the
summary.json and seed-*.yaml counterexamples of a 'kafkasim fuzz --shard K/N',
into one campaign folder: one summary.json of the whole campaign (runs, failures,
events and CPU time summed, the wall time the longest shard's, since they ran at
once), its counterexamples deduplicated by signature (the lowest seed kept, with
the seeds that shared it), and every counterexample file copied beside it.

It refuses, writing nothing, a folder without a readable summary.json, shards
that were not run alike (seed start, N, bugs, base, groups, processors,
max-failures), a shard index twice, and, unless --partial, a missing shard.
A DIR holding a pattern no shell expanded (/results/shard-*, as a container
without a shell passes it) is expanded by merge itself.
Exit 0 when the merged campaign found no failure, 1 when it did, 2 when it refuses.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, dirs []string) error {
			sum, err := fuzz.Merge(expandDirGlobs(dirs), out, partial)
			var refused *fuzz.MergeError
			if errors.As(err, &refused) {
				return usage("%v", err)
			}
			if err != nil {
				return usage("fuzz merge: cannot write %s: %v", out, err)
			}
			w := cmd.OutOrStdout()
			if asJSON {
				if err := writeJSON(w, sum); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(w, "merged %s (%s): %s under %s\n", plural.Count(len(sum.Shards), "shard"), sum.Shard,
					plural.Count(sum.Failures, "failure"), plural.Count(len(sum.Found), "signature"))
				printCampaign(w, sum, out)
			}
			if sum.Failures > 0 {
				return failed("the merged campaign found %s", plural.Count(sum.Failures, "failure"))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "runs/fuzz-merged", "where the merged summary.json and counterexamples go")
	cmd.Flags().BoolVar(&partial, "partial", false, "merge even when some shards of N are missing")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the merged summary.json to stdout instead of the text summary")
	return cmd
}
