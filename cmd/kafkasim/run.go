package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"kafkasim/runner"
	"kafkasim/scenarios"
)

func newRunCommand() *cobra.Command {
	var (
		seed             uint64
		out              string
		asJSON           bool
		checkDeterminism bool
		quiet            bool
	)
	cmd := &cobra.Command{
		Use:   "run SCENARIO.yaml",
		Short: "Run one scenario, check its history, write the run store and print a summary",
		Long: `run builds the cluster a scenario describes, runs its fault phase (scheduled
faults and the nemesis), heals everything and lets the cluster settle, reads every
partition to its end, and checks the history: which anomalies happened, and
whether each is a cost the configuration permits or a broken guarantee.

It writes OUT/<scenario>/seed-<N>/ (scenario.yaml, history.jsonl, trace.jsonl.gz,
summary.json, report.html, plots) and exits 0 when every expectation held, 1 when
one failed, 2 on bad input, 3 when the simulator itself failed.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := scenarios.LoadFile(args[0])
			if err != nil {
				return inputError(err)
			}
			if cmd.Flags().Changed("seed") {
				s.Seed = seed
			}
			res, dir, err := runAndStore(s, out, quiet, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			if checkDeterminism {
				again, err := runner.Run(s, runner.Options{Clock: time.Now})
				if err != nil {
					return simulatorFailed("determinism check: %v", err)
				}
				if again.TraceHash != res.TraceHash || again.Events != res.Events {
					return simulatorFailed("determinism check failed: %s seed %d gave trace hash %016x (%d events), then %016x (%d events)",
						s.Name, s.Seed, res.TraceHash, res.Events, again.TraceHash, again.Events)
				}
			}
			w := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				if err := enc.Encode(res.Summary(versionString())); err != nil {
					return err
				}
			} else {
				printRun(w, res, dir, checkDeterminism)
			}
			return exitFor(res)
		},
	}
	cmd.Flags().Uint64Var(&seed, "seed", scenarios.DefaultSeed, "the run's seed (overrides the scenario's)")
	cmd.Flags().StringVar(&out, "out", "runs", "the run store's root folder")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print summary.json to stdout instead of the text summary")
	cmd.Flags().BoolVar(&checkDeterminism, "check-determinism", false, "run twice and fail (exit 3) if the trace hashes differ")
	cmd.Flags().BoolVar(&quiet, "quiet", false, "no progress output")
	return cmd
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

// runAndStore runs a scenario with progress and writes its run store.
func runAndStore(s *scenarios.Scenario, out string, quiet bool, stderr io.Writer) (*runner.Result, string, error) {
	store, err := runner.CreateStore(out, s.Name, s.Seed)
	if err != nil {
		return nil, "", usage("cannot write the run store under %s: %v", out, err)
	}
	total := s.Duration + s.Settle
	bar := newProgress(stderr, quiet, s.Name, "sim-s", int64(total/time.Second))
	res, err := runner.Run(s, runner.Options{Trace: store.Trace(), Clock: time.Now,
		Progress: func(now, _ time.Duration) { bar.set(int64(now/time.Second), int64(total/time.Second), "") }})
	bar.finish()
	if err != nil {
		store.Abort()
		return nil, "", simulatorFailed("%v", err)
	}
	if err := store.Finish(res, versionString()); err != nil {
		return nil, "", simulatorFailed("writing the run store: %v", err)
	}
	return res, store.Dir, nil
}

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

// printRun tells, in a few lines, what happened and why.
func printRun(w io.Writer, res *runner.Result, dir string, determinism bool) {
	s := res.Scenario
	verdict := map[string]string{runner.Pass: "PASS", runner.Fail: "FAIL", runner.Liveness: "LIVENESS FAILURE", runner.Crash: "SIMULATOR FAILURE"}[res.Verdict]
	fmt.Fprintf(w, "%s seed %d: %s\n", s.Name, s.Seed, verdict)
	if res.Verdict == runner.Crash {
		fmt.Fprintf(w, "  %s\n", firstLines(res.CrashDetail, 3))
	}
	if rep := res.Report; rep != nil {
		st := rep.Stats
		fmt.Fprintf(w, "  writes: %d attempted, %d acknowledged, %d failed, %d unknown (availability %.1f%%); %d acknowledged writes lost\n",
			st.Attempted, st.Acked, st.Failed, st.Indeterminate, 100*st.Availability, st.LostAcked)
		fmt.Fprintf(w, "  reads:  %d polls, %d records\n", st.Polls, st.Records)
		for _, a := range rep.Anomalies {
			fmt.Fprintf(w, "  %-20s %-9s %6d  %s\n", a.Type, a.Verdict, a.Count, a.Because)
			fmt.Fprintf(w, "  %-20s %-9s %6s  e.g. %s\n", "", "", "", a.Example)
		}
	}
	for _, p := range res.Producers {
		if p.Sent == 0 {
			continue
		}
		fmt.Fprintf(w, "  producer %s: %d records in %d batches, %d requests, %d bytes on the wire (%.1f bytes per record)\n",
			p.Name, p.Sent, p.Batches, p.Requests, p.BytesSent, p.BytesPerRecord)
	}
	for _, l := range res.Losses {
		fmt.Fprintf(w, "  god view: %s offsets %d..%d (%d records) lost at %v: %s\n", l.Partition, l.From, l.To-1, l.Records,
			time.Duration(l.At).Round(time.Millisecond), lossCause(l.Cause))
	}
	for _, st := range res.Stuck {
		fmt.Fprintf(w, "  god view: %s\n", st)
	}
	broken := 0
	for _, inv := range res.Invariants {
		if inv.Count > 0 {
			broken++
			fmt.Fprintf(w, "  invariant %s violated %d times: %s\n", inv.Name, inv.Count, inv.Detail)
		}
	}
	if broken == 0 && res.Verdict != runner.Crash {
		fmt.Fprintf(w, "  invariants: all %d held\n", len(res.Invariants))
	}
	if !res.Converged && res.Verdict != runner.Crash {
		fmt.Fprintf(w, "  not converged after settle: %s\n", res.ConvergeDetail)
		if res.ConvergeGrace > 0 {
			fmt.Fprintf(w, "  (waited up to %v past settle: %s)\n", res.ConvergeGrace, res.ConvergeBasis)
		}
	}
	printExpectations(w, res.Expectations)
	rate := ""
	if res.WallTime > 0 {
		rate = fmt.Sprintf(" (%.0f events/s, %.1f simulated s per wall s)", float64(res.Events)/res.WallTime.Seconds(), res.SimTime.Seconds()/res.WallTime.Seconds())
	}
	det := ""
	if determinism {
		det = ", reproduced"
	}
	fmt.Fprintf(w, "  trace hash %016x%s: %d events, %v simulated in %v%s\n", res.TraceHash, det, res.Events,
		res.SimTime.Round(time.Millisecond), res.WallTime.Round(time.Millisecond), rate)
	fmt.Fprintf(w, "  run store: %s (open report.html)\n", dir)
}

func lossCause(c string) string {
	switch c {
	case "unclean-election":
		return "a replica without the committed data was elected leader (unclean election)"
	case "power-loss":
		return "the replica that led next had lost it from its page cache in a power loss before it reached disk"
	case "disk-wipe":
		return "the replica that led next came back on a wiped (replaced) disk, without what it had fsynced"
	case "disk-corruption":
		return "the replica that led next had cut its log at a corrupt batch at recovery, with what it had fsynced after it"
	}
	return c
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n  ")
}

// fileExists reports whether path names a regular file.
func fileExists(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}

// printExpectations writes the "expect:" line of a run's or a check's text
// summary: each expectation, what it got, ok or FAILED.
func printExpectations(w io.Writer, es []runner.ExpectationResult) {
	var exp []string
	for _, e := range es {
		mark := "ok"
		if !e.OK {
			mark = "FAILED"
		}
		exp = append(exp, fmt.Sprintf("%s %s (got %s) %s", e.Key, e.Want, e.Got, mark))
	}
	if len(exp) > 0 {
		fmt.Fprintf(w, "  expect: %s\n", strings.Join(exp, "; "))
	}
}
