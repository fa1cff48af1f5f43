package reader

import (
	"fmt"
	"strings"

	"kafkasim/history"
	"kafkasim/model/proto"
)

// Final reads: the god-view's end-of-run reader reads every partition from
// its log start to the end it has when final reads start.

// StartFinal switches to final reads, Jepsen's: every partition is read again
// from its log start to the end it has now (its high watermark), with polls
// recorded as final, so that an acknowledged record missing from them is
// lost rather than merely unseen.
func (r *Reader) StartFinal() {
	r.final = true
	r.finalDone = false
	r.finalSaid, r.finalAnnounced = map[partKey]finalSaid{}, false
	for _, p := range r.subs.parts {
		p.end = -1
		p.seek(fetchPosition{offset: -1, offsetEpoch: -1}, sourceNone)
		p.validating, p.resetting = false, false
		p.buf = nil
	}
	r.listOffsets(proto.ListEarliest, false)
	r.listOffsets(proto.ListLatest, true)
}

// FinalDone reports whether final reads reached every partition's end and
// the history says so: where they ended is recorded on a final poll (one
// more, empty, when a ListOffsets answer rather than a poll showed the last
// position at its end), or the checker could not tell the end of a
// partition's final read from a final reader that stopped short.
func (r *Reader) FinalDone() bool { return r.final && r.finalDone && !r.finalUnsaid() }

// finalSaid is what the history holds of a partition's final read: the
// position and the end offset last recorded (-1: none).
type finalSaid struct{ position, end int64 }

func (r *Reader) said(k partKey) finalSaid {
	if s, ok := r.finalSaid[k]; ok {
		return s
	}
	return finalSaid{-1, -1}
}

// finalUnsaid reports whether the final reads know something of where they
// began or got to that no final poll has recorded yet.
func (r *Reader) finalUnsaid() bool {
	if len(r.finalStarts) > 0 {
		return true
	}
	for _, p := range r.subs.parts {
		s := r.said(p.key)
		if (p.offset >= 0 && p.offset != s.position) || (p.end >= 0 && p.end != s.end) {
			return true
		}
	}
	return false
}

// finalReport puts on a final poll's value the positions it moved (or
// first learned) and the end offsets learned since the last final poll:
// how far each partition's final read got, so that the checker judges an
// acknowledged write missing from them only below it (a final reader
// starved of its leader, or a run that ended before it finished, says
// nothing of the offsets it never reached).
func (r *Reader) finalReport(v *history.Value) {
	for _, p := range r.subs.parts {
		s := r.said(p.key)
		was := s
		if p.offset >= 0 && p.offset != s.position {
			x := v.X()
			if x.Positions == nil {
				x.Positions = map[string]int64{}
			}
			x.Positions[p.key.String()] = p.offset
			s.position = p.offset
		}
		if p.end >= 0 && p.end != s.end {
			x := v.X()
			if x.EndOffsets == nil {
				x.EndOffsets = map[string]int64{}
			}
			x.EndOffsets[p.key.String()] = p.end
			s.end = p.end
		}
		if s != was {
			r.finalSaid[p.key] = s
		}
	}
	if !r.finalAnnounced {
		// The first final poll carries positions, empty if need be, so
		// that the checker knows this reader says how far it got: a final
		// reader that never learns a partition's position (its leader is
		// gone) covers none of it.
		if x := v.X(); x.Positions == nil {
			x.Positions = map[string]int64{}
		}
		r.finalAnnounced = true
	}
}

func (r *Reader) checkFinal() {
	if r.final && finalReadsDone(r.subs.parts) {
		r.finalDone = true
	}
}

// reachedEnd reports whether final reads reached the partition's end: it
// is known, and the position is at or past it.
func (p *partitionState) reachedEnd() bool { return p.end >= 0 && p.offset >= p.end }

// finalReadsDone reports whether final reads reached the end of every
// partition (of none, too: the runner starts them once the reader knows
// every partition).
func finalReadsDone(parts []*partitionState) bool {
	for _, p := range parts {
		if !p.reachedEnd() {
			return false
		}
	}
	return true
}

// FinalPending describes the partitions final reads have not finished, for
// a liveness failure's message.
func (r *Reader) FinalPending() string { return finalPending(r.subs.parts) }

func finalPending(parts []*partitionState) string {
	var pending []string
	for _, p := range parts {
		if !p.reachedEnd() {
			pending = append(pending, fmt.Sprintf("%s at %d of %d (leader %d, validating %v, resetting %v)", p.key, p.offset, p.end, p.leader, p.validating, p.resetting))
		}
	}
	if len(parts) == 0 {
		return "no partitions assigned"
	}
	return strings.Join(pending, "; ")
}

// askFinalEnds asks again for the end of every partition final reads do not
// know the end of yet: partitions that appeared after StartFinal (the reader
// learned them from fresh metadata) or whose first answer was an error.
func (r *Reader) askFinalEnds() {
	missing := false
	for _, p := range r.subs.parts {
		if p.end < 0 && p.leader >= 0 {
			missing = true
		}
	}
	if !missing {
		return
	}
	for _, req := range r.requests.All() {
		if req.kind == requestEnd {
			return
		}
	}
	r.listOffsets(proto.ListLatest, true)
}
