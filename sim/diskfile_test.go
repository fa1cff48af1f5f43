package sim

import (
	"bytes"
	"testing"
	"time"
	"unsafe"

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

// A run keeps an extent for every batch on every replica's disk: a field
// added carelessly costs six million of them an hour.
func TestExtentTakesSixteenBytes(t *testing.T) {
	if s := unsafe.Sizeof(extent{}); s != 16 {
		t.Fatalf("extent takes %d bytes, want 16", s)
	}
}

// Writes larger than an extent holds (cut in pieces), overwrites, bit flips
// and truncations anywhere keep the bytes a plain slice says, and a handed
// over copy keeps its own bytes while the original grows on.
func TestFileKeepsItsBytesAcrossPiecesAndBlocks(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := &file{}
		var want []byte
		var handed *file
		var handedWant []byte
		fill := byte(1)
		for range rapid.IntRange(1, 60).Draw(t, "ops") {
			switch rapid.IntRange(0, 19).Draw(t, "op") {
			case 0: // a write larger than an extent
				n := rapid.IntRange(extentMaxBytes-3, extentMaxBytes+5).Draw(t, "large")
				data := bytes.Repeat([]byte{fill}, n)
				fill++
				f.add(data)
				want = append(want, data...)
			case 1: // an overwrite, possibly past the end
				off := rapid.IntRange(0, len(want)+10).Draw(t, "off")
				data := bytes.Repeat([]byte{fill}, rapid.IntRange(1, 40).Draw(t, "n"))
				fill++
				f.write(int64(off), data)
				for len(want) < off {
					want = append(want, 0)
				}
				want = append(want[:off:off], append(data, want[min(off+len(data), len(want)):]...)...)
			case 2:
				if len(want) > 0 {
					to := rapid.IntRange(0, len(want)).Draw(t, "to")
					f.truncate(int64(to))
					want = want[:to]
				}
			case 3:
				if len(want) > 0 {
					off := rapid.IntRange(0, len(want)-1).Draw(t, "flip")
					f.flip(int64(off), 4)
					want[off] ^= 4
				}
			case 4:
				handed, handedWant = f.handOver(), bytes.Clone(want)
				f, handed = handed, f // the copy grows on; the original must not change
			default: // a batch-sized append
				data := bytes.Repeat([]byte{fill}, rapid.IntRange(1, 200).Draw(t, "small"))
				fill++
				f.add(data)
				want = append(want, data...)
			}
			if f.size != int64(len(want)) || !bytes.Equal(f.read(0, len(want)), want) {
				t.Fatalf("file holds %d bytes unlike the %d written", f.size, len(want))
			}
			if handed != nil && !bytes.Equal(handed.read(0, int(handed.size)), handedWant) {
				t.Fatal("the copy handed over changed")
			}
			for i := 1; i < f.n; i++ {
				if f.end(i) <= f.end(i-1) || f.end(i)-f.end(i-1) > extentMaxBytes {
					t.Fatalf("extent %d ends at %d after %d", i, f.end(i), f.end(i-1))
				}
			}
		}
	})
}
