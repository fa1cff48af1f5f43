package history

import "time"

// Recorder collects a run's history. Clients of the model record through it;
// times come from the world's virtual clock (not a node's drifting one), so a
// history's times are simulated nanoseconds since the start.
type Recorder struct {
	ops   []Op
	clock func() time.Duration
}

// NewRecorder records with times from clock.
func NewRecorder(clock func() time.Duration) *Recorder { return &Recorder{clock: clock} }

func (r *Recorder) add(process string, t Type, f string, v Value) int64 {
	i := int64(len(r.ops))
	r.ops = append(r.ops, Op{Index: i, Time: int64(r.clock()), Process: process, Type: t, F: f, Value: v})
	return i
}

// Invoke records the start of an operation and returns its index.
func (r *Recorder) Invoke(process, f string, v Value) int64 { return r.add(process, Invoke, f, v) }

// Complete records an operation's end: ok, fail or info.
func (r *Recorder) Complete(process string, t Type, f string, v Value) int64 {
	return r.add(process, t, f, v)
}

// Ops returns the history so far (shared: do not modify).
func (r *Recorder) Ops() []Op { return r.ops }

// Len is the number of operations recorded.
func (r *Recorder) Len() int { return len(r.ops) }
