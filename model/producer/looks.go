package producer

import (
	"math"
	"time"
)

// sendLooks is what every pass of the sender reads of each partition, in
// arrays by partition: a pass over a dozen partitions reads a cache line or
// two of each, in loops without calls, instead of chasing a dozen states.
type sendLooks struct {
	// idleUntil[i]: the sender found nothing partition i could send before
	// then, and neither the partition (changed, maySendSooner), nor its
	// leader's room (roomMade), nor what every partition's sending depends
	// on (lookAtAll) changed since, so it need not look until then.
	// notIdle: it must look now.
	idleUntil []time.Duration
	// idleMin[b] is at most the first of idleUntil[64b:64b+64]: the
	// sender's pass skips a block it says is idle now, which on a producer
	// of thousands of partitions is nearly every block.
	idleMin []time.Duration
	// idleAll is at most the first of idleMin, and firstAll the first of
	// blockMin when known (else wakesStale): a pass that every block
	// would skip is skipped whole. A producer's sender runs on nearly
	// every event it gets, and a pass over 47 blocks showed in profiles.
	idleAll  time.Duration
	firstAll time.Duration
	// waitsForRoom[i] is the leader (plus one; 0: none) partition i idles
	// for while that leader has no room for another request; waiters[w]
	// counts the partitions waiting for w, so that room made at a leader
	// none waits for costs no pass over the partitions.
	waitsForRoom []int32
	waiters      []int32
	// firstWake[i] is the first of partition i's wake-ups after the time
	// it was found, or never (then also after any later time, while it is
	// still ahead); wakesStale: they must be computed again.
	firstWake []time.Duration
	// blockMin[b] is the first of firstWake[64b:64b+64], or wakesStale
	// when that is not known (a wake-up there went stale): scheduleNext
	// skips a block whose first wake-up is ahead, which on a producer of
	// thousands of partitions is nearly every block.
	blockMin []time.Duration
	// wokeAt is the latest time the first wake-ups were looked at: the
	// producer's clock can be set back, and then a wake-up passed before
	// is ahead again (staleAfterJumpBack).
	wokeAt time.Duration
}

const (
	notIdle    = time.Duration(math.MinInt64)
	wakesStale = time.Duration(math.MinInt64)
)

func (l *sendLooks) len() int { return len(l.idleUntil) }

// grow adds partitions up to n, each to be looked at.
func (l *sendLooks) grow(n int) {
	for len(l.idleUntil) < n {
		l.idleUntil = append(l.idleUntil, notIdle)
		l.waitsForRoom = append(l.waitsForRoom, 0)
		l.firstWake = append(l.firstWake, wakesStale)
	}
	for len(l.blockMin)*64 < n {
		l.blockMin = append(l.blockMin, wakesStale)
		l.idleMin = append(l.idleMin, notIdle)
	}
	for b := range l.blockMin {
		l.blockMin[b] = wakesStale
		l.idleMin[b] = notIdle
	}
	l.idleAll, l.firstAll = notIdle, wakesStale
}

// changed: partition i's queue or a batch in it changed.
func (l *sendLooks) changed(i int) {
	l.idleUntil[i] = notIdle
	l.idleMin[i>>6] = notIdle
	l.firstWake[i] = wakesStale
	l.blockMin[i>>6] = wakesStale
	l.idleAll, l.firstAll = notIdle, wakesStale
}

// maySendSooner: a batch of partition i may go before the last look said
// (it filled up).
func (l *sendLooks) maySendSooner(i int) {
	l.idleUntil[i] = notIdle
	l.idleMin[i>>6] = notIdle
	l.idleAll = notIdle
}

// idle notes that partition i has nothing to send before until, or, when
// waitsFor is a leader (plus one), until that leader has room.
func (l *sendLooks) idle(i int, until time.Duration, waitsFor int32) {
	l.idleUntil[i] = until
	l.idleMin[i>>6] = min(l.idleMin[i>>6], until)
	l.idleAll = min(l.idleAll, until)
	if was := l.waitsForRoom[i]; was != waitsFor {
		if was > 0 {
			l.waiters[was]--
		}
		if waitsFor > 0 {
			for int(waitsFor) >= len(l.waiters) {
				l.waiters = append(l.waiters, 0)
			}
			l.waiters[waitsFor]++
		}
		l.waitsForRoom[i] = waitsFor
	}
}

// roomMade: leader may take another request.
func (l *sendLooks) roomMade(leader int32) {
	w := leader + 1
	if w <= 0 || int(w) >= len(l.waiters) {
		return
	}
	for i := 0; l.waiters[w] > 0; i++ {
		if l.waitsForRoom[i] == w {
			l.idleUntil[i], l.waitsForRoom[i] = notIdle, 0
			l.idleMin[i>>6] = notIdle
			l.idleAll = notIdle
			l.waiters[w]--
		}
	}
}

// lookAtAll: every partition's sending may have changed (an epoch bump, a
// metadata answer).
func (l *sendLooks) lookAtAll() {
	for i := range l.idleUntil {
		l.idleUntil[i] = notIdle
	}
	for b := range l.idleMin {
		l.idleMin[b] = notIdle
	}
	l.idleAll = notIdle
}

// staleAfterJumpBack marks every partition's wake-ups stale when now is
// before the latest time they were looked at (the clock was set back):
// the first one after now may be one passed before. (Computing them again
// from the queue gives what they held: only a change to the queue makes
// them stale otherwise.)
func (l *sendLooks) staleAfterJumpBack(now time.Duration) {
	if now < l.wokeAt {
		for i := range l.firstWake {
			l.firstWake[i] = wakesStale
		}
		for b := range l.blockMin {
			l.blockMin[b] = wakesStale
		}
		l.firstAll = wakesStale
	}
	l.wokeAt = now
}

// due returns which of partitions base to base+63 the sender must look at
// now, a bit each. (Not inlined: inside the sender its loop spilled
// registers on every partition.)
//
//go:noinline
func (l *sendLooks) due(base int, now time.Duration) uint64 {
	if l.idleMin[base>>6] > now {
		return 0 // every partition of the block idles past now
	}
	var due uint64
	first := never
	for j, until := range l.idleUntil[base:min(base+64, len(l.idleUntil))] {
		if now >= until {
			due |= 1 << (j & 63)
		} else {
			first = min(first, until)
		}
	}
	if due == 0 {
		l.idleMin[base>>6] = first
	}
	return due
}

// settleIdle sets the block of partitions base to base+63's idleMin to
// the first of their idleUntil, once the sender's pass looked at them.
func (l *sendLooks) settleIdle(base int) {
	first := never
	for _, until := range l.idleUntil[base:min(base+64, len(l.idleUntil))] {
		first = min(first, until)
	}
	l.idleMin[base>>6] = first
}

// earliestWake returns the earliest first wake-up after now of partitions
// base to base+63 whose first wake-up is known and ahead, and which of them
// must find theirs again, a bit each.
//
//go:noinline
func (l *sendLooks) earliestWake(base int, now time.Duration) (next time.Duration, again uint64) {
	next = never
	for j, w := range l.firstWake[base:min(base+64, len(l.firstWake))] {
		if w <= now {
			again |= 1 << (j & 63)
		} else {
			next = min(next, w)
		}
	}
	return next, again
}
