package sim

import (
	"testing"
	"time"
	"unsafe"
)

// An event fills one cache line of the slab on 64-bit machines: a field
// added, or reordered into padding, must be a choice.
func TestAnEventIsOneCacheLine(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Skip("a 32-bit machine")
	}
	if n := unsafe.Sizeof(Event{}); n != 64 {
		t.Fatalf("an Event takes %d bytes, want 64", n)
	}
}

// A workload shaped like the data plane's: every delivery arms a timeout 30 s
// away and cancels it a millisecond later. The deliveries must keep reusing
// the few slots they need while thousands of cancelled timeouts are dropped
// in bulk, and no cancelled timeout may run.
func TestNearEventsKeepTheirFewSlotsWhileTimeoutsAreCancelledInBulk(t *testing.T) {
	var s *Scheduler
	var timeouts []EventID
	nearSlots := map[uint32]bool{}
	ranTimeouts := 0
	h := handlerFunc(func(e *Event) {
		if e.Arg == 1 {
			ranTimeouts++
			return
		}
		nearSlots[s.currentSlot] = true
		if len(timeouts) > 0 {
			s.Cancel(timeouts[0])
			timeouts = timeouts[1:]
		}
		if s.Now() < 120*time.Second {
			timeouts = append(timeouts, s.Schedule(Event{At: s.Now() + 30*time.Second, Kind: EventCall, Arg: 1}))
			s.Schedule(Event{At: s.Now() + time.Millisecond, Kind: EventCall})
		}
	})
	s = NewScheduler(h, Limits{})
	for range 4 {
		s.Schedule(Event{At: 0, Kind: EventCall})
	}
	s.RunUntil(200 * time.Second)
	if ranTimeouts > 4 { // the last few are never cancelled
		t.Fatalf("%d cancelled timeouts ran", ranTimeouts)
	}
	if len(nearSlots) > 16 {
		t.Fatalf("deliveries used %d distinct slots; want the handful in flight (far slots were handed to them)", len(nearSlots))
	}
	// 480,000 timeouts were armed, each cancelled a millisecond later; the
	// far queue drops cancelled entries once they pass 4,096 and half of
	// it, so a few thousand slots serve them all. Without reusing the
	// dropped ones' slots the slab would hold one per timeout.
	if len(s.slots.slab) > 2*4096+64 {
		t.Fatalf("slab grew to %d slots: dropped timeouts' slots are not reused", len(s.slots.slab))
	}
}

type handlerFunc func(e *Event)

func (f handlerFunc) HandleEvent(e *Event) { f(e) }

// The remembered name hashes are hashString's, whatever order names of
// equal length&15 come in, and built names equal to constants included.
func TestNameHashesAreHashString(t *testing.T) {
	var c nameHashes
	names := []string{"Fetch", "FetchResponse", "Produce", "", "ProduceResponse", "Fetch(replica)", "a", "q", "Fetch"}
	built := string(append([]byte("Fetch"), "Response"...))
	for range 3 {
		for _, n := range append(names, built) {
			if got, want := c.hash(n), hashString(n); got != want {
				t.Fatalf("hash(%q) = %x, want %x", n, got, want)
			}
		}
	}
}
