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
	// byProcess lists each process's operations since it last died: Died
	// pairs them to find the ones still open. Deaths are rare, so the
	// pairing waits for one, and recording an operation stays an append.
	byProcess map[string][]int64
}

// openKey names an open operation of a process: a send by its value
// (values are unique), any other by its function.
type openKey struct {
	f, value string
}

func keyOf(op *Op) openKey {
	k := openKey{f: op.F}
	if op.F == FSend {
		k.value = op.Value.Value
	}
	return k
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
	if r.byProcess == nil {
		r.byProcess = map[string][]int64{}
	}
	r.byProcess[process] = append(r.byProcess[process], i)
	r.n++
	return i
}

// Invoke records the start of an operation and returns its index.
func (r *Recorder) Invoke(process, f string, v Value) int64 { return r.add(process, Invoke, f, v) }

// Complete records an operation's end: ok, fail or info.
func (r *Recorder) Complete(process string, t Type, f string, v Value) int64 {
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
	open := r.openOf(process)
	delete(r.byProcess, process) // all its operations are complete below
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

// openOf pairs a process's operations since it last died and returns the
// invocations without a completion, in the order they were invoked.
func (r *Recorder) openOf(process string) []int64 {
	pending := map[openKey][]int64{}
	for _, i := range r.byProcess[process] {
		op := r.op(i)
		k := keyOf(op)
		if op.Type == Invoke {
			pending[k] = append(pending[k], i)
		} else if l := pending[k]; len(l) > 0 {
			pending[k] = l[1:]
		}
	}
	var open []int64
	for _, l := range pending { // kafkasim:orderless: sorted below
		open = append(open, l...)
	}
	sort.Slice(open, func(i, j int) bool { return open[i] < open[j] })
	return open
}

// Restarted records a client process coming back, as an operation pair.
func (r *Recorder) Restarted(process string) {
	r.add(process, Invoke, FRestart, NoValue())
	r.add(process, OK, FRestart, NoValue())
}

// Open is how many operations are invoked and not yet completed.
func (r *Recorder) Open() int {
	n := 0
	for p := range r.byProcess { // kafkasim:orderless: a count
		n += len(r.openOf(p))
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
