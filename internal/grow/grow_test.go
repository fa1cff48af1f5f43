package grow

import (
	"slices"
	"testing"
)

func TestAppendKeepsContentsAndDoubles(t *testing.T) {
	var s, want []int
	allocs := 0
	for i := range 100_000 {
		c := cap(s)
		s = Append(s, i)
		want = append(want, i)
		if cap(s) != c {
			allocs++
			if c > 0 && cap(s) < 2*c {
				t.Fatalf("capacity %d grew to %d: want at least double", c, cap(s))
			}
		}
	}
	s = Append(s, 1, 2, 3)
	want = append(want, 1, 2, 3)
	if !slices.Equal(s, want) {
		t.Fatal("contents differ from append's")
	}
	if allocs > 15 {
		t.Fatalf("%d allocations for 100,000 appends: want about log2", allocs)
	}
}
