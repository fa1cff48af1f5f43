package record

import (
	"encoding/binary"
)

// Control batches: the commit and abort markers a transaction coordinator
// has partition leaders append when a transaction ends (Kafka's
// EndTransactionMarker, written by MemoryRecords.withEndTransactionMarker).
// A control batch is transactional and has the control attribute, the
// producer's id and epoch and no sequence; its one record's key is the
// control record type (version 0, then type: 0 abort, 1 commit) and its
// value the marker (version 0, then the coordinator epoch). Consumers never
// hand its record to the application (CompletedFetch skips control
// batches), but its offset counts.

// ControlType is a control record's type (Kafka's ControlRecordType).
type ControlType int16

// The control record types of transaction markers.
const (
	ControlAbort  ControlType = 0
	ControlCommit ControlType = 1
	// ControlUnknown is what ControlTypeOf says of a batch that is no
	// marker.
	ControlUnknown ControlType = -1
)

// String is Kafka's spelling.
func (t ControlType) String() string {
	switch t {
	case ControlAbort:
		return "ABORT"
	case ControlCommit:
		return "COMMIT"
	}
	return "UNKNOWN"
}

// NewControl builds the end-transaction marker batch of producer (id,
// epoch): commit or abort, written by a coordinator of coordinatorEpoch,
// its record stamped timestamp (ms).
func NewControl(producerID int64, producerEpoch int16, committed bool, coordinatorEpoch int32, timestamp int64) *Batch {
	t := ControlAbort
	if committed {
		t = ControlCommit
	}
	var key [4]byte
	binary.BigEndian.PutUint16(key[2:], uint16(t)) // version 0, type
	var value [6]byte
	binary.BigEndian.PutUint32(value[2:], uint32(coordinatorEpoch)) // version 0, epoch
	r := []Record{{Key: string(key[:]), HasKey: true, Value: string(value[:]), Timestamp: timestamp}}
	b := &Batch{PartitionLeaderEpoch: -1, ProducerID: producerID, ProducerEpoch: producerEpoch, BaseSequence: -1,
		Transactional: true, Control: true}
	b.setWire(b.encodeWire(nil, r, timestamp, timestamp))
	b.seal()
	return b
}

// Marker reads a control batch's end-transaction marker: its type and the
// coordinator epoch. ok is false for a batch that is no control batch, an
// empty one (the cleaner removed its record) or one whose key is not a
// marker's.
func (b *Batch) Marker() (t ControlType, coordinatorEpoch int32, ok bool) {
	if !b.Control || b.RecordCount() == 0 {
		return ControlUnknown, -1, false
	}
	t, coordinatorEpoch = ControlUnknown, -1
	b.PolledRecords(0, 1, func(_ int64, key []byte, _ bool, value []byte) {
		if len(key) < 4 {
			return
		}
		t = ControlType(int16(binary.BigEndian.Uint16(key[2:])))
		if len(value) >= 6 {
			coordinatorEpoch = int32(binary.BigEndian.Uint32(value[2:]))
		}
	})
	if t != ControlAbort && t != ControlCommit {
		return ControlUnknown, -1, false
	}
	return t, coordinatorEpoch, true
}

// IsCommit reports a commit marker.
func (b *Batch) IsCommit() bool { t, _, ok := b.Marker(); return ok && t == ControlCommit }

// IsAbort reports an abort marker.
func (b *Batch) IsAbort() bool { t, _, ok := b.Marker(); return ok && t == ControlAbort }
