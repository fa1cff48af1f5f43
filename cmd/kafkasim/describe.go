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
		topic                   string
		groups, txnIDs          []string
		state, members, offsets bool
		verbose, asJSON         bool
	)
	cmd := &cobra.Command{
		Use:   "describe topics|groups|transactions RUN_DIR [--topic T] [--group G] [--transactional-id ID] [--state|--members|--offsets] [--verbose] [--json]",
		Short: "kafka-topics.sh / kafka-consumer-groups.sh / kafka-transactions.sh --describe style tables of a run's final state",
		Long: `describe prints a run's final state as Kafka's own tools would describe the
cluster when the run ended:

  topics        kafka-topics.sh --describe: per topic its id, partition count,
                replication factor and configs; per partition its leader,
                replicas, ISR, ELR and last known ELR, then the leader epoch,
                high watermark, last stable offset, log end offset and log
                start offset (--topic T: one topic)
  groups        kafka-consumer-groups.sh --describe: per group a line with its
                protocol, state, generation and leader (classic) or group and
                assignment epochs (consumer), assignment strategy and
                coordinator, then Kafka's table: --offsets (the default) the
                committed offset, log end offset, lag and owner of each
                partition; --members each member and its partitions; --state
                the coordinator, strategy, state and member count. --verbose
                adds Kafka's verbose columns; --group G (repeatable) picks
                groups
  transactions  kafka-transactions.sh describe: per transactional id its
                coordinator, producer id and epoch, state, timeout, the start
                and duration of the transaction open at the end (-1: none;
                the run's virtual milliseconds) and its partitions
                (--transactional-id ID, repeatable: those ids)

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
			groupFlags := cmd.Flags().Changed("group") || state || members || offsets || verbose
			if what != "groups" && groupFlags {
				return usage("--group, --state, --members, --offsets and --verbose are for describe groups")
			}
			if what != "transactions" && len(txnIDs) > 0 {
				return usage("--transactional-id is for describe transactions")
			}
			if what != "topics" && topic != "" {
				return usage("--topic is for describe topics")
			}
			switch what {
			case "topics":
				final, err := readFinalState(dir)
				if err != nil {
					return err
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
			case "groups":
				view, err := groupsView(state, members, offsets, verbose, asJSON)
				if err != nil {
					return err
				}
				final, err := readFinalState(dir)
				if err != nil {
					return err
				}
				for _, g := range groups {
					if _, ok := final.Group(g); !ok {
						its := "the run has no consumer groups"
						if ids := final.GroupIDs(); len(ids) > 0 {
							its = "its groups: " + strings.Join(ids, ", ")
						}
						return usage("Consumer group '%s' does not exist in %s (%s)", g, dir, its)
					}
				}
				if asJSON {
					return writeJSON(w, map[string]any{"groups": reports.DescribeGroupsJSON(final, groups)})
				}
				if len(final.Groups) == 0 {
					fmt.Fprintln(w, "No consumer groups in this run.")
					return nil
				}
				return reports.DescribeGroups(w, cmd.ErrOrStderr(), final, groups, view, verbose)
			case "transactions":
				final, err := readFinalState(dir)
				if err != nil {
					return err
				}
				for _, id := range txnIDs {
					if !slices.ContainsFunc(final.Transactions, func(t reports.TransactionState) bool { return t.TransactionalID == id }) {
						return usage("--transactional-id %s: no such transactional id in %s", id, dir)
					}
				}
				if asJSON {
					return writeJSON(w, map[string]any{what: reports.DescribeTransactionsJSON(final, txnIDs)})
				}
				if len(final.Transactions) == 0 {
					fmt.Fprintln(w, "No transactions in this run.")
					return nil
				}
				return reports.DescribeTransactions(w, final, txnIDs)
			}
			return usage("describe %q: want topics, groups or transactions", what)
		},
	}
	cmd.Flags().StringVar(&topic, "topic", "", "describe only this topic")
	cmd.Flags().StringArrayVar(&groups, "group", nil, "describe only this consumer group (repeatable)")
	cmd.Flags().StringArrayVar(&txnIDs, "transactional-id", nil, "describe transactions: only this transactional id (repeatable)")
	cmd.Flags().BoolVar(&offsets, "offsets", false, "describe groups: each partition's committed offset, log end offset, lag and owner (the default)")
	cmd.Flags().BoolVar(&members, "members", false, "describe groups: each member and its partitions")
	cmd.Flags().BoolVar(&state, "state", false, "describe groups: each group's coordinator, assignment strategy, state and member count")
	cmd.Flags().BoolVar(&verbose, "verbose", false, "describe groups: Kafka's verbose columns (leader epochs; member epochs and assignments; group epochs)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the description as JSON")
	return cmd
}

// groupsView is the view the flags ask for; as kafka-consumer-groups.sh,
// at most one of --state, --members and --offsets. --json prints every
// view's data, so it takes none of them.
func groupsView(state, members, offsets, verbose, asJSON bool) (reports.GroupsView, error) {
	n := 0
	for _, b := range []bool{state, members, offsets} {
		if b {
			n++
		}
	}
	switch {
	case n > 1:
		return 0, usage("describe groups takes at most one of --state, --members and --offsets")
	case asJSON && (n > 0 || verbose):
		return 0, usage("describe groups --json prints every view of each group: leave out --state, --members, --offsets and --verbose")
	case state:
		return reports.GroupStates, nil
	case members:
		return reports.GroupMembers, nil
	}
	return reports.GroupOffsets, nil
}

// readFinalState reads a run folder's final-state.json; a missing or
// malformed one is bad input (exit 2) naming the file and, for a bad one,
// the key.
func readFinalState(dir string) (reports.FinalState, error) {
	path := filepath.Join(dir, "final-state.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return reports.FinalState{}, usage("%s: not a run folder with a final state (%v)", dir, unwrapPath(err))
	}
	final, err := reports.ReadFinalState(data)
	if err != nil {
		return reports.FinalState{}, usage("%s: %v", path, err)
	}
	return final, nil
}
