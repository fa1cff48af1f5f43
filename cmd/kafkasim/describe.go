package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"kafkasim/reports"
)

func newDescribeCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "describe groups|topics RUN_DIR",
		Short: "kafka-topics.sh / kafka-consumer-groups.sh --describe style tables of a run's final state",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			what, dir := args[0], args[1]
			switch what {
			case "topics":
				path := filepath.Join(dir, "final-state.json")
				data, err := os.ReadFile(path)
				if err != nil {
					return usage("%s: not a run folder with a final state (%v)", dir, unwrapPath(err))
				}
				var final []reports.PartitionState
				if err := json.Unmarshal(data, &final); err != nil {
					return usage("%s: %v", path, err)
				}
				return reports.DescribeTopics(cmd.OutOrStdout(), final)
			case "groups":
				if !fileExists(filepath.Join(dir, "summary.json")) {
					return usage("%s: not a run folder (no summary.json)", dir)
				}
				fmt.Fprintln(cmd.OutOrStdout(), "No consumer groups: kafkasim does not model consumer groups yet; its consumers are assign-mode readers.")
				return nil
			}
			return usage("describe %q: want groups or topics", what)
		},
	}
	return cmd
}
