package producer

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestBlockTreeAgreesWithAPass holds the block tree to a pass over its
// blocks: the first time of them all, and the first block from each on
// whose time has come, after random updates.
func TestBlockTreeAgreesWithAPass(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		n := 1 + rng.IntN(130)
		var m blockTree
		m.resize(n, notIdle)
		times := make([]time.Duration, n)
		for b := range times {
			times[b] = notIdle
		}
		for range 300 {
			b, v := rng.IntN(n), time.Duration(rng.IntN(100))
			switch rng.IntN(8) {
			case 0:
				v = never
			case 1:
				v = notIdle
			}
			switch rng.IntN(10) {
			case 0:
				m.setAll(v)
				for k := range times {
					times[k] = v
				}
			case 1, 2, 3, 4:
				m.lower(b, v)
				times[b] = min(times[b], v)
			default:
				m.set(b, v)
				times[b] = v
			}
			if got, want := m.first(), minOf(times); got != want {
				t.Fatalf("round %d: first %d, want %d (times %v)", round, got, want, times)
			}
			now := time.Duration(rng.IntN(100))
			for from := range n + 1 {
				want := -1
				for k := from; k < n; k++ {
					if times[k] <= now {
						want = k
						break
					}
				}
				if got := m.next(from, now); got != want {
					t.Fatalf("round %d: next(%d, %d) = %d, want %d (times %v)", round, from, now, got, want, times)
				}
			}
			if k := rng.IntN(n); m.get(k) != times[k] {
				t.Fatalf("round %d: get(%d) = %d, want %d", round, k, m.get(k), times[k])
			}
		}
		// Growing keeps the times there and gives the new blocks theirs.
		more := n + rng.IntN(70)
		m.resize(more, wakesStale)
		for len(times) < more {
			times = append(times, wakesStale)
		}
		if got, want := m.first(), minOf(times); got != want {
			t.Fatalf("round %d: after growing, first %d, want %d", round, got, want)
		}
		for k := range times {
			if m.get(k) != times[k] {
				t.Fatalf("round %d: after growing, block %d holds %d, want %d", round, k, m.get(k), times[k])
			}
		}
	}
}

func minOf(times []time.Duration) time.Duration {
	first := never
	for _, v := range times {
		first = min(first, v)
	}
	return first
}

// TestSendLooksFindWhatAPassWould drives the sender's looks through random
// changes, looks and clock moves (set back too), and holds every pass as
// the sender makes it (runSender, scheduleNext) to a pass over every
// partition: the partitions due, each block's first wake-up, and the first
// of them all.
func TestSendLooksFindWhatAPassWould(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 100 {
		var l sendLooks
		n := 1 + rng.IntN(200)
		l.grow(n)
		now := time.Duration(1000)
		randomTime := func() time.Duration {
			switch rng.IntN(6) {
			case 0:
				return never
			case 1:
				return now // due at once
			default:
				return now + time.Duration(rng.IntN(40)-10)
			}
		}
		for step := range 400 {
			i := rng.IntN(len(l.idleUntil))
			switch rng.IntN(12) {
			case 0, 1, 2:
				l.changed(i)
			case 3:
				l.maySendSooner(i)
			case 4, 5, 6:
				l.idle(i, randomTime(), int32(rng.IntN(3)))
			case 7:
				leader := int32(rng.IntN(3)) - 1
				var waited []int
				for k, w := range l.waitsForRoom {
					if w == leader+1 && w > 0 {
						waited = append(waited, k)
					}
				}
				l.roomMade(leader)
				for _, k := range waited {
					if l.waitsForRoom[k] != 0 || l.idleUntil[k] != notIdle {
						t.Fatalf("round %d step %d: partition %d waiting for leader %d not marked by its room", round, step, k, leader)
					}
				}
			case 8:
				if rng.IntN(10) == 0 {
					l.lookAtAll()
				}
			case 9:
				if rng.IntN(10) == 0 {
					n = len(l.idleUntil) + rng.IntN(80)
					l.grow(n)
				}
			}
			switch rng.IntN(10) {
			case 0:
				now -= time.Duration(rng.IntN(30)) // the clock set back
			default:
				now += time.Duration(rng.IntN(8))
			}
			if rng.IntN(2) == 0 {
				senderPass(t, rng, &l, now, round, step)
			}
			wakePass(t, rng, &l, now, round, step)
		}
	}
}

// senderPass makes runSender's pass, looking at each partition due as
// lookAt may: idle until some time, or left as it is.
func senderPass(t *testing.T, rng *rand.Rand, l *sendLooks, now time.Duration, round, step int) {
	t.Helper()
	visited := make([]bool, len(l.lookNow))
	for b := l.idleMin.next(0, now); b >= 0; b = l.idleMin.next(b+1, now) {
		visited[b] = true
		base := b * 64
		var want uint64
		for j := range min(64, len(l.idleUntil)-base) {
			if now >= l.idleUntil[base+j] {
				want |= 1 << j
			}
		}
		due, first := l.due(base, now)
		if due != want {
			t.Fatalf("round %d step %d: block %d due %b, want %b", round, step, b, due, want)
		}
		if due == 0 {
			continue
		}
		for d := due; d != 0; d &= d - 1 {
			i := base
			for bit := d & -d; bit > 1; bit >>= 1 {
				i++
			}
			if rng.IntN(5) > 0 {
				l.idle(i, now+1+time.Duration(rng.IntN(20)), int32(rng.IntN(3)))
			}
		}
		l.settleIdle(base, due, first)
	}
	for b, seen := range visited {
		for j := b * 64; j < min(b*64+64, len(l.idleUntil)) && !seen; j++ {
			if now >= l.idleUntil[j] {
				t.Fatalf("round %d step %d: partition %d due (idle until %d at %d) in a block the pass skipped", round, step, j, l.idleUntil[j], now)
			}
		}
	}
}

// wakePass makes scheduleNext's pass, finding again each first wake-up
// that is stale or passed, and checks the first of them all.
func wakePass(t *testing.T, rng *rand.Rand, l *sendLooks, now time.Duration, round, step int) {
	t.Helper()
	l.staleAfterJumpBack(now)
	for b := l.blockMin.next(0, now); b >= 0; b = l.blockMin.next(b+1, now) {
		base := b * 64
		wantFirst, wantAgain := never, uint64(0)
		for j := range min(64, len(l.firstWake)-base) {
			if w := l.firstWake[base+j]; w <= now {
				wantAgain |= 1 << j
			} else {
				wantFirst = min(wantFirst, w)
			}
		}
		first, again := l.earliestWake(base, now)
		if first != wantFirst || again != wantAgain {
			t.Fatalf("round %d step %d: block %d earliest %d again %b, want %d and %b", round, step, b, first, again, wantFirst, wantAgain)
		}
		for j := range min(64, len(l.firstWake)-base) {
			if again&(1<<j) != 0 {
				w := never
				if rng.IntN(3) > 0 {
					w = now + 1 + time.Duration(rng.IntN(30))
				}
				l.setFirstWake(base+j, w)
				first = min(first, w)
			}
		}
		l.wakesFound(b, first)
	}
	want := never
	for _, w := range l.firstWake {
		if w <= now {
			t.Fatalf("round %d step %d: a first wake-up %d not ahead of %d after the pass", round, step, w, now)
		}
		want = min(want, w)
	}
	if got := l.blockMin.first(); got != want {
		t.Fatalf("round %d step %d: first wake-up %d, want %d", round, step, got, want)
	}
}
