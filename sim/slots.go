package sim

import (
	"kafkasim/internal/grow"
	"time"
)

// Event bodies live in a slab of slots, reused through free lists; the
// queues hold small (time, sequence, slot) entries.
//
// Why two free lists: most events fire within milliseconds of being
// scheduled (deliveries, lingers), while nearly every request also arms a
// timeout tens of seconds away that is cancelled milliseconds later and
// whose slot is freed only when the far queue drops it, in bulk. With one
// free list those cold slots went to the next deliveries, so that about
// every event's body was a cache miss away. Slots are therefore of one of
// two classes, fixed when the slot is made: near slots (an event due within
// farSlotDelay) are freed and retaken while still in cache, and the
// far ones serve the timeouts.
//
// Why a cancelled bit per slot: the queues drop cancelled entries (a bucket
// entering the near queue, a compaction, the front of the run) by a look at
// a dense bitmap instead of at each cold event body.
//
// Slots never affect behaviour: execution order is (time, sequence), and an
// EventID only cancels.

// farSlotDelay is how far ahead an event must be to take a far slot.
const farSlotDelay = time.Second

type slots struct {
	slab     []Event
	nearFree []uint32
	farFree  []uint32
	// far has bit i set when slot i is a far slot; dead when slot i holds a
	// cancelled event.
	far, dead []uint64
}

// take returns a free slot of the class the event's time asks for; its dead
// bit is clear. The caller writes the event into it.
func (s *slots) take(far bool) uint32 {
	list := &s.nearFree
	if far {
		list = &s.farFree
	}
	if n := len(*list); n > 0 {
		slot := (*list)[n-1]
		*list = (*list)[:n-1]
		s.dead[slot>>6] &^= 1 << (slot & 63)
		return slot
	}
	slot := uint32(len(s.slab))
	s.slab = grow.Append(s.slab, Event{})
	if slot&63 == 0 {
		s.far = append(s.far, 0)
		s.dead = append(s.dead, 0)
	}
	if far {
		s.far[slot>>6] |= 1 << (slot & 63)
	}
	return slot
}

// put frees slot into its class's list. A cancelled event's body may stay
// (its kind says cancelled, its payload is gone): no id cancels it again.
func (s *slots) put(slot uint32) {
	if s.far[slot>>6]&(1<<(slot&63)) != 0 {
		s.farFree = append(s.farFree, slot)
	} else {
		s.nearFree = append(s.nearFree, slot)
	}
}

func (s *slots) markCancelled(slot uint32) { s.dead[slot>>6] |= 1 << (slot & 63) }

func (s *slots) cancelled(slot uint32) bool { return s.dead[slot>>6]&(1<<(slot&63)) != 0 }
