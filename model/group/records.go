package group

import (
	"encoding/binary"
	"errors"
	"time"

	"kafkasim/model/proto"
)

// The records of __consumer_offsets, keyed as Kafka's
// (GroupCoordinatorRecordHelpers, the generated *Key/*Value classes): a
// big-endian int16 record type first (the key's version in Kafka's legacy
// layout), then the key's fields; a value starts with its own version. A
// tombstone (a null value) deletes the key. The topic is compacted: every
// key names what it holds, so that the newest value per key is the state.
//
// Types 0 and 1 are offset commits, 2 a classic group's metadata, 3..8 the
// consumer protocol's (ConsumerGroupMetadata, ...PartitionMetadata,
// ...MemberMetadata, ...TargetAssignmentMetadata, ...TargetAssignmentMember,
// ...CurrentMemberAssignment), which the shard hands to its
// ConsumerProtocol untouched.
const (
	recordOffsetCommitLegacy int16 = 0
	recordOffsetCommit       int16 = 1
	recordGroupMetadata      int16 = 2
	recordConsumerFirst      int16 = 3
	recordConsumerLast       int16 = 8
)

// offsetKey is OffsetCommitKey.
type offsetKey struct {
	Group     string
	Topic     string
	Partition int32
}

// offsetValue is OffsetCommitValue: what Kafka keeps of a committed offset.
type offsetValue struct {
	Offset          int64
	LeaderEpoch     int32 // -1: unknown
	Metadata        string
	CommitTimestamp time.Duration // the coordinator's clock at the commit
	// seq orders the commit among the shard's records (not written: the
	// record's place in the log), so that a transaction's offsets
	// committed by its marker do not overwrite a later plain commit.
	seq int64
}

// groupValue is GroupMetadataValue: a classic group as its last completed
// rebalance left it.
type groupValue struct {
	ProtocolType string
	Generation   int32
	Protocol     string
	Leader       string
	Members      []memberValue
}

// memberValue is GroupMetadataValue.MemberMetadata: the member's
// subscription in the selected protocol and its assignment.
type memberValue struct {
	MemberID         string
	GroupInstanceID  string
	ClientID         string
	RebalanceTimeout time.Duration
	SessionTimeout   time.Duration
	Subscription     proto.ConsumerSubscription
	Assignment       []proto.TopicPartition
}

// writer appends Kafka-style fields.
type writer struct{ b []byte }

func (w *writer) i16(v int16)  { w.b = binary.BigEndian.AppendUint16(w.b, uint16(v)) }
func (w *writer) i32(v int32)  { w.b = binary.BigEndian.AppendUint32(w.b, uint32(v)) }
func (w *writer) i64(v int64)  { w.b = binary.BigEndian.AppendUint64(w.b, uint64(v)) }
func (w *writer) str(s string) { w.i16(int16(len(s))); w.b = append(w.b, s...) }
func (w *writer) partitions(ps []proto.TopicPartition) {
	w.i32(int32(len(ps)))
	for _, p := range ps {
		w.str(p.Topic)
		w.i32(p.Partition)
	}
}

// reader reads them back; a short or malformed record sets err.
type reader struct {
	b   []byte
	err error
}

var errShort = errors.New("group: record too short")

func (r *reader) take(n int) []byte {
	if r.err != nil || n < 0 || len(r.b) < n {
		r.err = errShort
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
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

func (r *reader) partitions() []proto.TopicPartition {
	n := r.i32()
	if r.err != nil || n < 0 || int(n) > len(r.b) {
		r.err = errShort
		return nil
	}
	var ps []proto.TopicPartition
	for range n {
		ps = append(ps, proto.TopicPartition{Topic: r.str(), Partition: r.i32()})
	}
	return ps
}

func (r *reader) count() int {
	n := r.i32()
	if r.err != nil || n < 0 || int(n) > len(r.b) {
		r.err = errShort
		return 0
	}
	return int(n)
}

// encodeOffsetKey is OffsetCommitKey (version 1).
func encodeOffsetKey(k offsetKey) string {
	w := writer{}
	w.i16(recordOffsetCommit)
	w.str(k.Group)
	w.str(k.Topic)
	w.i32(k.Partition)
	return string(w.b)
}

// encodeGroupKey is GroupMetadataKey (version 2).
func encodeGroupKey(group string) string {
	w := writer{}
	w.i16(recordGroupMetadata)
	w.str(group)
	return string(w.b)
}

// encodeOffsetValue is OffsetCommitValue (version 3).
func encodeOffsetValue(v offsetValue) string {
	w := writer{}
	w.i16(3)
	w.i64(v.Offset)
	w.i32(v.LeaderEpoch)
	w.str(v.Metadata)
	w.i64(v.CommitTimestamp.Milliseconds())
	return string(w.b)
}

// encodeGroupValue is GroupMetadataValue (version 3).
func encodeGroupValue(v groupValue) string {
	w := writer{}
	w.i16(3)
	w.str(v.ProtocolType)
	w.i32(v.Generation)
	w.str(v.Protocol)
	w.str(v.Leader)
	w.i32(int32(len(v.Members)))
	for _, m := range v.Members {
		w.str(m.MemberID)
		w.str(m.GroupInstanceID)
		w.str(m.ClientID)
		w.i32(int32(m.RebalanceTimeout.Milliseconds()))
		w.i32(int32(m.SessionTimeout.Milliseconds()))
		w.i32(int32(len(m.Subscription.Topics)))
		for _, t := range m.Subscription.Topics {
			w.str(t)
		}
		w.partitions(m.Subscription.OwnedPartitions)
		w.i32(m.Subscription.Generation)
		w.str(m.Subscription.RackID)
		w.partitions(m.Assignment)
	}
	return string(w.b)
}

// decodedRecord is a record of the topic as the shard replays it.
type decodedRecord struct {
	Type      int16
	Offset    offsetKey // types 0 and 1
	Group     string    // type 2, and the group of types 3..8
	Tombstone bool
	OffsetVal offsetValue
	GroupVal  groupValue
	// Key and Value are the raw bytes, for the consumer protocol's types.
	Key, Value []byte
}

// decodeRecord reads a record of the topic. Types it does not know are an
// error: nothing else writes to the topic.
func decodeRecord(key, value []byte) (decodedRecord, error) {
	r := reader{b: key}
	d := decodedRecord{Type: r.i16(), Key: key, Value: value, Tombstone: len(value) == 0}
	switch {
	case d.Type == recordOffsetCommitLegacy || d.Type == recordOffsetCommit:
		d.Offset = offsetKey{Group: r.str(), Topic: r.str(), Partition: r.i32()}
		d.Group = d.Offset.Group
		if !d.Tombstone {
			v := reader{b: value}
			v.i16()
			d.OffsetVal = offsetValue{Offset: v.i64(), LeaderEpoch: v.i32(), Metadata: v.str(), CommitTimestamp: time.Duration(v.i64()) * time.Millisecond}
			if v.err != nil {
				return d, v.err
			}
		}
	case d.Type == recordGroupMetadata:
		d.Group = r.str()
		if !d.Tombstone {
			g, err := decodeGroupValue(value)
			if err != nil {
				return d, err
			}
			d.GroupVal = g
		}
	case d.Type >= recordConsumerFirst && d.Type <= recordConsumerLast:
		d.Group = r.str() // every consumer-group key starts with its group id
	default:
		return d, errors.New("group: unknown record type")
	}
	return d, r.err
}

func decodeGroupValue(value []byte) (groupValue, error) {
	v := reader{b: value}
	v.i16()
	g := groupValue{ProtocolType: v.str(), Generation: v.i32(), Protocol: v.str(), Leader: v.str()}
	n := v.count()
	for range n {
		m := memberValue{MemberID: v.str(), GroupInstanceID: v.str(), ClientID: v.str(),
			RebalanceTimeout: time.Duration(v.i32()) * time.Millisecond, SessionTimeout: time.Duration(v.i32()) * time.Millisecond}
		topics := v.count()
		for range topics {
			m.Subscription.Topics = append(m.Subscription.Topics, v.str())
		}
		m.Subscription.OwnedPartitions = v.partitions()
		m.Subscription.Generation = v.i32()
		m.Subscription.RackID = v.str()
		m.Assignment = v.partitions()
		g.Members = append(g.Members, m)
	}
	return g, v.err
}
