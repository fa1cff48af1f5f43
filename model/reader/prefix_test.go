package reader

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

func TestPrefixTrackerCommitsTheContiguousCompletedPrefix(t *testing.T) {
	type step struct {
		finish       int64
		prefix, high int64 // committable offsets after the step (-1: none)
	}
	for _, tc := range []struct {
		name   string
		polled []int64
		steps  []step
	}{
		{"in order", []int64{0, 1, 2}, []step{{0, 1, 1}, {1, 2, 2}, {2, 3, 3}}},
		{"a slow first record holds the prefix", []int64{0, 1, 2}, []step{{1, -1, 2}, {2, -1, 3}, {0, 3, 3}}},
		{"a gap in the middle", []int64{5, 6, 7, 8}, []step{{5, 6, 6}, {7, 6, 8}, {8, 6, 9}, {6, 9, 9}}},
		{"offsets with gaps (transaction markers)", []int64{3, 5, 9}, []step{{5, -1, 6}, {3, 6, 6}, {9, 10, 10}}},
		{"a record never finished (dropped) holds it for good", []int64{0, 1, 2}, []step{{0, 1, 1}, {2, 1, 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newPrefixTracker(nil)
			for _, o := range tc.polled {
				tr.polled(o, int32(o%3))
			}
			for _, s := range tc.steps {
				tr.finished(s.finish, int32(s.finish%3))
				for _, c := range []struct {
					bug  bool
					want int64
				}{{false, s.prefix}, {true, s.high}} {
					pos, ok := tr.committable(c.bug)
					if ok != (c.want >= 0) || (ok && pos.offset != c.want) {
						t.Fatalf("after finishing %d: committable(highestFinished=%v) = %v, %v; want %d", s.finish, c.bug, pos, ok, c.want)
					}
					if ok && pos.offsetEpoch != int32((pos.offset-1)%3) {
						t.Fatalf("after finishing %d: epoch %d, want the epoch of record %d", s.finish, pos.offsetEpoch, pos.offset-1)
					}
				}
			}
		})
	}
}

// A record polled twice (a position moved back) holds the prefix until
// both processings finished.
func TestPrefixTrackerWaitsForEveryProcessingOfARecord(t *testing.T) {
	tr := newPrefixTracker(nil)
	tr.polled(0, 0)
	tr.polled(0, 0)
	tr.finished(0, 0)
	if _, ok := tr.committable(false); ok {
		t.Fatal("committable with one processing of record 0 still open")
	}
	tr.finished(0, 0)
	if pos, _ := tr.committable(false); pos.offset != 1 {
		t.Fatalf("committable %d, want 1", pos.offset)
	}
}

// A record polled below the prefix (the position moved back: a truncated
// log, fuzz seed 203552) starts the prefix again from it: what the member
// processes from there is committed, though it lies below what it
// committed before; records still in processing from before the move no
// longer count.
func TestPrefixTrackerStartsAgainBelowThePrefix(t *testing.T) {
	tr := newPrefixTracker(nil)
	for o := int64(90); o < 101; o++ {
		tr.polled(o, 1)
	}
	for o := int64(90); o < 100; o++ {
		tr.finished(o, 1)
	}
	if pos, _ := tr.committable(false); pos.offset != 100 {
		t.Fatalf("committable %d, want 100", pos.offset)
	}
	tr.polled(21, 2)
	tr.polled(22, 2)
	if _, ok := tr.committable(false); ok {
		t.Fatal("committable before any record polled after the move finished")
	}
	tr.finished(100, 1) // polled before the move: no longer counts
	if _, ok := tr.committable(false); ok {
		t.Fatal("a record polled before the move made the prefix committable")
	}
	tr.finished(22, 2)
	if _, ok := tr.committable(false); ok {
		t.Fatal("committable with record 21 unfinished")
	}
	tr.finished(21, 2)
	if pos, _ := tr.committable(false); pos.offset != 23 || pos.offsetEpoch != 2 {
		t.Fatalf("committable %+v, want offset 23 of epoch 2", pos)
	}
}

// Whatever records were polled and whichever finished in whatever order,
// the prefix is the offset after the highest o with every polled record at
// or below o finished, never goes back, and never passes an unfinished
// record; the highest finished is the largest finished offset plus one.
func TestPrefixTrackerProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		polled := rapid.SliceOfDistinct(rapid.Int64Range(0, 40), func(o int64) int64 { return o }).Draw(t, "polled")
		tr := newPrefixTracker(nil)
		for _, o := range polled {
			tr.polled(o, 0)
		}
		order := rapid.Permutation(polled).Draw(t, "order")
		n := rapid.IntRange(0, len(order)).Draw(t, "finished")
		done := map[int64]bool{}
		last, high := int64(-1), int64(-1)
		for _, o := range order[:n] {
			tr.finished(o, 0)
			done[o] = true
			high = max(high, o+1)
			want := int64(-1)
			for _, p := range slices.Sorted(slices.Values(polled)) {
				if !done[p] {
					break
				}
				want = p + 1
			}
			pos, ok := tr.committable(false)
			got := int64(-1)
			if ok {
				got = pos.offset
			}
			if got != want {
				t.Fatalf("polled %v, finished %v: prefix %d, want %d", polled, order[:n], got, want)
			}
			if got < last {
				t.Fatalf("prefix went back from %d to %d", last, got)
			}
			last = got
			for _, p := range polled {
				if !done[p] && got > p {
					t.Fatalf("prefix %d passes unfinished %d", got, p)
				}
			}
			if hp, _ := tr.committable(true); hp.offset != high {
				t.Fatalf("highest finished %d, want %d", hp.offset, high)
			}
		}
	})
}
