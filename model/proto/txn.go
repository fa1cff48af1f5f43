package proto

import (
	"time"

	"kafkasim/sim"
)

// The transaction APIs (KIP-98, KIP-447, KIP-890 transaction version 2),
// after Kafka 4's request schemas. With transaction version 2 the client
// sends neither AddPartitionsToTxn nor AddOffsetsToTxn: the partition
// leader a transactional produce reaches, and the group coordinator a
// TxnOffsetCommit reaches, add the partition to the transaction themselves
// by asking the transaction coordinator (AddPartitionsToTxn v5, broker to
// broker: Kafka's AddPartitionsToTxnManager), and EndTxn answers with the
// epoch bumped at every commit and abort.
//
// InitProducerIdRequest with a TransactionalID, AddPartitionsToTxn and
// EndTxn are CoordinatorRequests for the transaction coordinator.

// Transaction error codes, as in org.apache.kafka.common.protocol.Errors.
const (
	InvalidProducerIDMapping     ErrorCode = 49
	InvalidTransactionTimeout    ErrorCode = 50
	ConcurrentTransactions       ErrorCode = 51
	TransactionCoordinatorFenced ErrorCode = 52
	ProducerFenced               ErrorCode = 90
	TransactionAbortable         ErrorCode = 120
)

func init() {
	// kafkasim:orderless: filling a map
	for code, name := range map[ErrorCode]string{
		InvalidProducerIDMapping: "INVALID_PRODUCER_ID_MAPPING", InvalidTransactionTimeout: "INVALID_TRANSACTION_TIMEOUT",
		ConcurrentTransactions: "CONCURRENT_TRANSACTIONS", TransactionCoordinatorFenced: "TRANSACTION_COORDINATOR_FENCED",
		ProducerFenced: "PRODUCER_FENCED", TransactionAbortable: "TRANSACTION_ABORTABLE",
	} {
		errorNames[code] = name
	}
}

// NoProducerID and NoProducerEpoch are Kafka's -1 ("none").
const (
	NoProducerID    int64 = -1
	NoProducerEpoch int16 = -1
)

// IsolationLevel of a fetch or ListOffsets (Kafka's IsolationLevel).
type IsolationLevel int8

const (
	ReadUncommitted IsolationLevel = 0
	ReadCommitted   IsolationLevel = 1
)

// AddPartitionsToTxnRequest asks the transaction coordinator to add
// partitions to the ongoing transaction of (ProducerID, ProducerEpoch), or,
// with VerifyOnly, whether they are in it (transaction version 1's
// verification, KIP-890 part 1). Sent by a partition leader before it
// appends a transaction's first batch to a partition, and by a group
// coordinator before it takes a transaction's first TxnOffsetCommit to its
// offsets partition. It starts the transaction (Empty or Complete* →
// Ongoing) when it is the first.
type AddPartitionsToTxnRequest struct {
	CorrelationID   uint64
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	Partitions      []TopicPartition
	VerifyOnly      bool
}

// AddPartitionsToTxnResponse answers it: one error for the transaction
// (PRODUCER_FENCED, INVALID_PRODUCER_EPOCH, CONCURRENT_TRANSACTIONS,
// NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS, INVALID_TXN_STATE, …),
// or NONE with each partition's.
type AddPartitionsToTxnResponse struct {
	CorrelationID uint64
	Error         ErrorCode
	Partitions    []TxnPartitionResult
}

// TxnPartitionResult is one partition's outcome in a transaction API.
type TxnPartitionResult struct {
	TopicPartition
	Error ErrorCode
}

// EndTxnRequest commits or aborts the ongoing transaction.
type EndTxnRequest struct {
	CorrelationID   uint64
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	Committed       bool
}

// EndTxnResponse answers it once the PrepareCommit / PrepareAbort state is
// written to __transaction_state (the markers follow): with transaction
// version 2 the producer id and epoch the producer goes on with, the epoch
// bumped (a new producer id when the epoch would overflow).
type EndTxnResponse struct {
	CorrelationID uint64
	Error         ErrorCode
	ProducerID    int64
	ProducerEpoch int16
}

// WriteTxnMarkersRequest asks a partition leader to append the commit or
// abort markers of transactions, from the transaction coordinator (Kafka's
// TransactionMarkerChannelManager sends one per destination broker).
type WriteTxnMarkersRequest struct {
	CorrelationID uint64
	Markers       []TxnMarker
}

// TxnMarker is one transaction's marker for some partitions.
type TxnMarker struct {
	ProducerID    int64
	ProducerEpoch int16 // the epoch the marker is written with (bumped with TV2)
	Committed     bool
	// CoordinatorEpoch is the leader epoch of the coordinator's
	// __transaction_state partition: a leader refuses a marker from a
	// coordinator older than the last it took for the producer
	// (TRANSACTION_COORDINATOR_FENCED).
	CoordinatorEpoch int32
	// NoEpochBump marks a marker whose epoch the coordinator did not bump
	// (the bug zoo's no-epoch-bump-on-abort): the partition checks it as
	// transaction version 1's (WriteTxnMarkers' TransactionVersion):
	// only an older epoch is fenced.
	NoEpochBump bool
	Partitions  []TopicPartition
}

// WriteTxnMarkersResponse answers it, per marker and partition.
type WriteTxnMarkersResponse struct {
	CorrelationID uint64
	Markers       []TxnMarkerResult
}

// TxnMarkerResult is one marker's outcome.
type TxnMarkerResult struct {
	ProducerID int64
	Partitions []TxnPartitionResult
}

// TxnOffsetCommitRequest commits a consumer group's offsets inside a
// transaction (sendOffsetsToTransaction), to the group coordinator; fenced
// by generation or member epoch like an OffsetCommit (KIP-447). The offsets
// become visible to OffsetFetch when the transaction's commit marker
// reaches the group's offsets partition, and are dropped at an abort
// marker.
type TxnOffsetCommitRequest struct {
	CorrelationID             uint64
	TransactionalID           string
	GroupID                   string
	ProducerID                int64
	ProducerEpoch             int16
	GenerationIDOrMemberEpoch int32
	MemberID                  string
	GroupInstanceID           string
	Partitions                []OffsetCommitPartition
}

// TxnOffsetCommitResponse answers it, per partition.
type TxnOffsetCommitResponse struct {
	CorrelationID uint64
	Partitions    []TxnPartitionResult
}

// AllocateProducerIdsRequest asks the active controller for a block of
// producer ids (KIP-730), for a broker's transaction coordinator.
type AllocateProducerIdsRequest struct {
	CorrelationID uint64
	BrokerID      int32
	BrokerEpoch   int64
}

// AllocateProducerIdsResponse gives a block [ProducerIDStart,
// ProducerIDStart+ProducerIDLen) once the controller committed its
// ProducerIdsRecord.
type AllocateProducerIdsResponse struct {
	CorrelationID   uint64
	Error           ErrorCode
	ProducerIDStart int64
	ProducerIDLen   int32
	ControllerHint  sim.NodeID
}

// DescribeTransactionsRequest and ListTransactions are for `describe
// transactions`: the coordinator's view of transactional ids.
type DescribeTransactionsRequest struct {
	CorrelationID    uint64
	TransactionalIDs []string
}

// TransactionDescription is one transactional id as its coordinator holds
// it (kafka-transactions.sh describe).
type TransactionDescription struct {
	TransactionalID    string
	Error              ErrorCode
	State              string // Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort, PrepareEpochFence, Dead
	ProducerID         int64
	ProducerEpoch      int16
	TransactionTimeout time.Duration
	StartTime          time.Duration // -1: no transaction open
	Partitions         []TopicPartition
}

// DescribeTransactionsResponse answers it.
type DescribeTransactionsResponse struct {
	CorrelationID uint64
	Transactions  []TransactionDescription
}

// MessageName implements sim.Message.
func (*AddPartitionsToTxnRequest) MessageName() string { return "AddPartitionsToTxn" }

// MessageName implements sim.Message.
func (*AddPartitionsToTxnResponse) MessageName() string { return "AddPartitionsToTxnResponse" }

// MessageName implements sim.Message.
func (*EndTxnRequest) MessageName() string { return "EndTxn" }

// MessageName implements sim.Message.
func (*EndTxnResponse) MessageName() string { return "EndTxnResponse" }

// MessageName implements sim.Message.
func (*WriteTxnMarkersRequest) MessageName() string { return "WriteTxnMarkers" }

// MessageName implements sim.Message.
func (*WriteTxnMarkersResponse) MessageName() string { return "WriteTxnMarkersResponse" }

// MessageName implements sim.Message.
func (*TxnOffsetCommitRequest) MessageName() string { return "TxnOffsetCommit" }

// MessageName implements sim.Message.
func (*TxnOffsetCommitResponse) MessageName() string { return "TxnOffsetCommitResponse" }

// MessageName implements sim.Message.
func (*AllocateProducerIdsRequest) MessageName() string { return "AllocateProducerIds" }

// MessageName implements sim.Message.
func (*AllocateProducerIdsResponse) MessageName() string { return "AllocateProducerIdsResponse" }

// MessageName implements sim.Message.
func (*DescribeTransactionsRequest) MessageName() string { return "DescribeTransactions" }

// MessageName implements sim.Message.
func (*DescribeTransactionsResponse) MessageName() string { return "DescribeTransactionsResponse" }

// NotCoordinator implements broker.CoordinatorRequest.
func (m *AddPartitionsToTxnRequest) NotCoordinator() sim.Message {
	return &AddPartitionsToTxnResponse{CorrelationID: m.CorrelationID, Error: NotCoordinator}
}

// NotCoordinator implements broker.CoordinatorRequest.
func (m *EndTxnRequest) NotCoordinator() sim.Message {
	return &EndTxnResponse{CorrelationID: m.CorrelationID, Error: NotCoordinator, ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch}
}

// NotCoordinator implements broker.CoordinatorRequest.
func (m *TxnOffsetCommitRequest) NotCoordinator() sim.Message { return m.ErrorResponse(NotCoordinator) }

// NotController implements ControllerRequest.
func (m *AllocateProducerIdsRequest) NotController(hint sim.NodeID) sim.Message {
	return &AllocateProducerIdsResponse{CorrelationID: m.CorrelationID, Error: NotController, ControllerHint: hint}
}

// GroupKey implements GroupRequest: a TxnOffsetCommit is served by its
// group's coordinator.
func (m *TxnOffsetCommitRequest) GroupKey() string { return m.GroupID }

// ErrorResponse implements GroupRequest: every partition carries err.
func (m *TxnOffsetCommitRequest) ErrorResponse(err ErrorCode) sim.Message {
	r := &TxnOffsetCommitResponse{CorrelationID: m.CorrelationID}
	for _, p := range m.Partitions {
		r.Partitions = append(r.Partitions, TxnPartitionResult{TopicPartition: p.TopicPartition, Error: err})
	}
	return r
}
