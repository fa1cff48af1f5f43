package gctune

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
)

// The target is 400 up to a live heap of 128 MiB, then allows about 512
// MiB of garbage up to 384 MiB live, then what keeps the heap within 848
// MiB, but never less than an eighth of the live heap (GOGC 12).
func TestPercentForLiveHeap(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{{0, 400}, {10 << 20, 400}, {128 << 20, 400}, {256 << 20, 200}, {384 << 20, 120}, {512 << 20, 65},
		{640 << 20, 32}, {700 << 20, 21}, {800 << 20, 12}, {1 << 30, 12}, {4 << 30, 12}, {64 << 30, 12}} {
		if got := percentFor(c.live); got != c.want {
			t.Errorf("live %d MiB: GOGC %d, want %d", c.live>>20, got, c.want)
		}
	}
}

// No limit for a small heap; the budget while the live heap and an eighth
// of it fit in it with room for the runtime; past that, those three, so the
// limit never collects more often than GOGC's floor would.
func TestLimitForLiveHeap(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int64
	}{{0, math.MaxInt64}, {127 << 20, math.MaxInt64}, {128 << 20, 872 << 20}, {512 << 20, 872 << 20},
		{700 << 20, 872 << 20}, {800 << 20, (800 + 100 + 64) << 20}, {4 << 30, (4096 + 512 + 128) << 20}} {
		if got := limitFor(c.live); got != c.want {
			t.Errorf("live %d MiB: limit %d MiB, want %d MiB", c.live>>20, got>>20, c.want>>20)
		}
		if c.live >= limitFromLive && uint64(limitFor(c.live)) < c.live+c.live/garbageMinShare+runtimeRoom(c.live) {
			t.Errorf("live %d MiB: the limit leaves less than GOGC's floor and the runtime's room", c.live>>20)
		}
	}
}

// The tuner follows the collections (its sentinel re-arms after each), and
// stop puts back the percentage found at the start.
func TestTunerFollowsCollectionsAndStopRestores(t *testing.T) {
	old := debug.SetGCPercent(123)
	defer debug.SetGCPercent(old)
	tn := start()
	if got := debug.SetGCPercent(400); got != 400 {
		t.Fatalf("after start, GOGC %d, want 400", got)
	}
	seen := func() int {
		tn.mu.Lock()
		defer tn.mu.Unlock()
		return tn.collections
	}
	// Finalizers run on their own goroutine, after the collection: give
	// them the chance, a bounded number of times.
	for i := 0; i < 1000 && seen() < 3; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	if n := seen(); n < 3 {
		t.Fatalf("the tuner saw %d collections, want at least 3", n)
	}
	tn.stop()
	if got := debug.SetGCPercent(old); got != 123 {
		t.Fatalf("after stop, GOGC %d, want the 123 found at the start", got)
	}
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Fatalf("after stop, memory limit %d, want none, as at the start", got)
	}
}
