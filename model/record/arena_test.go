package record

import (
	"bytes"
	"cmp"
	"slices"
	"testing"
	"unsafe"

	"pgregory.net/rapid"
)

// Batches carved from an arena are the batches New builds, byte for byte,
// and stay so while later batches are carved next to them and earlier ones
// are stamped (in place, as a leader does) — across the arena's blocks,
// with batches larger than it carves.
func TestArenaBuildsWhatNewBuilds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var arena Arena
		var carved, built []*Batch
		for range rapid.IntRange(1, 300).Draw(t, "batches") {
			records := drawRecords(t)
			if rapid.IntRange(0, 9).Draw(t, "large") == 0 {
				records[0].Value = string(bytes.Repeat([]byte("v"), rapid.IntRange(1, 2*arenaBytesLarge).Draw(t, "large_value")))
			}
			codec := CompressionNone
			if rapid.IntRange(0, 4).Draw(t, "gzip") == 0 {
				codec = CompressionGzip
			}
			p := Producer{ID: NoProducer}
			c := arena.New(slices.Clone(records), p, false, codec)
			b := New(slices.Clone(records), p, false, codec)
			if !bytes.Equal(c.Wire(), b.Wire()) {
				t.Fatalf("carved batch %x, New's %x", c.Wire(), b.Wire())
			}
			if codec == CompressionNone && len(c.Wire()) != cap(c.Wire()) {
				t.Fatalf("carved wire form of %d bytes has room for %d: an append would write past it", len(c.Wire()), cap(c.Wire()))
			}
			carved, built = append(carved, c), append(built, b)
			if k := rapid.IntRange(-1, len(carved)-1).Draw(t, "stamp"); k >= 0 && !carved[k].stamped {
				base, epoch := rapid.Int64Range(0, 1<<40).Draw(t, "base"), int32(rapid.IntRange(0, 100).Draw(t, "epoch"))
				carved[k].Stamp(base, epoch)
				built[k].Stamp(base, epoch)
			}
		}
		type span struct{ from, to uintptr }
		var spans []span
		for i, c := range carved {
			if !bytes.Equal(c.Wire(), built[i].Wire()) {
				t.Fatalf("batch %d changed once others were carved: %x, want %x", i, c.Wire(), built[i].Wire())
			}
			w := c.Wire()
			from := uintptr(unsafe.Pointer(unsafe.SliceData(w)))
			spans = append(spans, span{from, from + uintptr(cap(w))})
		}
		// No two batches' memory overlaps, not even in bytes both hold
		// equal (a record ends in a zero, a header starts with one).
		slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.from, b.from) })
		for i := 1; i < len(spans); i++ {
			if spans[i].from < spans[i-1].to {
				t.Fatalf("two batches' wire forms overlap: %x..%x and %x..%x", spans[i-1].from, spans[i-1].to, spans[i].from, spans[i].to)
			}
		}
	})
}

// A run keeps every batch; a field added or reordered carelessly costs
// every one of them.
func TestBatchSize(t *testing.T) {
	if s := unsafe.Sizeof(Batch{}); s != 48 {
		t.Fatalf("Batch takes %d bytes, want 48", s)
	}
}
