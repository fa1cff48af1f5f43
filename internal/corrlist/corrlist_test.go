package corrlist

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// A list answers as a map by correlation id would, and walks its requests
// in the order they were added.
func TestListIsAMapInSendOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var l List[int]
		want := map[uint64]int{}
		corr := uint64(0)
		for step := range rapid.IntRange(1, 200).Draw(t, "steps") {
			if rapid.Bool().Draw(t, "send") || len(want) == 0 {
				corr += rapid.Uint64Range(1, 3).Draw(t, "gap")
				l.Add(corr, step)
				want[corr] = step
			} else {
				c := rapid.Uint64Range(0, corr+1).Draw(t, "answered")
				v, ok := l.Remove(c)
				w, held := want[c]
				if ok != held || v != w {
					t.Fatalf("removing %d gave %d, %v; want %d, %v", c, v, ok, w, held)
				}
				delete(want, c)
			}
			for c := range corr + 2 {
				v, ok := l.Get(c)
				w, held := want[c]
				if ok != held || v != w {
					t.Fatalf("request %d: list has %d, %v; want %d, %v", c, v, ok, w, held)
				}
			}
			var ids []uint64
			for c, v := range l.All() {
				if v != want[c] {
					t.Fatalf("walking: request %d has %d, want %d", c, v, want[c])
				}
				ids = append(ids, c)
			}
			if !slices.IsSorted(ids) || len(ids) != len(want) || l.Len() != len(want) {
				t.Fatalf("list holds %v, want the %d requests in id order", ids, len(want))
			}
		}
	})
}

func TestListRefusesAnOutOfOrderRequest(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("a request older than one held was added")
		}
	}()
	var l List[string]
	l.Add(5, "a")
	l.Add(5, "b")
}
