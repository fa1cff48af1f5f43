package record

// TEMPORARY (txngroup branch): replaced by the partition side's control
// batches at merge.

// NoSequence is a batch without sequence numbers.
const NoSequence int32 = -1

// NewEndTxnMarker is a transaction's commit or abort marker.
func NewEndTxnMarker(pid int64, epoch int16, committed bool, coordinatorEpoch int32, timestampMs int64) *Batch {
	typ := "\x00\x00\x00\x00"
	if committed {
		typ = "\x00\x00\x00\x01"
	}
	val := string([]byte{0, 0, byte(coordinatorEpoch >> 24), byte(coordinatorEpoch >> 16), byte(coordinatorEpoch >> 8), byte(coordinatorEpoch)})
	b := New([]Record{{Key: typ, HasKey: true, Value: val, Timestamp: timestampMs}}, Producer{ID: pid, Epoch: epoch, BaseSequence: NoSequence}, true, CompressionNone)
	b.Control = true
	b.putHeader(b.wire)
	return b
}

// EndTxnMarker reads a control batch's marker.
func (b *Batch) EndTxnMarker() (committed bool, coordinatorEpoch int32, ok bool) {
	if !b.Control {
		return false, 0, false
	}
	rs := b.Records()
	if len(rs) != 1 || len(rs[0].Key) != 4 || len(rs[0].Value) != 6 {
		return false, 0, false
	}
	v := rs[0].Value
	return rs[0].Key[3] == 1, int32(v[2])<<24 | int32(v[3])<<16 | int32(v[4])<<8 | int32(v[5]), true
}
