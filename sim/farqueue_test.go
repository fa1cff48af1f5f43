package sim

import (
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// naiveQueue is the reference the scheduler must agree with: a flat list,
// the earliest (time, sequence) found by a scan.
type naiveQueue struct {
	now     time.Duration
	seq     uint64
	pending []naiveEvent
}

type naiveEvent struct {
	at        time.Duration
	seq       uint64
	arg       uint64
	cancelled bool
}

func (q *naiveQueue) schedule(at time.Duration, arg uint64) uint64 {
	q.seq++
	q.pending = append(q.pending, naiveEvent{at: at, seq: q.seq, arg: arg})
	return q.seq
}

func (q *naiveQueue) cancel(seq uint64) {
	for i := range q.pending {
		if q.pending[i].seq == seq {
			q.pending[i].cancelled = true
		}
	}
}

func (q *naiveQueue) runUntil(deadline time.Duration, react func(arg uint64)) (ran []uint64) {
	for {
		best := -1
		for i, e := range q.pending {
			if e.cancelled || e.at > deadline {
				continue
			}
			if best < 0 || e.at < q.pending[best].at || (e.at == q.pending[best].at && e.seq < q.pending[best].seq) {
				best = i
			}
		}
		if best < 0 {
			q.now = max(q.now, deadline)
			return ran
		}
		e := q.pending[best]
		q.pending = append(q.pending[:best], q.pending[best+1:]...)
		q.now = e.at
		ran = append(ran, e.arg)
		react(e.arg)
	}
}

// delayOf spreads delays over the heap's horizon and far beyond it: a few
// milliseconds (network), tens of seconds (request timeouts), an hour.
func delayOf(x uint64) time.Duration {
	switch x % 4 {
	case 0:
		return time.Duration(x%5_000) * time.Microsecond
	case 1:
		return time.Duration(x%40) * time.Second
	case 2:
		return time.Duration(x%3_000) * time.Millisecond
	default:
		return time.Duration(x%2) * time.Hour
	}
}

// The far queue must not change what runs or in which order: the scheduler
// agrees with a flat reference queue under schedules, cancellations (from
// outside and from handlers) and runs to arbitrary deadlines.
func TestFarQueueKeepsTimeSequenceOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := newRecording(Limits{})
		ref := &naiveQueue{}
		var ids []EventID
		var refSeqs []uint64
		next := uint64(0)
		schedule := func(delay time.Duration) {
			next++
			ids = append(ids, h.s.Schedule(Event{At: h.s.Now() + delay, Kind: EventCall, Arg: next}))
			refSeqs = append(refSeqs, ref.schedule(ref.now+delay, next))
		}
		// Handlers schedule a successor and cancel an older event, both
		// chosen from the event's own number so that the two queues do the
		// same thing.
		react := func(arg uint64, scheduled int) (delay time.Duration, victim int, ok bool) {
			if arg%3 == 0 || scheduled > 3000 {
				return 0, 0, false
			}
			return delayOf(arg * 2654435761), int(arg*40503) % scheduled, true
		}
		h.react = func(e *Event) {
			if delay, victim, ok := react(e.Arg, len(ids)); ok {
				h.s.Cancel(ids[victim])
				next++
				ids = append(ids, h.s.Schedule(Event{At: h.s.Now() + delay, Kind: EventCall, Arg: next}))
			}
		}
		refReact := func(arg uint64) {
			if delay, victim, ok := react(arg, len(refSeqs)); ok {
				ref.cancel(refSeqs[victim])
				// The real handler already took this number: replay it.
				refSeqs = append(refSeqs, ref.schedule(ref.now+delay, uint64(len(refSeqs)+1)))
			}
		}
		steps := rapid.IntRange(1, 60).Draw(t, "steps")
		for range steps {
			switch rapid.IntRange(0, 2).Draw(t, "action") {
			case 0:
				for range rapid.IntRange(1, 50).Draw(t, "burst") {
					schedule(delayOf(rapid.Uint64().Draw(t, "delay")))
				}
			case 1:
				if len(ids) > 0 {
					i := rapid.IntRange(0, len(ids)-1).Draw(t, "victim")
					h.s.Cancel(ids[i])
					ref.cancel(refSeqs[i])
				}
			case 2:
				deadline := h.s.Now() + delayOf(rapid.Uint64().Draw(t, "run"))
				h.order = h.order[:0]
				h.s.RunUntil(deadline)
				want := ref.runUntil(deadline, refReact)
				if len(want) != len(h.order) {
					t.Fatalf("ran %d events to %v, the reference ran %d", len(h.order), deadline, len(want))
				}
				for k := range want {
					if want[k] != h.order[k] {
						t.Fatalf("event %d of the run to %v is %d, the reference ran %d", k, deadline, h.order[k], want[k])
					}
				}
				if h.s.Now() != ref.now {
					t.Fatalf("clock at %v, the reference at %v", h.s.Now(), ref.now)
				}
			}
		}
		var live []uint64
		for _, e := range ref.pending {
			if !e.cancelled {
				live = append(live, e.arg)
			}
		}
		if got := h.s.Pending(); got < len(live) {
			t.Fatalf("Pending() = %d with %d events still queued", got, len(live))
		}
		// The events still queued are the reference's, each once, under
		// their own ids (a cancelled timeout's slot may hold another
		// event by now).
		var queued []uint64
		h.s.forEachPending(func(id EventID, e *Event) {
			if id.seq != e.Seq {
				t.Fatalf("event %d handed out under the id of sequence %d, it has %d", e.Arg, id.seq, e.Seq)
			}
			queued = append(queued, e.Arg)
		})
		slices.Sort(live)
		slices.Sort(queued)
		if !slices.Equal(queued, live) {
			t.Fatalf("queued %v, the reference %v", queued, live)
		}
	})
}

// Timeouts an hour long, cancelled as fast as they are armed, must not pile
// up in the far queue.
func TestFarQueueDropsCancelledEntries(t *testing.T) {
	h := newRecording(Limits{})
	for i := range 100_000 {
		id := h.s.Schedule(Event{At: time.Hour + time.Duration(i), Kind: EventCall, Arg: uint64(i)})
		h.s.Cancel(id)
	}
	if p := h.s.Pending(); p > 2*4096+2 {
		t.Fatalf("%d entries still held after 100,000 cancelled timeouts", p)
	}
	h.s.Schedule(Event{At: 2 * time.Hour, Kind: EventCall, Arg: 7})
	h.s.RunUntilIdle()
	if len(h.order) != 1 || h.order[0] != 7 || h.s.Now() != 2*time.Hour {
		t.Fatalf("ran %v, clock at %v; want only event 7 at 2h", h.order, h.s.Now())
	}
}
