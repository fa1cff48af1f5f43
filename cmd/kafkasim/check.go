package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"kafkasim/checker"
	"kafkasim/godview"
	"kafkasim/history"
	"kafkasim/internal/plural"
	"kafkasim/runner"
	"kafkasim/scenarios"
)

func newCheckCommand() *cobra.Command {
	var (
		configPath string
		asJSON     bool
		prof       profileFlags
	)
	cmd := &cobra.Command{
		Use:   "check HISTORY.jsonl[.gz] | RUN_DIR",
		Short: "Check a history that came from anywhere (this simulator, or a recorder around a real cluster)",
		Long: `check reads a history in kafkasim's JSON Lines format (docs/history.md), plain
or gzip-compressed (told by its first bytes, whatever the file is called; "-"
reads stdin), and reports its anomalies, each with a verdict: a violation of a
guarantee the configuration promises, or a cost the configuration permits.

Given a run's folder (OUT/<scenario>/seed-<N>/), check reads its history
(history.jsonl.gz) and takes its scenario.yaml as --config would; an explicit
--config overrides it. It judges the history against the facts the run's god
view saw (godview.jsonl), as the run did; a folder without them (written by
an older kafkasim) is judged as a history from elsewhere, below.

Every line must be an operation: a JSON object with index, type (invoke, ok,
fail or info), process, and f, one of:
` + indentWords(history.Operations, "  ", 80) + `.
Fields the format does not name are ignored (recorders add their own); an
operation it does not name, a line that is not one, or a history without any
is malformed input.

Without --config the checker assumes Kafka 4.2's defaults (acks=all, idempotent
producers, replication factor 1). With --config SCENARIO.yaml it takes producers',
consumers' and topics' settings from the scenario, and checks the scenario's
expectations that a history can show (violations, anomaly counts, availability).
A history from outside the simulator carries no god view: losses that Kafka
permits only after power loss or unclean elections cannot be told apart from
violations unless the configuration permits them anyway (acks=1, say). The
scenario's faults count as what may have happened: a crash, power loss, torn
write or wiped disk (scheduled or in a nemesis rule) with the default flush
policy permits lost and rewritten records, even ones readers saw; an
add-partitions fault permits key-order; an elect-leaders fault of type unclean
permits lost acknowledged writes and reused offsets of its partitions.

Exit codes: 0 no violation (and every applicable expectation held), 1 otherwise,
2 for an unreadable or malformed history, scenario or godview.jsonl.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			endProfiles, err := prof.begin(cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			defer endProfiles()
			path, storeConfig, storeSummary, storeFacts, err := historyPath(args[0], configPath != "")
			if err != nil {
				return err
			}
			// A run's folder also holds what its god view saw: the broken
			// invariants a history cannot show count, as run counts them.
			invariants, err := storedInvariantViolations(storeSummary)
			if err != nil {
				return err
			}
			if configPath == "" {
				configPath = storeConfig
			}
			var cfg checker.Config
			var s *scenarios.Scenario
			basis := factsBasis{}
			if configPath != "" {
				var err error
				s, err = scenarios.LoadFile(configPath)
				if err != nil {
					return inputError(err)
				}
				// What the run's god view saw happen, else what the
				// scenario's faults may cost (a history alone cannot say),
				// and kafkasim's final reader, as a run configures it.
				basis, err = readFactsBasis(s, storeFacts, storeConfig != "")
				if err != nil {
					return err
				}
				cfg = runner.CheckerConfig(s, basis.happened)
			}
			rep, nops, err := checkHistory(path, cfg)
			if err != nil {
				return err
			}
			violations := rep.Violations + invariants
			var failures []string
			if violations > 0 {
				failures = append(failures, plural.Count(violations, "violation"))
			}
			var expected []runner.ExpectationResult
			if s != nil {
				// The scenario's expectations decide instead: they say how
				// many violations to expect (0 unless it says otherwise).
				expected = runner.HistoryExpectations(s, rep, invariants, storeSummary != "")
				failures = nil
				for _, e := range expected {
					if !e.OK {
						failures = append(failures, fmt.Sprintf("%s: want %s, got %s", e.Key, e.Want, e.Got))
					}
				}
			}
			w := cmd.OutOrStdout()
			if asJSON {
				out := struct {
					History    string            `json:"history"`
					Ops        int               `json:"ops"`
					Stats      checker.Stats     `json:"stats"`
					Anomalies  []checker.Anomaly `json:"anomalies"`
					Violations int               `json:"violations"`
					// Invariants: god-view invariants the run's summary.json
					// records broken (checking a run's folder).
					Invariants int `json:"invariants_violated"`
					// Basis: what the verdicts took as having happened.
					Basis    string   `json:"basis"`
					OK       bool     `json:"ok"`
					Failures []string `json:"failures"`
				}{path, nops, rep.Stats, rep.Anomalies, violations, invariants, basis.name(), len(failures) == 0, append([]string{}, failures...)}
				if out.Anomalies == nil {
					out.Anomalies = []checker.Anomaly{}
				}
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				if err := enc.Encode(out); err != nil {
					return err
				}
			} else {
				fmt.Fprintf(w, "%s: %d operations\n", path, nops)
				printStats(w, rep.Stats)
				for _, line := range splitLines(rep.Summary()) {
					fmt.Fprintf(w, "  %s\n", cutLongWords(line))
				}
				if s != nil {
					fmt.Fprintf(w, "  basis: %s\n", basis.line)
				}
				if invariants > 0 {
					fmt.Fprintf(w, "  god view (the run's summary.json): %s broken\n", plural.Count(invariants, "invariant"))
				}
				for _, n := range rep.Notes() {
					fmt.Fprintf(w, "  note: %s\n", n)
				}
				printExpectations(w, expected)
				fmt.Fprintf(w, "  %s\n", checkVerdict(violations, s != nil, failures))
			}
			if len(failures) > 0 {
				return failed("%s: %s", path, joinSemi(failures))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "a scenario whose configuration the history ran under")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	prof.register(cmd)
	return cmd
}

// indentWords lists words comma-separated in indented lines of at most
// width characters.
func indentWords(words []string, indent string, width int) string {
	var b strings.Builder
	line := indent
	for i, w := range words {
		if i < len(words)-1 {
			w += ","
		}
		if len(line)+1+len(w) > width && line != indent {
			b.WriteString(line + "\n")
			line = indent
		}
		if line != indent {
			line += " "
		}
		line += w
	}
	return b.String() + line
}

// historyPath resolves check's argument: a history file (or "-"), or a
// run's folder, whose history it names with the folder's scenario (needed
// unless another is given), summary and god view's facts (either may be
// missing: "").
func historyPath(arg string, configGiven bool) (path, config, summary, facts string, err error) {
	st, err := os.Stat(arg)
	if arg == "-" || err != nil || !st.IsDir() {
		return arg, "", "", "", nil // checkHistory words a file it cannot read
	}
	path = ""
	// history.jsonl: a run store written before histories were compressed.
	for _, name := range []string{history.StoreFile, history.PlainStoreFile} {
		if fileExists(filepath.Join(arg, name)) {
			path = filepath.Join(arg, name)
			break
		}
	}
	if path == "" {
		return "", "", "", "", usage("%s: a folder, but no %s (nor %s) in it: give a history file or a run's folder", arg, history.StoreFile, history.PlainStoreFile)
	}
	config = filepath.Join(arg, "scenario.yaml")
	if !fileExists(config) && !configGiven {
		return "", "", "", "", usage("%s: a run's folder lacks scenario.yaml, the configuration its history ran under: restore it or give --config", arg)
	}
	if summary = filepath.Join(arg, "summary.json"); !fileExists(summary) {
		summary = ""
	}
	if facts = filepath.Join(arg, godview.StoreFile); !fileExists(facts) {
		facts = ""
	}
	return path, config, summary, facts, nil
}

// factsBasis is what check takes as having happened in the run a history
// came from: what its god view saw, or what its scenario's faults may do.
type factsBasis struct {
	happened godview.List
	stored   bool   // read from a run's folder
	line     string // said on the console ("": no scenario, nothing known)
}

// name is the basis in --json: "god-view", "scenario-faults", or "none"
// without a scenario.
func (b factsBasis) name() string {
	switch {
	case b.stored:
		return "god-view"
	case b.line != "":
		return "scenario-faults"
	}
	return "none"
}

// readFactsBasis reads the facts a run's god view saw, from path (a run's
// godview.jsonl), or without one takes what s's faults may do. runDir: the
// history is a run's folder's, one written before its facts were stored.
func readFactsBasis(s *scenarios.Scenario, path string, runDir bool) (factsBasis, error) {
	if path == "" {
		why := "a history holds no god view"
		if runDir {
			why = "the run's folder holds no " + godview.StoreFile + ": its verdicts may differ from the run's"
		}
		return factsBasis{happened: s.ScheduledFaultFacts(), line: "the scenario's faults (" + why + ")"}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return factsBasis{}, usage("%s: cannot read: %v", path, unwrapPath(err))
	}
	defer f.Close()
	l, err := godview.ReadJSONL(f)
	var pe *godview.ParseError
	switch {
	case errors.As(err, &pe):
		return factsBasis{}, badLine(path, pe.Line, pe.Key, pe.Msg)
	case err != nil:
		return factsBasis{}, usage("%s: cannot read: %v", path, err)
	}
	whose := "the run's god view"
	if !l.GodView() {
		whose = "facts not from a god view"
	}
	return factsBasis{happened: l, stored: true,
		line: fmt.Sprintf("%s (%s: %s), as the run was checked", whose, godview.StoreFile, plural.Count(len(l.All()), "fact"))}, nil
}

// storedInvariantViolations is how many god-view invariant violations a
// run's summary.json records (0 without one): its violations less the
// history's, which are the anomalies with the verdict violation.
func storedInvariantViolations(path string) (int, error) {
	if path == "" {
		return 0, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, usage("%s: cannot read: %v", path, unwrapPath(err))
	}
	var sum struct {
		Violations int `json:"violations"`
		Anomalies  []struct {
			Verdict string `json:"verdict"`
			Count   int    `json:"count"`
		} `json:"anomalies"`
	}
	if err := json.Unmarshal(data, &sum); err != nil {
		return 0, usage("%s: not a summary.json: %v", path, err)
	}
	n := sum.Violations
	for _, a := range sum.Anomalies {
		if a.Verdict == checker.Violation {
			n -= a.Count
		}
	}
	return max(n, 0), nil
}

// checkHistory streams a history through the checker (a multi-gigabyte
// file is never held as JSON), mapping malformed input to exit 2.
func checkHistory(path string, cfg checker.Config) (*checker.Report, int, error) {
	var r io.Reader
	if path == "-" {
		r = os.Stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, 0, usage("%s: cannot read: %v", path, unwrapPath(err))
		}
		defer f.Close()
		r = f
	}
	rep, err := checker.CheckReader(r, cfg)
	if err == nil && rep.Stats.Ops == 0 {
		// An empty history passes every check: say so rather than pass.
		return nil, 0, usage("%s: no operations", path)
	}
	if err != nil {
		var pe *history.ParseError
		if errors.As(err, &pe) {
			return nil, 0, badLine(path, pe.Line, pe.Field, pe.Msg)
		}
		return nil, 0, usage("%s: %v", path, err)
	}
	return rep, int(rep.Stats.Ops), nil
}

// badLine is a malformed line of a history or facts file, as bad input:
// "FILE:LINE: KEY: what is wrong" (no KEY when the line is not JSON).
func badLine(path string, line int, key, msg string) error {
	if key != "" {
		return usage("%s:%d: %s: %s", path, line, key, msg)
	}
	return usage("%s:%d: %s", path, line, msg)
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// checkVerdict is check's last line. It says what is true: without a
// scenario, whether the history shows no violation; with one, whether its
// expectations held, and how many violations there were, which they may
// expect (a bug zoo scenario's history, say).
func checkVerdict(violations int, withScenario bool, failures []string) string {
	switch {
	case len(failures) > 0:
		return "FAIL: " + joinSemi(failures)
	case violations == 0 && withScenario:
		return "OK: no violation; expectations held"
	case violations == 0:
		return "OK: no violation"
	}
	return "OK: expectations held (" + plural.Count(violations, "violation") + ", as expected)"
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

func joinSemi(items []string) string {
	out := ""
	for i, s := range items {
		if i > 0 {
			out += "; "
		}
		out += s
	}
	return out
}
