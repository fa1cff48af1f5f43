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
	if s.txn >= 0 {
		return a.txns[s.txn].outcome == txnCommitted && s.typ == history.OK
	}
	return s.typ == history.OK
}

// checkLost: an acknowledged write is lost if final reads covered its
// partition and did not see it; without final reads, if reads went past its
// offset and nobody ever saw it (Jepsen's rule); otherwise it is unseen. A
// committed transaction's sends are acknowledged writes.
func (a *analyzer) checkLost() {
	for _, p := range a.procs {
		// A final reader that returned nothing, without an assignment to
		// say what it read: with one topic in the history it read that
		// one; with several, what it covered is unknown.
		if p.finalPolls > 0 && !p.finalRecs && len(p.owned) == 0 && len(a.topicIDs) == 1 {
			a.finalAll = true
		}
	}
	for i := range a.sends {
		s := &a.sends[i]
		if s.noAck {
			a.checkLostNoAck(s)
			continue
		}
		if !a.acked(s) {
			continue
		}
		po := a.parts[s.part]
		v := a.vals[s.val]
		covered := a.finalAll || a.finalTopic[po.topic] || a.finalPart[s.part]
		var typ, detail string
		switch {
		case covered && s.offset < po.logStart && v.flags&obsFinal == 0 && !a.reusedOffset(po.name, s.offset, a.valNames[s.val]):
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
		case covered && v.flags&obsFinal == 0 && a.cfg.Happened.Covers(godview.HeldBack, po.name, s.offset):
			typ, detail = Unseen, "; in the leader's log above a high watermark that cannot advance (a replica stuck by undetected disk corruption keeps the ISR below min.insync.replicas)"
		case covered:
			if v.flags&obsFinal == 0 {
				typ, detail = LostAckedWrite, "; final reads (to offset "+itoa(max(po.finalEnd, 0))+") do not hold it"
			}
		case v.flags&obsRead != 0:
		case a.readAcross(s.part, s.offset):
			typ, detail = LostAckedWrite, "; reads went on to offset "+itoa(po.maxRead)+" and never saw it"
		default:
			typ = Unseen
		}
		if typ == "" {
			continue
		}
		ex := Example{Partition: po.name, Offset: s.offset, Value: a.valNames[s.val], Process: a.procs[s.proc].name, Ops: []int64{s.invoke, s.complete}}
		what := "acknowledged at offset " + itoa(s.offset)
		if s.txn >= 0 {
			t := &a.txns[s.txn]
			ex.Ops = append(ex.Ops, t.end)
			what = "written at offset " + itoa(s.offset) + " in a transaction that committed (#" + itoa(t.end) + ")"
		}
		if typ == Unseen && detail != "" {
			ex.Detail = what + detail
		} else if typ == Unseen {
			ex.Detail = "acknowledged, never read (no final read covered it)"
		} else {
			a.stats.LostAcked++
			ex.Detail = what + detail
		}
		a.findings = append(a.findings, Finding{Type: typ, Example: ex, ackedAt: s.doneAt})
	}
}

// checkLostNoAck judges an acks=0 send by the final reads: if they cover
// where it went and do not hold it, it was lost (acks=0 permits that).
func (a *analyzer) checkLostNoAck(s *sendRec) {
	v := a.vals[s.val]
	covered := a.finalAll || a.finalTopic[s.topic]
	ex := Example{Value: a.valNames[s.val], Process: a.procs[s.proc].name, Offset: -1, Ops: []int64{s.invoke, s.complete}}
	if s.part >= 0 {
		covered = covered || a.finalPart[s.part]
		ex.Partition = a.parts[s.part].name
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
				for i := range po.obs {
					if ob := &po.obs[i]; ob.flags&obsRead != 0 {
						if _, seen := a.readOffsets[ob.val]; !seen {
							a.readOffsets[ob.val] = ob.off
						}
					}
				}
			}
		}
		ex.Offset = a.readOffsets[s.val]
		ex.Detail = "sent with acks=0, read at offset " + itoa(ex.Offset) + "; final reads do not hold it"
		if s.part >= 0 && ex.Offset < a.parts[s.part].logStart {
			a.stats.Deleted++ // below the log start: deleted by retention, not lost
			return
		}
	}
	a.stats.LostAcked++
	a.findings = append(a.findings, Finding{Type: LostAckedWrite, Example: ex, ackedAt: s.doneAt, noAck: ex.Offset < 0})
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
	po := a.parts[s.part]
	if a.finalBegin < 0 || s.offset < max(po.finalEnd, 0) || v.flags&obsBeforeFinal != 0 {
		return false
	}
	return s.complete > a.finalBegin || v.flags&obsRead != 0
}
