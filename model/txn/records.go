package txn

import (
	"errors"
	"time"

	"kafkasim/internal/kafkabin"
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

// encodeKey is TransactionLogKey.
func encodeKey(id string) string {
	w := kafkabin.Writer{}
	w.I16(keyVersion)
	w.Str(id)
	return string(w.B)
}

// encodeValue is TransactionLogValue: times in milliseconds.
func encodeValue(t transit) string {
	w := kafkabin.Writer{}
	w.I16(valueVersion)
	w.I64(t.ProducerID)
	w.I64(t.PrevProducerID)
	w.I64(t.NextProducerID)
	w.I16(t.ProducerEpoch)
	w.I16(t.LastProducerEpoch)
	w.I32(int32(t.Timeout.Milliseconds()))
	w.I8(int8(t.State))
	w.Partitions(t.Partitions)
	w.I64(ms(t.StartTime))
	w.I64(ms(t.LastUpdate))
	return string(w.B)
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
	k := kafkabin.Reader{B: key}
	if v := k.I16(); v != keyVersion {
		return "", t, false, errors.New("txn: unknown key version")
	}
	id = k.Str()
	if k.Err != nil {
		return "", t, false, k.Err
	}
	if len(value) == 0 {
		return id, t, false, nil
	}
	r := kafkabin.Reader{B: value}
	r.I16()
	t.ProducerID, t.PrevProducerID, t.NextProducerID = r.I64(), r.I64(), r.I64()
	t.ProducerEpoch, t.LastProducerEpoch = r.I16(), r.I16()
	t.Timeout = time.Duration(r.I32()) * time.Millisecond
	t.State = State(r.I8())
	t.Partitions = r.Partitions()
	t.StartTime, t.LastUpdate = fromMs(r.I64()), fromMs(r.I64())
	return id, t, true, r.Err
}

// fromRecord is the metadata a loaded record stands for.
func fromRecord(id string, t transit) *txnMetadata {
	m := &txnMetadata{id: id, pending: noState}
	m.pending = t.State
	m.completeTransitionTo(t)
	m.prevProducerID = t.PrevProducerID
	return m
}
