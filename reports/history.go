package reports

import "kafkasim/history"

// History is the client history a report reads. A run's recorder serves it
// without building every operation at once (a long run's history, its
// polls' records included, took more memory than the run); Ops serves a
// slice of them.
type History interface {
	// Len is the number of operations.
	Len() int
	// Each calls f with every operation in order; f must not keep op, nor
	// the slices it holds, past the call.
	Each(f func(op *history.Op))
	// EachHead is Each without, perhaps, the records of polls.
	EachHead(f func(op *history.Op))
	// At returns the operation at position p (0 <= p < Len), which the
	// caller may keep.
	At(p int) *history.Op
	// Head is At without, perhaps, the records of a poll: for scanning
	// operations by process, function and value.
	Head(p int) *history.Op
	// Find returns the position of the operation with history index idx.
	Find(idx int64) (int, bool)
}

// history is what the report reads: r.History, or r.Ops.
func (r *Run) history() History {
	if r.History != nil {
		return r.History
	}
	return newOps(r.Ops)
}

// Ops serves a slice of operations as a History. Histories written by
// kafkasim have Index == position, which is the fast path; anything else (a
// filtered or merged history) gets a map built once.
type Ops struct {
	ops []history.Op
	pos map[int64]int
}

func newOps(ops []history.Op) *Ops {
	h := &Ops{ops: ops}
	for i := range ops {
		if ops[i].Index != int64(i) {
			h.pos = make(map[int64]int, len(ops))
			for j := range ops {
				if _, dup := h.pos[ops[j].Index]; !dup {
					h.pos[ops[j].Index] = j
				}
			}
			break
		}
	}
	return h
}

// Len implements History.
func (h *Ops) Len() int { return len(h.ops) }

// Each implements History.
func (h *Ops) Each(f func(op *history.Op)) {
	for i := range h.ops {
		f(&h.ops[i])
	}
}

// EachHead implements History.
func (h *Ops) EachHead(f func(op *history.Op)) { h.Each(f) }

// At implements History.
func (h *Ops) At(p int) *history.Op { return &h.ops[p] }

// Head implements History.
func (h *Ops) Head(p int) *history.Op { return &h.ops[p] }

// Find implements History.
func (h *Ops) Find(idx int64) (int, bool) {
	if h.pos != nil {
		p, ok := h.pos[idx]
		return p, ok
	}
	if idx < 0 || idx >= int64(len(h.ops)) {
		return 0, false
	}
	return int(idx), true
}
