package history

import (
	"sort"
	"time"
)

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
	// open are the operations invoked and not yet completed, so that a
	// process's death can complete them (Died).
	open map[openKey]openOps
}

// openKey names an open operation: a send by its value (values are unique),
// any other by its process and function.
type openKey struct {
	process, f, value string
}

// openOps are the invocations open under one key, oldest first.
type openOps struct {
	first int64
	more  []int64
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

func keyOf(process, f string, v *Value) openKey {
	k := openKey{process: process, f: f}
	if f == FSend {
		k.value = v.Value
	}
	return k
}

// Invoke records the start of an operation and returns its index.
func (r *Recorder) Invoke(process, f string, v Value) int64 {
	i := r.add(process, Invoke, f, v)
	if r.open == nil {
		r.open = map[openKey]openOps{}
	}
	k := keyOf(process, f, &v)
	if o, ok := r.open[k]; ok {
		o.more = append(o.more, i)
		r.open[k] = o
	} else {
		r.open[k] = openOps{first: i}
	}
	return i
}

// Complete records an operation's end: ok, fail or info.
func (r *Recorder) Complete(process string, t Type, f string, v Value) int64 {
	k := keyOf(process, f, &v)
	if o, ok := r.open[k]; ok {
		if len(o.more) == 0 {
			delete(r.open, k)
		} else {
			r.open[k] = openOps{first: o.more[0], more: o.more[1:]}
		}
	}
	return r.add(process, t, f, v)
}

// op returns operation i.
func (r *Recorder) op(i int64) *Op { return &r.chunks[i/recorderChunk][i%recorderChunk] }

// Died records that a client process died (crashed, was killed, lost power
// or exited), as its world sees it: every operation it had open completes
// info (indeterminate: it may or may not have happened, Jepsen's convention
// for a crashed process) with the error why, in the order they were
// invoked, and a crash operation pair follows. It returns how many
// operations it completed.
func (r *Recorder) Died(process, why string) int {
	var open []int64
	for k, o := range r.open { // kafkasim:orderless: sorted below
		if k.process == process {
			open = append(open, o.first)
			open = append(open, o.more...)
			delete(r.open, k)
		}
	}
	sort.Slice(open, func(i, j int) bool { return open[i] < open[j] })
	for _, i := range open {
		inv := r.op(i)
		v := inv.Value
		v.Error = why
		r.add(process, Info, inv.F, v)
	}
	crash := NoValue()
	crash.Error = why
	r.add(process, Invoke, FCrash, crash)
	r.add(process, OK, FCrash, crash)
	return len(open)
}

// Restarted records a client process coming back, as an operation pair.
func (r *Recorder) Restarted(process string) {
	r.add(process, Invoke, FRestart, NoValue())
	r.add(process, OK, FRestart, NoValue())
}

// Open is how many operations are invoked and not yet completed.
func (r *Recorder) Open() int {
	n := 0
	for _, o := range r.open { // kafkasim:orderless: a count
		n += 1 + len(o.more)
	}
	return n
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
