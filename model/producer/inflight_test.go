package producer

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// The in-flight table answers as a map by correlation id would, and lists
// its requests in the order they were sent.
func TestInflightTableIsAMapInSendOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var table inflightTable
		want := map[uint64]*inflightReq{}
		corr := uint64(0)
		for range rapid.IntRange(1, 200).Draw(t, "steps") {
			if rapid.Bool().Draw(t, "send") || len(want) == 0 {
				corr += rapid.Uint64Range(1, 3).Draw(t, "gap")
				r := &inflightReq{broker: int32(corr % 5)}
				table.add(corr, r)
				want[corr] = r
			} else {
				c := rapid.Uint64Range(0, corr+1).Draw(t, "answered")
				table.remove(c)
				delete(want, c)
			}
			for c := range corr + 2 {
				if got := table.get(c); got != want[c] {
					t.Fatalf("request %d: table has %p, want %p", c, got, want[c])
				}
			}
			var held []uint64
			for _, e := range table.reqs {
				held = append(held, e.corr)
			}
			if !slices.IsSorted(held) || len(held) != len(want) || table.len() != len(want) {
				t.Fatalf("table holds %v, want the %d requests in id order", held, len(want))
			}
		}
	})
}

func TestNodeCountsCountByBroker(t *testing.T) {
	var c nodeCounts
	c.add(3, 1)
	c.add(7, 1)
	c.add(3, 1)
	c.add(7, -1)
	if c.get(3) != 2 || c.get(7) != 0 || c.get(5) != 0 {
		t.Fatalf("counts 3:%d 7:%d 5:%d, want 2, 0, 0", c.get(3), c.get(7), c.get(5))
	}
}
