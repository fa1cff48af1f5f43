package checker

import (
	"cmp"
	"slices"
	"sort"

	"kafkasim/godview"
	"kafkasim/history"
)

// lost-acked-write and unseen: acknowledged writes the final reads do not
// hold (without final reads, that reads went past without seeing). Records
// below the log start count as deleted by retention, not lost.

// acked reports whether a send is an acknowledged write: its send was
// acknowledged at a position and, inside a transaction, the transaction
// committed.
func (a *analyzer) acked(s *sendRec) bool {
	if a.txn(s) >= 0 {
		return a.txns[a.txn(s)].outcome == txnCommitted && s.typ == history.OK
	}
	return s.typ == history.OK
}

// checkLost: an acknowledged write is lost if final reads covered its
// partition and did not see it (final reads that say how far they read
// cover it below where they got to, and all of it once they reached its
// end: mergeFinal); without final reads, if reads went past its
// offset and nobody ever saw it (Jepsen's rule); otherwise it is unseen. A
// committed transaction's sends are acknowledged writes.
func (a *analyzer) checkLost() {
	a.mergeFinal()
	for i := range a.sends {
		s := &a.sends[i]
		if s.noAck() {
			a.checkLostNoAck(s)
			continue
		}
		if !a.acked(s) {
			continue
		}
		po := a.parts[s.part()]
		v := a.val(s.val)
		covered := a.finalAll || a.finalTopic[po.topic] || a.finalPart[s.part()] || po.finalReached || a.offset(s) < po.finalTo
		var typ, detail string
		switch {
		case covered && a.offset(s) < po.logStart && v.flags&obsFinal == 0 && !a.reusedOffset(po.name, a.offset(s), a.valName(s.val)):
			// Below the log start: deleted by retention, not lost (unless a
			// record sent after it took its offset: then it was lost
			// first, whatever retention did later).
			a.stats.Deleted++
		case covered && v.flags&obsFinal == 0 && a.pastFinalReads(s, v):
			// Beyond the final reads' end, and only acknowledged or read
			// after they began: the high watermark they read to had not
			// reached it yet (a follower still copying, a retry still
			// being written). They say nothing about it.
			typ, detail = Unseen, "; past the final reads' end (offset "+itoa(max(po.finalEnd, 0))+"), acknowledged or read only after they began"
		case covered && v.flags&obsFinal == 0 && a.cfg.Happened.Covers(godview.HeldBack, po.name, a.offset(s)):
			typ, detail = Unseen, "; in the leader's log above a high watermark that cannot advance (a replica stuck by undetected disk corruption keeps the ISR below min.insync.replicas)"
		case covered:
			if v.flags&obsFinal == 0 {
				typ, detail = LostAckedWrite, "; final reads (to offset "+itoa(po.finalReach())+") do not hold it"
			}
		case v.flags&obsRead != 0:
		case a.readAcross(s.part(), a.offset(s)):
			typ, detail = LostAckedWrite, "; reads went on to offset "+itoa(po.maxRead)+" and never saw it"
		case po.finalSaid:
			// Not judged: the final reader did not get this far (starved
			// of its leader, or the run ended first), a liveness matter
			// the run's convergence reports, not a loss.
			typ, detail = Unseen, "; not judged by the final reads: they stopped at offset "+itoa(po.finalTo)+" of "+po.name+", short of its end"
			if po.finalTo < 0 {
				detail = "; not judged by the final reads: they never read " + po.name
			}
		default:
			typ = Unseen
		}
		if typ == "" {
			continue
		}
		ex := Example{Partition: po.name, Offset: a.offset(s), Value: a.valName(s.val), Process: a.procs[s.proc].name, Ops: []int64{a.invoke(s), a.complete(s)}}
		what := "acknowledged at offset " + itoa(a.offset(s))
		if a.txn(s) >= 0 {
			t := &a.txns[a.txn(s)]
			ex.Ops = append(ex.Ops, t.end)
			what = "written at offset " + itoa(a.offset(s)) + " in a transaction that committed (#" + itoa(t.end) + ")"
		}
		if typ == Unseen && detail != "" {
			ex.Detail = what + detail
		} else if typ == Unseen {
			ex.Detail = "acknowledged, never read (no final read covered it)"
		} else {
			a.stats.LostAcked++
			ex.Detail = what + detail
		}
		a.findings = append(a.findings, Finding{Type: typ, Example: ex, ackedAt: a.doneAt(s)})
	}
}

// checkLostNoAck judges an acks=0 send by the final reads: if they cover
// where it went and do not hold it, it was lost (acks=0 permits that).
func (a *analyzer) checkLostNoAck(s *sendRec) {
	v := a.val(s.val)
	covered := a.finalAll || a.finalTopic[a.sendTopic(s)]
	ex := Example{Value: a.valName(s.val), Process: a.procs[s.proc].name, Offset: -1, Ops: []int64{a.invoke(s), a.complete(s)}}
	if s.part() >= 0 {
		// Its offset unknown: only final reads that reached the
		// partition's end judge it.
		covered = covered || a.finalPart[s.part()] || a.parts[s.part()].finalReached
		ex.Partition = a.parts[s.part()].name
	}
	if !covered || v.flags&obsFinal != 0 {
		return
	}
	ex.Detail = "sent with acks=0 (done without an acknowledgement or an offset); final reads do not hold it"
	if v.flags&obsRead != 0 {
		// A poll read it, so it was committed: judged at the offset it was
		// read at, like any committed record lost.
		if a.readOffsets == nil {
			a.readOffsets = map[int32]int64{}
			for _, po := range a.parts {
				for ob := range po.all() {
					if a.obsFlags(ob)&obsRead != 0 {
						if _, seen := a.readOffsets[ob.val]; !seen {
							a.readOffsets[ob.val] = ob.off
						}
					}
				}
			}
		}
		ex.Offset = a.readOffsets[s.val]
		ex.Detail = "sent with acks=0, read at offset " + itoa(ex.Offset) + "; final reads do not hold it"
		if s.part() >= 0 && ex.Offset < a.parts[s.part()].logStart {
			a.stats.Deleted++ // below the log start: deleted by retention, not lost
			return
		}
	}
	a.stats.LostAcked++
	a.findings = append(a.findings, Finding{Type: LostAckedWrite, Example: ex, ackedAt: a.doneAt(s), noAck: ex.Offset < 0})
}

// readAcross reports whether a reader read partition part from at or below
// offset on past it, in one session (Jepsen's rule for a write nobody read:
// reads went past it); one that began at the log start (auto.offset.reset
// earliest, no group) read from below every offset. A reader that started
// above it (auto.offset.reset=latest, a group's committed offset) says
// nothing about it.
func (a *analyzer) readAcross(part int32, offset int64) bool {
	if a.spans == nil {
		a.spans = map[int32][]readSpan{}
		for i := range a.sessions {
			s := &a.sessions[i]
			first := s.first
			if s.fromStart {
				first = -1
			}
			a.spans[s.part] = append(a.spans[s.part], readSpan{first: first, max: s.max})
		}
		for _, spans := range a.spans { // kafkasim:orderless: each list on its own
			slices.SortFunc(spans, func(x, y readSpan) int { return cmp.Compare(x.first, y.first) })
			spans[0].reach = spans[0].max
			for i := 1; i < len(spans); i++ {
				spans[i].reach = max(spans[i-1].reach, spans[i].max)
			}
		}
	}
	spans := a.spans[part]
	i := sort.Search(len(spans), func(i int) bool { return spans[i].first > offset })
	return i > 0 && spans[i-1].reach > offset
}

// readSpan is one reader session's range of a partition: first and highest
// offset read; reach is the highest of the sessions that start at or
// before first.
type readSpan struct{ first, max, reach int64 }

// pastFinalReads reports whether an acknowledged write final reads did not
// hold lies at or beyond their end in its partition, with nothing from
// before they began to show that it was committed by then: it was
// acknowledged after they began, or polls read it only after they began.
func (a *analyzer) pastFinalReads(s *sendRec, v valInfo) bool {
	po := a.parts[s.part()]
	if a.finalBegin < 0 || a.offset(s) < max(po.finalEnd, 0) || v.flags&obsBeforeFinal != 0 {
		return false
	}
	return a.complete(s) > a.finalBegin || v.flags&obsRead != 0
}

// finalProc is what one process's final polls said of their coverage:
// the partitions and topics they named (records returned, an assignment,
// log start offsets), and, when they carried positions or end offsets
// (said), how far they read each partition and the end they read it to.
type finalProc struct {
	parts, topics map[int32]bool
	to, end       map[int32]int64
	said          bool
}

func (f *finalProc) part(pi int32) {
	if f.parts == nil {
		f.parts = map[int32]bool{}
	}
	f.parts[pi] = true
}

func (f *finalProc) topic(t int32) {
	if f.topics == nil {
		f.topics = map[int32]bool{}
	}
	f.topics[t] = true
}

// readTo notes that final reads read a partition to off (a position after
// a final poll, or one past a record it returned); a position moved back
// (KIP-320 after a truncation) takes nothing from what was read before.
func (f *finalProc) readTo(pi int32, off int64) {
	if f.to == nil {
		f.to = map[int32]int64{}
	}
	if at, ok := f.to[pi]; !ok || off > at {
		f.to[pi] = off
	}
}

func (f *finalProc) endAt(pi int32, off int64) {
	if f.end == nil {
		f.end = map[int32]int64{}
	}
	f.end[pi] = off
}

// mergeFinal decides what final reads cover. A final reader whose polls
// said how far they read (positions, end offsets) covers each partition
// below where it got to, and all of it once it reached its end offset: a
// final reader that stopped short (starved of its leader, or a run that
// ended first) judges nothing above where it stopped. One whose polls did
// not (an older history) covers what they named: the partitions it
// returned records of or was assigned, the topics of a reader without an
// assignment, and, when it returned nothing at all without an assignment in
// a history of one topic, everything (every partition it read was empty).
func (a *analyzer) mergeFinal() {
	for _, p := range a.procs {
		f := &p.fin
		if !f.said {
			for pi := range f.parts { // kafkasim:orderless: sets flags
				a.finalPart[pi] = true
			}
			for t := range f.topics { // kafkasim:orderless: sets flags
				a.finalTopic[t] = true
			}
			if p.finalPolls > 0 && !p.finalRecs && len(p.owned) == 0 && len(a.topicIDs) == 1 {
				a.finalAll = true
			}
			continue
		}
		for pi, to := range f.to { // kafkasim:orderless: a maximum and flags
			po := a.parts[pi]
			po.finalSaid = true
			po.finalTo = max(po.finalTo, to)
			if end, ok := f.end[pi]; ok && to >= end {
				po.finalReached = true
			}
		}
		for pi := range f.end { // kafkasim:orderless: sets flags
			a.parts[pi].finalSaid = true
		}
	}
	// A topic whose every partition final reads read to its end is covered
	// whole (an acks=0 send whose partition is unknown).
	whole := map[int32]bool{}
	for _, po := range a.parts {
		if r, seen := whole[po.topic]; !seen || r {
			whole[po.topic] = po.finalReached
		}
	}
	for t, r := range whole { // kafkasim:orderless: sets flags
		if r {
			a.finalTopic[t] = true
		}
	}
}

// finalReach is where final reads ended in the partition: one past the
// highest offset they returned, or the position they said they read to.
func (po *partState) finalReach() int64 { return max(po.finalEnd, po.finalTo, 0) }
