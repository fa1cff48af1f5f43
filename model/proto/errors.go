// Package proto holds the messages nodes exchange, named after the Kafka APIs
// they model, and Kafka's error codes.
package proto

import "fmt"

// ErrorCode is a Kafka protocol error code, with Kafka's numbering.
type ErrorCode int16

// Error codes, as in org.apache.kafka.common.protocol.Errors.
const (
	None                         ErrorCode = 0
	OffsetOutOfRange             ErrorCode = 1
	CorruptMessage               ErrorCode = 2
	UnknownTopicOrPartition      ErrorCode = 3
	NotLeaderOrFollower          ErrorCode = 6
	RequestTimedOut              ErrorCode = 7
	NetworkException             ErrorCode = 13
	CoordinatorLoadInProgress    ErrorCode = 14
	CoordinatorNotAvailable      ErrorCode = 15
	NotCoordinator               ErrorCode = 16
	NotController                ErrorCode = 41
	InvalidRequest               ErrorCode = 42
	NotEnoughReplicas            ErrorCode = 19
	NotEnoughReplicasAfterAppend ErrorCode = 20
	InvalidRequiredAcks          ErrorCode = 21
	InvalidPartitions            ErrorCode = 37
	InvalidReplicationFactor     ErrorCode = 38
	InvalidReplicaAssignment     ErrorCode = 39
	TopicAlreadyExists           ErrorCode = 36
	OutOfOrderSequenceNumber     ErrorCode = 45
	DuplicateSequenceNumber      ErrorCode = 46
	InvalidProducerEpoch         ErrorCode = 47
	InvalidTxnState              ErrorCode = 48
	OperationNotAttempted        ErrorCode = 55
	KafkaStorageError            ErrorCode = 56
	UnknownProducerID            ErrorCode = 59
	FencedLeaderEpoch            ErrorCode = 74
	UnknownLeaderEpoch           ErrorCode = 75
	StaleBrokerEpoch             ErrorCode = 77
	OffsetNotAvailable           ErrorCode = 78
	DuplicateBrokerRegistration  ErrorCode = 101
	InconsistentClusterID        ErrorCode = 104
	InvalidUpdateVersion         ErrorCode = 95
	IneligibleReplica            ErrorCode = 107
	NewLeaderElected             ErrorCode = 108
	BrokerNotAvailable           ErrorCode = 8
	InvalidRecord                ErrorCode = 87
	PreferredLeaderNotAvailable  ErrorCode = 80
	EligibleLeadersNotAvailable  ErrorCode = 83
	ElectionNotNeeded            ErrorCode = 84
	FetchSessionIDNotFound       ErrorCode = 70
	InvalidFetchSessionEpoch     ErrorCode = 71
)

var errorNames = map[ErrorCode]string{
	None: "NONE", OffsetOutOfRange: "OFFSET_OUT_OF_RANGE", CorruptMessage: "CORRUPT_MESSAGE", InvalidRecord: "INVALID_RECORD",
	UnknownTopicOrPartition: "UNKNOWN_TOPIC_OR_PARTITION", NotLeaderOrFollower: "NOT_LEADER_OR_FOLLOWER",
	RequestTimedOut: "REQUEST_TIMED_OUT", NetworkException: "NETWORK_EXCEPTION", NotController: "NOT_CONTROLLER",
	InvalidRequest: "INVALID_REQUEST", NotEnoughReplicas: "NOT_ENOUGH_REPLICAS",
	NotEnoughReplicasAfterAppend: "NOT_ENOUGH_REPLICAS_AFTER_APPEND", InvalidRequiredAcks: "INVALID_REQUIRED_ACKS",
	InvalidPartitions: "INVALID_PARTITIONS", InvalidReplicationFactor: "INVALID_REPLICATION_FACTOR",
	InvalidReplicaAssignment: "INVALID_REPLICA_ASSIGNMENT", TopicAlreadyExists: "TOPIC_ALREADY_EXISTS",
	OutOfOrderSequenceNumber: "OUT_OF_ORDER_SEQUENCE_NUMBER", DuplicateSequenceNumber: "DUPLICATE_SEQUENCE_NUMBER",
	InvalidProducerEpoch: "INVALID_PRODUCER_EPOCH", InvalidTxnState: "INVALID_TXN_STATE",
	OperationNotAttempted: "OPERATION_NOT_ATTEMPTED", KafkaStorageError: "KAFKA_STORAGE_ERROR",
	UnknownProducerID: "UNKNOWN_PRODUCER_ID", FencedLeaderEpoch: "FENCED_LEADER_EPOCH",
	UnknownLeaderEpoch: "UNKNOWN_LEADER_EPOCH", StaleBrokerEpoch: "STALE_BROKER_EPOCH",
	OffsetNotAvailable: "OFFSET_NOT_AVAILABLE", DuplicateBrokerRegistration: "DUPLICATE_BROKER_REGISTRATION",
	InconsistentClusterID: "INCONSISTENT_CLUSTER_ID", InvalidUpdateVersion: "INVALID_UPDATE_VERSION",
	IneligibleReplica: "INELIGIBLE_REPLICA", NewLeaderElected: "NEW_LEADER_ELECTED",
	BrokerNotAvailable: "BROKER_NOT_AVAILABLE", CoordinatorLoadInProgress: "COORDINATOR_LOAD_IN_PROGRESS",
	CoordinatorNotAvailable: "COORDINATOR_NOT_AVAILABLE", NotCoordinator: "NOT_COORDINATOR",
	PreferredLeaderNotAvailable: "PREFERRED_LEADER_NOT_AVAILABLE",
	EligibleLeadersNotAvailable: "ELIGIBLE_LEADERS_NOT_AVAILABLE", ElectionNotNeeded: "ELECTION_NOT_NEEDED",
	FetchSessionIDNotFound: "FETCH_SESSION_ID_NOT_FOUND", InvalidFetchSessionEpoch: "INVALID_FETCH_SESSION_EPOCH",
}

// String is the error's Kafka name.
func (e ErrorCode) String() string {
	if e == None {
		// Without the map: nearly every partition of every traced produce
		// and fetch answer says NONE.
		return "NONE"
	}
	if n, ok := errorNames[e]; ok {
		return n
	}
	return fmt.Sprintf("ERROR_%d", int16(e))
}
