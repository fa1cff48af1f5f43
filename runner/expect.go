package runner

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"kafkasim/checker"
	"kafkasim/internal/plural"
	"kafkasim/reports"
	"kafkasim/scenarios"
)

// ExpectationResult is one expectation as the run fared.
type ExpectationResult struct {
	Key  string
	Want string
	Got  string
	OK   bool
}

// Violations is the number of broken guarantees: the checker's violations
// plus the god view's broken invariants.
func (res *Result) ViolationCount() int {
	n := 0
	if res.Report != nil {
		n += res.Report.Violations
	}
	for _, inv := range res.Invariants {
		n += inv.Count
	}
	return n
}

func evaluate(s *scenarios.Scenario, res *Result) []ExpectationResult {
	var out []ExpectationResult
	var costs map[string]float64 // the consumer groups' (reports.GroupCosts), once asked
	invariants := res.ViolationCount() - res.Report.Violations
	for _, e := range s.Expect {
		if e.Bool != nil {
			r := ExpectationResult{Key: e.Key, Want: strconv.FormatBool(*e.Bool), Got: strconv.FormatBool(res.Converged)}
			r.OK = res.Converged == *e.Bool
			if !res.Converged {
				r.Got += " (" + res.ConvergeDetail + ")"
			}
			out = append(out, r)
			continue
		}
		if slices.Contains(reports.GroupCostNames, e.Key) {
			if costs == nil {
				costs = reports.GroupCosts(reports.RecorderHistory(res.History))
			}
			r := ExpectationResult{Key: e.Key, Want: e.Cmp.Text, Got: FormatNumber(costs[e.Key])}
			r.OK = e.Cmp.Holds(costs[e.Key])
			out = append(out, r)
			continue
		}
		out = append(out, judge(e, res.Report, invariants, res.Producers))
	}
	return out
}

// HistoryExpectations evaluates, for a history checked on its own
// (kafkasim check), the expectations its report can show, as a run does:
// not converged nor the producers' bytes per record, which need the run,
// nor invariants unless invariants, the god view's broken invariants, were
// read from the run's store (stored).
func HistoryExpectations(s *scenarios.Scenario, rep *checker.Report, invariants int, stored bool) []ExpectationResult {
	var out []ExpectationResult
	for _, e := range s.Expect {
		if e.Bool != nil || (e.Key == "invariants" && !stored) || strings.HasPrefix(e.Key, "bytes-per-record") ||
			slices.Contains(reports.GroupCostNames, e.Key) {
			continue // needs the run, not just its history
		}
		out = append(out, judge(e, rep, invariants, nil))
	}
	return out
}

// judge evaluates an expectation on a number: rep's, with invariants (the
// god view's broken invariants) and the producers' figures. An expectation
// the run measured nothing for fails (Unmeasured).
func judge(e scenarios.Expectation, rep *checker.Report, invariants int, producers []ProducerStats) ExpectationResult {
	st := rep.Stats
	r := ExpectationResult{Key: e.Key, Want: e.Cmp.Text}
	if why := Unmeasured(e.Key, st.Attempted, st.Acked, producers); why != "" {
		r.Got = "nothing to judge: " + why
		return r
	}
	var got float64
	switch e.Key {
	case "violations":
		got = float64(rep.Violations + invariants)
	case "invariants":
		got = float64(invariants)
	case "availability":
		got = st.Availability
	case "lost-acked":
		got = float64(st.LostAcked)
	case "acked":
		got = float64(st.Acked)
	case "attempted":
		got = float64(st.Attempted)
	case "aborted":
		got = float64(st.Aborted)
	case "txn-committed":
		got = float64(st.TxnCommitted)
	case "txn-aborted":
		got = float64(st.TxnAborted)
	case "txn-indeterminate":
		got = float64(st.TxnIndeterminate)
	case "bytes-per-record":
		var bytes, records float64
		for _, p := range producers {
			bytes, records = bytes+float64(p.BytesSent), records+float64(p.Sent)
		}
		if records > 0 {
			got = bytes / records
		}
	default:
		if name, ok := strings.CutPrefix(e.Key, "bytes-per-record("); ok {
			name = strings.TrimSuffix(name, ")")
			for _, p := range producers {
				if p.Name == name {
					got = p.BytesPerRecord
				}
			}
			break
		}
		if typ, client, ok := anomalyOfClient(e.Key); ok {
			got = float64(rep.CountOf(typ, client))
			break
		}
		got = float64(rep.Count(e.Key))
	}
	r.Got = FormatNumber(got)
	r.OK = e.Cmp.Holds(got)
	return r
}

// anomalyOfClient splits an expectation key TYPE(NAME): the findings of
// anomaly type TYPE that instances of client entry NAME took part in.
func anomalyOfClient(key string) (typ, client string, ok bool) {
	open := strings.IndexByte(key, '(')
	if open < 0 || !strings.HasSuffix(key, ")") {
		return "", "", false
	}
	return key[:open], key[open+1 : len(key)-1], true
}

// Unmeasured says why the run measured nothing an expectation could be
// judged by ("" when it did): an availability of no attempted write, a
// loss count of no acknowledged one, an anomaly count of a run that wrote
// nothing. Such an expectation fails rather than pass vacuously. The
// counts themselves (attempted, acked), violations (the god view's
// invariants are checked with or without writes) and convergence are
// always measured.
func Unmeasured(key string, attempted, acked int, producers []ProducerStats) string {
	switch key {
	case "violations", "invariants", "attempted", "acked":
		return ""
	case "availability":
		if attempted == 0 {
			return "no write was attempted"
		}
		return ""
	case "lost-acked", "lost-acked-write":
		if acked == 0 {
			return "no write was acknowledged"
		}
		return ""
	}
	if name, ok := strings.CutPrefix(key, "bytes-per-record"); ok {
		name = strings.TrimSuffix(strings.TrimPrefix(name, "("), ")")
		for _, p := range producers {
			if (name == "" || p.Name == name) && p.Sent > 0 {
				return ""
			}
		}
		if name != "" {
			return "producer " + name + " sent no record"
		}
		return "no producer sent a record"
	}
	if attempted == 0 {
		return "no write was attempted"
	}
	return ""
}

// Vacuous says, for a run that attempted no write, what it checked instead
// of delivery guarantees; "" for any other run. Such a run passes on the
// god view's invariants and convergence alone, which the console, the
// summary's warnings and the report say loudly.
func (res *Result) Vacuous() string {
	if res.Report == nil || res.Report.Stats.Attempted > 0 {
		return ""
	}
	who := "no producer wrote a record"
	if len(res.Scenario.Producers) == 0 {
		who = "the scenario has no producers"
	}
	return fmt.Sprintf("nothing was written (%s), so no delivery guarantee was checked: only the cluster's %d god-view invariants and its convergence", who, len(res.Invariants))
}

// FormatNumber writes an expectation's value as run and check show it.
func FormatNumber(x float64) string {
	if x == float64(int64(x)) {
		return strconv.FormatInt(int64(x), 10)
	}
	return strconv.FormatFloat(x, 'f', 4, 64)
}

// verdict ranks the ways a run can fail: the simulator failing first, then
// a correctness expectation, then liveness.
func verdict(res *Result) string {
	if res.Verdict == Crash {
		return Crash
	}
	liveness := false
	for _, e := range res.Expectations {
		if e.OK {
			continue
		}
		if e.Key != "converged" {
			return Fail
		}
		liveness = true
	}
	if liveness {
		return Liveness
	}
	return Pass
}

// Headline says in a sentence what the run showed.
func (res *Result) Headline() string {
	switch res.Verdict {
	case Crash:
		return "the simulator failed: " + firstLine(res.CrashDetail)
	}
	var failed []string
	for _, e := range res.Expectations {
		if !e.OK {
			failed = append(failed, fmt.Sprintf("%s: want %s, got %s", e.Key, e.Want, e.Got))
		}
	}
	st := res.Report.Stats
	line := fmt.Sprintf("%s attempted, %d acknowledged, %s lost; %s", plural.Count(st.Attempted, "write"), st.Acked,
		plural.Count(st.LostAcked, "acknowledged write"), plural.Count(res.ViolationCount(), "violation"))
	if len(failed) > 0 {
		line = "expectation failed — " + failed[0] + ". " + line
	}
	return line
}

func firstLine(s string) string {
	for i, c := range s {
		if c == '\n' {
			return s[:i]
		}
	}
	return s
}
