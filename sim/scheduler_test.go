package sim

import (
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

type recordingHandler struct {
	s     *Scheduler
	order []uint64 // Arg of each executed event
	at    []time.Duration
	react func(e *Event)
}

func (h *recordingHandler) HandleEvent(e *Event) {
	h.order = append(h.order, e.Arg)
	h.at = append(h.at, e.At)
	if h.react != nil {
		h.react(e)
	}
}

func newRecording(limits Limits) *recordingHandler {
	h := &recordingHandler{}
	h.s = NewScheduler(h, limits)
	return h
}

func TestSchedulerOrdersByTimeThenInsertion(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := newRecording(Limits{})
		times := rapid.SliceOfN(rapid.Int64Range(0, 50), 1, 200).Draw(t, "times")
		for i, at := range times {
			h.s.Schedule(Event{At: time.Duration(at), Kind: EventCall, Arg: uint64(i)})
		}
		h.s.RunUntilIdle()
		if len(h.order) != len(times) {
			t.Fatalf("ran %d events, scheduled %d", len(h.order), len(times))
		}
		for k := 1; k < len(h.order); k++ {
			prev, cur := h.order[k-1], h.order[k]
			if times[prev] > times[cur] || (times[prev] == times[cur] && prev > cur) {
				t.Fatalf("event %d (t=%d) ran before event %d (t=%d)", prev, times[prev], cur, times[cur])
			}
		}
	})
}

func TestSchedulerCancel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := newRecording(Limits{})
		n := rapid.IntRange(1, 100).Draw(t, "n")
		ids := make([]EventID, n)
		for i := range ids {
			ids[i] = h.s.Schedule(Event{At: time.Duration(rapid.IntRange(0, 20).Draw(t, "at")), Kind: EventCall, Arg: uint64(i)})
		}
		cancelled := map[uint64]bool{}
		for i := range ids {
			if rapid.Bool().Draw(t, "cancel") {
				h.s.Cancel(ids[i])
				h.s.Cancel(ids[i]) // twice is harmless
				cancelled[uint64(i)] = true
			}
		}
		h.s.RunUntilIdle()
		for _, arg := range h.order {
			if cancelled[arg] {
				t.Fatalf("cancelled event %d ran", arg)
			}
		}
		if len(h.order)+len(cancelled) != n {
			t.Fatalf("ran %d + cancelled %d != scheduled %d", len(h.order), len(cancelled), n)
		}
		if h.s.Steps() != uint64(len(h.order)) {
			t.Fatalf("steps %d counts cancelled events (ran %d)", h.s.Steps(), len(h.order))
		}
	})
}

func TestSchedulerCancelAfterSlotReuseIsNoop(t *testing.T) {
	h := newRecording(Limits{})
	old := h.s.Schedule(Event{At: 1, Kind: EventCall, Arg: 1})
	h.s.RunUntilIdle()
	h.s.Schedule(Event{At: 2, Kind: EventCall, Arg: 2}) // reuses the freed slot
	h.s.Cancel(old)
	h.s.RunUntilIdle()
	if len(h.order) != 2 || h.order[1] != 2 {
		t.Fatalf("cancelling a stale id cancelled its slot's new event: ran %v", h.order)
	}
}

func TestSchedulerRunUntilDeadline(t *testing.T) {
	h := newRecording(Limits{})
	for _, at := range []time.Duration{5, 10, 15} {
		h.s.Schedule(Event{At: at, Kind: EventCall, Arg: uint64(at)})
	}
	r := h.s.RunUntil(10)
	if r.Reason != StopDeadline || r.Now != 10 || len(h.order) != 2 {
		t.Fatalf("RunUntil(10) = %+v after %v; want deadline at 10 after events 5 and 10", r, h.order)
	}
	r = h.s.RunUntil(12)
	if r.Now != 12 || len(h.order) != 2 {
		t.Fatalf("clock should advance to the deadline with nothing to run: %+v", r)
	}
	r = h.s.RunUntil(100)
	if r.Reason != StopIdle || r.Now != 100 || len(h.order) != 3 {
		t.Fatalf("RunUntil(100) = %+v; want idle at 100 after 3 events", r)
	}
}

func TestSchedulerRejectsThePast(t *testing.T) {
	h := newRecording(Limits{})
	h.s.Schedule(Event{At: 10, Kind: EventCall})
	h.s.RunUntilIdle()
	defer func() {
		if recover() == nil {
			t.Fatal("scheduling before now must panic")
		}
	}()
	h.s.Schedule(Event{At: 5, Kind: EventCall})
}

func TestSchedulerStepBudgetEndsALivelock(t *testing.T) {
	h := newRecording(Limits{StepsMax: 1000})
	h.react = func(e *Event) { // a node that keeps itself busy forever
		h.s.Schedule(Event{At: e.At + time.Millisecond, Kind: EventCall})
	}
	h.s.Schedule(Event{At: 0, Kind: EventCall})
	r := h.s.RunUntil(time.Hour)
	if r.Reason != StopStepBudget || !r.Livelocked() || r.Steps != 1000 {
		t.Fatalf("want step-budget stop after 1000 steps, got %+v", r)
	}
	if !strings.Contains(r.Detail, "step budget") {
		t.Fatalf("detail should explain the stop: %q", r.Detail)
	}
}

func TestSchedulerStuckInstantEndsAZeroDelayLoop(t *testing.T) {
	h := newRecording(Limits{StepsPerInstantMax: 500})
	h.react = func(e *Event) {
		h.s.Schedule(Event{At: e.At, Kind: EventCall}) // ping-pong with no delay
	}
	h.s.Schedule(Event{At: 7, Kind: EventCall})
	r := h.s.RunUntil(time.Hour)
	if r.Reason != StopStuckInstant || r.Now != 7 {
		t.Fatalf("want stuck-instant stop at 7, got %+v", r)
	}
	// Events spread over time must not trip the per-instant limit.
	h2 := newRecording(Limits{StepsPerInstantMax: 10})
	for i := range 100 {
		h2.s.Schedule(Event{At: time.Duration(i / 5), Kind: EventCall})
	}
	if r := h2.s.RunUntilIdle(); r.Reason != StopIdle {
		t.Fatalf("5 events per instant under a limit of 10: got %+v", r)
	}
}

func TestSchedulerHalt(t *testing.T) {
	h := newRecording(Limits{})
	h.react = func(e *Event) {
		if e.Arg == 2 {
			h.s.Halt("invariant broke")
		}
	}
	for i := range 5 {
		h.s.Schedule(Event{At: time.Duration(i), Kind: EventCall, Arg: uint64(i)})
	}
	r := h.s.RunUntilIdle()
	if r.Reason != StopHalted || r.Detail != "invariant broke" || len(h.order) != 3 {
		t.Fatalf("want halt after event 2, got %+v after %v", r, h.order)
	}
	if r := h.s.RunUntilIdle(); r.Reason != StopIdle || len(h.order) != 5 {
		t.Fatalf("a halted scheduler resumes on the next run: %+v", r)
	}
}

func TestSchedulerHoldAndRelease(t *testing.T) {
	h := newRecording(Limits{})
	var held []Held
	h.react = func(e *Event) {
		if e.Arg < 3 && !e.Held {
			held = append(held, h.s.HoldCurrent())
		}
	}
	var ids []EventID
	for i := range 4 {
		ids = append(ids, h.s.Schedule(Event{At: time.Duration(i), Kind: EventCall, Arg: uint64(i)}))
	}
	h.s.RunUntil(10)
	h.s.Cancel(ids[1]) // the id still cancels an event while it is held
	for _, x := range held {
		h.s.Release(x, 20)
	}
	h.s.RunUntilIdle()
	want := []uint64{0, 1, 2, 3, 0, 2}
	if len(h.order) != len(want) {
		t.Fatalf("ran %v, want %v", h.order, want)
	}
	for i := range want {
		if h.order[i] != want[i] {
			t.Fatalf("ran %v, want %v", h.order, want)
		}
	}
	if h.at[4] != 20 {
		t.Fatalf("released event ran at %v, want 20", h.at[4])
	}
}

func TestSchedulerSteadyStateDoesNotAllocate(t *testing.T) {
	h := &benchHandler{x: 88172645463325252}
	h.s = NewScheduler(h, Limits{})
	for i := range 1024 {
		h.s.Schedule(Event{At: time.Duration(i), Kind: EventCall})
	}
	h.s.RunUntil(h.s.Now() + 100_000) // warm the slab and heap
	allocs := testing.AllocsPerRun(10, func() {
		h.s.RunUntil(h.s.Now() + 10_000) // about ten thousand events
	})
	if allocs != 0 {
		t.Fatalf("steady-state scheduling allocated %.1f times per run", allocs)
	}
}

type benchHandler struct {
	s *Scheduler
	x uint64
}

func (h *benchHandler) HandleEvent(e *Event) {
	// xorshift: a cheap varying delay, so the heap is exercised, not a queue.
	h.x ^= h.x << 13
	h.x ^= h.x >> 7
	h.x ^= h.x << 17
	h.s.Schedule(Event{At: e.At + time.Duration(1+h.x%1024), Kind: EventCall})
}

// BenchmarkSchedulerNoop measures events per second through the scheduler with
// 1024 events pending, each of which schedules its successor.
func BenchmarkSchedulerNoop(b *testing.B) {
	h := &benchHandler{x: 88172645463325252}
	h.s = NewScheduler(h, Limits{StepsMax: ^uint64(0) >> 1})
	for i := range 1024 {
		h.s.Schedule(Event{At: time.Duration(i), Kind: EventCall})
	}
	h.s.RunUntil(time.Millisecond)
	b.ReportAllocs()
	b.ResetTimer()
	start := h.s.Steps()
	for h.s.Steps()-start < uint64(b.N) {
		h.s.RunUntil(h.s.Now() + 1024) // about a thousand events a call
	}
	b.StopTimer()
	b.ReportMetric(float64(h.s.Steps()-start)/b.Elapsed().Seconds(), "events/s")
}

// Request timeouts are nearly all cancelled: once cancelled events are most
// of the heap it is rebuilt without them, and what runs is unchanged — the
// events not cancelled, in (time, sequence) order, including those
// scheduled and cancelled by handlers while the run goes on.
func TestSchedulerCompactsCancelledEvents(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := newRecording(Limits{})
		n := rapid.IntRange(5000, 20000).Draw(t, "n")
		keep := rapid.IntRange(1, 10).Draw(t, "keep_one_in")
		ids := make([]EventID, n)
		times := make([]time.Duration, n)
		for i := range ids {
			times[i] = time.Duration(rapid.IntRange(0, 1000).Draw(t, "at"))
			ids[i] = h.s.Schedule(Event{At: times[i], Kind: EventCall, Arg: uint64(i)})
		}
		cancelled := map[uint64]bool{}
		for i := range ids {
			if i%keep != 0 {
				h.s.Cancel(ids[i])
				cancelled[uint64(i)] = true
			}
		}
		if want := n - len(cancelled); len(cancelled) > 4096 && h.s.Pending() > 2*want+4096 {
			t.Fatalf("%d cancelled of %d, and the heap still holds %d", len(cancelled), n, h.s.Pending())
		}
		h.s.RunUntilIdle()
		if len(h.order)+len(cancelled) != n {
			t.Fatalf("ran %d + cancelled %d != scheduled %d", len(h.order), len(cancelled), n)
		}
		for k, arg := range h.order {
			if cancelled[arg] {
				t.Fatalf("cancelled event %d ran", arg)
			}
			if k > 0 {
				prev := h.order[k-1]
				if times[prev] > times[arg] || (times[prev] == times[arg] && prev > arg) {
					t.Fatalf("event %d (t=%v) ran before event %d (t=%v)", prev, times[prev], arg, times[arg])
				}
			}
		}
	})
}

// Cancelling from inside forEachPending (a partition dropping what is in
// flight) may cross the compaction threshold; the loop must still see every
// pending event exactly once, and exactly the events not cancelled run.
func TestForEachPendingSurvivesCancellingMostOfTheHeap(t *testing.T) {
	h := newRecording(Limits{})
	const n = 10000
	for i := range n {
		h.s.Schedule(Event{At: time.Duration(1 + i%97), Kind: EventCall, Arg: uint64(i)})
	}
	seen := make([]int, n)
	h.s.forEachPending(func(id EventID, e *Event) {
		seen[e.Arg]++
		if e.Arg%4 != 0 {
			h.s.Cancel(id)
		}
	})
	for i, k := range seen {
		if k != 1 {
			t.Fatalf("event %d seen %d times by the loop, want once", i, k)
		}
	}
	h.s.RunUntilIdle()
	if len(h.order) != n/4 {
		t.Fatalf("%d events ran, want the %d not cancelled", len(h.order), n/4)
	}
	for _, arg := range h.order {
		if arg%4 != 0 {
			t.Fatalf("cancelled event %d ran", arg)
		}
	}
}

// A loop whose delay is a nanosecond advances time, so the per-instant
// limit does not see it; the stalled-time guard does (fuzz seed 54977: a
// group member re-armed a 1 ns heartbeat timer two billion times).
func TestSchedulerStalledTimeEndsANanosecondLoop(t *testing.T) {
	h := newRecording(Limits{StalledSteps: 1000, StalledMin: time.Millisecond})
	h.react = func(e *Event) {
		h.s.Schedule(Event{At: e.At + time.Nanosecond, Kind: EventCall})
	}
	h.s.Schedule(Event{At: time.Second, Kind: EventCall})
	r := h.s.RunUntil(time.Hour)
	if r.Reason != StopStalledTime || !r.Livelocked() || r.Steps != 2000 || !strings.Contains(r.Detail, "call") {
		t.Fatalf("want stalled-time stop after 2000 steps (the first window holds the jump to 1 s) naming the event, got %+v", r)
	}
	// A steady pace above the minimum does not trip it.
	h2 := newRecording(Limits{StalledSteps: 1000, StalledMin: time.Millisecond})
	h2.react = func(e *Event) {
		if e.At < 10*time.Second {
			h2.s.Schedule(Event{At: e.At + 2*time.Microsecond, Kind: EventCall})
		}
	}
	h2.s.Schedule(Event{At: 0, Kind: EventCall})
	if r := h2.s.RunUntil(time.Millisecond * 50); r.Reason != StopDeadline {
		t.Fatalf("1000 events per 2 ms under a minimum of 1 ms per 1000: got %+v", r)
	}
}
