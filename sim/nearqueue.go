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
	last time.Duration
	// buckets[i] holds lens[i] entries, in a slice as long as its
	// capacity: queuing writes an entry, not the slice, so that it
	// costs no write barrier while the collector marks.
	buckets [65][]heapEntry
	lens    [65]int
	// head is where bucket 0's entries still queued start.
	head int
	// mask has bit i-1 set when bucket i > 0 holds entries.
	mask uint64
	n    int
}

func (q *nearQueue) len() int { return q.n }

func (q *nearQueue) bucketOf(at time.Duration) int { return bits.Len64(uint64(at ^ q.last)) }

// bucket returns bucket i's entries.
func (q *nearQueue) bucket(i int) []heapEntry { return q.buckets[i][:q.lens[i]] }

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
	if q.lens[i] == len(q.buckets[i]) {
		q.grow(i)
	}
	b := q.buckets[i]
	j := q.lens[i]
	q.lens[i]++
	if i > 0 {
		b[j] = h
		q.mask |= 1 << (i - 1)
		return
	}
	for j > q.head && h.seq < b[j-1].seq {
		b[j] = b[j-1]
		j--
	}
	b[j] = h
}

// grow makes room in bucket i. A bucket that runs out of room grows to hold
// the whole queue (up to 4,096 entries), so that bucket sizes settle within
// a few growths and the steady state allocates nothing.
func (q *nearQueue) grow(i int) {
	b := q.buckets[i]
	n := make([]heapEntry, max(2*len(b), min(q.n, 4096), 8))
	copy(n, b)
	q.buckets[i] = n
}

// min returns the earliest entry; the queue must not be empty.
func (q *nearQueue) min() heapEntry {
	if q.head == q.lens[0] {
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
	if q.head == q.lens[0] {
		q.lens[0], q.head = 0, 0
	}
	return h
}

// refill moves the lowest non-empty bucket's earliest time into last and
// redistributes the bucket, which fills bucket 0 (empty before).
func (q *nearQueue) refill() {
	q.lens[0], q.head = 0, 0
	i := bits.TrailingZeros64(q.mask) + 1
	b := q.bucket(i)
	earliest := b[0].at
	for _, h := range b[1:] {
		earliest = min(earliest, h.at)
	}
	q.last = earliest
	q.lens[i] = 0
	q.mask &^= 1 << (i - 1)
	// Every entry lands in a bucket below i (they all agree with the new
	// last above bit i-1), so b's entries are not written over meanwhile.
	for _, h := range b {
		q.place(h)
	}
}

// rebase refiles every entry around at, the new earliest time.
func (q *nearQueue) rebase(at time.Duration) {
	var all []heapEntry
	q.each(func(h heapEntry) { all = append(all, h) })
	q.lens, q.head, q.mask = [65]int{}, 0, 0
	q.last = at
	for _, h := range all {
		q.place(h)
	}
}

// each calls f for every entry, in no particular order.
func (q *nearQueue) each(f func(h heapEntry)) {
	for _, h := range q.bucket(0)[q.head:] {
		f(h)
	}
	for m := q.mask; m != 0; m &= m - 1 {
		for _, h := range q.bucket(bits.TrailingZeros64(m) + 1) {
			f(h)
		}
	}
}

// filter keeps the entries keep says to (bucket 0 stays in order).
func (q *nearQueue) filter(keep func(h heapEntry) bool) {
	b0 := q.buckets[0]
	k := 0
	for _, h := range b0[q.head:q.lens[0]] {
		if keep(h) {
			b0[k] = h
			k++
		}
	}
	q.lens[0], q.head = k, 0
	q.n = k
	for m := q.mask; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m) + 1
		b := q.buckets[i]
		k := 0
		for _, h := range b[:q.lens[i]] {
			if keep(h) {
				b[k] = h
				k++
			}
		}
		q.lens[i] = k
		q.n += k
		if k == 0 {
			q.mask &^= 1 << (i - 1)
		}
	}
}
