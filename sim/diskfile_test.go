package sim

import (
	"bytes"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// Extents are numbered through the blocks without gaps or overlaps: each
// next extent is the next place of its block, or the first of the next.
func TestExtentBlocksNumberEveryExtentOnce(t *testing.T) {
	pj, pk := 0, -1
	for i := range 200_000 {
		j, k := blockOf(i)
		switch {
		case k < 0 || k >= blockLen(j):
			t.Fatalf("extent %d: place %d outside block %d of %d", i, k, j, blockLen(j))
		case j == pj && k == pk+1:
		case j == pj+1 && k == 0 && pk == blockLen(pj)-1:
		default:
			t.Fatalf("extent %d at block %d place %d follows block %d place %d", i, j, k, pj, pk)
		}
		pj, pk = j, k
	}
	if blockLen(pj) != maxBlock {
		t.Fatalf("blocks grow to %d extents, want at most %d", blockLen(pj), maxBlock)
	}
}

// A file of thousands of small writes (a log segment's batches) spans the
// doubling blocks and the fixed-size ones: truncations, fsyncs and power
// losses there keep the bytes an oracle says.
func TestLongFilesKeepTheirBytes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		o := DefaultOptions(Seed(rapid.Uint64().Draw(t, "seed")))
		o.Disk.WritebackDelay = 0
		w, disk, _ := diskProbeWorld(o)
		var cache, durable []byte
		var fsynced int // cache length covered by the last fsync issued
		for range rapid.IntRange(1, 6).Draw(t, "rounds") {
			for range rapid.IntRange(0, 3000).Draw(t, "appends") {
				data := []byte{byte(len(cache)), byte(len(cache) >> 8), byte(len(cache) >> 16)}
				if err := disk.WriteOwned("seg", int64(len(cache)), data); err != nil {
					t.Fatal(err)
				}
				cache = append(cache, data...)
			}
			if len(cache) > 0 && rapid.Bool().Draw(t, "truncate") {
				to := rapid.IntRange(0, len(cache)).Draw(t, "to")
				if err := disk.Truncate("seg", int64(to)); err != nil {
					t.Fatal(err)
				}
				cache = cache[:to]
			}
			if rapid.Bool().Draw(t, "fsync") {
				disk.Fsync("seg", nil)
				w.RunFor(time.Hour) // after every write's device time

				durable = append([]byte(nil), cache...)
				fsynced = len(cache)
			}
			if rapid.Bool().Draw(t, "power_loss") {
				w.Crash(0, true)
				w.Restart(0)
				w.RunFor(0)
				cache = append([]byte(nil), durable...)
			}
			got, _ := disk.ReadFile("seg")
			if !bytes.Equal(got, cache) {
				t.Fatalf("file holds %d bytes, want %d (first difference at %d; last fsync at %d)", len(got), len(cache), firstDifference(got, cache), fsynced)
			}
		}
	})
}
