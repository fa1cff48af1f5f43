package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// checkedAnomaly is an anomaly as summary.json and check --json both write
// it, less the trace steps (only a run links them).
type checkedAnomaly struct {
	Type    string `json:"type"`
	Verdict string `json:"verdict"`
	Count   int    `json:"count"`
	Because string `json:"because"`
	Example struct {
		Partition string  `json:"partition"`
		Offset    int64   `json:"offset"`
		Value     string  `json:"value"`
		Process   string  `json:"process"`
		Ops       []int64 `json:"ops"`
		Detail    string  `json:"detail"`
	} `json:"example"`
}

type checkedRun struct {
	Violations int              `json:"violations"`
	Anomalies  []checkedAnomaly `json:"anomalies"`
	Basis      string           `json:"basis"`
}

// check RUN_DIR judges a run's history against the facts its god view saw
// (godview.jsonl), so its anomalies — types, verdicts, counts, reasons,
// examples — and violations are the run's summary.json's. Without the file
// (a store from an older kafkasim) it judges by the scenario's faults, as
// before, and says so: a run whose producer state forgot a batch then gets
// violations the run did not have, and the runs that lost data to a power
// loss or an unclean election other reasons.
func TestCheckRunDirJudgesAsTheRunDid(t *testing.T) {
	out := t.TempDir()
	for _, c := range []struct {
		scenario, name string
		without        string // what differs without godview.jsonl: "verdicts" or "reasons"
	}{
		{"unclean-election-loss", "unclean-election-loss", "reasons"},
		{"rack-power-loss", "rack-power-loss", "reasons"},
		{"last-replica-standing", "last-replica-standing", "reasons"},
		{"../../runner/testdata/idempotent-retry-of-a-producer-retention-and-restarts-forgot.yaml", "idempotent-retry-of-a-producer-retention-and-restarts-forgot", "verdicts"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if code, stdout, stderr := kafkasim(t, "run", c.scenario, "--out", out, "--quiet"); code != 0 {
				t.Fatalf("run: exit %d: %s%s", code, stdout, stderr)
			}
			dirs, _ := filepath.Glob(filepath.Join(out, c.name, "seed-*"))
			if len(dirs) != 1 {
				t.Fatalf("run stores: %v", dirs)
			}
			dir := dirs[0]
			var run checkedRun
			data, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
			if err := json.Unmarshal(data, &run); err != nil || len(run.Anomalies) == 0 || run.Anomalies[0].Example.Partition == "" {
				t.Fatalf("summary.json: %v, %d anomalies", err, len(run.Anomalies))
			}
			checked := checkRunDirJSON(t, dir, 0)
			if checked.Basis != "god-view" || checked.Violations != run.Violations || !reflect.DeepEqual(checked.Anomalies, run.Anomalies) {
				t.Fatalf("check RUN_DIR (basis %s): %d violations, anomalies\n%+v\nthe run's: %d, %+v", checked.Basis, checked.Violations, checked.Anomalies, run.Violations, run.Anomalies)
			}
			if code, stdout, _ := kafkasim(t, "check", dir); code != 0 || !strings.Contains(stdout, "\n  basis: the run's god view (godview.jsonl: ") {
				t.Fatalf("check RUN_DIR: exit %d:\n%s", code, stdout)
			}

			// The store as an older kafkasim wrote it.
			if err := os.Remove(filepath.Join(dir, "godview.jsonl")); err != nil {
				t.Fatal(err)
			}
			wantCode := 0
			if c.without == "verdicts" {
				wantCode = 1
			}
			older := checkRunDirJSON(t, dir, wantCode)
			if older.Basis != "scenario-faults" || reflect.DeepEqual(older.Anomalies, run.Anomalies) {
				t.Fatalf("without godview.jsonl (basis %s) the anomalies are the run's", older.Basis)
			}
			sameVerdicts := older.Violations == run.Violations && len(older.Anomalies) == len(run.Anomalies)
			for i := 0; sameVerdicts && i < len(older.Anomalies); i++ {
				o, r := older.Anomalies[i], run.Anomalies[i]
				sameVerdicts = o.Type == r.Type && o.Verdict == r.Verdict && o.Count == r.Count
			}
			if sameVerdicts != (c.without == "reasons") {
				t.Fatalf("without godview.jsonl, %s should differ: %d violations %+v, the run's %d %+v", c.without, older.Violations, older.Anomalies, run.Violations, run.Anomalies)
			}
			if _, stdout, _ := kafkasim(t, "check", dir); !strings.Contains(stdout, "\n  basis: the scenario's faults (the run's folder holds no godview.jsonl: its verdicts may differ from the run's)\n") {
				t.Fatalf("check RUN_DIR without godview.jsonl does not say its basis:\n%s", stdout)
			}
			// The history alone, as from elsewhere, is judged the same way.
			hist, scenario := filepath.Join(dir, "history.jsonl.gz"), filepath.Join(dir, "scenario.yaml")
			if code, stdout, _ := kafkasim(t, "check", hist, "--config", scenario); code != wantCode || !strings.Contains(stdout, "\n  basis: the scenario's faults (a history holds no god view)\n") {
				t.Fatalf("check HISTORY --config: exit %d, want %d and its basis:\n%s", code, wantCode, stdout)
			}
		})
	}
}

func checkRunDirJSON(t *testing.T, dir string, wantCode int) checkedRun {
	t.Helper()
	code, stdout, stderr := kafkasim(t, "check", dir, "--json")
	var out checkedRun
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || code != wantCode {
		t.Fatalf("check %s --json: exit %d (want %d), %v:\n%s%s", dir, code, wantCode, err, stdout, stderr)
	}
	return out
}

// A run's godview.jsonl that is not a list of facts is bad input: exit 2,
// one line naming the file, the line and the key.
func TestCheckRunDirRejectsAMalformedFactsFile(t *testing.T) {
	out := t.TempDir()
	if code, stdout, stderr := kafkasim(t, "run", "unclean-election-loss", "--out", out, "--quiet"); code != 0 {
		t.Fatalf("run: exit %d: %s%s", code, stdout, stderr)
	}
	dir := filepath.Join(out, "unclean-election-loss", "seed-1")
	facts := filepath.Join(dir, "godview.jsonl")
	good, err := os.ReadFile(facts)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(good), "\n")
	if len(lines) < 3 || !strings.Contains(lines[1], `"kind":"loss"`) {
		t.Fatalf("the facts of an unclean election's loss:\n%s", good)
	}
	for _, c := range []struct {
		name, body, want string
	}{
		{"an offset a string", lines[0] + strings.Replace(lines[1], `"from":`, `"from":"x","was":`, 1) + strings.Join(lines[2:], ""),
			facts + `:2: from: want an integer, got string`},
		{"an unknown kind", lines[0] + strings.Replace(lines[1], `"kind":"loss"`, `"kind":"meteor"`, 1) + strings.Join(lines[2:], ""),
			facts + `:2: kind: "meteor" is not a kind of fact (`},
		{"cut short", lines[0] + lines[1], facts + `:1: facts: 2 announced, 1 found`},
		{"no header", strings.Join(lines[1:], ""), facts + `:1: god_view: missing`},
	} {
		t.Run(c.name, func(t *testing.T) {
			os.WriteFile(facts, []byte(c.body), 0o644)
			for _, args := range [][]string{{"check", dir}, {"check", dir, "--json"}} {
				code, stdout, stderr := kafkasim(t, args...)
				if code != 2 || !strings.HasPrefix(stderr, "kafkasim: "+c.want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
					t.Fatalf("%v: exit %d, stderr %q, want 2 and %q; stdout %q", args, code, stderr, c.want, stdout)
				}
			}
		})
	}
}
