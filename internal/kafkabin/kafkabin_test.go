package kafkabin

import (
	"slices"
	"testing"

	"kafkasim/model/proto"
)

// What Writer writes, Reader reads back, big-endian; a record cut short
// sets ErrShort and reads zeros after.
func TestRoundTripAndShortRecords(t *testing.T) {
	w := Writer{}
	w.I8(-3)
	w.I16(-2)
	w.I32(1 << 20)
	w.I64(-1 << 40)
	w.Str("pay-0")
	ps := []proto.TopicPartition{{Topic: "orders", Partition: 2}, {Topic: "b", Partition: 0}}
	w.Partitions(ps)
	if !slices.Equal(w.B[1:3], []byte{0xff, 0xfe}) {
		t.Fatalf("int16 -2 written as % x", w.B[1:3])
	}
	r := Reader{B: w.B}
	if r.I8() != -3 || r.I16() != -2 || r.I32() != 1<<20 || r.I64() != -1<<40 || r.Str() != "pay-0" ||
		!slices.Equal(r.Partitions(), ps) || r.Err != nil || len(r.B) != 0 {
		t.Fatalf("read back wrong: err %v, %d bytes left", r.Err, len(r.B))
	}
	short := Reader{B: w.B[:5]}
	short.I8()
	short.I16()
	if v := short.I32(); v != 0 || short.Err != ErrShort || short.Str() != "" {
		t.Fatalf("short record: %d, %v", v, short.Err)
	}
	huge := Writer{}
	huge.I32(1000) // a count past the bytes left
	if r := (Reader{B: huge.B}); r.Partitions() != nil || r.Err != ErrShort {
		t.Fatalf("a count past the record: %v", r.Err)
	}
}
