package checker

import (
	"sort"

	"kafkasim/history"
)

// nonmonotonic-poll and poll-skip (and their int- forms, within one poll): a
// reader's position within a session. step sees each move as the polls come
// in; a jump is a skip only if an offset it passed over is known to exist,
// which checkSkips decides once the version order is built.

// skipCandidate is a jump in a session's offsets, checked at the end
// against the offsets known to exist.
type skipCandidate struct {
	part, proc, sess int32
	rc, intra        bool
	prev, next       int64
	op               int64
	// finding: the index in findings of the skip checkSkips reported for
	// this jump (-1: none); checkCoverage adds to it, not beside it.
	finding int32
}

// step checks one move of a reader's position: offsets increase within a
// session; a jump is checked at the end against offsets known to exist.
func (a *analyzer) step(part, sid, pid int32, rc bool, prev, next int64, o *history.Op, intra bool) {
	switch {
	case next <= prev:
		typ := NonmonotonicPoll
		if intra {
			typ = IntNonmonotonicPoll
		}
		name := a.parts[part].name
		// Within one poll nothing resets the position: only between polls.
		rewound := !intra && a.cfg.rewoundOutOfRange(name, o.Process, prev, next, a.sessions[sid].lastAt, o.Time)
		a.findings = append(a.findings, Finding{Type: typ, rewound: rewound, Example: Example{Partition: name, Offset: next,
			Process: o.Process, Ops: []int64{o.Index}, Detail: "offset " + itoa(next) + " after " + itoa(prev)}})
	case next > prev+1:
		a.skips = append(a.skips, skipCandidate{part: part, proc: pid, sess: sid, rc: rc, intra: intra, prev: prev, next: next, op: o.Index, finding: -1})
	}
}

// checkSkips: a jump in a session's offsets over an offset known to hold a
// record (that a read_committed reader must see, for one) is a skip.
func (a *analyzer) checkSkips() {
	for i := range a.skips {
		c := &a.skips[i]
		po := a.parts[c.part]
		missed, ok := po.knownBetween(c.prev, c.next, c.rc)
		for ok && a.compactableBefore(c.part, missed, c.op) {
			// The cleaner may have removed it before the reader got
			// there: look for a record it could not have removed.
			missed, ok = po.knownBetween(missed, c.next, c.rc)
		}
		if !ok {
			continue
		}
		typ := PollSkip
		if c.intra {
			typ = IntPollSkip
		}
		iso := ""
		if c.rc {
			iso = readCommitted
		}
		c.finding = int32(len(a.findings))
		a.findings = append(a.findings, Finding{Type: typ, iso: iso, Example: Example{Partition: po.name, Offset: missed,
			Process: a.procs[c.proc].name, Ops: []int64{c.op},
			Detail: "jumped from " + itoa(c.prev) + " to " + itoa(c.next) + " over offset " + itoa(missed) + ", which exists"}})
	}
}

// jumpOver finds the reported jump, among js (indices in skips, in order of
// where they jumped from), that passed over offset off; nil if none.
func (a *analyzer) jumpOver(js []int32, off int64) *skipCandidate {
	i := sort.Search(len(js), func(i int) bool { return a.skips[js[i]].prev >= off })
	if i == 0 {
		return nil
	}
	if c := &a.skips[js[i-1]]; off < c.next {
		return c
	}
	return nil
}

// nameSkipped puts the record the final reads hold at fin into the finding of
// jump c, which passed over it: the jump skipped a record still in the log
// (checkSkips knew only that the offset existed, perhaps by a record since
// lost, which would excuse the skip). The jump did not read the offset, so
// the finding keeps readOther false, whatever the session read there
// another time.
func (a *analyzer) nameSkipped(c *skipCandidate, fin *observation) {
	f := &a.findings[c.finding]
	name := a.procs[c.proc].name
	f.Offset, f.Value = fin.off, a.valName(fin.val)
	f.Detail = name + " jumped from " + itoa(c.prev) + " to " + itoa(c.next) + " over the record at " + itoa(fin.off) + " that the log holds"
}
