package main

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"kafkasim/checker"
	"kafkasim/internal/plural"
	"kafkasim/runner"
)

// verdictWord is a run's verdict as the console shows it.
func verdictWord(res *runner.Result) string {
	return map[string]string{runner.Pass: "PASS", runner.Fail: "FAIL", runner.Liveness: "LIVENESS FAILURE", runner.Crash: "SIMULATOR FAILURE"}[res.Verdict]
}

// printRun tells, in a few lines, what happened in one run and why.
func printRun(w io.Writer, o runOutcome) {
	res := o.res
	s := res.Scenario
	if v := res.Vacuous(); v != "" {
		fmt.Fprintf(w, "%s seed %d: %s (vacuous: nothing was written)\n", s.Name, s.Seed, verdictWord(res))
		fmt.Fprintf(w, "  WARNING: %s\n", v)
	} else {
		fmt.Fprintf(w, "%s seed %d: %s\n", s.Name, s.Seed, verdictWord(res))
	}
	if res.Verdict == runner.Crash {
		fmt.Fprintf(w, "  %s\n", firstLines(res.CrashDetail, 3))
	}
	if rep := res.Report; rep != nil {
		printStats(w, rep.Stats)
		for _, a := range rep.Anomalies {
			fmt.Fprintf(w, "  %-20s %-9s %6d  %s\n", a.Type, a.Verdict, a.Count, cutLongWords(a.Because))
			fmt.Fprintf(w, "  %-20s %-9s %6s  e.g. %s\n", "", "", "", cutLongWords(a.Example.String()))
		}
	}
	for _, p := range res.Producers {
		if p.Sent == 0 {
			continue
		}
		fmt.Fprintf(w, "  producer %s: %s in %s, %s, %d bytes on the wire (%.1f bytes per record)\n",
			p.Name, plural.Count(p.Sent, "record"), plural.Count(p.Batches, "batch"), plural.Count(p.Requests, "request"), p.BytesSent, p.BytesPerRecord)
	}
	for _, l := range res.Losses {
		then := ""
		if l.ExposedBy == "unclean-election" {
			then = "; then, with no in-sync copy left, the controller elected a replica without it (the last known leader, or an unclean election)"
		}
		fmt.Fprintf(w, "  god view: %s offsets %d..%d (%s) lost at %v: %s%s\n", l.Partition, l.From, l.To-1, plural.Count(l.Records, "record"),
			time.Duration(l.At).Round(time.Millisecond), lossCause(l.Cause), then)
	}
	for _, st := range res.Stuck {
		fmt.Fprintf(w, "  god view: %s\n", st)
	}
	for _, l := range res.Leaderless {
		fmt.Fprintf(w, "  god view: %s\n", l)
	}
	broken := 0
	for _, inv := range res.Invariants {
		if inv.Count > 0 {
			broken++
			fmt.Fprintf(w, "  invariant %s violated %s: %s\n", inv.Name, plural.Times(inv.Count), cutLongWords(inv.Detail))
		}
	}
	if broken == 0 && res.Verdict != runner.Crash {
		fmt.Fprintf(w, "  invariants: all %d held\n", len(res.Invariants))
	}
	if res.Converged && res.ConvergeDetail != "" && res.Verdict != runner.Crash {
		fmt.Fprintf(w, "  converged; liveness %s\n", res.ConvergeDetail)
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
	if o.reproduced {
		det = ", reproduced"
	}
	fmt.Fprintf(w, "  trace hash %016x%s: %d events, %v simulated in %v%s\n", res.TraceHash, det, res.Events,
		res.SimTime.Round(time.Millisecond), res.WallTime.Round(time.Millisecond), rate)
	replaced := ""
	if o.replaced {
		replaced = "replaced the earlier run of this seed; "
	}
	fmt.Fprintf(w, "  run store: %s (%sopen report.html)\n", o.dir, replaced)
}

// printRunLine is one run of several, in one line.
func printRunLine(w io.Writer, o runOutcome) {
	res := o.res
	st := res.Report.Stats
	line := fmt.Sprintf("%s seed %d: %-5s %d/%d writes acknowledged, %d lost, %s; trace %016x",
		res.Scenario.Name, res.Scenario.Seed, verdictWord(res), st.Acked, st.Attempted, st.LostAcked,
		plural.Count(res.ViolationCount(), "violation"), res.TraceHash)
	if o.reproduced {
		line += " (reproduced)"
	}
	line += "; " + o.dir
	if o.replaced {
		line += " (replaced)"
	}
	if v := res.Vacuous(); v != "" {
		line += "\n  WARNING: " + v
	}
	if res.Verdict != runner.Pass {
		line += "\n  " + cutLongWords(res.Headline())
	}
	fmt.Fprintln(w, line)
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

// printExpectations writes the "expect:" line of a run's or a check's text
// summary: each expectation, what it got, ok or FAILED.
func printExpectations(w io.Writer, es []runner.ExpectationResult) {
	var exp []string
	for _, e := range es {
		mark := "ok"
		if !e.OK {
			mark = "FAILED"
		}
		exp = append(exp, fmt.Sprintf("%s %s (got %s) %s", e.Key, e.Want, cutLongWords(e.Got), mark))
	}
	if len(exp) > 0 {
		fmt.Fprintf(w, "  expect: %s\n", strings.Join(exp, "; "))
	}
}

// wordMax is the longest run of characters without a space the console
// prints whole: record values with a long payload are cut to it, so that
// an example line stays a line.
const wordMax = 48

// cutLongWords shortens every word (a run of characters without spaces)
// longer than wordMax to its start, an ellipsis and how much was cut:
// "p-0:17xxxx…(+960 bytes)". What is cut is only the console's; summary.json
// and the report keep every byte.
func cutLongWords(s string) string {
	if len(s) <= wordMax {
		return s
	}
	var b strings.Builder
	start := -1
	flush := func(end int) {
		if start < 0 {
			return
		}
		word := s[start:end]
		if len(word) > wordMax {
			keep := wordMax - 16
			for keep > 0 && !utf8.RuneStart(word[keep]) {
				keep--
			}
			fmt.Fprintf(&b, "%s…(+%d bytes)", word[:keep], len(word)-keep)
		} else {
			b.WriteString(word)
		}
		start = -1
	}
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' || s[i] == '\n' || s[i] == '\t' {
			flush(i)
			b.WriteByte(s[i])
			continue
		}
		if start < 0 {
			start = i
		}
	}
	flush(len(s))
	return b.String()
}

// printStats writes the "writes:" and "reads:" lines of a run's or a
// check's text summary.
func printStats(w io.Writer, st checker.Stats) {
	availability := fmt.Sprintf("availability %.1f%%", 100*st.Availability)
	if st.Attempted == 0 {
		availability = "availability: no write attempted"
	}
	aborted := ""
	if st.Aborted > 0 {
		aborted = fmt.Sprintf(", %d in aborted transactions", st.Aborted)
	}
	fmt.Fprintf(w, "  writes: %d attempted, %d acknowledged, %d failed%s, %d unknown (%s); %s lost\n",
		st.Attempted, st.Acked, st.Failed, aborted, st.Indeterminate, availability, plural.Count(st.LostAcked, "acknowledged write"))
	fmt.Fprintf(w, "  reads:  %s, %s\n", plural.Count(st.Polls, "poll"), plural.Count(st.Records, "record"))
}
