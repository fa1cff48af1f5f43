package sim

// Message reuse: an optional interface (a performance hook). A sender may
// take back a message the world is done with and fill it again for a later
// send, instead of allocating a new one: the data-plane benchmark allocates
// 139 bytes per event with it, 232 without (docs/performance.md, The
// performance hooks). A sender whose messages do not embed Reuse allocates
// every message afresh and behaves identically; a receiver need only keep
// nothing of a message once its Deliver returns.

// Reusable is a message its sender may take back, to reuse for a later
// one, once the world is done with it: it embeds Reuse, and its Owner's
// TakeBack is called after the receiver's Deliver returned, if the world
// delivered exactly one copy. A message duplicated, held back past a reset,
// dropped or handed back in a Disconnected notice is never handed back (it
// is simply garbage), so the sender never reuses one the world may still
// deliver or show.
//
// The receiver must keep nothing of a Reusable message once its Deliver
// returns: not the message, nor a slice or pointer into it (the sender
// writes it again).
type Reusable interface {
	Message
	reuse() *Reuse
}

// Reuse is embedded in a Reusable message: Owner, when set, is told when
// the world delivered the message's only copy; the world counts the copies
// it scheduled.
type Reuse struct {
	Owner  Owner
	copies uint8
}

// Owner is the sender a Reusable message goes back to.
type Owner interface{ TakeBack() }

func (r *Reuse) reuse() *Reuse { return r }

// scheduled counts a copy of m put on a link.
func scheduled(m Message) {
	if r, ok := m.(Reusable); ok {
		c := r.reuse()
		c.copies = min(c.copies+1, 2)
	}
}

// delivered hands m back to its sender if it was its only copy.
func delivered(m Message) {
	if r, ok := m.(Reusable); ok {
		if c := r.reuse(); c.copies == 1 {
			c.copies = 0
			if c.Owner != nil {
				c.Owner.TakeBack()
			}
		}
	}
}
