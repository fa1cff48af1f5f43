package reports

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"kafkasim/history"
)

// Every time axis of the report (the timeline and each plot) marks the
// same things: the run's phases, and each fault from when it struck until
// it was undone. runMarks works them out once from the fault log, the
// phase boundaries and the history.

// span is a stretch of simulated time that the report marks. A span with
// to == from is an instant (adding partitions, a bit flip).
type span struct {
	from, to time.Duration
	label    string // short, drawn on the span where it fits: "broker-1"
	title    string // in full, for tooltips
	skipped  bool   // a fault that found nothing to act on
	undone   bool   // to is the fault's own undoing (restart, heal of its cut)
}

func (s span) instant() bool { return s.to <= s.from }

// markRow is one row of fault spans: the faults of one kind, or a share of
// them when they overlap.
type markRow struct {
	kind  string // the row's label: empty on a kind's second and later rows
	spans []span
}

// boundary is a phase boundary drawn across a time axis.
type boundary struct {
	at    time.Duration
	label string
}

// runMarks are the marks of one run on its time axes.
type runMarks struct {
	end    time.Duration // the end of every time axis
	phases []span        // fault phase, settle, convergence, final reads
	bounds []boundary
	// finalReads is the span of the final reads (from == to == 0 when the
	// run had none): its polls are left out of the plots' scales.
	finalReads span
	rows       []markRow
}

// faultCount is how many faults the rows mark.
func (m *runMarks) faultCount() int {
	n := 0
	for _, r := range m.rows {
		n += len(r.spans)
	}
	return n
}

// maxRowsPerKind bounds the rows one kind of fault takes when its faults
// overlap; further overlaps share the last row.
const maxRowsPerKind = 3

// maxMarkRows bounds the fault rows of a strip (a long nemesis run can
// strike with every kind of fault).
const maxMarkRows = 8

// Phase names, as the report's phase row spells them.
const (
	phaseFaults   = "fault phase"
	phaseSettle   = "settle"
	phaseConverge = "converge"
	phaseFinal    = "final reads"
)

// newRunMarks works out the marks of r. final is when the final reads
// began (0: none).
func newRunMarks(r *Run, end, final time.Duration) runMarks {
	m := runMarks{end: end}
	faultsEnd := r.Phases.FaultsEnd
	if faultsEnd <= 0 { // a run store from before phases were recorded
		for _, f := range r.Faults {
			if f.Origin == "heal" {
				faultsEnd = f.At
				break
			}
		}
	}
	settleEnd := r.Phases.SettleEnd
	if faultsEnd > 0 {
		m.phases = append(m.phases, span{from: 0, to: faultsEnd, label: phaseFaults,
			title: "fault phase: scheduled faults and the nemesis strike, producers send (0–" + fmtTime(faultsEnd) + ")"})
		m.bounds = append(m.bounds, boundary{faultsEnd, "heal all"})
	}
	if settleEnd > faultsEnd && faultsEnd > 0 {
		m.phases = append(m.phases, span{from: faultsEnd, to: settleEnd, label: phaseSettle,
			title: "settle: every fault healed, producers stopped, consumers catch up (" + fmtTime(faultsEnd) + "–" + fmtTime(settleEnd) + ")"})
		m.bounds = append(m.bounds, boundary{settleEnd, "settle end"})
	}
	if final > 0 {
		if settleEnd > 0 && final > settleEnd {
			m.phases = append(m.phases, span{from: settleEnd, to: final, label: phaseConverge,
				title: "converge: waiting for the cluster to heal, then one probe write per partition (" + fmtTime(settleEnd) + "–" + fmtTime(final) + ")"})
		}
		m.finalReads = span{from: final, to: end, label: phaseFinal,
			title: "final reads: every partition read from its log start to its end (" + fmtTime(final) + "–" + fmtTime(end) + ")"}
		m.phases = append(m.phases, m.finalReads)
		m.bounds = append(m.bounds, boundary{final, "final reads"})
	}
	m.rows = faultRows(r.Faults, faultsEnd, end)
	return m
}

// finalReadsStart is when the first final poll (Value.Final) was invoked,
// and the processes that made final polls: the runner's final reader,
// whose every poll belongs to the final reads, not to the scenario's
// consumers.
func finalReadsStart(h History) (time.Duration, map[string]bool) {
	f := newFinalReads()
	h.EachHead(f.add)
	return f.start(), f.procs
}

// finalReads gathers finalReadsStart's answer from the history's
// operations in order.
type finalReads struct {
	first time.Duration // -1: none yet
	procs map[string]bool
}

func newFinalReads() *finalReads { return &finalReads{first: -1, procs: map[string]bool{}} }

func (f *finalReads) add(op *history.Op) {
	if op.F != history.FPoll || !op.Value.Final {
		return
	}
	f.procs[op.Process] = true
	if t := time.Duration(op.Time); f.first < 0 || t < f.first {
		f.first = t
	}
}

// start is finalReadsStart's time: 0 when there were no final reads.
func (f *finalReads) start() time.Duration {
	if f.first < 0 {
		return 0
	}
	return max(f.first, 1)
}

// Fault kinds whose effect lasts until something ends it, and what ends
// each when the fault did not set its own end (restart-after, for).
var endedBy = map[string][]string{
	"crash": {"restart"}, "kill": {"restart"}, "power-loss": {"restart"}, "shutdown": {"restart"},
	"pause": {"resume"}, "partition": {}, "isolate": {}, "slow-network": {}, "stall": {}, "clock": {},
	"disk": {},
}

// lasting reports whether f holds until undone; a bit flip, a torn write,
// a wiped disk, a disconnect or an admin operation is an instant.
func lasting(f Fault) bool {
	if _, ok := endedBy[f.Kind]; !ok {
		return false
	}
	if f.Kind == "disk" {
		for _, instant := range []string{"disk corrupt", "disk torn-write", "disk wipe"} {
			if strings.HasPrefix(f.What, instant) {
				return false
			}
		}
	}
	return true
}

// faultRows pairs each fault with its end and lays the spans out in rows,
// one kind per row (more when they overlap), kinds in order of first
// appearance. A fault ends at its own undo record (same origin, kind and
// nodes); a lasting fault without one at the first
// later fault that ends it (a restart or resume of one of its nodes, a
// heal), else at the heal of the fault phase, else at the end of the run.
// The liveness phase's heal is a phase boundary, not a fault; restarts,
// resumes and heals that are undo records end their fault and are not
// drawn on their own.
func faultRows(faults []Fault, faultsEnd, end time.Duration) []markRow {
	used := make([]bool, len(faults))
	type kindRows struct {
		kind string
		rows [][]span
	}
	var kinds []*kindRows
	byKind := map[string]*kindRows{}
	for i, f := range faults {
		if f.Undo || f.Origin == "heal" || used[i] {
			continue
		}
		s := span{from: f.At, to: f.At, label: faultLabel(f), title: faultTitle(f)}
		switch {
		case f.Skipped != "":
			s.skipped = true
			s.label = "skipped"
		case lasting(f):
			s.to = faultEnd(faults, used, i, faultsEnd, end)
			if f.At < faultsEnd && s.to > faultsEnd {
				// The liveness phase's heal ended it; its own undo
				// record, due later, only found it ended.
				s.to = faultsEnd
			}
			s.undone = s.to < end
			s.title += " until " + fmtTime(s.to)
		}
		k := byKind[f.Kind]
		if k == nil {
			k = &kindRows{kind: f.Kind}
			byKind[f.Kind] = k
			kinds = append(kinds, k)
		}
		placed := false
		for r := range k.rows {
			row := k.rows[r]
			if last := row[len(row)-1]; last.to <= s.from && (last.to > last.from || last.from < s.from) {
				k.rows[r] = append(row, s)
				placed = true
				break
			}
		}
		if !placed {
			if len(k.rows) < maxRowsPerKind {
				k.rows = append(k.rows, []span{s})
			} else {
				n := len(k.rows) - 1
				k.rows[n] = append(k.rows[n], s)
			}
		}
	}
	rows := 0
	for _, k := range kinds {
		rows += len(k.rows)
	}
	var out []markRow
	for i, k := range kinds {
		if rows > maxMarkRows {
			// Too many rows for a strip: one row per kind, overlapping
			// faults drawn over each other, and the rarest kinds share
			// a last row.
			if i == maxMarkRows-1 && len(kinds) > maxMarkRows {
				var rest []span
				for _, k := range kinds[i:] {
					for _, r := range k.rows {
						rest = append(rest, r...)
					}
				}
				slices.SortStableFunc(rest, func(a, b span) int { return cmp.Compare(a.from, b.from) })
				out = append(out, markRow{kind: "other", spans: rest})
				break
			}
			var all []span
			for _, r := range k.rows {
				all = append(all, r...)
			}
			slices.SortStableFunc(all, func(a, b span) int { return cmp.Compare(a.from, b.from) })
			out = append(out, markRow{kind: k.kind, spans: all})
			continue
		}
		for r, spans := range k.rows {
			row := markRow{spans: spans}
			if r == 0 {
				row.kind = k.kind
			}
			out = append(out, row)
		}
	}
	return out
}

// faultEnd finds where the lasting fault faults[i] ends, and marks the
// undo record it used.
func faultEnd(faults []Fault, used []bool, i int, faultsEnd, end time.Duration) time.Duration {
	f := faults[i]
	for j := i + 1; j < len(faults); j++ {
		g := faults[j]
		if !used[j] && g.Undo && g.Origin == f.Origin && g.Kind == f.Kind && slices.Equal(g.Nodes, f.Nodes) {
			used[j] = true
			return g.At
		}
	}
	for j := i + 1; j < len(faults); j++ {
		g := faults[j]
		if g.Skipped != "" || g.Undo {
			continue
		}
		if g.Kind == "heal" || (slices.Contains(endedBy[f.Kind], g.Kind) && overlaps(g.Nodes, f.Nodes)) {
			return g.At
		}
	}
	if faultsEnd > f.At {
		return faultsEnd
	}
	return end
}

func overlaps(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// faultLabel names what a fault struck, briefly: its node when it struck
// one, else its description without the kind and the duration ("rack(a)",
// "[broker-3] | [rest]", "add-partitions orders to 6").
func faultLabel(f Fault) string {
	if len(f.Nodes) == 1 {
		return f.Nodes[0]
	}
	s := strings.TrimPrefix(f.What, f.Kind+" ")
	if f.Kind == "custom" {
		return s
	}
	if i := strings.LastIndex(s, " for "); i > 0 {
		s = s[:i]
	}
	if f.Kind == "partition" {
		// "[broker-3] | [rest]" reads as "broker-3 | rest".
		s = strings.NewReplacer("[", "", "]", "").Replace(s)
	}
	return s
}

// faultTitle is a fault's tooltip: when, what, on which nodes.
func faultTitle(f Fault) string {
	t := fmtTime(f.At) + " " + f.What
	if len(f.Nodes) > 0 {
		t += " (" + strings.Join(f.Nodes, ", ") + ")"
	}
	if f.Skipped != "" {
		t += ", skipped: " + f.Skipped
	}
	return t
}
