package reader

import (
	"strings"
	"testing"
)

// Final reads are done when every partition's end is known and the
// position reached it (or passed it); of no partition at all too.
func TestFinalReadsDone(t *testing.T) {
	part := func(offset, end int64) *partitionState {
		return &partitionState{fetchPosition: fetchPosition{offset: offset, offsetEpoch: -1}, end: end}
	}
	for _, c := range []struct {
		name  string
		parts []*partitionState
		want  bool
	}{
		{"every position at its end", []*partitionState{part(5, 5), part(0, 0)}, true},
		{"a position past its end", []*partitionState{part(7, 5)}, true},
		{"a position short of its end", []*partitionState{part(5, 5), part(3, 4)}, false},
		{"an end not known yet", []*partitionState{part(5, 5), part(0, -1)}, false},
		{"a position not known yet", []*partitionState{part(-1, 0)}, false},
		{"no partitions", nil, true},
	} {
		if got := finalReadsDone(c.parts); got != c.want {
			t.Errorf("%s: done %v, want %v", c.name, got, c.want)
		}
	}
}

// What a liveness failure says of unfinished final reads: the partitions
// short of their end, with what holds them back, and none that finished.
func TestFinalPending(t *testing.T) {
	done := &partitionState{key: partKey{"orders", 0}, fetchPosition: fetchPosition{offset: 5}, end: 5, leader: 1}
	short := &partitionState{key: partKey{"orders", 1}, fetchPosition: fetchPosition{offset: 3}, end: 9, leader: 2, validating: true}
	noEnd := &partitionState{key: partKey{"payments", 0}, fetchPosition: fetchPosition{offset: -1}, end: -1, leader: -1, resetting: true}
	got := finalPending([]*partitionState{done, short, noEnd})
	want := "orders-1 at 3 of 9 (leader 2, validating true, resetting false); payments-0 at -1 of -1 (leader -1, validating false, resetting true)"
	if got != want {
		t.Errorf("pending:\n got %s\nwant %s", got, want)
	}
	if strings.Contains(got, "orders-0") {
		t.Errorf("a finished partition is pending: %s", got)
	}
	if got := finalPending(nil); got != "no partitions assigned" {
		t.Errorf("with no partitions: %q", got)
	}
}
