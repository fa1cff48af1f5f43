package proto

import (
	"strconv"
	"time"

	"kafkasim/model/record"
	"kafkasim/sim"
)

// The data-plane APIs: what producers, readers and follower replicas ask of
// brokers.

// TopicPartition names a partition on the wire.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// String is "topic-partition".
func (tp TopicPartition) String() string { return string(tp.appendTo(nil)) }

// appendTo appends tp as String writes it.
func (tp TopicPartition) appendTo(b []byte) []byte {
	b = append(b, tp.Topic...)
	b = append(b, '-')
	return strconv.AppendInt(b, int64(tp.Partition), 10)
}

// Acks values.
const (
	AcksNone   int16 = 0
	AcksLeader int16 = 1
	AcksAll    int16 = -1
)

// ProduceRequest appends batches to partitions the receiver leads.
type ProduceRequest struct {
	CorrelationID uint64
	// TransactionalID is set when the batches are a transaction's: the
	// leader adds the partition to the transaction through the coordinator
	// before its first batch there (KIP-890).
	TransactionalID string
	Acks            int16
	Timeout         time.Duration
	Partitions      []ProducePartition
	// sim.Reuse: the producer that sent the request learns when the world
	// delivered it, its only copy, and reuses it once its answer is in too.
	// A broker keeps nothing of a request past its answer.
	sim.Reuse
}

// ProducePartition is one partition's batch.
type ProducePartition struct {
	TopicPartition
	Batch *record.Batch
}

// ProduceResponse answers a ProduceRequest (never sent for acks=0).
type ProduceResponse struct {
	CorrelationID uint64
	Partitions    []ProducePartitionResponse
	// sim.Reuse: the broker whose waiting produce holds the answer takes it
	// back once the world delivered it. A receiver keeps nothing of it past
	// its Deliver.
	sim.Reuse
}

// PoisonFreed is for tests: a sender fills a message it takes back with
// nonsense instead of reusing it, and panics if it is handed back again, so
// that anything still reading it shows in the run.
var PoisonFreed = false

// ProducePartitionResponse is one partition's outcome.
type ProducePartitionResponse struct {
	TopicPartition
	Error          ErrorCode
	BaseOffset     int64
	LogStartOffset int64
}

// FetchRequest reads from the leaders of partitions: a follower replica
// (ReplicaID >= 0) up to the log end, a consumer up to the high watermark.
type FetchRequest struct {
	CorrelationID uint64
	ReplicaID     int32 // -1 for a consumer
	BrokerEpoch   int64 // a follower's, so a stale fetch from a rebooted broker is refused
	MaxWait       time.Duration
	// Isolation: a read_committed consumer reads up to the last stable
	// offset and learns the aborted transactions in what it read.
	Isolation IsolationLevel
	// SessionID and SessionEpoch are a follower's incremental fetch session
	// (KIP-227, Kafka's FetchMetadata): SessionEpoch InitialSessionEpoch
	// asks for a full fetch that opens a new session (closing SessionID's,
	// if set); a later epoch is an incremental fetch, whose Partitions
	// name only what changed since the session's previous request and
	// whose Forgotten leave the session. Consumers fetch without a session
	// (FinalSessionEpoch).
	SessionID    int32
	SessionEpoch int32
	Partitions   []FetchPartition
	Forgotten    []TopicPartition
	// sim.Reuse: the follower that sent the fetch learns when the world
	// delivered it, its only copy, and reuses it once its answer is in too.
	// A broker keeps nothing of a fetch it answered.
	sim.Reuse
}

// FreedCorrelationID marks a request its sender freed, when PoisonFreed is
// on: a receiver that sees it panics.
const FreedCorrelationID = 1 << 62

// Fetch session ids and epochs (Kafka's FetchMetadata): no session; the
// epoch of a full fetch that opens one; the epoch of a fetch that wants
// none.
const (
	InvalidSessionID    int32 = 0
	InitialSessionEpoch int32 = 0
	FinalSessionEpoch   int32 = -1
)

// NextSessionEpoch is the epoch after e (FetchMetadata.nextEpoch: it wraps
// to 1, never to the initial or final epoch).
func NextSessionEpoch(e int32) int32 {
	if e < 0 || e == 1<<31-1 {
		return 1
	}
	return e + 1
}

// FetchPartition is one partition's fetch position.
type FetchPartition struct {
	TopicPartition
	FetchOffset        int64
	CurrentLeaderEpoch int32 // -1: unknown
	// LastFetchedEpoch is the epoch of the fetcher's last batch (followers,
	// KIP-595 style divergence detection); -1 when not sent.
	LastFetchedEpoch int32
	LogStartOffset   int64
	MaxBytes         int
}

// FetchResponse answers a FetchRequest.
type FetchResponse struct {
	CorrelationID uint64
	// Error is a fetch session's error (FETCH_SESSION_ID_NOT_FOUND,
	// INVALID_FETCH_SESSION_EPOCH), with no partitions; SessionID is the
	// session the fetch is in, InvalidSessionID for none (KIP-227). An
	// incremental fetch's answer leaves out the partitions with nothing
	// new: no records, the same high watermark and log start as last told,
	// no error.
	Error      ErrorCode
	SessionID  int32
	Partitions []FetchPartitionResponse
	// sim.Reuse: the broker takes the answer back once the world delivered
	// it. A receiver keeps nothing of it past its Deliver (a partition's
	// Batches, which the leader's log owns, it may keep).
	sim.Reuse
}

// FetchPartitionResponse is one partition's data.
type FetchPartitionResponse struct {
	TopicPartition
	Error          ErrorCode
	HighWatermark  int64
	LogStartOffset int64
	LogEndOffset   int64 // the leader's, for a follower out of range
	// LastStableOffset bounds a read_committed fetch: below it every
	// transaction is decided (Kafka's LSO). -1 for a follower's fetch.
	LastStableOffset int64
	// AbortedTransactions lists, for a read_committed fetch, the aborted
	// transactions whose records may be among Batches: each producer id
	// and the first offset of its aborted transaction. The consumer drops
	// that producer's transactional records from the first offset up to
	// its abort marker.
	AbortedTransactions []AbortedTransaction
	// Diverging is set when the fetcher's log diverges from the leader's.
	Diverging *EpochEndOffset
	Batches   []*record.Batch
	// LeaderEpoch is the leader's current epoch, for the fetcher's bookkeeping.
	LeaderEpoch int32
}

// AbortedTransaction is an entry of a fetch answer's aborted list.
type AbortedTransaction struct {
	ProducerID  int64
	FirstOffset int64
}

// EpochEndOffset is an epoch and where it ends.
type EpochEndOffset struct {
	Epoch     int32
	EndOffset int64
}

// MetadataRequest asks a broker for the cluster's brokers and partition
// leaders.
type MetadataRequest struct {
	CorrelationID uint64
	Topics        []string // nil: every topic
}

// MetadataBroker is a live broker and its node.
type MetadataBroker struct {
	ID   int32
	Node sim.NodeID
	Rack string
}

// MetadataPartition is a partition's leadership as the broker knows it.
type MetadataPartition struct {
	Partition   int32
	Leader      int32
	LeaderEpoch int32
	Replicas    []int32
	ISR         []int32
}

// MetadataTopic is a topic's partitions.
type MetadataTopic struct {
	Name       string
	Error      ErrorCode
	Partitions []MetadataPartition
}

// MetadataResponse answers a MetadataRequest.
type MetadataResponse struct {
	CorrelationID uint64
	Brokers       []MetadataBroker
	Topics        []MetadataTopic
}

// ListOffsetsRequest asks a leader for a partition's earliest or latest offset.
type ListOffsetsRequest struct {
	CorrelationID uint64
	Partitions    []ListOffsetsPartition
	// ReadCommitted bounds "latest" by the last stable offset.
	ReadCommitted bool
}

// ListOffsets timestamps, as in Kafka.
const (
	ListLatest   int64 = -1
	ListEarliest int64 = -2
)

// ListOffsetsPartition is one partition's query.
type ListOffsetsPartition struct {
	TopicPartition
	Timestamp          int64
	CurrentLeaderEpoch int32
}

// ListOffsetsResponse answers ListOffsetsRequest.
type ListOffsetsResponse struct {
	CorrelationID uint64
	Partitions    []ListOffsetsPartitionResponse
}

// ListOffsetsPartitionResponse is one partition's answer.
type ListOffsetsPartitionResponse struct {
	TopicPartition
	Error       ErrorCode
	Offset      int64
	LeaderEpoch int32
}

// OffsetsForLeaderEpochRequest asks a leader where an epoch ends (KIP-320:
// a consumer validating its position after a leader change).
type OffsetsForLeaderEpochRequest struct {
	CorrelationID uint64
	Partitions    []OffsetsForLeaderEpochPartition
}

// OffsetsForLeaderEpochPartition is one partition's query.
type OffsetsForLeaderEpochPartition struct {
	TopicPartition
	CurrentLeaderEpoch int32
	LeaderEpoch        int32
}

// OffsetsForLeaderEpochResponse answers it.
type OffsetsForLeaderEpochResponse struct {
	CorrelationID uint64
	Partitions    []OffsetsForLeaderEpochPartitionResponse
}

// OffsetsForLeaderEpochPartitionResponse is one partition's answer.
type OffsetsForLeaderEpochPartitionResponse struct {
	TopicPartition
	Error       ErrorCode
	LeaderEpoch int32
	EndOffset   int64
}

// InitProducerIDRequest asks for a producer id: any broker gives an
// idempotent producer one; a transactional producer (TransactionalID set)
// asks its transaction coordinator, which bumps the id's epoch, fences the
// previous instance and aborts its open transaction first. ProducerID and
// ProducerEpoch (KIP-360) are the id and epoch the producer has, when it
// asks to bump its own epoch after an abortable error; they are read only
// with a TransactionalID (-1 when none).
type InitProducerIDRequest struct {
	CorrelationID      uint64
	TransactionalID    string
	TransactionTimeout time.Duration
	ProducerID         int64
	ProducerEpoch      int16
}

// InitProducerIDResponse gives one.
type InitProducerIDResponse struct {
	CorrelationID uint64
	Error         ErrorCode
	ProducerID    int64
	ProducerEpoch int16
}

// MessageName implements sim.Message.
func (*ProduceRequest) MessageName() string { return "Produce" }

// MessageName implements sim.Message.
func (*ProduceResponse) MessageName() string { return "ProduceResponse" }

// MessageName implements sim.Message.
func (m *FetchRequest) MessageName() string {
	if m.ReplicaID >= 0 {
		return "Fetch(replica)"
	}
	return "Fetch"
}

// MessageName implements sim.Message.
func (*FetchResponse) MessageName() string { return "FetchResponse" }

// MessageName implements sim.Message.
func (*MetadataRequest) MessageName() string { return "Metadata" }

// MessageName implements sim.Message.
func (*MetadataResponse) MessageName() string { return "MetadataResponse" }

// MessageName implements sim.Message.
func (*ListOffsetsRequest) MessageName() string { return "ListOffsets" }

// MessageName implements sim.Message.
func (*ListOffsetsResponse) MessageName() string { return "ListOffsetsResponse" }

// MessageName implements sim.Message.
func (*OffsetsForLeaderEpochRequest) MessageName() string { return "OffsetsForLeaderEpoch" }

// MessageName implements sim.Message.
func (*OffsetsForLeaderEpochResponse) MessageName() string { return "OffsetsForLeaderEpochResponse" }

// MessageName implements sim.Message.
func (*InitProducerIDRequest) MessageName() string { return "InitProducerId" }

// MessageName implements sim.Message.
func (*InitProducerIDResponse) MessageName() string { return "InitProducerIdResponse" }

// The descriptions below appear once per delivered message in a traced
// run's trace, so they are built by appending, not by fmt.

func (m *ProduceRequest) String() string { return string(m.AppendDetail(nil)) }

// AppendDetail appends String's words (sim.DetailAppender).
func (m *ProduceRequest) AppendDetail(b []byte) []byte {
	b = append(b, "Produce acks="...)
	b = strconv.AppendInt(b, int64(m.Acks), 10)
	for _, p := range m.Partitions {
		b = append(b, ' ')
		b = p.TopicPartition.appendTo(b)
		b = append(b, '(')
		b = strconv.AppendInt(b, int64(p.Batch.RecordCount()), 10)
		b = append(b, " records"...)
		if bt := p.Batch; bt.ProducerID >= 0 {
			b = append(b, ", producer "...)
			b = strconv.AppendInt(b, bt.ProducerID, 10)
			b = append(b, " epoch "...)
			b = strconv.AppendInt(b, int64(bt.ProducerEpoch), 10)
			b = append(b, " seq "...)
			b = strconv.AppendInt(b, int64(bt.BaseSequence), 10)
		}
		b = append(b, ')')
	}
	return b
}

func (m *ProduceResponse) String() string { return string(m.AppendDetail(nil)) }

// AppendDetail appends String's words (sim.DetailAppender).
func (m *ProduceResponse) AppendDetail(b []byte) []byte {
	b = append(b, "ProduceResponse"...)
	for _, p := range m.Partitions {
		b = append(b, ' ')
		b = p.TopicPartition.appendTo(b)
		b = append(b, ':')
		b = append(b, p.Error.String()...)
		b = append(b, '@')
		b = strconv.AppendInt(b, p.BaseOffset, 10)
	}
	return b
}

func (m *FetchRequest) String() string { return string(m.AppendDetail(nil)) }

// AppendDetail appends String's words (sim.DetailAppender).
func (m *FetchRequest) AppendDetail(b []byte) []byte {
	b = append(b, m.MessageName()...)
	if m.SessionID != InvalidSessionID || m.SessionEpoch > InitialSessionEpoch {
		b = append(b, " session="...)
		b = strconv.AppendInt(b, int64(m.SessionID), 10)
		b = append(b, '/')
		b = strconv.AppendInt(b, int64(m.SessionEpoch), 10)
	}
	for _, p := range m.Partitions {
		b = append(b, ' ')
		b = p.TopicPartition.appendTo(b)
		b = append(b, '@')
		b = strconv.AppendInt(b, p.FetchOffset, 10)
		b = append(b, "(epoch "...)
		b = strconv.AppendInt(b, int64(p.CurrentLeaderEpoch), 10)
		b = append(b, ')')
	}
	for _, tp := range m.Forgotten {
		b = append(b, " forget "...)
		b = tp.appendTo(b)
	}
	return b
}

func (m *FetchResponse) String() string { return string(m.AppendDetail(nil)) }

// AppendDetail appends String's words (sim.DetailAppender).
func (m *FetchResponse) AppendDetail(b []byte) []byte {
	b = append(b, "FetchResponse"...)
	if m.Error != None {
		b = append(b, ' ')
		b = append(b, m.Error.String()...)
	}
	if m.SessionID != InvalidSessionID {
		b = append(b, " session="...)
		b = strconv.AppendInt(b, int64(m.SessionID), 10)
	}
	for _, p := range m.Partitions {
		n := 0
		for _, bt := range p.Batches {
			n += bt.RecordCount()
		}
		b = append(b, ' ')
		b = p.TopicPartition.appendTo(b)
		b = append(b, ':')
		b = append(b, p.Error.String()...)
		b = append(b, " hw="...)
		b = strconv.AppendInt(b, p.HighWatermark, 10)
		b = append(b, " records="...)
		b = strconv.AppendInt(b, int64(n), 10)
		if p.Diverging != nil {
			b = append(b, " diverging=("...)
			b = strconv.AppendInt(b, int64(p.Diverging.Epoch), 10)
			b = append(b, ',')
			b = strconv.AppendInt(b, p.Diverging.EndOffset, 10)
			b = append(b, ')')
		}
	}
	return b
}
