package consumergroup

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"kafkasim/model/proto"
)

// The consumer group's records in __consumer_offsets, with Kafka's record
// types (group-coordinator/src/main/resources/common/message/
// ConsumerGroup*Key.json):
//
//	3 ConsumerGroupMetadata              key (group)          value: group epoch, metadata hash
//	4 ConsumerGroupPartitionMetadata     key (group)          written by Kafka 3.7–4.0 only
//	5 ConsumerGroupMemberMetadata        key (group, member)  value: the subscription side
//	6 ConsumerGroupTargetAssignmentMetadata key (group)       value: assignment epoch
//	7 ConsumerGroupTargetAssignmentMember key (group, member) value: the member's target
//	8 ConsumerGroupCurrentMemberAssignment key (group, member) value: epochs, state, assigned, pending revocation
//
// Kafka 4.1 (KIP-1101) stopped writing type 4: the group epoch record
// carries a hash of the subscribed topics' metadata instead, and the epoch
// bumps when it changes. This package writes as 4.1+ does and replays a
// type 4 record as nothing. A removal writes tombstones (null values).
//
// Byte layout. The key is Kafka's: the record type as a big-endian int16,
// then the group id, then (types 5, 7, 8) the member id, each string an
// int16 big-endian length and its bytes. The value starts with an int16
// version (0), then the fields in the order above: int8, int32 and int64
// big-endian, strings as in the key, a list as an int32 count and its
// elements, a partition as its topic string and an int32. (Kafka's values
// use flexible versions with compact strings and topic ids; the simulator
// has no topic ids, so partitions carry topic names.)

// Record types.
const (
	TypeGroupMetadata               int16 = 3
	TypePartitionMetadata           int16 = 4
	TypeMemberMetadata              int16 = 5
	TypeTargetAssignmentMetadata    int16 = 6
	TypeTargetAssignmentMember      int16 = 7
	TypeCurrentMemberAssignment     int16 = 8
	firstRecordType, lastRecordType       = TypeGroupMetadata, TypeCurrentMemberAssignment
)

// Record is one consumer-group record, decoded. Only the fields of its
// Type are set; Tombstone records carry only their key.
type Record struct {
	Type      int16
	GroupID   string
	MemberID  string // types 5, 7, 8
	Tombstone bool
	// Type 3.
	GroupEpoch   int32
	MetadataHash uint64
	// Type 6.
	AssignmentEpoch int32
	// Type 7: the target; type 8: the current assignment.
	Partitions []proto.TopicPartition
	// Type 5 and 8: the member, its subscription side (5) or its
	// reconciliation side (8) set.
	Member *Member
}

func hasMemberKey(t int16) bool {
	return t == TypeMemberMetadata || t == TypeTargetAssignmentMember || t == TypeCurrentMemberAssignment
}

// groupMetadataRecord is GroupCoordinatorRecordHelpers.newConsumerGroupEpochRecord.
func groupMetadataRecord(groupID string, epoch int32, hash uint64) Record {
	return Record{Type: TypeGroupMetadata, GroupID: groupID, GroupEpoch: epoch, MetadataHash: hash}
}

// memberMetadataRecord is newConsumerGroupMemberSubscriptionRecord.
func memberMetadataRecord(groupID string, m *Member) Record {
	sub := &Member{MemberID: m.MemberID, InstanceID: m.InstanceID, RackID: m.RackID,
		RebalanceTimeout: m.RebalanceTimeout, SubscribedTopicNames: normalizeTopics(m.SubscribedTopicNames),
		ServerAssignor: m.ServerAssignor}
	return Record{Type: TypeMemberMetadata, GroupID: groupID, MemberID: m.MemberID, Member: sub}
}

// targetAssignmentEpochRecord is newConsumerGroupTargetAssignmentEpochRecord.
func targetAssignmentEpochRecord(groupID string, epoch int32) Record {
	return Record{Type: TypeTargetAssignmentMetadata, GroupID: groupID, AssignmentEpoch: epoch}
}

// targetAssignmentRecord is newConsumerGroupTargetAssignmentRecord.
func targetAssignmentRecord(groupID, memberID string, target []proto.TopicPartition) Record {
	return Record{Type: TypeTargetAssignmentMember, GroupID: groupID, MemberID: memberID, Partitions: normalize(target)}
}

// currentAssignmentRecord is newConsumerGroupCurrentAssignmentRecord.
func currentAssignmentRecord(groupID string, m *Member) Record {
	cur := &Member{MemberID: m.MemberID, MemberEpoch: m.MemberEpoch, PreviousMemberEpoch: m.PreviousMemberEpoch,
		State: m.State, Assigned: normalize(m.Assigned), PendingRevocation: normalize(m.PendingRevocation)}
	return Record{Type: TypeCurrentMemberAssignment, GroupID: groupID, MemberID: m.MemberID, Member: cur}
}

func tombstone(t int16, groupID, memberID string) Record {
	return Record{Type: t, GroupID: groupID, MemberID: memberID, Tombstone: true}
}

// removeMemberRecords is GroupMetadataManager.removeMember: the member's
// tombstones, in the order Kafka writes them (its replay requires the
// current assignment and the target gone before the subscription).
func removeMemberRecords(groupID, memberID string) []Record {
	return []Record{
		tombstone(TypeCurrentMemberAssignment, groupID, memberID),
		tombstone(TypeTargetAssignmentMember, groupID, memberID),
		tombstone(TypeMemberMetadata, groupID, memberID),
	}
}

// Encode is the record as the key and value of a __consumer_offsets record
// (tombstone: the value is null).
func (r Record) Encode() (key, value string, tombstone bool) {
	var k []byte
	k = binary.BigEndian.AppendUint16(k, uint16(r.Type))
	k = appendString(k, r.GroupID)
	if hasMemberKey(r.Type) {
		k = appendString(k, r.MemberID)
	}
	if r.Tombstone {
		return string(k), "", true
	}
	v := binary.BigEndian.AppendUint16(nil, 0) // value version
	switch r.Type {
	case TypeGroupMetadata:
		v = binary.BigEndian.AppendUint32(v, uint32(r.GroupEpoch))
		v = binary.BigEndian.AppendUint64(v, r.MetadataHash)
	case TypeMemberMetadata:
		m := r.Member
		v = appendString(v, m.InstanceID)
		v = appendString(v, m.RackID)
		v = binary.BigEndian.AppendUint32(v, uint32(len(m.SubscribedTopicNames)))
		for _, t := range m.SubscribedTopicNames {
			v = appendString(v, t)
		}
		v = binary.BigEndian.AppendUint64(v, uint64(m.RebalanceTimeout))
		v = appendString(v, m.ServerAssignor)
	case TypeTargetAssignmentMetadata:
		v = binary.BigEndian.AppendUint32(v, uint32(r.AssignmentEpoch))
	case TypeTargetAssignmentMember:
		v = appendPartitions(v, r.Partitions)
	case TypeCurrentMemberAssignment:
		m := r.Member
		v = binary.BigEndian.AppendUint32(v, uint32(m.MemberEpoch))
		v = binary.BigEndian.AppendUint32(v, uint32(m.PreviousMemberEpoch))
		v = append(v, byte(m.State))
		v = appendPartitions(v, m.Assigned)
		v = appendPartitions(v, m.PendingRevocation)
	}
	return string(k), string(v), false
}

// KeyType reads a record key's type and group id: ok is false for a key
// too short to hold them. The shell routes types 3..8 to this package.
func KeyType(key string) (recordType int16, groupID string, ok bool) {
	d := decoder{b: key}
	recordType = int16(d.uint16())
	groupID = d.string()
	return recordType, groupID, d.err == nil
}

// IsConsumerGroupRecord tells whether a __consumer_offsets key is one of
// the consumer group's records (types 3..8).
func IsConsumerGroupRecord(key string) bool {
	t, _, ok := KeyType(key)
	return ok && t >= firstRecordType && t <= lastRecordType
}

// Decode reads a record Encode wrote.
func Decode(key, value string, tombstone bool) (Record, error) {
	d := decoder{b: key}
	r := Record{Type: int16(d.uint16()), GroupID: d.string(), Tombstone: tombstone}
	if r.Type < firstRecordType || r.Type > lastRecordType {
		return Record{}, fmt.Errorf("consumer group record: type %d is not a consumer group record", r.Type)
	}
	if hasMemberKey(r.Type) {
		r.MemberID = d.string()
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = errors.New("trailing bytes")
	}
	if d.err != nil {
		return Record{}, fmt.Errorf("consumer group record key (type %d): %w", r.Type, d.err)
	}
	if tombstone {
		return r, nil
	}
	d = decoder{b: value}
	if version := d.uint16(); d.err == nil && version != 0 {
		return Record{}, fmt.Errorf("consumer group record value (type %d): unknown version %d", r.Type, version)
	}
	switch r.Type {
	case TypeGroupMetadata:
		r.GroupEpoch = int32(d.uint32())
		r.MetadataHash = d.uint64()
	case TypePartitionMetadata:
		d.b = "" // Kafka 3.7–4.0's subscription metadata: not read
	case TypeMemberMetadata:
		m := &Member{MemberID: r.MemberID}
		m.InstanceID = d.string()
		m.RackID = d.string()
		n := d.count()
		for i := 0; i < n && d.err == nil; i++ {
			m.SubscribedTopicNames = append(m.SubscribedTopicNames, d.string())
		}
		m.RebalanceTimeout = time.Duration(d.uint64())
		m.ServerAssignor = d.string()
		r.Member = m
	case TypeTargetAssignmentMetadata:
		r.AssignmentEpoch = int32(d.uint32())
	case TypeTargetAssignmentMember:
		r.Partitions = d.partitions()
	case TypeCurrentMemberAssignment:
		m := &Member{MemberID: r.MemberID}
		m.MemberEpoch = int32(d.uint32())
		m.PreviousMemberEpoch = int32(d.uint32())
		m.State = memberStateFrom(int8(d.byte()))
		m.Assigned = d.partitions()
		m.PendingRevocation = d.partitions()
		r.Member = m
	}
	if d.err == nil && len(d.b) != 0 {
		d.err = errors.New("trailing bytes")
	}
	if d.err != nil {
		return Record{}, fmt.Errorf("consumer group record value (type %d): %w", r.Type, d.err)
	}
	return r, nil
}

func appendString(b []byte, s string) []byte {
	if len(s) > math.MaxInt16 {
		panic("consumergroup: string longer than an int16 length")
	}
	b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	return append(b, s...)
}

func appendPartitions(b []byte, tps []proto.TopicPartition) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(tps)))
	for _, tp := range tps {
		b = appendString(b, tp.Topic)
		b = binary.BigEndian.AppendUint32(b, uint32(tp.Partition))
	}
	return b
}

// decoder reads from b; the first error sticks and later reads yield
// zeros.
type decoder struct {
	b   string
	err error
}

func (d *decoder) take(n int) string {
	if d.err != nil {
		return ""
	}
	if n < 0 || len(d.b) < n {
		d.err = errors.New("truncated")
		return ""
	}
	s := d.b[:n]
	d.b = d.b[n:]
	return s
}

func (d *decoder) byte() byte {
	if s := d.take(1); s != "" {
		return s[0]
	}
	return 0
}

func (d *decoder) uint16() uint16 {
	if s := d.take(2); s != "" {
		return binary.BigEndian.Uint16([]byte(s))
	}
	return 0
}

func (d *decoder) uint32() uint32 {
	if s := d.take(4); s != "" {
		return binary.BigEndian.Uint32([]byte(s))
	}
	return 0
}

func (d *decoder) uint64() uint64 {
	if s := d.take(8); s != "" {
		return binary.BigEndian.Uint64([]byte(s))
	}
	return 0
}

func (d *decoder) string() string {
	return d.take(int(d.uint16()))
}

// count reads a list length no longer than what is left to read.
func (d *decoder) count() int {
	n := int(int32(d.uint32()))
	if d.err == nil && (n < 0 || n > len(d.b)) {
		d.err = fmt.Errorf("list length %d", n)
		return 0
	}
	return n
}

func (d *decoder) partitions() []proto.TopicPartition {
	n := d.count()
	var out []proto.TopicPartition
	for i := 0; i < n && d.err == nil; i++ {
		out = append(out, proto.TopicPartition{Topic: d.string(), Partition: int32(d.uint32())})
	}
	return out
}
