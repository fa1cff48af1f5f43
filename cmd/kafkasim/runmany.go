package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"kafkasim/internal/plural"
	"kafkasim/runner"
	"kafkasim/scenarios"
)

// seedsMax bounds --seeds, so that a typo (1..1000000000) is an error, not
// a week of runs.
const seedsMax = 100_000

// parseSeeds reads --seeds: "1..20", "3,7,9", or both ("1..5,9").
func parseSeeds(text string) ([]uint64, error) {
	var out []uint64
	seen := map[uint64]bool{}
	add := func(n uint64) error {
		if seen[n] {
			return fmt.Errorf("seed %d given twice", n)
		}
		if len(out) == seedsMax {
			return fmt.Errorf("more than %d seeds", seedsMax)
		}
		seen[n] = true
		out = append(out, n)
		return nil
	}
	for _, part := range strings.Split(text, ",") {
		part = strings.TrimSpace(part)
		from, to, isRange := strings.Cut(part, "..")
		a, err := strconv.ParseUint(strings.TrimSpace(from), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a seed or a range A..B of seeds", part)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(strings.TrimSpace(to), 10, 64); err != nil || b < a {
				return nil, fmt.Errorf("%q: want A..B with A <= B", part)
			}
			if b-a >= seedsMax {
				return nil, fmt.Errorf("%q: more than %d seeds", part, seedsMax)
			}
		}
		for n := a; ; n++ {
			if err := add(n); err != nil {
				return nil, err
			}
			if n == b {
				break
			}
		}
	}
	if len(out) < 2 && !strings.ContainsAny(text, ".,") {
		return nil, fmt.Errorf("want a range A..B or a list A,B,C (for one seed, --seed N)")
	}
	return out, nil
}

// manyTotal is the last line of several runs, and --json's "total".
type manyTotal struct {
	Runs       int `json:"runs"`
	Passed     int `json:"passed"`
	Failed     int `json:"failed"`
	Liveness   int `json:"liveness"`
	Crashed    int `json:"crashed"`
	NotRepro   int `json:"not_reproduced"`
	Vacuous    int `json:"vacuous"`
	NotStarted int `json:"not_started"`
}

// runMany runs every scenario of jobs one after the other: one line per
// run, then a total. The exit code is the worst of the runs': a simulator
// failure (3) over a failed expectation (1).
func runMany(w io.Writer, jobs []*scenarios.Scenario, o runOptions, asJSON bool) error {
	var total manyTotal
	var summaries []runner.Summary
	var exitErr error
	worst := exitOK
	note := func(code int, err error) {
		if code > worst {
			worst, exitErr = code, err
		}
	}
	for i, s := range jobs {
		out := runOne(s, o)
		if out.err != nil {
			var ee *exitError
			errors.As(out.err, &ee)
			switch {
			case ee != nil && ee.code == exitInterrupted:
				total.NotStarted = len(jobs) - i
				printManyTotal(w, total, asJSON, summaries)
				return out.err
			case ee != nil && ee.code == exitUsage:
				return out.err
			case out.res == nil:
				// The run could not start or be stored: a simulator failure.
				fmt.Fprintf(w, "%s seed %d: SIMULATOR FAILURE: %v\n", s.Name, s.Seed, out.err)
				total.Runs++
				total.Crashed++
				note(exitSimulator, out.err)
				continue
			}
			// Stored, but not reproduced by --check-determinism.
			total.NotRepro++
			note(exitSimulator, out.err)
			fmt.Fprintf(w, "%s seed %d: %v\n", s.Name, s.Seed, out.err)
		}
		total.Runs++
		switch out.res.Verdict {
		case runner.Pass:
			total.Passed++
		case runner.Fail:
			total.Failed++
			note(exitFailed, exitFor(out.res))
		case runner.Liveness:
			total.Liveness++
			note(exitFailed, exitFor(out.res))
		case runner.Crash:
			total.Crashed++
			note(exitSimulator, exitFor(out.res))
		}
		if out.res.Vacuous() != "" {
			total.Vacuous++
		}
		if asJSON {
			summaries = append(summaries, out.res.Summary(versionString()))
		} else {
			printRunLine(w, out)
		}
	}
	printManyTotal(w, total, asJSON, summaries)
	if worst == exitOK {
		return nil
	}
	return &exitError{code: worst, err: fmt.Errorf("%s of %s did not pass; first: %v", plural.Count(total.Runs-total.Passed, "run"), plural.Count(total.Runs, "run"), exitErr)}
}

func printManyTotal(w io.Writer, t manyTotal, asJSON bool, summaries []runner.Summary) {
	if asJSON {
		if summaries == nil {
			summaries = []runner.Summary{}
		}
		writeJSON(w, struct {
			Runs  []runner.Summary `json:"runs"`
			Total manyTotal        `json:"total"`
		}{summaries, t})
		return
	}
	parts := []string{fmt.Sprintf("%d passed", t.Passed)}
	if t.Failed > 0 {
		parts = append(parts, fmt.Sprintf("%d failed", t.Failed))
	}
	if t.Liveness > 0 {
		parts = append(parts, plural.Count(t.Liveness, "liveness failure"))
	}
	if t.Crashed > 0 {
		parts = append(parts, plural.Count(t.Crashed, "simulator failure"))
	}
	if t.NotRepro > 0 {
		parts = append(parts, fmt.Sprintf("%d not reproduced", t.NotRepro))
	}
	if t.Vacuous > 0 {
		parts = append(parts, fmt.Sprintf("%d checked no write (see WARNING)", t.Vacuous))
	}
	line := fmt.Sprintf("%s: %s", plural.Count(t.Runs, "run"), strings.Join(parts, ", "))
	if t.NotStarted > 0 {
		line += fmt.Sprintf("; interrupted, %d not run", t.NotStarted)
	}
	fmt.Fprintln(w, line)
}
