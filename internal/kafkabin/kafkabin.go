// Package kafkabin writes and reads the fixed-width big-endian fields of
// Kafka's internal-topic records (the legacy, non-flexible layout of the
// generated *Key/*Value classes: int8/16/32/64, and strings as an int16
// length then bytes), as the group coordinator's __consumer_offsets and the
// transaction coordinator's __transaction_state records use them.
package kafkabin

import (
	"encoding/binary"
	"errors"

	"kafkasim/model/proto"
)

// Writer appends fields to B.
type Writer struct{ B []byte }

func (w *Writer) I8(v int8)    { w.B = append(w.B, byte(v)) }
func (w *Writer) I16(v int16)  { w.B = binary.BigEndian.AppendUint16(w.B, uint16(v)) }
func (w *Writer) I32(v int32)  { w.B = binary.BigEndian.AppendUint32(w.B, uint32(v)) }
func (w *Writer) I64(v int64)  { w.B = binary.BigEndian.AppendUint64(w.B, uint64(v)) }
func (w *Writer) Str(s string) { w.I16(int16(len(s))); w.B = append(w.B, s...) }

// Partitions writes an int32 count, then each partition's topic and index.
func (w *Writer) Partitions(ps []proto.TopicPartition) {
	w.I32(int32(len(ps)))
	for _, p := range ps {
		w.Str(p.Topic)
		w.I32(p.Partition)
	}
}

// Reader reads fields from the front of B; a short or malformed record
// sets Err (ErrShort), after which every read returns the zero value.
type Reader struct {
	B   []byte
	Err error
}

// ErrShort is a record that ends before its fields do.
var ErrShort = errors.New("record too short")

// Take returns the next n bytes.
func (r *Reader) Take(n int) []byte {
	if r.Err != nil || n < 0 || len(r.B) < n {
		r.Err = ErrShort
		return nil
	}
	v := r.B[:n]
	r.B = r.B[n:]
	return v
}

func (r *Reader) I8() int8 {
	if b := r.Take(1); b != nil {
		return int8(b[0])
	}
	return 0
}

func (r *Reader) I16() int16 {
	if b := r.Take(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *Reader) I32() int32 {
	if b := r.Take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *Reader) I64() int64 {
	if b := r.Take(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

func (r *Reader) Str() string { return string(r.Take(int(r.I16()))) }

// Count reads an int32 count of items that each take at least one byte: a
// negative one, or one above the bytes left, sets Err.
func (r *Reader) Count() int {
	n := r.I32()
	if r.Err != nil || n < 0 || int(n) > len(r.B) {
		r.Err = ErrShort
		return 0
	}
	return int(n)
}

// Partitions reads what Writer.Partitions wrote (nil for none).
func (r *Reader) Partitions() []proto.TopicPartition {
	n := r.Count()
	var ps []proto.TopicPartition
	for i := 0; r.Err == nil && i < n; i++ {
		ps = append(ps, proto.TopicPartition{Topic: r.Str(), Partition: r.I32()})
	}
	return ps
}
