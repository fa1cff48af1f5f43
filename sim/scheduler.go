package sim

import (
	"fmt"
	"time"
)

// EventKind says what an event does when it fires. The World dispatches on it.
type EventKind uint8

// Event kinds. Values are folded into the trace hash, so they must not be
// renumbered without accepting that every stored trace hash changes.
const (
	eventCancelled EventKind = iota
	// EventStart boots (or reboots) a node.
	EventStart
	// EventTimer fires a timer a node asked for.
	EventTimer
	// EventDeliver hands a network message to its destination.
	EventDeliver
	// EventNotify hands a connection notice (Disconnected) to a node; it is
	// local to the node's kernel, so partitions do not stop it.
	EventNotify
	// EventFsync completes an fsync a node asked for.
	EventFsync
	// EventWriteback writes back dirty page-cache data that is old enough.
	EventWriteback
	// EventFault applies a scheduled fault (or undoes one).
	EventFault
	// EventNemesis draws and injects the next random fault of a nemesis rule.
	EventNemesis
	// EventCall runs a callback registered by the owner of the world (tests,
	// the scenario runner): checkpoints, workload phases, invariant checks.
	EventCall
	// EventForceStop ends a clean shutdown that did not finish in its grace time.
	EventForceStop
	// EventRetransmit is a TCP retransmission on a connection whose other
	// end lost power (network_stale.go): answered by a reset if that machine
	// is back up.
	EventRetransmit
	eventKindCount
)

var eventKindNames = [eventKindCount]string{
	"cancelled", "start", "timer", "deliver", "notify", "fsync", "writeback",
	"fault", "nemesis", "call", "force-stop", "retransmit",
}

// String names the kind as it appears in traces.
func (k EventKind) String() string {
	if k < eventKindCount {
		return eventKindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Event is one scheduled occurrence. Which fields matter depends on Kind.
//
// (Fields are ordered so that an event takes 64 bytes, one cache line of
// the slab, rather than 72 with padding.)
type Event struct {
	At  time.Duration // virtual time at which it fires
	Seq uint64        // insertion sequence: breaks ties between equal At
	// Arg is a kind-specific number (a fault index, an fsync's op sequence).
	Arg uint64
	// Payload is a kind-specific value (a Message, a Timer, a fault).
	Payload any
	// Node is the node the event acts on (the destination of a message).
	Node NodeID
	// From is the sender of a message, or NoNode.
	From NodeID
	// Incarnation is the Node's incarnation when the event was scheduled; an
	// event for an earlier incarnation (a node that crashed since) is dropped.
	Incarnation uint32
	// Gen is the link generation of a message; a dropped connection bumps it
	// so that messages in flight on the old connection are not delivered.
	Gen  uint32
	Kind EventKind
	// Held marks an event that waited while its node was paused: it was
	// already accepted by the node's kernel, so partitions no longer stop it.
	Held bool
	// far marks an event waiting in the far queue rather than the near queue.
	far bool
}

// EventID names a scheduled event so that it can be cancelled.
type EventID struct {
	slot uint32
	seq  uint64
}

// Valid reports whether the id names an event that was scheduled at all.
func (id EventID) Valid() bool { return id.seq != 0 }

// Handler executes events. The World is the handler of its scheduler.
type Handler interface {
	HandleEvent(e *Event)
}

// StopReason says why a run of the scheduler ended.
type StopReason uint8

const (
	// StopDeadline means the run reached the requested virtual time.
	StopDeadline StopReason = iota
	// StopIdle means no event was left to run.
	StopIdle
	// StopStepBudget means the run executed its whole step budget: a
	// livelock, or a run far longer than configured.
	StopStepBudget
	// StopStuckInstant means too many events ran without virtual time
	// advancing: a zero-delay loop between nodes.
	StopStuckInstant
	// StopHalted means a handler asked the scheduler to stop.
	StopHalted
	// StopStalledTime means a great many events ran while virtual time
	// crawled: a node re-arming a near-zero delay in a loop.
	StopStalledTime
)

var stopReasonNames = [...]string{"deadline", "idle", "step-budget", "stuck-instant", "halted", "stalled-time"}

// String names the reason.
func (r StopReason) String() string {
	if int(r) < len(stopReasonNames) {
		return stopReasonNames[r]
	}
	return fmt.Sprintf("stop(%d)", uint8(r))
}

// RunResult reports how a call to Run ended.
type RunResult struct {
	Reason StopReason
	Now    time.Duration // virtual time when the run ended
	Steps  uint64        // events executed since the scheduler was created
	// Detail explains a budget stop in words a user can act on.
	Detail string
}

// Livelocked reports whether the run ended because it stopped making
// progress rather than because it was done.
func (r RunResult) Livelocked() bool {
	return r.Reason == StopStepBudget || r.Reason == StopStuckInstant || r.Reason == StopStalledTime
}

// Limits bound a run so that a livelock ends with a result instead of a hang.
type Limits struct {
	// StepsMax is the number of events a scheduler may execute in its
	// lifetime; 0 means DefaultStepsMax.
	StepsMax uint64
	// StepsPerInstantMax is the number of events that may run at one virtual
	// instant before the run is declared stuck; 0 means DefaultStepsPerInstantMax.
	StepsPerInstantMax uint64
	// StalledSteps and StalledMin: when StalledSteps events in a row moved
	// virtual time less than StalledMin, the run is declared stalled (a
	// loop whose delay is a nanosecond or so, which the per-instant limit
	// does not see); 0 means DefaultStalledSteps and DefaultStalledMin.
	StalledSteps uint64
	StalledMin   time.Duration
}

// Default limits: generous for any scenario within the scenario limits (docs/scenarios.md), small enough
// that a livelock ends within seconds of wall time.
const (
	DefaultStepsMax           = 2_000_000_000
	DefaultStepsPerInstantMax = 1_000_000
	// A busy run executes a few hundred thousand events per simulated
	// second; ten million in under 100 ms is a loop, found in seconds of
	// wall time instead of the whole step budget's hours.
	DefaultStalledSteps = 10_000_000
	DefaultStalledMin   = 100 * time.Millisecond
)

type heapEntry struct {
	at   time.Duration
	seq  uint64
	slot uint32
}

// Scheduler is a discrete-event scheduler over virtual time. Events of the
// next second or so are kept in the near queue (a radix heap of small (time,
// sequence, slot) entries, nearqueue.go), later ones in the far queue's
// buckets (farqueue.go); their bodies live in a slab (slots.go), so that the
// steady state allocates nothing.
type Scheduler struct {
	now     time.Duration
	seq     uint64
	near    nearQueue // events before the far queue's horizon (nearqueue.go)
	far     farQueue  // events beyond it (farqueue.go)
	slots   slots
	handler Handler
	limits  Limits

	// cancelled counts the cancelled events still in the near queue
	// (roughly: a held event cancelled counts too); when they are most of
	// it, it is rebuilt without them (request timeouts are nearly all
	// cancelled, and would otherwise fill it for as long as the timeout).
	cancelled int
	iterating bool // inside forEachPending: compaction waits

	steps        uint64
	instantSteps uint64
	// windowSteps and windowAt are the steps and the time at the start of
	// the current window of StalledSteps events.
	windowSteps uint64
	windowAt    time.Duration
	halted      bool
	haltDetail  string
	current     Event
	currentSlot uint32
	holdCurrent bool
	trace       TraceHash
}

// NewScheduler returns a scheduler at virtual time zero that hands every event
// to h.
func NewScheduler(h Handler, limits Limits) *Scheduler {
	if limits.StepsMax == 0 {
		limits.StepsMax = DefaultStepsMax
	}
	if limits.StepsPerInstantMax == 0 {
		limits.StepsPerInstantMax = DefaultStepsPerInstantMax
	}
	if limits.StalledSteps == 0 {
		limits.StalledSteps = DefaultStalledSteps
	}
	if limits.StalledMin == 0 {
		limits.StalledMin = DefaultStalledMin
	}
	return &Scheduler{handler: h, limits: limits, trace: newTraceHash(), far: newFarQueue()}
}

// Now is the current virtual time.
func (s *Scheduler) Now() time.Duration { return s.now }

// Steps is the number of events executed so far.
func (s *Scheduler) Steps() uint64 { return s.steps }

// Pending is the number of events waiting in the queue (cancelled ones may be
// included until they reach the front or the queue is compacted).
func (s *Scheduler) Pending() int { return s.near.len() + s.far.entries }

// TraceHash is the running hash of every executed event.
func (s *Scheduler) TraceHash() uint64 { return s.trace.Sum() }

// Fold mixes x into the trace hash; handlers fold what the generic event
// header does not show (a message's name, a fault's target).
func (s *Scheduler) Fold(x uint64) { s.trace.Fold(x) }

// FoldString mixes a string into the trace hash.
func (s *Scheduler) FoldString(str string) { s.trace.FoldString(str) }

// Schedule queues e to fire at e.At, which must not be in the past. It fills
// in e.Seq and returns the id that cancels it.
func (s *Scheduler) Schedule(e Event) EventID { return s.schedule(&e) }

// schedule is Schedule of an event the caller builds in place: the world's
// hot paths pass a pointer, so that the event is copied once, into its
// slot, rather than also into an argument.
func (s *Scheduler) schedule(e *Event) EventID {
	if e.At < s.now {
		panic(fmt.Sprintf("sim: event %s scheduled at %v, before now %v", e.Kind, e.At, s.now))
	}
	if e.Kind == eventCancelled || e.Kind >= eventKindCount {
		panic(fmt.Sprintf("sim: invalid event kind %d", e.Kind))
	}
	s.seq++
	seq := s.seq
	slot := s.slots.take(e.At-s.now >= farSlotDelay)
	ev := &s.slots.slab[slot]
	*ev = *e
	ev.Seq = seq
	s.slots.owner[slot] = seq
	s.enqueue(heapEntry{at: ev.At, seq: seq, slot: slot})
	return EventID{slot: slot, seq: seq}
}

// Cancel removes a scheduled event; cancelling one that already fired or was
// cancelled is a no-op. Cancelled events stay queued until they reach the
// front, where they are dropped without being executed or traced, or until
// they make up most of the near queue, which is then rebuilt without them.
func (s *Scheduler) Cancel(id EventID) {
	if !id.Valid() || int(id.slot) >= len(s.slots.slab) {
		return
	}
	e := &s.slots.slab[id.slot]
	if e.Seq == id.seq && e.Kind != eventCancelled {
		if e.far {
			// Its far entry stays queued, dropped when its bucket is
			// reached; the slot is free now (farqueue.go).
			s.slots.owner[id.slot] = 0
			s.release(id.slot)
			s.cancelFar()
			return
		}
		e.Kind = eventCancelled
		e.Payload = nil
		s.slots.markCancelled(id.slot)
		s.cancelled++
		s.maybeCompact()
	}
}

func (s *Scheduler) maybeCompact() {
	if !s.iterating && s.cancelled > 4096 && s.cancelled > s.near.len()/2 {
		s.compact()
	}
}

// compact drops the cancelled events from the near queue.
func (s *Scheduler) compact() {
	s.near.filter(func(h heapEntry) bool {
		if s.slots.cancelled(h.slot) {
			s.slots.put(h.slot)
			return false
		}
		return true
	})
	s.cancelled = 0
}

// Halt stops the current run after the event being handled.
func (s *Scheduler) Halt(detail string) {
	s.halted = true
	s.haltDetail = detail
}

// RunUntil executes events in (time, sequence) order until the next one is
// later than deadline, then advances the clock to deadline. It stops early when
// the queue is empty only if deadline is negative (run until idle), when a
// limit is exceeded, or when a handler halts it.
func (s *Scheduler) RunUntil(deadline time.Duration) RunResult {
	for s.settle(); s.near.len() > 0; s.settle() {
		if s.halted {
			s.halted = false
			return RunResult{Reason: StopHalted, Now: s.now, Steps: s.steps, Detail: s.haltDetail}
		}
		top := s.near.min()
		if deadline >= 0 && top.at > deadline {
			break
		}
		s.near.popMin()
		if s.slots.cancelled(top.slot) {
			s.slots.put(top.slot)
			s.cancelled = max(s.cancelled-1, 0)
			continue
		}
		if top.at != s.now {
			s.now = top.at
			s.instantSteps = 0
		}
		if s.steps >= s.limits.StepsMax {
			s.near.push(top)
			return RunResult{Reason: StopStepBudget, Now: s.now, Steps: s.steps,
				Detail: fmt.Sprintf("step budget of %d events exhausted at %v", s.limits.StepsMax, s.now)}
		}
		if s.instantSteps >= s.limits.StepsPerInstantMax {
			s.near.push(top)
			return RunResult{Reason: StopStuckInstant, Now: s.now, Steps: s.steps,
				Detail: fmt.Sprintf("%d events ran at %v without virtual time advancing (a zero-delay loop)",
					s.instantSteps, s.now)}
		}
		if s.steps-s.windowSteps >= s.limits.StalledSteps {
			if s.now-s.windowAt < s.limits.StalledMin {
				s.near.push(top)
				return RunResult{Reason: StopStalledTime, Now: s.now, Steps: s.steps,
					Detail: fmt.Sprintf("%d events ran from %v to %v (a loop re-arming a near-zero delay); next: %s",
						s.steps-s.windowSteps, s.windowAt, s.now, s.describe(&s.slots.slab[top.slot]))}
			}
			s.windowSteps, s.windowAt = s.steps, s.now
		}
		s.steps++
		s.instantSteps++
		s.current = s.slots.slab[top.slot]
		s.currentSlot = top.slot
		s.holdCurrent = false
		s.trace.FoldEvent(&s.current)
		s.handler.HandleEvent(&s.current)
		if !s.holdCurrent {
			s.release(top.slot)
		}
	}
	if s.halted {
		s.halted = false
		return RunResult{Reason: StopHalted, Now: s.now, Steps: s.steps, Detail: s.haltDetail}
	}
	if deadline < 0 {
		return RunResult{Reason: StopIdle, Now: s.now, Steps: s.steps}
	}
	if deadline > s.now {
		s.now = deadline
	}
	if s.near.len() == 0 {
		return RunResult{Reason: StopIdle, Now: s.now, Steps: s.steps}
	}
	return RunResult{Reason: StopDeadline, Now: s.now, Steps: s.steps}
}

// eventDescriber is a handler that can say what an event is in words (the
// World: its node's name and its payload).
type eventDescriber interface {
	DescribeEvent(e *Event) string
}

func (s *Scheduler) describe(e *Event) string {
	if d, ok := s.handler.(eventDescriber); ok {
		return d.DescribeEvent(e)
	}
	return fmt.Sprintf("%v for node %d", e.Kind, e.Node)
}

// RunUntilIdle executes events until none is left (or a limit stops it).
func (s *Scheduler) RunUntilIdle() RunResult { return s.RunUntil(-1) }

// Held is an event taken out of the queue while its node is paused. It keeps
// its slot and sequence, so the EventID its node holds still cancels it.
type Held struct {
	slot uint32
	seq  uint64
}

// HoldCurrent keeps the event being handled out of the queue instead of
// discarding it after the handler returns; Release puts it back.
func (s *Scheduler) HoldCurrent() Held {
	s.holdCurrent = true
	return Held{slot: s.currentSlot, seq: s.current.Seq}
}

// Release requeues a held event to fire at at (with Event.Held set), unless it
// was cancelled while held.
func (s *Scheduler) Release(h Held, at time.Duration) {
	e := &s.slots.slab[h.slot]
	if e.Seq != h.seq {
		panic("sim: release of an event that is not held")
	}
	if e.Kind == eventCancelled {
		s.slots.put(h.slot)
		return
	}
	e.At = max(at, s.now)
	e.Held = true
	s.enqueue(heapEntry{at: e.At, seq: e.Seq, slot: h.slot})
}

// Discard frees a held event without running it.
func (s *Scheduler) Discard(h Held) {
	if s.slots.slab[h.slot].Seq == h.seq {
		s.release(h.slot)
	}
}

// release frees the slot of an event that ran or is discarded: its body is
// cleared, so that an old id's Cancel finds no event of its sequence there.
func (s *Scheduler) release(slot uint32) {
	s.slots.slab[slot] = Event{}
	s.slots.put(slot)
}

// forEachPending calls f for every event still queued and not cancelled, in no
// particular order; f may cancel the event it is given. Callers that act on
// what they find must sort it first.
func (s *Scheduler) forEachPending(f func(id EventID, e *Event)) {
	// f may cancel events (a cut drops what is in flight): the queues must
	// not be compacted under the loop, or events would be skipped or seen
	// twice. Compaction waits for the loop's end.
	s.iterating = true
	s.near.each(func(h heapEntry) {
		e := &s.slots.slab[h.slot]
		if e.Kind != eventCancelled {
			f(EventID{slot: h.slot, seq: e.Seq}, e)
		}
	})
	for _, k := range s.far.order {
		for _, h := range s.far.buckets[k].entries {
			if s.slots.owner[h.slot] == h.seq {
				f(EventID{slot: h.slot, seq: h.seq}, &s.slots.slab[h.slot])
			}
		}
	}
	s.iterating = false
	s.maybeCompact()
	s.maybeCompactFar()
}
