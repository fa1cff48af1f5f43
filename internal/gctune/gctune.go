// Package gctune sets how often the collector runs as a process's live heap
// grows (GC timing never reaches a run's behaviour: only its speed and
// memory).
//
// A fuzz campaign's many short runs do best collecting seldom: their live
// heaps are small, and every collection marks the whole live heap, so
// GOGC=400 saves CPU. A long run's history and logs grow for the whole run;
// at GOGC=400 its last collection comes early (the target is five times
// the live heap) and every allocation after it lands on a page the process
// never touched, which costs a fault each — on some virtual machines 10 µs
// a page. So the target steps down as the live heap grows: up to 128 MiB
// live, GOGC=400; past it, the garbage allowed between collections stays
// about 512 MiB, and past 384 MiB live it shrinks so that the heap stays
// within heapBudgetBytes (848 MiB, so that with the runtime's own memory
// the process stays under 1 GB, 10^9 bytes, with a few percent to spare)
// while it can — a long run's memory is what users of a soak watch — but
// never below an eighth of the live heap,
// which bounds the collections' work: one collection per eighth of the
// live heap allocated. Collecting that often is affordable because a long
// run's heap is mostly blocks a collection scans little or not at all
// (record batches' bytes, the history's stream, the checker's tables):
// with the floor at GOGC=100, an hour of the reference load peaked at 8.4
// GB RSS for about 3.5 GB live; at 10, 4.9 GB for the same CPU time.
//
// GOGC bounds the heap, not the process: the pages a collection frees stay
// resident until the runtime's scavenger returns them, which it does only
// down to 110 % of the heap's goal, and the runtime's own memory (spans,
// collector metadata, stacks) comes on top. So past 128 MiB live the tuner
// also sets a soft memory limit (debug.SetMemoryLimit), which the runtime
// keeps its whole memory under by collecting sooner and returning free
// pages eagerly: memoryBudgetBytes (872 MiB) while the live heap allows,
// else the live heap plus the eighth of it GOGC's floor allows plus room
// for the runtime's own memory, so that the limit never makes the
// collector run more often than that floor would (no death spiral). A GOMEMLIMIT the user set
// is left alone.
package gctune

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

const (
	percentMax      = 400
	garbageMaxBytes = 512 << 20
	heapBudgetBytes = 848 << 20
	garbageMinShare = 8 // at least live/garbageMinShare of garbage
	// memoryBudgetBytes is the soft limit on the runtime's memory while the
	// live heap allows; runtimeRoomBytes (or a 32nd of the live heap, for
	// the runtime's metadata of a large one) is what the limit leaves beyond
	// the heap's goal for the runtime's own memory once it does not.
	memoryBudgetBytes = 872 << 20
	runtimeRoomBytes  = 64 << 20
	limitFromLive     = 128 << 20 // below, no limit: a short run's heap is small
)

// garbageFor is the garbage allowed between collections for a live heap of
// live bytes.
func garbageFor(live uint64) uint64 {
	if live <= heapBudgetBytes-garbageMaxBytes {
		return garbageMaxBytes
	}
	return max(live/garbageMinShare, heapBudgetBytes-min(live, heapBudgetBytes))
}

// percentFor is the GOGC for a live heap of live bytes.
func percentFor(live uint64) int {
	if live == 0 {
		return percentMax
	}
	p := 100 * garbageFor(live) / live
	return int(min(max(p, 100/garbageMinShare), percentMax))
}

// limitFor is the soft memory limit for a live heap of live bytes
// (math.MaxInt64: none).
func limitFor(live uint64) int64 {
	if live < limitFromLive {
		return math.MaxInt64
	}
	return int64(max(memoryBudgetBytes, live+live/garbageMinShare+runtimeRoom(live)))
}

// runtimeRoom is what the limit leaves beyond the heap's goal for the
// runtime's own memory.
func runtimeRoom(live uint64) uint64 { return max(runtimeRoomBytes, live/32) }

// Start applies the policy after every collection until stop is called,
// which puts back the percentage and memory limit found at Start.
func Start() (stop func()) { return start().stop }

func start() *tuner {
	t := &tuner{sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
	t.previous = debug.SetGCPercent(percentMax)
	t.percent = percentMax
	t.previousLimit = debug.SetMemoryLimit(-1)
	t.limit = t.previousLimit
	t.limits = t.previousLimit == math.MaxInt64 // no GOMEMLIMIT of the user's
	t.arm()
	return t
}

type tuner struct {
	mu            sync.Mutex
	sample        []metrics.Sample
	percent       int
	previous      int
	limits        bool // the tuner sets the memory limit
	limit         int64
	previousLimit int64
	stopped       bool
	collections   int // seen since start
}

func (t *tuner) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	debug.SetGCPercent(t.previous)
	debug.SetMemoryLimit(t.previousLimit)
}

// sentinel is garbage the moment it is made: its finalizer runs after the
// next collection, adjusts the target and makes the next sentinel. (Large
// enough not to share a tiny block, whose finalizer might never run.)
type sentinel struct{ _ [32]byte }

func (t *tuner) arm() {
	runtime.SetFinalizer(&sentinel{}, func(*sentinel) { t.collected() })
}

func (t *tuner) collected() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	t.collections++
	metrics.Read(t.sample)
	if v := t.sample[0].Value; v.Kind() == metrics.KindUint64 {
		if p := percentFor(v.Uint64()); p != t.percent {
			t.percent = p
			debug.SetGCPercent(p)
		}
		if l := limitFor(v.Uint64()); t.limits && l != t.limit {
			t.limit = l
			debug.SetMemoryLimit(l)
		}
	}
	t.arm()
}
