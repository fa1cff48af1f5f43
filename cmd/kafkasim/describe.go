package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"kafkasim/reports"
)

// describeKinds are what describe takes, as the Kafka tools name them.
var describeKinds = []string{"topics", "groups", "transactions"}

func newDescribeCommand() *cobra.Command {
	var (
		topic  string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "describe topics|groups|transactions RUN_DIR [--topic T] [--json]",
		Short: "kafka-topics.sh / kafka-consumer-groups.sh / kafka-transactions.sh --describe style tables of a run's final state",
		Long: `describe prints a run's final state as Kafka's own tools would describe the
cluster when the run ended:

  topics        kafka-topics.sh --describe: per topic its id, partition count,
                replication factor and configs; per partition its leader,
                replicas, ISR, ELR and last known ELR, then the leader epoch,
                high watermark, last stable offset, log end offset and log
                start offset (--topic T: one topic)
  groups        kafka-consumer-groups.sh --describe (consumer groups are not
                modelled in the simulated cluster yet: there are none)
  transactions  kafka-transactions.sh describe (transactions are not modelled
                in the simulated cluster yet: there are none)

RUN_DIR is a run store folder (OUT/<scenario>/seed-<N>/).`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usageWithHelp(cmd, "describe: name what to describe (topics, groups or transactions) and a run folder")
			}
			return nil
		},
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return describeKinds, cobra.ShellCompDirectiveNoFileComp
			}
			return nil, cobra.ShellCompDirectiveFilterDirs
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			what, dir := args[0], args[1]
			w := cmd.OutOrStdout()
			switch what {
			case "topics":
				path := filepath.Join(dir, "final-state.json")
				data, err := os.ReadFile(path)
				if err != nil {
					return usage("%s: not a run folder with a final state (%v)", dir, unwrapPath(err))
				}
				final, err := reports.ReadFinalState(data)
				if err != nil {
					return usage("%s: %v", path, err)
				}
				if topic != "" {
					names := final.TopicNames()
					if !slices.Contains(names, topic) {
						return usage("--topic %s: no such topic in %s (its topics: %s)", topic, dir, strings.Join(names, ", "))
					}
					final = final.Only(topic)
				}
				if asJSON {
					return writeJSON(w, map[string]any{"topics": reports.DescribeTopicsJSON(final)})
				}
				return reports.DescribeTopics(w, final)
			case "groups", "transactions":
				if topic != "" {
					return usage("--topic is for describe topics")
				}
				if !fileExists(filepath.Join(dir, "summary.json")) {
					return usage("%s: not a run folder (no summary.json)", dir)
				}
				if asJSON {
					return writeJSON(w, map[string]any{what: []any{}})
				}
				if what == "groups" {
					fmt.Fprintln(w, "No consumer groups: kafkasim does not model consumer groups in the simulated cluster yet; its consumers are assign-mode readers.")
				} else {
					fmt.Fprintln(w, "No transactions: kafkasim does not model transactions in the simulated cluster yet.")
				}
				return nil
			}
			return usage("describe %q: want topics, groups or transactions", what)
		},
	}
	cmd.Flags().StringVar(&topic, "topic", "", "describe only this topic")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the description as JSON")
	return cmd
}
