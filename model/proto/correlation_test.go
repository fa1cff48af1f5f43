package proto

import (
	"testing"

	"pgregory.net/rapid"
)

func TestCorrelationBase(t *testing.T) {
	for _, c := range []struct {
		incarnation uint32
		want        uint64
	}{
		{0, 0}, // a node env before its first boot
		{1, 0}, // a first process numbers its requests as it always did
		{2, 1 << 32},
		{3, 2 << 32},
		{1 << 31, (1<<31 - 1) << 32},
	} {
		if got := CorrelationBase(c.incarnation); got != c.want {
			t.Errorf("CorrelationBase(%d) = %d, want %d", c.incarnation, got, c.want)
		}
	}
}

// Two incarnations' correlation ids never meet: each has 2^32 of its own,
// above every earlier incarnation's.
func TestCorrelationBasesKeepIncarnationsApart(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := rapid.Uint32Range(1, 1<<20).Draw(t, "a")
		b := rapid.Uint32Range(a+1, 1<<20+1).Draw(t, "b")
		// A process's nth request goes out with id base+n.
		n := rapid.Uint64Range(1, 1<<32).Draw(t, "nth request of a")
		if id, first := CorrelationBase(a)+n, CorrelationBase(b)+1; id >= first {
			t.Fatalf("incarnation %d's request %d has id %d, not below incarnation %d's first, %d", a, n, id, b, first)
		}
	})
}
