package producer

import (
	"math"
	mathbits "math/bits"
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
	// idleMin's block b is at most the first of idleUntil[64b:64b+64]: the
	// sender's pass visits only the blocks it says are due, which on a
	// producer of thousands of partitions are a few at most, and skips the
	// pass when none is.
	idleMin blockTree
	// lookNow[b] has bit j set when partition 64b+j is notIdle, and
	// timedMin[b] is at most the first idleUntil of the others: a pass
	// finds the partitions of a block marked since its last look (a batch
	// joined the queue: nearly every block it visits) from the bits,
	// without comparing the block's 64 times, while none of the others is
	// due.
	lookNow  []uint64
	timedMin []time.Duration
	// timed[b] has bit j set when partition 64b+j idles until a time
	// (neither notIdle nor never): a block's times to compare are those.
	timed []uint64
	// waitsForRoom[i] is the leader (plus one; 0: none) partition i idles
	// for while that leader has no room for another request; waiters[w]
	// counts the partitions waiting for w, so that room made at a leader
	// none waits for costs no pass over the partitions.
	waitsForRoom []int32
	waiters      []int32
	// waiting[b] has bit j set when partition 64b+j waits for a leader's
	// room: roomMade looks only at those.
	waiting []uint64
	// firstWake[i] is the first of partition i's wake-ups after the time
	// it was found, or never (then also after any later time, while it is
	// still ahead); wakesStale: they must be computed again.
	firstWake []time.Duration
	// blockMin's block b is the first of firstWake[64b:64b+64], or
	// wakesStale when that is not known (a wake-up there went stale):
	// scheduleNext visits only the blocks whose first wake-up is not
	// ahead, and takes the first of them all from the tree.
	blockMin blockTree
	// staleWakes[b] has bit j set when partition 64b+j's first wake-up is
	// stale, and knownMin[b] is the first of the block's others (never:
	// none), or wakesStale when not known (the first went stale): a block
	// whose others are all ahead finds its first wake-up from the few
	// stale ones (a batch joined the queue), without comparing 64 times.
	staleWakes []uint64
	knownMin   []time.Duration
	// wakeTimed[b] has bit j set when partition 64b+j's first wake-up is
	// known and a time (not never).
	wakeTimed []uint64
	// wokeAt is the latest time the first wake-ups were looked at: the
	// producer's clock can be set back, and then a wake-up passed before
	// is ahead again (staleAfterJumpBack).
	wokeAt time.Duration
}

const (
	notIdle    = time.Duration(math.MinInt64)
	wakesStale = time.Duration(math.MinInt64)
)

// grow adds partitions up to n, each to be looked at.
func (l *sendLooks) grow(n int) {
	for len(l.idleUntil) < n {
		l.idleUntil = append(l.idleUntil, notIdle)
		l.waitsForRoom = append(l.waitsForRoom, 0)
		l.firstWake = append(l.firstWake, wakesStale)
	}
	blocks := (n + 63) / 64
	for len(l.lookNow) < blocks {
		l.lookNow = append(l.lookNow, 0)
		l.timedMin = append(l.timedMin, notIdle)
		l.staleWakes = append(l.staleWakes, 0)
		l.knownMin = append(l.knownMin, wakesStale)
		l.waiting = append(l.waiting, 0)
		l.timed = append(l.timed, 0)
		l.wakeTimed = append(l.wakeTimed, 0)
	}
	l.idleMin.resize(blocks, notIdle)
	l.blockMin.resize(blocks, wakesStale)
	l.idleMin.setAll(notIdle)
	l.blockMin.setAll(wakesStale)
	for b := range blocks {
		l.lookNow[b], l.timed[b] = blockBits(l.idleUntil, b)
		l.staleWakes[b], l.wakeTimed[b] = blockBits(l.firstWake, b)
		l.knownMin[b] = wakesStale
	}
}

func (l *sendLooks) blocks() int { return len(l.lookNow) }

// blockBits classifies block b of times (a partition's idleUntil or
// firstWake): the partitions at now (notIdle, wakesStale: the same value),
// a bit each, and those at a time; the others are never.
func blockBits(times []time.Duration, b int) (now, timed uint64) {
	var _ [0]struct{} = [int64(notIdle - wakesStale)]struct{}{} // the same value, or this does not build
	for j, t := range times[b*64 : min(b*64+64, len(times))] {
		switch t {
		case notIdle:
			now |= 1 << (j & 63)
		case never:
		default:
			timed |= 1 << (j & 63)
		}
	}
	return now, timed
}

// setFirstWake notes partition i's first wake-up, found (not stale).
func (l *sendLooks) setFirstWake(i int, w time.Duration) {
	l.firstWake[i] = w
	l.staleWakes[i>>6] &^= 1 << (i & 63)
	if w == never {
		l.wakeTimed[i>>6] &^= 1 << (i & 63)
	} else {
		l.wakeTimed[i>>6] |= 1 << (i & 63)
	}
}

// lookAt marks partition i to be looked at now.
func (l *sendLooks) lookAt(i int) {
	l.idleUntil[i] = notIdle
	l.idleMin.lower(i>>6, notIdle)
	l.lookNow[i>>6] |= 1 << (i & 63)
	l.timed[i>>6] &^= 1 << (i & 63)
}

// changed: partition i's queue or a batch in it changed.
func (l *sendLooks) changed(i int) {
	l.lookAt(i)
	b := i >> 6
	if w := l.firstWake[i]; w != never && w == l.knownMin[b] {
		l.knownMin[b] = wakesStale // the block's first: the next is not known
	}
	l.firstWake[i] = wakesStale
	l.staleWakes[b] |= 1 << (i & 63)
	l.wakeTimed[b] &^= 1 << (i & 63)
	l.blockMin.lower(b, wakesStale)
}

// maySendSooner: a batch of partition i may go before the last look said
// (it filled up).
func (l *sendLooks) maySendSooner(i int) {
	l.lookAt(i)
}

// idle notes that partition i has nothing to send before until, or, when
// waitsFor is a leader (plus one), until that leader has room.
func (l *sendLooks) idle(i int, until time.Duration, waitsFor int32) {
	l.idleUntil[i] = until
	l.idleMin.lower(i>>6, until)
	switch until {
	case notIdle:
		l.lookNow[i>>6] |= 1 << (i & 63)
		l.timed[i>>6] &^= 1 << (i & 63)
	case never:
		l.lookNow[i>>6] &^= 1 << (i & 63)
		l.timed[i>>6] &^= 1 << (i & 63)
	default:
		l.lookNow[i>>6] &^= 1 << (i & 63)
		l.timed[i>>6] |= 1 << (i & 63)
		l.timedMin[i>>6] = min(l.timedMin[i>>6], until)
	}
	if was := l.waitsForRoom[i]; was != waitsFor {
		if was > 0 {
			l.waiters[was]--
		}
		if waitsFor > 0 {
			for int(waitsFor) >= len(l.waiters) {
				l.waiters = append(l.waiters, 0)
			}
			l.waiters[waitsFor]++
			l.waiting[i>>6] |= 1 << (i & 63)
		} else {
			l.waiting[i>>6] &^= 1 << (i & 63)
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
	for b := 0; l.waiters[w] > 0; b++ {
		for bits := l.waiting[b]; bits != 0; bits &= bits - 1 {
			if i := b*64 + mathbits.TrailingZeros64(bits); l.waitsForRoom[i] == w {
				l.lookAt(i)
				l.waitsForRoom[i] = 0
				l.waiting[b] &^= 1 << (i & 63)
				l.waiters[w]--
			}
		}
	}
}

// lookAtAll: every partition's sending may have changed (an epoch bump, a
// metadata answer).
func (l *sendLooks) lookAtAll() {
	for i := range l.idleUntil {
		l.idleUntil[i] = notIdle
	}
	for b := range l.lookNow {
		l.lookNow[b] = ^uint64(0) >> (64 - min(64, len(l.idleUntil)-b*64))
		l.timed[b] = 0
	}
	l.idleMin.setAll(notIdle)
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
		for b := range l.staleWakes {
			l.staleWakes[b] = ^uint64(0) >> (64 - min(64, len(l.firstWake)-b*64))
			l.wakeTimed[b] = 0
			l.knownMin[b] = never // none known
		}
		l.blockMin.setAll(wakesStale)
	}
	l.wokeAt = now
}

// due returns which of partitions base to base+63 the sender must look at
// now, a bit each, and at most the first idleUntil of the others. (Not
// inlined: inside the sender its loop spilled registers on every
// partition.)
//
//go:noinline
func (l *sendLooks) due(base int, now time.Duration) (due uint64, first time.Duration) {
	b := base >> 6
	if l.timedMin[b] > now {
		// Only those marked notIdle are due.
		due, first = l.lookNow[b], l.timedMin[b]
	} else {
		// Those notIdle are due, those idle for ever are not: the
		// others' times tell.
		first, due = never, l.lookNow[b]
		for t := l.timed[b]; t != 0; t &= t - 1 {
			j := mathbits.TrailingZeros64(t)
			if until := l.idleUntil[base+j]; now >= until {
				due |= 1 << j
			} else {
				first = min(first, until)
			}
		}
	}
	if due == 0 {
		l.timedMin[b] = first
		l.idleMin.set(b, first)
	}
	return due, first
}

// settleIdle sets the idleMin and timedMin of the block of partitions base
// to base+63 once the sender's pass looked at those due (a bit each) and
// the others' first idleUntil was first: each looked at is idle until a
// new time, or still due (and notIdle, or left as it was).
func (l *sendLooks) settleIdle(base int, due uint64, first time.Duration) {
	b := base >> 6
	for ; due != 0; due &= due - 1 {
		if until := l.idleUntil[base+mathbits.TrailingZeros64(due)]; until != notIdle {
			first = min(first, until)
		}
	}
	l.timedMin[b] = first
	if l.lookNow[b] != 0 {
		l.idleMin.set(b, notIdle)
	} else {
		l.idleMin.set(b, first)
	}
}

// earliestWake returns the earliest first wake-up after now of partitions
// base to base+63 whose first wake-up is known and ahead, and which of them
// must find theirs again, a bit each.
//
//go:noinline
func (l *sendLooks) earliestWake(base int, now time.Duration) (next time.Duration, again uint64) {
	if first := l.knownMin[base>>6]; first > now {
		// Every known one is ahead: only the stale ones are found again.
		return first, l.staleWakes[base>>6]
	}
	// The stale ones are found again, those never due are not: the
	// others' times tell.
	next, again = never, l.staleWakes[base>>6]
	for t := l.wakeTimed[base>>6]; t != 0; t &= t - 1 {
		j := mathbits.TrailingZeros64(t)
		if w := l.firstWake[base+j]; w <= now {
			again |= 1 << j
		} else {
			next = min(next, w)
		}
	}
	return next, again
}

// wakesFound notes block b's first wake-up, found by the sender: every
// partition's in it is known.
func (l *sendLooks) wakesFound(b int, first time.Duration) {
	l.knownMin[b], l.staleWakes[b] = first, 0
	l.blockMin.set(b, first)
}
