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
// timeout tens of seconds away that is cancelled milliseconds later. Slots
// are of one of two classes, fixed when the slot is made: near slots (an
// event due within farSlotDelay) are freed and retaken while still in
// cache, and the far ones serve the timeouts. A cancelled timeout gives its
// slot back at once, while its body is still warm, for the next timeout to
// take (its far queue entry, dropped later, knows it by the slot's owner);
// a slot written again only after the timeout's bucket was reached, tens of
// seconds on, would be a cache miss for every timeout armed.
//
// Why a cancelled bit per slot (near events) and an owner per slot (far
// ones): the queues drop cancelled entries (a bucket entering the near
// queue, a compaction, the front of the run) by a look at a dense array
// instead of at each cold event body.
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
	// cancelled event of the near queue.
	far, dead []uint64
	// owner[i] is the sequence of the event a far slot holds while it
	// waits in the far queue, 0 once it was cancelled: a cancelled timeout
	// gives its slot back at once, while still warm, for the next timeout
	// to take, and the far queue drops an entry whose slot's owner is not
	// its event without reading the slot's body.
	owner []uint64
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
	s.owner = grow.Append(s.owner, 0)
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
