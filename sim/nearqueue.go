package sim

import (
	"math/bits"
	"time"
)

// The near queue holds the events before the far queue's horizon, as a radix
// heap on their times.
//
// Why: virtual time never goes back, so every event queued fires at or
// after the last one taken out; a radix heap uses that. Bucket i > 0 holds
// the events whose time first differs from last (the time of the event last
// taken out) at bit i-1, bucket 0 those at last itself. Queuing an event is
// an append; taking the earliest out is a pop from bucket 0, or, when it is
// empty, a scan of the lowest non-empty bucket for its earliest time, which
// becomes last, and a redistribution of that bucket into lower ones. An
// event only ever moves down, so each moves a few times at most. In issue
// 4's benchmark this replaced a binary heap of about a thousand entries
// whose every pop walked ten levels.
//
// Order: bucket 0 is kept sorted by sequence, so that events of one instant
// leave in the order they were scheduled (a held event released keeps its
// old sequence, so it may have to be inserted before others). The order of
// execution — (time, sequence) — is exactly the one a heap gives; the
// trace hash does not depend on this structure.
//
// An event queued before last (possible only after a look at the earliest
// event, when the world's owner then schedules something sooner) makes the
// queue rebuild itself around the new earliest time.
type nearQueue struct {
	last    time.Duration
	buckets [65][]heapEntry
	// head is where bucket 0's entries still queued start.
	head int
	// mask has bit i-1 set when bucket i > 0 holds entries.
	mask uint64
	n    int
}

func (q *nearQueue) len() int { return q.n }

func (q *nearQueue) bucketOf(at time.Duration) int { return bits.Len64(uint64(at ^ q.last)) }

// push queues h.
func (q *nearQueue) push(h heapEntry) {
	if h.at < q.last {
		q.rebase(h.at)
	}
	q.n++
	q.place(h)
}

// place files h in its bucket (h.at >= q.last).
func (q *nearQueue) place(h heapEntry) {
	i := q.bucketOf(h.at)
	if i > 0 {
		q.buckets[i] = q.grown(q.buckets[i], h)
		q.mask |= 1 << (i - 1)
		return
	}
	b := q.grown(q.buckets[0], h)
	j := len(b) - 1
	for j > q.head && h.seq < b[j-1].seq {
		b[j] = b[j-1]
		j--
	}
	b[j] = h
	q.buckets[0] = b
}

// grown appends h to b. A bucket that runs out of room grows to hold the
// whole queue (up to 4,096 entries), so that bucket sizes settle within a
// few growths and the steady state allocates nothing.
func (q *nearQueue) grown(b []heapEntry, h heapEntry) []heapEntry {
	if len(b) == cap(b) {
		n := make([]heapEntry, len(b), max(2*cap(b), min(q.n, 4096), 8))
		copy(n, b)
		b = n
	}
	return append(b, h)
}

// min returns the earliest entry; the queue must not be empty.
func (q *nearQueue) min() heapEntry {
	if q.head == len(q.buckets[0]) {
		q.refill()
	}
	return q.buckets[0][q.head]
}

// popMin takes the earliest entry out and returns it; the queue must not be
// empty.
func (q *nearQueue) popMin() heapEntry {
	h := q.min()
	q.head++
	q.n--
	if q.head == len(q.buckets[0]) {
		q.buckets[0], q.head = q.buckets[0][:0], 0
	}
	return h
}

// refill moves the lowest non-empty bucket's earliest time into last and
// redistributes the bucket, which fills bucket 0 (empty before).
func (q *nearQueue) refill() {
	q.buckets[0], q.head = q.buckets[0][:0], 0
	i := bits.TrailingZeros64(q.mask) + 1
	b := q.buckets[i]
	earliest := b[0].at
	for _, h := range b[1:] {
		earliest = min(earliest, h.at)
	}
	q.last = earliest
	q.buckets[i] = b[:0]
	q.mask &^= 1 << (i - 1)
	// Every entry lands in a bucket below i (they all agree with the new
	// last above bit i-1), so b's array is not appended to meanwhile.
	for _, h := range b {
		q.place(h)
	}
}

// rebase refiles every entry around at, the new earliest time.
func (q *nearQueue) rebase(at time.Duration) {
	var all []heapEntry
	q.each(func(h heapEntry) { all = append(all, h) })
	q.clear()
	q.last = at
	for _, h := range all {
		q.place(h)
	}
}

func (q *nearQueue) clear() {
	for i := range q.buckets {
		q.buckets[i] = q.buckets[i][:0]
	}
	q.head, q.mask = 0, 0
}

// each calls f for every entry, in no particular order.
func (q *nearQueue) each(f func(h heapEntry)) {
	for _, h := range q.buckets[0][q.head:] {
		f(h)
	}
	for m := q.mask; m != 0; m &= m - 1 {
		for _, h := range q.buckets[bits.TrailingZeros64(m)+1] {
			f(h)
		}
	}
}

// filter keeps the entries keep says to (bucket 0 stays in order).
func (q *nearQueue) filter(keep func(h heapEntry) bool) {
	b0 := q.buckets[0]
	kept := b0[:0]
	for _, h := range b0[q.head:] {
		if keep(h) {
			kept = append(kept, h)
		}
	}
	q.buckets[0], q.head = kept, 0
	q.n = len(kept)
	for m := q.mask; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m) + 1
		b := q.buckets[i]
		k := b[:0]
		for _, h := range b {
			if keep(h) {
				k = append(k, h)
			}
		}
		q.buckets[i] = k
		q.n += len(k)
		if len(k) == 0 {
			q.mask &^= 1 << (i - 1)
		}
	}
}
