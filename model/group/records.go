package group

import (
	"errors"
	"time"

	"kafkasim/internal/kafkabin"
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

// encodeOffsetKey is OffsetCommitKey (version 1).
func encodeOffsetKey(k offsetKey) string {
	w := kafkabin.Writer{}
	w.I16(recordOffsetCommit)
	w.Str(k.Group)
	w.Str(k.Topic)
	w.I32(k.Partition)
	return string(w.B)
}

// encodeGroupKey is GroupMetadataKey (version 2).
func encodeGroupKey(group string) string {
	w := kafkabin.Writer{}
	w.I16(recordGroupMetadata)
	w.Str(group)
	return string(w.B)
}

// encodeOffsetValue is OffsetCommitValue (version 3).
func encodeOffsetValue(v offsetValue) string {
	w := kafkabin.Writer{}
	w.I16(3)
	w.I64(v.Offset)
	w.I32(v.LeaderEpoch)
	w.Str(v.Metadata)
	w.I64(v.CommitTimestamp.Milliseconds())
	return string(w.B)
}

// encodeGroupValue is GroupMetadataValue (version 3).
func encodeGroupValue(v groupValue) string {
	w := kafkabin.Writer{}
	w.I16(3)
	w.Str(v.ProtocolType)
	w.I32(v.Generation)
	w.Str(v.Protocol)
	w.Str(v.Leader)
	w.I32(int32(len(v.Members)))
	for _, m := range v.Members {
		w.Str(m.MemberID)
		w.Str(m.GroupInstanceID)
		w.Str(m.ClientID)
		w.I32(int32(m.RebalanceTimeout.Milliseconds()))
		w.I32(int32(m.SessionTimeout.Milliseconds()))
		w.I32(int32(len(m.Subscription.Topics)))
		for _, t := range m.Subscription.Topics {
			w.Str(t)
		}
		w.Partitions(m.Subscription.OwnedPartitions)
		w.I32(m.Subscription.Generation)
		w.Str(m.Subscription.RackID)
		w.Partitions(m.Assignment)
	}
	return string(w.B)
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
	r := kafkabin.Reader{B: key}
	d := decodedRecord{Type: r.I16(), Key: key, Value: value, Tombstone: len(value) == 0}
	switch {
	case d.Type == recordOffsetCommitLegacy || d.Type == recordOffsetCommit:
		d.Offset = offsetKey{Group: r.Str(), Topic: r.Str(), Partition: r.I32()}
		d.Group = d.Offset.Group
		if !d.Tombstone {
			v := kafkabin.Reader{B: value}
			v.I16()
			d.OffsetVal = offsetValue{Offset: v.I64(), LeaderEpoch: v.I32(), Metadata: v.Str(), CommitTimestamp: time.Duration(v.I64()) * time.Millisecond}
			if v.Err != nil {
				return d, v.Err
			}
		}
	case d.Type == recordGroupMetadata:
		d.Group = r.Str()
		if !d.Tombstone {
			g, err := decodeGroupValue(value)
			if err != nil {
				return d, err
			}
			d.GroupVal = g
		}
	case d.Type >= recordConsumerFirst && d.Type <= recordConsumerLast:
		d.Group = r.Str() // every consumer-group key starts with its group id
	default:
		return d, errors.New("group: unknown record type")
	}
	return d, r.Err
}

func decodeGroupValue(value []byte) (groupValue, error) {
	v := kafkabin.Reader{B: value}
	v.I16()
	g := groupValue{ProtocolType: v.Str(), Generation: v.I32(), Protocol: v.Str(), Leader: v.Str()}
	n := v.Count()
	for range n {
		m := memberValue{MemberID: v.Str(), GroupInstanceID: v.Str(), ClientID: v.Str(),
			RebalanceTimeout: time.Duration(v.I32()) * time.Millisecond, SessionTimeout: time.Duration(v.I32()) * time.Millisecond}
		topics := v.Count()
		for range topics {
			m.Subscription.Topics = append(m.Subscription.Topics, v.Str())
		}
		m.Subscription.OwnedPartitions = v.Partitions()
		m.Subscription.Generation = v.I32()
		m.Subscription.RackID = v.Str()
		m.Assignment = v.Partitions()
		g.Members = append(g.Members, m)
	}
	return g, v.Err
}
