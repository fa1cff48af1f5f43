package checker

import (
	"strconv"
	"testing"

	"pgregory.net/rapid"

	"kafkasim/history"
)

// The sweep finds a pair of members overlapping in a generation exactly when
// some two of their process operations overlap (checked against every pair).
func TestDoubleOwnerSweepAgreesWithEveryPair(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		members := rapid.IntRange(2, 4).Draw(t, "members")
		n := rapid.IntRange(1, 40).Draw(t, "steps")
		h := &hb{}
		type iv struct {
			member     int
			gen        int32
			start, end int64
		}
		var ivs []iv
		open := make([][]int, members) // member -> open intervals (as workers: several at once)
		for range n {
			mi := rapid.IntRange(0, members-1).Draw(t, "member")
			m := h.member("c-"+strconv.Itoa(mi), "g")
			if len(open[mi]) > 0 && rapid.Bool().Draw(t, "end") {
				k := rapid.IntRange(0, len(open[mi])-1).Draw(t, "which")
				i := open[mi][k]
				open[mi] = append(open[mi][:k], open[mi][k+1:]...)
				ivs[i].end = m.end(ivs[i].gen, 0, int64(i), history.OK)
				continue
			}
			gen := int32(rapid.IntRange(1, 2).Draw(t, "gen"))
			open[mi] = append(open[mi], len(ivs))
			ivs = append(ivs, iv{member: mi, gen: gen, start: m.begin(gen, 0, int64(len(ivs))), end: -1})
		}
		last := int64(len(h.ops))
		pairs := map[[3]int]bool{}
		for i := range ivs {
			for j := range ivs {
				x, y := ivs[i], ivs[j]
				if x.end < 0 {
					x.end = last
				}
				if y.end < 0 {
					y.end = last
				}
				if x.member < y.member && x.gen == y.gen && x.start < y.end && y.start < x.end {
					pairs[[3]int{int(x.gen), x.member, y.member}] = true
				}
			}
		}
		r := Check(h.ops, withGroup("after-processing"))
		if got := r.Count(DoubleOwner); got != len(pairs) {
			t.Fatalf("%d double-owner, want %d (%v)\n%s", got, len(pairs), pairs, r.Summary())
		}
	})
}
