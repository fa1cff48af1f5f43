package chunked

import (
	"testing"

	"pgregory.net/rapid"
)

// A List holds what a plain slice holds through appends and cuts, across
// block boundaries, and searches as sort.Search over the slice does.
func TestListIsASlice(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var l List[int64]
		var want []int64
		next := int64(0)
		for step := range rapid.IntRange(1, 60).Draw(t, "steps") {
			switch rapid.IntRange(0, 3).Draw(t, "op") {
			case 0, 1: // a run of appends, often past a block
				for range rapid.IntRange(1, 3*blockLen).Draw(t, "appends") {
					next += int64(rapid.IntRange(0, 3).Draw(t, "gap"))
					l.Append(next)
					want = append(want, next)
				}
			case 2:
				n := rapid.IntRange(0, len(want)).Draw(t, "cut")
				l.Truncate(n)
				want = want[:n]
				if n > 0 {
					next = want[n-1]
				}
			case 3:
				x := next + 2 - int64(rapid.IntRange(0, 2*blockLen).Draw(t, "below"))
				got := l.Search(func(v *int64) bool { return *v >= x })
				w := 0
				for w < len(want) && want[w] < x {
					w++
				}
				if got != w {
					t.Fatalf("step %d: search %d: %d, want %d", step, x, got, w)
				}
			}
			if l.Len() != len(want) {
				t.Fatalf("step %d: Len %d, want %d", step, l.Len(), len(want))
			}
			for i, v := range want {
				if *l.At(i) != v {
					t.Fatalf("step %d: entry %d is %d, want %d", step, i, *l.At(i), v)
				}
			}
			if len(want) > 0 && *l.Last() != want[len(want)-1] {
				t.Fatalf("step %d: Last %d, want %d", step, *l.Last(), want[len(want)-1])
			}
		}
	})
}

// A cut releases what the cut entries pointed to.
func TestTruncateClearsCutEntries(t *testing.T) {
	var l List[*int]
	for range blockLen + 10 {
		v := 1
		l.Append(&v)
	}
	l.Truncate(5)
	for b := range l.blocks {
		blk := l.blocks[b][:cap(l.blocks[b])]
		for i := range blk {
			if idx := b<<blockShift + i; idx >= 5 && idx < blockLen+10 && blk[i] != nil {
				t.Fatalf("entry %d still points somewhere after the cut", idx)
			}
		}
	}
}
