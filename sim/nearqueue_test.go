package sim

import (
	"cmp"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestNearQueueGivesHeapOrder drives the near queue and a plain list with
// the same entries and demands the same earliest entry — by (time,
// sequence) — at every step: pushes at or after the last time taken out
// (as the scheduler's are), pushes before it (after a look at the earliest,
// the world's owner may schedule sooner), re-pushes of an old sequence (a
// released held event), many entries at one instant, filters, and a walk
// over every entry.
func TestNearQueueGivesHeapOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var q nearQueue
		var ref []heapEntry
		var seq uint64
		var now time.Duration
		spread := rapid.SampledFrom([]int64{1, 16, 1 << 20, 1 << 40}).Draw(t, "spread")
		for step := range rapid.IntRange(1, 400).Draw(t, "steps") {
			switch rapid.IntRange(0, 9).Draw(t, "action") {
			case 0, 1, 2, 3: // schedule at or after now
				seq++
				h := heapEntry{at: now + time.Duration(rapid.Int64Range(0, spread).Draw(t, "delay")), seq: seq, slot: uint32(step)}
				q.push(h)
				ref = append(ref, h)
			case 4: // schedule before the time last looked at
				seq++
				h := heapEntry{at: max(now-time.Duration(rapid.Int64Range(0, spread).Draw(t, "back")), 0), seq: seq, slot: uint32(step)}
				q.push(h)
				ref = append(ref, h)
			case 5: // put back an entry taken out (a held event, or the step budget)
				if seq > 0 {
					h := heapEntry{at: now, seq: rapid.Uint64Range(1, seq).Draw(t, "old_seq"), slot: uint32(step)}
					if !slices.ContainsFunc(ref, func(r heapEntry) bool { return r.seq == h.seq }) {
						q.push(h)
						ref = append(ref, h)
					}
				}
			case 6, 7, 8: // take the earliest out
				if len(ref) == 0 {
					continue
				}
				want := slices.MinFunc(ref, cmpEntries)
				if got := q.min(); got != want {
					t.Fatalf("step %d: earliest %+v, want %+v", step, got, want)
				}
				if rapid.Bool().Draw(t, "pop") {
					q.popMin()
					ref = slices.DeleteFunc(ref, func(r heapEntry) bool { return r == want })
					now = want.at
				}
			case 9: // drop some, as compaction drops cancelled events
				mod := uint64(rapid.IntRange(2, 5).Draw(t, "mod"))
				keep := func(h heapEntry) bool { return h.seq%mod != 0 }
				q.filter(keep)
				ref = slices.DeleteFunc(ref, func(h heapEntry) bool { return !keep(h) })
			}
			if q.len() != len(ref) {
				t.Fatalf("step %d: %d entries, want %d", step, q.len(), len(ref))
			}
			var all []heapEntry
			q.each(func(h heapEntry) { all = append(all, h) })
			slices.SortFunc(all, cmpEntries)
			sorted := slices.SortedFunc(slices.Values(ref), cmpEntries)
			if !slices.Equal(all, sorted) {
				t.Fatalf("step %d: the queue holds %v, want %v", step, all, sorted)
			}
		}
	})
}

func cmpEntries(a, b heapEntry) int {
	return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.seq, b.seq))
}
