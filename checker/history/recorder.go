package history

import "time"

// recorderChunk is how many operations a recorder stores per block: growing
// a history never copies what is already recorded.
const recorderChunk = 1 << 15

// Recorder collects a run's history. Clients of the model record through it;
// times come from the world's virtual clock (not a node's drifting one), so a
// history's times are simulated nanoseconds since the start.
type Recorder struct {
	chunks [][]Op
	n      int64
	clock  func() time.Duration
	// steps, when set, is the trace step at each operation, so that a
	// report can point from an operation into the trace.
	stepOf func() uint64
	steps  []uint64
}

// TraceSteps makes the recorder note, for every operation, the trace step
// (events executed so far) when it was recorded.
func (r *Recorder) TraceSteps(stepOf func() uint64) { r.stepOf = stepOf }

// Step returns the trace step of operation i, or 0 when unknown.
func (r *Recorder) Step(i int64) uint64 {
	if i < 0 || i >= int64(len(r.steps)) {
		return 0
	}
	return r.steps[i]
}

// NewRecorder records with times from clock.
func NewRecorder(clock func() time.Duration) *Recorder { return &Recorder{clock: clock} }

func (r *Recorder) add(process string, t Type, f string, v Value) int64 {
	if len(r.chunks) == 0 || len(r.chunks[len(r.chunks)-1]) == recorderChunk {
		r.chunks = append(r.chunks, make([]Op, 0, recorderChunk))
	}
	last := &r.chunks[len(r.chunks)-1]
	i := r.n
	if r.stepOf != nil {
		r.steps = append(r.steps, r.stepOf())
	}
	*last = append(*last, Op{Index: i, Time: int64(r.clock()), Process: process, Type: t, F: f, Value: v})
	r.n++
	return i
}

// Invoke records the start of an operation and returns its index.
func (r *Recorder) Invoke(process, f string, v Value) int64 { return r.add(process, Invoke, f, v) }

// Complete records an operation's end: ok, fail or info.
func (r *Recorder) Complete(process string, t Type, f string, v Value) int64 {
	return r.add(process, t, f, v)
}

// Ops returns the whole history as one slice (a copy of the blocks).
func (r *Recorder) Ops() []Op {
	out := make([]Op, 0, r.n)
	for _, c := range r.chunks {
		out = append(out, c...)
	}
	return out
}

// Each calls f for every operation in order, without copying.
func (r *Recorder) Each(f func(op *Op)) {
	for _, c := range r.chunks {
		for i := range c {
			f(&c[i])
		}
	}
}

// Len is the number of operations recorded.
func (r *Recorder) Len() int { return int(r.n) }
