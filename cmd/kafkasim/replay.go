package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"kafkasim/history"
	"kafkasim/runner"
	"kafkasim/scenarios"
)

func newReplayCommand() *cobra.Command {
	var quiet, asJSON bool
	cmd := &cobra.Command{
		Use:   "replay RUN_DIR [--json]",
		Short: "Re-run a stored run from its resolved scenario and seed; fail if the trace hash differs",
		Long: `replay loads RUN_DIR/scenario.yaml (the resolved scenario, seed included) and
runs it again, then compares the trace hash with RUN_DIR/summary.json. The same
hash means the same events in the same order: the run is reproduced, and exits
as kafkasim run would (0 when every expectation held, 1 otherwise). A different
hash is a determinism failure (exit 3). The stored run is left as it is.
--json prints {"run_dir", "reproduced", "stored_trace_hash", "summary"}, the
summary being the replay's summary.json.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageWithHelp(cmd, "replay: name one run folder (OUT/<scenario>/seed-<N>)")
			}
			return nil
		},
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
			return nil, cobra.ShellCompDirectiveFilterDirs
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			scenarioPath := filepath.Join(dir, "scenario.yaml")
			summaryPath := filepath.Join(dir, "summary.json")
			if !fileExists(scenarioPath) || !fileExists(summaryPath) {
				return usage("%s: not a run folder (want scenario.yaml and summary.json in it)", dir)
			}
			s, err := scenarios.LoadFile(scenarioPath)
			if err != nil {
				return inputError(err)
			}
			want, err := readTraceHash(summaryPath)
			if err != nil {
				return usage("%v", err)
			}
			total := s.Duration + s.Settle
			bar := newProgress(cmd.ErrOrStderr(), quiet, "replay "+s.Name, "sim-s", int64(total/time.Second))
			res, err := runner.Run(s, runner.Options{Clock: time.Now, HistorySpill: history.SpillConfig{Budget: DefaultHistoryMemory},
				Progress: func(now, _ time.Duration) { bar.set(int64(now/time.Second), int64(total/time.Second), "") }})
			bar.finish()
			if err == nil {
				err = res.History.Err()
			}
			if err != nil {
				return simulatorFailed("%v", err)
			}
			got := fmt.Sprintf("%016x", res.TraceHash)
			if asJSON {
				if err := writeJSON(cmd.OutOrStdout(), struct {
					RunDir          string         `json:"run_dir"`
					Reproduced      bool           `json:"reproduced"`
					StoredTraceHash string         `json:"stored_trace_hash"`
					Summary         runner.Summary `json:"summary"`
				}{dir, got == want, want, res.Summary(versionString())}); err != nil {
					return err
				}
			}
			if got != want {
				return simulatorFailed("replay of %s did not reproduce the run: trace hash %s, stored %s (if its scenario.yaml was edited since, run that with kafkasim run instead)", dir, got, want)
			}
			if !asJSON {
				fmt.Fprintf(cmd.OutOrStdout(), "%s seed %d: reproduced, trace hash %s (%d events, verdict %s)\n", s.Name, s.Seed, got, res.Events, res.Verdict)
			}
			// The run is reproduced; its expectations decide the exit code,
			// as they do for kafkasim run.
			return exitFor(res)
		},
	}
	cmd.Flags().BoolVar(&quiet, "quiet", false, "no progress output")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the outcome and the replay's summary as JSON")
	return cmd
}

func readTraceHash(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %v", path, err)
	}
	var sum struct {
		TraceHash string `json:"trace_hash"`
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		return "", fmt.Errorf("%s: not a summary.json: %v", path, err)
	}
	if _, err := strconv.ParseUint(sum.TraceHash, 16, 64); err != nil || len(sum.TraceHash) != 16 {
		return "", fmt.Errorf("%s: trace_hash %q is not 16 hex digits", path, sum.TraceHash)
	}
	return sum.TraceHash, nil
}
