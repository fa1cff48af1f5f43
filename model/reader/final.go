package reader

import (
	"fmt"
	"strings"

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
	for _, p := range r.subs.parts {
		p.end = -1
		p.offset, p.offsetEpoch, p.validating, p.resetting = -1, -1, false, false
		p.buf = nil
	}
	r.listOffsets(proto.ListEarliest, false)
	r.listOffsets(proto.ListLatest, true)
}

// FinalDone reports whether final reads reached every partition's end.
func (r *Reader) FinalDone() bool { return r.final && r.finalDone }

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
