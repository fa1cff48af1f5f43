package partlog

import (
	"slices"
	"testing"

	"pgregory.net/rapid"

	"kafkasim/model/record"
)

// A segment's index holds what three plain slices hold through adds, cuts
// and prefixes across block boundaries; searches, walks and copies agree
// with them; and neither a view handed out nor an index a prefix was taken
// from ever changes, whatever adds and cuts come after.
func TestBatchIndexIsThreeSlices(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var x batchIndex
		var batches []*record.Batch
		var positions []uint32
		var lasts []int64
		type view struct {
			got, want []*record.Batch
		}
		var views []view
		// Indexes a prefix was taken from, and what each must still hold.
		type earlier struct {
			x    batchIndex
			want []*record.Batch
		}
		var earliers []earlier
		next, pos := int64(0), uint32(0)
		for step := range rapid.IntRange(1, 40).Draw(t, "steps") {
			switch rapid.IntRange(0, 5).Draw(t, "op") {
			case 5: // go on with a prefix, as a restarted replica does
				n := rapid.IntRange(0, len(batches)).Draw(t, "prefix")
				if rapid.Bool().Draw(t, "whole blocks") {
					n &^= indexBlockMask
				}
				earliers = append(earliers, earlier{x, slices.Clone(batches)})
				x = x.prefix(n)
				batches, positions, lasts = batches[:n:n], positions[:n:n], lasts[:n:n]
				if n > 0 {
					next, pos = lasts[n-1]+1, positions[n-1]+1
				} else {
					next, pos = 0, 0
				}
			case 0, 1: // a run of adds, often past a block
				for range rapid.IntRange(1, 2*indexBlockLen+3).Draw(t, "adds") {
					n := int32(rapid.IntRange(0, 3).Draw(t, "records"))
					b := &record.Batch{BaseOffset: next, LastOffsetDelta: n}
					x.add(b, pos)
					batches, positions, lasts = append(batches, b), append(positions, pos), append(lasts, b.LastOffset())
					next, pos = b.LastOffset()+1, pos+uint32(1+n)
				}
			case 2:
				n := rapid.IntRange(0, len(batches)).Draw(t, "cut")
				if rapid.Bool().Draw(t, "at a block's start") {
					n &^= indexBlockMask
				}
				x.cut(n)
				batches, positions, lasts = batches[:n], positions[:n], lasts[:n]
				if n > 0 {
					next, pos = lasts[n-1]+1, positions[n-1]+1
				} else {
					next, pos = 0, 0
				}
			case 3:
				from := rapid.IntRange(0, len(batches)).Draw(t, "from")
				to := rapid.IntRange(from, len(batches)).Draw(t, "to")
				got := x.view(from, to)
				if !slices.Equal(got, batches[from:to]) {
					t.Fatalf("step %d: view [%d, %d) differs", step, from, to)
				}
				if len(got) > 0 && cap(got) != len(got) {
					t.Fatalf("step %d: view [%d, %d) has room past its end", step, from, to)
				}
				views = append(views, view{got, slices.Clone(batches[from:to])})
				if c := x.appendTo([]*record.Batch{nil}, from, to); !slices.Equal(c[1:], batches[from:to]) || c[0] != nil {
					t.Fatalf("step %d: appendTo [%d, %d) differs", step, from, to)
				}
			case 4:
				off := rapid.Int64Range(-1, next+2).Draw(t, "offset")
				want, _ := slices.BinarySearch(lasts, off)
				if got := x.search(off); got != want {
					t.Fatalf("step %d: search(%d) = %d, want %d", step, off, got, want)
				}
				from := rapid.IntRange(0, len(batches)).Draw(t, "seek from")
				wantSeek := from
				for wantSeek < len(lasts) && lasts[wantSeek] < off {
					wantSeek++
				}
				if got := x.seek(from, off); got != wantSeek {
					t.Fatalf("step %d: seek(%d, %d) = %d, want %d", step, from, off, got, wantSeek)
				}
				if tail, base := x.lastBlock(); base+len(tail) != len(lasts) || !slices.Equal(tail, batches[base:]) {
					t.Fatalf("step %d: the last block holds entries %d.. (%d), want up to %d", step, base, len(tail), len(lasts))
				}
				var walked []*record.Batch
				stop := rapid.IntRange(0, 5).Draw(t, "stop")
				done := x.each(want, func(b *record.Batch) bool {
					if len(walked) == stop {
						return false
					}
					walked = append(walked, b)
					return true
				})
				w := batches[want:]
				if len(w) > stop {
					w = w[:stop]
				}
				if !slices.Equal(walked, w) || done != (len(batches)-want <= stop) {
					t.Fatalf("step %d: each from %d (stop after %d) walked %d, done %v", step, want, stop, len(walked), done)
				}
				// eachBefore stops at the first batch starting at upTo or
				// after, as if f had said stop there.
				upTo := rapid.Int64Range(-1, next+2).Draw(t, "up to")
				walked = walked[:0]
				done = x.eachBefore(want, upTo, func(b *record.Batch) bool {
					if len(walked) == stop {
						return false
					}
					walked = append(walked, b)
					return true
				})
				w = batches[want:]
				end := len(w)
				for i, b := range w {
					if b.BaseOffset >= upTo {
						end = i
						break
					}
				}
				wantDone := end == len(w) && end <= stop
				if w = w[:min(end, stop)]; !slices.Equal(walked, w) || done != wantDone {
					t.Fatalf("step %d: eachBefore from %d up to %d (stop after %d) walked %d, done %v", step, want, upTo, stop, len(walked), done)
				}
			}
			if x.len() != len(batches) {
				t.Fatalf("step %d: len %d, want %d", step, x.len(), len(batches))
			}
			for i := range batches {
				if x.batch(i) != batches[i] || x.position(i) != int64(positions[i]) || x.last(i) != lasts[i] {
					t.Fatalf("step %d: entry %d differs", step, i)
				}
			}
			for i, v := range views {
				if !slices.Equal(v.got, v.want) {
					t.Fatalf("step %d: view %d changed after it was handed out", step, i)
				}
			}
			for i, e := range earliers {
				if got := e.x.appendTo(nil, 0, e.x.len()); !slices.Equal(got, e.want) {
					t.Fatalf("step %d: index %d a prefix was taken from changed after", step, i)
				}
			}
		}
	})
}

// A cut at a block's start leaves an empty last block: searches below it
// still find their batch.
func TestBatchIndexSearchAfterACutAtABlockStart(t *testing.T) {
	var x batchIndex
	for i := range indexBlockLen + 10 {
		x.add(&record.Batch{BaseOffset: int64(i)}, uint32(i))
	}
	x.cut(indexBlockLen)
	for _, off := range []int64{0, 7, indexBlockLen - 1} {
		if got := x.search(off); got != int(off) {
			t.Fatalf("search(%d) = %d, want %d", off, got, off)
		}
	}
	if got := x.search(indexBlockLen); got != indexBlockLen {
		t.Fatalf("search past the end = %d, want %d", got, indexBlockLen)
	}
}
