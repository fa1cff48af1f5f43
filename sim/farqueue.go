package sim

import (
	"container/heap"
	"kafkasim/internal/grow"
	"time"
)

// The far queue keeps events that fire later than the near queue's horizon
// out of it.
//
// Why: nearly every request arms a timeout of tens of seconds and cancels it
// a few milliseconds later. In one queue those timeouts made up most of the
// entries (about 67,000 of them in issue 4's benchmark), and every push and
// pop paid for them. Here they wait in buckets of about a second of virtual
// time; a bucket enters the near queue only when the clock reaches it, and
// the cancelled entries in it are dropped then, without ever touching the
// near queue (a cancelled timeout's slot went back when it was cancelled:
// an entry whose slot's owner is not its event is a cancelled one).
//
// Invariant: every queued event earlier than horizon is in the near queue;
// every event in a far bucket is at or after horizon. The near queue's
// earliest is therefore the earliest event once settle has run, and the
// order of execution — by (time, sequence) — is exactly the one a single
// queue gives: the trace hash does not depend on this structure.

// farBucketShift sets a far bucket's width: 2^30 ns, about 1.07 s.
const farBucketShift = 30

type farQueue struct {
	horizon time.Duration
	buckets map[int64]*farBucket
	// order is a min-heap of the indexes of the buckets that hold entries;
	// it, not the map, decides which bucket moves next.
	order bucketOrder
	// last is bucket lastK, the one an entry last went to: timeouts armed
	// within a second of each other share one.
	last      *farBucket
	lastK     int64
	spare     []*farBucket // emptied buckets, reused
	entries   int          // entries held, cancelled ones included
	cancelled int          // cancelled entries still held
}

type farBucket struct{ entries []heapEntry }

func newFarQueue() farQueue {
	return farQueue{horizon: 1 << farBucketShift, buckets: map[int64]*farBucket{}}
}

type bucketOrder []int64

func (o bucketOrder) Len() int           { return len(o) }
func (o bucketOrder) Less(i, j int) bool { return o[i] < o[j] }
func (o bucketOrder) Swap(i, j int)      { o[i], o[j] = o[j], o[i] }
func (o *bucketOrder) Push(x any)        { *o = append(*o, x.(int64)) }
func (o *bucketOrder) Pop() any {
	old := *o
	x := old[len(old)-1]
	*o = old[:len(old)-1]
	return x
}

// enqueue puts h into the near queue or into its far bucket.
func (s *Scheduler) enqueue(h heapEntry) {
	if h.at >= s.far.horizon {
		s.raiseHorizon()
	}
	if h.at < s.far.horizon {
		s.slots.slab[h.slot].far = false
		s.near.push(h)
		return
	}
	s.slots.slab[h.slot].far = true
	k := int64(h.at >> farBucketShift)
	f := &s.far
	b := f.last
	if b == nil || f.lastK != k {
		b = f.buckets[k]
		if b == nil {
			if n := len(f.spare); n > 0 {
				b = f.spare[n-1]
				f.spare = f.spare[:n-1]
			} else {
				b = &farBucket{}
			}
			f.buckets[k] = b
			heap.Push(&f.order, k)
		}
		f.last, f.lastK = b, k
	}
	b.entries = grow.Append(b.entries, h)
	f.entries++
}

// raiseHorizon moves the horizon up to the end of the current instant's
// bucket when no far bucket lies below that: after an idle stretch, events a
// few milliseconds ahead then go straight to the near queue again.
func (s *Scheduler) raiseHorizon() {
	k := int64(s.now >> farBucketShift)
	if len(s.far.order) > 0 && s.far.order[0] <= k {
		return
	}
	if h := time.Duration(k+1) << farBucketShift; h > s.far.horizon {
		s.far.horizon = h
	}
}

// settle moves far buckets into the near queue until it holds an event,
// which is then the earliest queued (every near entry is before the horizon,
// every far one at or after it).
func (s *Scheduler) settle() {
	f := &s.far
	for len(f.order) > 0 && s.near.len() == 0 {
		k := heap.Pop(&f.order).(int64)
		fb := f.buckets[k]
		delete(f.buckets, k)
		if f.last == fb {
			f.last = nil
		}
		b := fb.entries
		f.horizon = time.Duration(k+1) << farBucketShift
		f.entries -= len(b)
		for _, h := range b {
			if s.slots.owner[h.slot] != h.seq {
				f.cancelled-- // its slot went back when it was cancelled
				continue
			}
			s.slots.slab[h.slot].far = false
			s.near.push(h)
		}
		clear(b)
		fb.entries = b[:0]
		f.spare = append(f.spare, fb)
	}
}

// cancelFar counts a cancelled far entry.
func (s *Scheduler) cancelFar() {
	s.far.cancelled++
	s.maybeCompactFar()
}

// maybeCompactFar drops the cancelled entries of every far bucket once they
// are most of the far queue, so that timeouts hours long cancelled at a high
// rate cannot fill memory.
func (s *Scheduler) maybeCompactFar() {
	f := &s.far
	if s.iterating || f.cancelled <= 4096 || f.cancelled <= f.entries/2 {
		return
	}
	for _, k := range f.order {
		fb := f.buckets[k]
		b := fb.entries
		kept := b[:0]
		for _, h := range b {
			if s.slots.owner[h.slot] == h.seq {
				kept = append(kept, h)
			}
		}
		clear(b[len(kept):])
		fb.entries = kept
		f.entries -= len(b) - len(kept)
	}
	f.cancelled = 0
}
