package txn

import (
	"encoding/binary"
	"errors"
	"time"

	"kafkasim/model/proto"
)

// The records of __transaction_state, after Kafka's TransactionLog
// (TransactionLogKey, TransactionLogValue): the key is a version (0) and
// the transactional id; the value the whole TransactionMetadata as a
// transit leaves it. The topic is compacted: the newest value per id is
// its state; a tombstone (an expired id) deletes it.

const (
	keyVersion   int16 = 0
	valueVersion int16 = 1
)

type writer struct{ b []byte }

func (w *writer) i8(v int8)    { w.b = append(w.b, byte(v)) }
func (w *writer) i16(v int16)  { w.b = binary.BigEndian.AppendUint16(w.b, uint16(v)) }
func (w *writer) i32(v int32)  { w.b = binary.BigEndian.AppendUint32(w.b, uint32(v)) }
func (w *writer) i64(v int64)  { w.b = binary.BigEndian.AppendUint64(w.b, uint64(v)) }
func (w *writer) str(s string) { w.i16(int16(len(s))); w.b = append(w.b, s...) }

type reader struct {
	b   []byte
	err error
}

var errShort = errors.New("txn: record too short")

func (r *reader) take(n int) []byte {
	if r.err != nil || n < 0 || len(r.b) < n {
		r.err = errShort
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *reader) i8() int8 {
	if b := r.take(1); b != nil {
		return int8(b[0])
	}
	return 0
}

func (r *reader) i16() int16 {
	if b := r.take(2); b != nil {
		return int16(binary.BigEndian.Uint16(b))
	}
	return 0
}

func (r *reader) i32() int32 {
	if b := r.take(4); b != nil {
		return int32(binary.BigEndian.Uint32(b))
	}
	return 0
}

func (r *reader) i64() int64 {
	if b := r.take(8); b != nil {
		return int64(binary.BigEndian.Uint64(b))
	}
	return 0
}

func (r *reader) str() string { return string(r.take(int(r.i16()))) }

// encodeKey is TransactionLogKey.
func encodeKey(id string) string {
	w := writer{}
	w.i16(keyVersion)
	w.str(id)
	return string(w.b)
}

// encodeValue is TransactionLogValue: times in milliseconds.
func encodeValue(t transit) string {
	w := writer{}
	w.i16(valueVersion)
	w.i64(t.ProducerID)
	w.i64(t.PrevProducerID)
	w.i64(t.NextProducerID)
	w.i16(t.ProducerEpoch)
	w.i16(t.LastProducerEpoch)
	w.i32(int32(t.Timeout.Milliseconds()))
	w.i8(int8(t.State))
	w.i32(int32(len(t.Partitions)))
	for _, p := range t.Partitions {
		w.str(p.Topic)
		w.i32(p.Partition)
	}
	w.i64(ms(t.StartTime))
	w.i64(ms(t.LastUpdate))
	return string(w.b)
}

func ms(d time.Duration) int64 {
	if d < 0 {
		return -1
	}
	return d.Milliseconds()
}

func fromMs(v int64) time.Duration {
	if v < 0 {
		return -1
	}
	return time.Duration(v) * time.Millisecond
}

// decodeRecord reads a record of the topic: its transactional id, and
// its value (ok false: a tombstone).
func decodeRecord(key, value []byte) (id string, t transit, ok bool, err error) {
	k := reader{b: key}
	if v := k.i16(); v != keyVersion {
		return "", t, false, errors.New("txn: unknown key version")
	}
	id = k.str()
	if k.err != nil {
		return "", t, false, k.err
	}
	if len(value) == 0 {
		return id, t, false, nil
	}
	r := reader{b: value}
	r.i16()
	t.ProducerID, t.PrevProducerID, t.NextProducerID = r.i64(), r.i64(), r.i64()
	t.ProducerEpoch, t.LastProducerEpoch = r.i16(), r.i16()
	t.Timeout = time.Duration(r.i32()) * time.Millisecond
	t.State = State(r.i8())
	n := r.i32()
	if r.err == nil && (n < 0 || int(n) > len(r.b)) {
		r.err = errShort
	}
	for i := int32(0); r.err == nil && i < n; i++ {
		t.Partitions = append(t.Partitions, proto.TopicPartition{Topic: r.str(), Partition: r.i32()})
	}
	t.StartTime, t.LastUpdate = fromMs(r.i64()), fromMs(r.i64())
	return id, t, true, r.err
}

// fromRecord is the metadata a loaded record stands for.
func fromRecord(id string, t transit) *txnMetadata {
	m := &txnMetadata{id: id, pending: noState}
	m.pending = t.State
	m.completeTransitionTo(t)
	m.prevProducerID = t.PrevProducerID
	return m
}
