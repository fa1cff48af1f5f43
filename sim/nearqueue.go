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
// the events whose time first differs from last (the earliest time the
// queue has taken up) at bit i-1. Bucket 0 is the run: the earliest events,
// sorted by (time, sequence), every one at or before runMax, and every
// event in the other buckets after it. Queuing an event appends it to its
// bucket, or inserts it in the run when it is not after runMax; taking the
// earliest out pops the run, or, when it is empty, takes up the lowest
// non-empty bucket: its earliest time becomes last, and the bucket becomes
// the run, sorted — or, when it is large, its events at last do and the
// others are redistributed into lower buckets. An event only ever moves
// down, so each moves a few times at most (a bucket taken up holds four
// events on average in issue 4's benchmark). This replaced a binary heap of
// about a thousand entries whose every pop walked ten levels.
//
// Order: the run is sorted by time, then sequence, so that events of one
// instant leave in the order they were scheduled (a held event released
// keeps its old sequence, so it may have to be inserted before others). The
// order of execution — (time, sequence) — is exactly the one a heap gives;
// the trace hash does not depend on this structure.
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
	// head is where the run's entries still queued start; runMax is the
	// latest time it may hold.
	head   int
	runMax time.Duration
	// mask has bit i-1 set when bucket i > 0 holds entries.
	mask uint64
	n    int
}

// runBucketMax is the most entries a bucket taken up becomes the run
// whole, sorted; a larger one is redistributed.
const runBucketMax = 16

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

// place files h (h.at >= q.last): in the run when it is not after it,
// else in its bucket.
func (q *nearQueue) place(h heapEntry) {
	if h.at == q.last || (q.head < q.lens[0] && h.at <= q.runMax) {
		q.insertRun(h)
		return
	}
	i := q.bucketOf(h.at)
	if q.lens[i] == len(q.buckets[i]) {
		q.grow(i)
	}
	q.buckets[i][q.lens[i]] = h
	q.lens[i]++
	q.mask |= 1 << (i - 1)
}

// insertRun puts h in its place in the run.
func (q *nearQueue) insertRun(h heapEntry) {
	if q.head == q.lens[0] {
		q.lens[0], q.head = 0, 0
		q.runMax = h.at
	}
	if q.lens[0] == len(q.buckets[0]) {
		q.grow(0)
	}
	b := q.buckets[0]
	j := q.lens[0]
	q.lens[0]++
	for j > q.head && h.before(b[j-1]) {
		b[j] = b[j-1]
		j--
	}
	b[j] = h
	q.runMax = max(q.runMax, h.at)
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

// refill takes up the lowest non-empty bucket (the run is empty): its
// earliest time becomes last, and it becomes the run, or, when large, its
// entries at last do and the others go to lower buckets.
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
	// Every entry is after the run or lands in a bucket below i (they all
	// agree with the new last above bit i-1), so b's entries are not
	// written over meanwhile; the other buckets hold later entries still.
	if len(b) <= runBucketMax {
		for _, h := range b {
			q.insertRun(h)
		}
		return
	}
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

// filter keeps the entries keep says to (the run stays in order).
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

// before orders entries by time, then sequence.
func (a heapEntry) before(b heapEntry) bool {
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}
