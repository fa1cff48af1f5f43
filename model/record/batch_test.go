package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

func drawRecords(t *rapid.T) []Record {
	recs := make([]Record, rapid.IntRange(1, 20).Draw(t, "records"))
	for i := range recs {
		recs[i] = Record{
			Key:       rapid.StringN(0, 12, -1).Draw(t, fmt.Sprintf("key%d", i)),
			HasKey:    rapid.Bool().Draw(t, fmt.Sprintf("has_key%d", i)),
			Value:     rapid.StringN(0, 40, -1).Draw(t, fmt.Sprintf("value%d", i)),
			Tombstone: rapid.IntRange(0, 9).Draw(t, fmt.Sprintf("tombstone%d", i)) == 0,
			Timestamp: rapid.Int64Range(0, 1<<40).Draw(t, fmt.Sprintf("ts%d", i)),
		}
	}
	return recs
}

// TestDecodeGivesBackTheBatch: a batch (built, stamped, compacted,
// compressed or not) gives back the records it was built from, whole or
// any run of them, and its wire form decodes to a batch equal in every
// field, with the same records, so that a decoded copy and the original are
// interchangeable (a restarted replica reuses batches it held in memory
// when its file has their bytes).
func TestDecodeGivesBackTheBatch(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		codec := CompressionNone
		if rapid.Bool().Draw(t, "gzip") {
			codec = CompressionGzip
		}
		p := Producer{ID: NoProducer}
		if rapid.Bool().Draw(t, "idempotent") {
			p = Producer{ID: rapid.Int64Range(0, 1<<40).Draw(t, "pid"), Epoch: int16(rapid.IntRange(0, 100).Draw(t, "epoch")),
				BaseSequence: int32(rapid.IntRange(0, 1<<30).Draw(t, "seq"))}
		}
		drawn := drawRecords(t)
		// want is what the batch holds: each record numbered, a null key
		// or value without bytes.
		want := slices.Clone(drawn)
		for i := range want {
			want[i].OffsetDelta = int32(i)
			if !want[i].HasKey {
				want[i].Key = ""
			}
			if want[i].Tombstone {
				want[i].Value = ""
			}
		}
		b := New(drawn, p, false, codec)
		if rapid.Bool().Draw(t, "stamped") {
			b = b.Stamped(rapid.Int64Range(0, 1<<50).Draw(t, "base"), int32(rapid.IntRange(-1, 1000).Draw(t, "leader_epoch")))
		}
		if rapid.Bool().Draw(t, "compacted") {
			drop := rapid.IntRange(0, 3).Draw(t, "drop_every")
			// By offset and by key, as the cleaner keeps a key's latest.
			keep := func(off int64, key []byte, hasKey bool) bool {
				return drop == 0 || off%int64(drop+1) != 0 || (hasKey && len(key)%2 == 1)
			}
			if c := b.Compacted(keep); c != nil {
				want = slices.DeleteFunc(want, func(r Record) bool { return !keep(b.BaseOffset+int64(r.OffsetDelta), []byte(r.Key), r.HasKey) })
				b = c
			}
		}
		if b.RecordCount() != len(want) || b.Thinned() != (len(want) < b.Count()) {
			t.Fatalf("RecordCount %d, Thinned %v: want %d of %d", b.RecordCount(), b.Thinned(), len(want), b.Count())
		}
		if got := b.Records(); !reflect.DeepEqual(got, want) {
			t.Fatalf("records differ:\n got %+v\nwant %+v", got, want)
		}
		lo := rapid.IntRange(0, len(want)).Draw(t, "lo")
		hi := rapid.IntRange(lo, len(want)).Draw(t, "hi")
		i := lo
		b.PolledRecords(lo, hi, func(off int64, key []byte, hasKey bool, value []byte) {
			w := want[i]
			if off != b.BaseOffset+int64(w.OffsetDelta) || string(key) != w.Key || hasKey != w.HasKey || string(value) != w.Value {
				t.Fatalf("polled record %d: %d %q %v %q, want %+v at base %d", i, off, key, hasKey, value, w, b.BaseOffset)
			}
			i++
		})
		if i != hi {
			t.Fatalf("PolledRecords(%d, %d) gave %d records", lo, hi, i-lo)
		}
		wire := b.Wire()
		if len(wire) != b.SizeBytes() {
			t.Fatalf("wire is %d bytes, SizeBytes says %d", len(wire), b.SizeBytes())
		}
		if enc := b.Encode(nil); !bytes.Equal(enc, wire) {
			t.Fatalf("Encode and Wire differ")
		}
		d, n, err := Decode(append(wire, 7, 7, 7))
		if err != nil || n != len(wire) {
			t.Fatalf("decode: %v, %d of %d bytes", err, n, len(wire))
		}
		// (DeepEqual follows the wire form's first byte only: its bytes
		// are compared whole.)
		if !reflect.DeepEqual(d, b) || !bytes.Equal(d.Wire(), wire) {
			t.Fatalf("decoded batch differs:\n got %+v\nwant %+v", d, b)
		}
		if got := d.Records(); !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded records differ:\n got %+v\nwant %+v", got, want)
		}
	})
}

func TestWireFollowsExportedHeaderFields(t *testing.T) {
	b := New([]Record{{Value: "v"}}, Producer{ID: NoProducer}, false, CompressionNone).Stamped(5, 1)
	c := *b
	c.BaseOffset, c.PartitionLeaderEpoch = 9, 3 // a caller may set them directly
	d, _, err := Decode(c.Wire())
	if err != nil || d.BaseOffset != 9 || d.PartitionLeaderEpoch != 3 {
		t.Fatalf("decoded %+v, %v: want base 9, epoch 3", d, err)
	}
	if d2, _, _ := Decode(b.Wire()); d2.BaseOffset != 5 {
		t.Fatalf("the original's wire changed: base %d", d2.BaseOffset)
	}
}

func TestDecodeFindsDamage(t *testing.T) {
	b := New([]Record{{Key: "k", HasKey: true, Value: "value"}}, Producer{ID: NoProducer}, false, CompressionGzip).Stamped(0, 0)
	wire := b.Wire()
	if _, _, err := Decode(wire[:len(wire)-1]); !errors.Is(err, ErrTruncated) {
		t.Fatalf("a short batch: %v, want ErrTruncated", err)
	}
	for i := HeaderBytes - 40; i < len(wire); i++ { // every byte the CRC covers
		bad := bytes.Clone(wire)
		bad[i] ^= 0x10
		if _, _, err := Decode(bad); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("byte %d flipped: %v, want ErrCorrupt", i, err)
		}
	}
}

// A leader stamps the batch a producer sent in place, once; a second stamp
// (a retry the log holds already) copies, and leaves the first log's batch
// as it was.
func TestStampIsInPlaceOnceThenCopies(t *testing.T) {
	b := New([]Record{{Key: "k", HasKey: true, Value: "v"}}, Producer{ID: 7, Epoch: 1, BaseSequence: 3}, false, CompressionNone)
	crc := b.CRC()
	first := b.Stamp(100, 5)
	if first != b {
		t.Fatal("the first stamp copied the batch")
	}
	second := first.Stamp(200, 6)
	if second == first {
		t.Fatal("the second stamp changed the batch in place")
	}
	for _, c := range []struct {
		b     *Batch
		base  int64
		epoch int32
	}{{first, 100, 5}, {second, 200, 6}} {
		d, _, err := Decode(c.b.Wire())
		if err != nil || d.BaseOffset != c.base || d.PartitionLeaderEpoch != c.epoch || c.b.BaseOffset != c.base || c.b.PartitionLeaderEpoch != c.epoch {
			t.Fatalf("stamped at %d/%d: fields %d/%d, wire decodes to %+v, %v", c.base, c.epoch, c.b.BaseOffset, c.b.PartitionLeaderEpoch, d, err)
		}
		if d.CRC() != crc || d.ProducerID != 7 || d.BaseSequence != 3 {
			t.Fatalf("a stamp changed what the CRC covers: %+v", d)
		}
	}
	if third := second.Stamp(300, 7); third == second {
		t.Fatal("a copy a log holds was stamped in place")
	}
}

func TestVarintSizeIsPutVarintsLength(t *testing.T) {
	var buf [binary.MaxVarintLen64]byte
	check := func(v int64) {
		if got, want := varintSize(v), binary.PutVarint(buf[:], v); got != want {
			t.Fatalf("varintSize(%d) = %d, PutVarint writes %d", v, got, want)
		}
	}
	for shift := range 64 {
		for _, d := range []int64{-1, 0, 1} {
			check(int64(1)<<shift + d)
			check(-(int64(1) << shift) + d)
		}
	}
	check(math.MinInt64)
	check(math.MaxInt64)
}

func TestVarintIsBinaryVarint(t *testing.T) {
	var buf [binary.MaxVarintLen64]byte
	for _, v := range []int64{0, 1, -1, 63, -64, 64, -65, 1 << 20, -(1 << 40), math.MaxInt64, math.MinInt64} {
		n := binary.PutVarint(buf[:], v)
		for _, b := range [][]byte{buf[:n], append(buf[:n:n], 0x7f)} {
			if got, k := varint(b); got != v || k != n {
				t.Fatalf("varint(%x) = %d, %d; want %d, %d", b, got, k, v, n)
			}
		}
	}
	if _, k := varint(nil); k != 0 {
		t.Fatalf("varint of nothing read %d bytes", k)
	}
}
