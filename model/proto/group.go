package proto

import (
	"time"

	"kafkasim/sim"
)

// The group APIs: what a consumer asks of its group coordinator, after
// Kafka 4's request schemas (clients/src/main/resources/common/message/).
// A member's subscription and assignment travel as Go values, not as the
// serialized ConsumerProtocolSubscription / ConsumerProtocolAssignment
// bytes: the coordinator of a classic group never reads them, and the
// consumer protocol's are structured in Kafka too.
//
// Every request here but FindCoordinator is a CoordinatorRequest: a broker
// that hosts no group coordinator answers NotCoordinator().

// Coordinator key types (FindCoordinatorRequest.KeyType).
const (
	CoordinatorKeyGroup       int8 = 0
	CoordinatorKeyTransaction int8 = 1
)

// NoGeneration is the generation id (and member epoch) of a request sent
// without one: a commit from outside the group (assign-mode consumers
// commit with generation -1 and no member id).
const NoGeneration int32 = -1

// Group error codes, as in org.apache.kafka.common.protocol.Errors.
const (
	IllegalGeneration         ErrorCode = 22
	InconsistentGroupProtocol ErrorCode = 23
	InvalidGroupID            ErrorCode = 24
	UnknownMemberID           ErrorCode = 25
	InvalidSessionTimeout     ErrorCode = 26
	RebalanceInProgress       ErrorCode = 27
	InvalidCommitOffsetSize   ErrorCode = 28
	GroupMaxSizeReached       ErrorCode = 81
	FencedInstanceID          ErrorCode = 82
	MemberIDRequired          ErrorCode = 79
	UnstableOffsetCommit      ErrorCode = 88
	GroupIDNotFound           ErrorCode = 69
	NonEmptyGroup             ErrorCode = 68
	UnreleasedInstanceID      ErrorCode = 111
	UnsupportedAssignor       ErrorCode = 112
	StaleMemberEpoch          ErrorCode = 113
	FencedMemberEpoch         ErrorCode = 110
	UnknownServerError        ErrorCode = -1
)

func init() {
	// kafkasim:orderless: filling a map
	for code, name := range map[ErrorCode]string{
		IllegalGeneration: "ILLEGAL_GENERATION", InconsistentGroupProtocol: "INCONSISTENT_GROUP_PROTOCOL",
		InvalidGroupID: "INVALID_GROUP_ID", UnknownMemberID: "UNKNOWN_MEMBER_ID",
		InvalidSessionTimeout: "INVALID_SESSION_TIMEOUT", RebalanceInProgress: "REBALANCE_IN_PROGRESS",
		InvalidCommitOffsetSize: "INVALID_COMMIT_OFFSET_SIZE", GroupMaxSizeReached: "GROUP_MAX_SIZE_REACHED",
		FencedInstanceID: "FENCED_INSTANCE_ID", MemberIDRequired: "MEMBER_ID_REQUIRED",
		UnstableOffsetCommit: "UNSTABLE_OFFSET_COMMIT", GroupIDNotFound: "GROUP_ID_NOT_FOUND",
		NonEmptyGroup: "NON_EMPTY_GROUP", UnreleasedInstanceID: "UNRELEASED_INSTANCE_ID",
		UnsupportedAssignor: "UNSUPPORTED_ASSIGNOR", StaleMemberEpoch: "STALE_MEMBER_EPOCH",
		FencedMemberEpoch: "FENCED_MEMBER_EPOCH", UnknownServerError: "UNKNOWN_SERVER_ERROR",
	} {
		errorNames[code] = name
	}
}

// FindCoordinatorRequest asks any broker which broker coordinates a group
// (or a transactional id).
type FindCoordinatorRequest struct {
	CorrelationID uint64
	KeyType       int8
	Key           string
}

// FindCoordinatorResponse names the coordinator: the leader of the key's
// partition of the internal topic, as the answering broker's metadata has
// it. COORDINATOR_NOT_AVAILABLE while the topic does not exist yet (the
// broker has asked the controller to create it) or the partition has no
// leader.
type FindCoordinatorResponse struct {
	CorrelationID uint64
	Key           string
	Error         ErrorCode
	NodeID        int32
	Node          sim.NodeID
}

// ConsumerSubscription is a classic member's protocol metadata for the
// consumer protocol type (ConsumerProtocolSubscription v3): its topics, the
// partitions it owns (cooperative assignors keep them), the generation they
// were assigned in (the sticky assignors' user data) and its rack.
type ConsumerSubscription struct {
	Topics          []string
	OwnedPartitions []TopicPartition
	Generation      int32
	RackID          string
}

// JoinGroupProtocol is one assignor a member supports, best first.
type JoinGroupProtocol struct {
	Name         string
	Subscription ConsumerSubscription
}

// JoinGroupRequest joins (or rejoins) a classic group. A new dynamic member
// sends no member id and is told MEMBER_ID_REQUIRED with one to join with
// (KIP-394).
type JoinGroupRequest struct {
	CorrelationID    uint64
	GroupID          string
	SessionTimeout   time.Duration
	RebalanceTimeout time.Duration // the consumer's max.poll.interval.ms
	MemberID         string
	GroupInstanceID  string // "": dynamic membership
	ClientID         string // the request header's client.id: a new member id starts with it
	ProtocolType     string // "consumer"
	Protocols        []JoinGroupProtocol
	Reason           string
}

// JoinGroupMember is a member as the leader learns of it.
type JoinGroupMember struct {
	MemberID        string
	GroupInstanceID string
	Subscription    ConsumerSubscription
}

// JoinGroupResponse ends a member's join: the generation, the protocol
// chosen, the leader, and for the leader every member's subscription.
type JoinGroupResponse struct {
	CorrelationID  uint64
	Error          ErrorCode
	GenerationID   int32
	ProtocolType   string
	ProtocolName   string
	Leader         string
	SkipAssignment bool
	MemberID       string
	Members        []JoinGroupMember
}

// MemberAssignment is the partitions assigned to one member.
type MemberAssignment struct {
	MemberID   string
	Partitions []TopicPartition
}

// SyncGroupRequest sends the leader's assignment (followers send none) and
// waits for the member's own.
type SyncGroupRequest struct {
	CorrelationID   uint64
	GroupID         string
	GenerationID    int32
	MemberID        string
	GroupInstanceID string
	ProtocolType    string
	ProtocolName    string
	Assignments     []MemberAssignment
}

// SyncGroupResponse is the member's assignment in the generation.
type SyncGroupResponse struct {
	CorrelationID uint64
	Error         ErrorCode
	ProtocolType  string
	ProtocolName  string
	Partitions    []TopicPartition
}

// HeartbeatRequest keeps a classic member's session alive; its answer
// REBALANCE_IN_PROGRESS tells the member to rejoin.
type HeartbeatRequest struct {
	CorrelationID   uint64
	GroupID         string
	GenerationID    int32
	MemberID        string
	GroupInstanceID string
}

// HeartbeatResponse answers it.
type HeartbeatResponse struct {
	CorrelationID uint64
	Error         ErrorCode
}

// LeaveGroupMember is one member leaving (a static member leaves by its
// instance id).
type LeaveGroupMember struct {
	MemberID        string
	GroupInstanceID string
	Reason          string
}

// LeaveGroupRequest removes members from a classic group.
type LeaveGroupRequest struct {
	CorrelationID uint64
	GroupID       string
	Members       []LeaveGroupMember
}

// LeaveGroupMemberResponse is one member's outcome.
type LeaveGroupMemberResponse struct {
	MemberID        string
	GroupInstanceID string
	Error           ErrorCode
}

// LeaveGroupResponse answers it.
type LeaveGroupResponse struct {
	CorrelationID uint64
	Error         ErrorCode
	Members       []LeaveGroupMemberResponse
}

// OffsetCommitPartition is one partition's offset to commit.
type OffsetCommitPartition struct {
	TopicPartition
	CommittedOffset      int64
	CommittedLeaderEpoch int32 // -1: unknown
	Metadata             string
}

// OffsetCommitRequest commits offsets. GenerationIDOrMemberEpoch is the
// classic member's generation or the consumer-protocol member's epoch
// (KIP-848 reuses the field); -1 with no member id commits from outside the
// group, which only an empty (or unknown) group accepts.
type OffsetCommitRequest struct {
	CorrelationID             uint64
	GroupID                   string
	GenerationIDOrMemberEpoch int32
	MemberID                  string
	GroupInstanceID           string
	Partitions                []OffsetCommitPartition
}

// OffsetCommitPartitionResponse is one partition's outcome.
type OffsetCommitPartitionResponse struct {
	TopicPartition
	Error ErrorCode
}

// OffsetCommitResponse answers it: every partition carries the same error
// when the request as a whole was refused (Kafka answers so too).
type OffsetCommitResponse struct {
	CorrelationID uint64
	Partitions    []OffsetCommitPartitionResponse
}

// OffsetFetchRequest reads a group's committed offsets. RequireStable
// (KIP-447) makes partitions with a pending transactional commit answer
// UNSTABLE_OFFSET_COMMIT. A consumer-protocol member sends its id and epoch
// (OffsetFetch v9), which the coordinator checks (STALE_MEMBER_EPOCH).
type OffsetFetchRequest struct {
	CorrelationID uint64
	GroupID       string
	MemberID      string
	MemberEpoch   int32 // -1: not sent
	Partitions    []TopicPartition
	RequireStable bool
}

// OffsetFetchPartitionResponse is one partition's committed offset: -1 when
// nothing is committed.
type OffsetFetchPartitionResponse struct {
	TopicPartition
	CommittedOffset      int64
	CommittedLeaderEpoch int32
	Metadata             string
	Error                ErrorCode
}

// OffsetFetchResponse answers it.
type OffsetFetchResponse struct {
	CorrelationID uint64
	Error         ErrorCode
	Partitions    []OffsetFetchPartitionResponse
}

// ConsumerGroupHeartbeatRequest is a consumer-protocol (KIP-848) member's
// heartbeat: it joins (MemberEpoch 0), keeps its session, reports the
// partitions it owns, and leaves (MemberEpoch -1, or -2 for a static member
// that will come back). Fields that did not change since the last heartbeat
// may be left out (nil / -1 / ""), as Kafka's client sends them.
type ConsumerGroupHeartbeatRequest struct {
	CorrelationID        uint64
	GroupID              string
	MemberID             string
	MemberEpoch          int32
	InstanceID           string
	RackID               string
	RebalanceTimeout     time.Duration // -1: unchanged
	SubscribedTopicNames []string      // nil: unchanged
	ServerAssignor       string        // "": unchanged or the broker's default
	// OwnedPartitions is what the member owns now; nil: unchanged.
	OwnedPartitions []TopicPartition
	OwnedSent       bool // OwnedPartitions was sent (an empty list is a list)
}

// Consumer-protocol member epochs a heartbeat sends to leave.
const (
	LeaveGroupMemberEpoch       int32 = -1
	LeaveGroupStaticMemberEpoch int32 = -2
)

// ConsumerGroupHeartbeatResponse answers it: the member's epoch, the
// heartbeat interval, and, when it changed, the member's assignment (what
// it may own now: partitions it must revoke are left out; partitions still
// owned by another member come in a later heartbeat).
type ConsumerGroupHeartbeatResponse struct {
	CorrelationID     uint64
	Error             ErrorCode
	ErrorMessage      string
	MemberID          string
	MemberEpoch       int32
	HeartbeatInterval time.Duration
	Assignment        []TopicPartition
	HasAssignment     bool // Assignment was sent (an empty list is a list)
}

// MessageName implements sim.Message.
func (*FindCoordinatorRequest) MessageName() string { return "FindCoordinator" }

// MessageName implements sim.Message.
func (*FindCoordinatorResponse) MessageName() string { return "FindCoordinatorResponse" }

// MessageName implements sim.Message.
func (*JoinGroupRequest) MessageName() string { return "JoinGroup" }

// MessageName implements sim.Message.
func (*JoinGroupResponse) MessageName() string { return "JoinGroupResponse" }

// MessageName implements sim.Message.
func (*SyncGroupRequest) MessageName() string { return "SyncGroup" }

// MessageName implements sim.Message.
func (*SyncGroupResponse) MessageName() string { return "SyncGroupResponse" }

// MessageName implements sim.Message.
func (*HeartbeatRequest) MessageName() string { return "Heartbeat" }

// MessageName implements sim.Message.
func (*HeartbeatResponse) MessageName() string { return "HeartbeatResponse" }

// MessageName implements sim.Message.
func (*LeaveGroupRequest) MessageName() string { return "LeaveGroup" }

// MessageName implements sim.Message.
func (*LeaveGroupResponse) MessageName() string { return "LeaveGroupResponse" }

// MessageName implements sim.Message.
func (*OffsetCommitRequest) MessageName() string { return "OffsetCommit" }

// MessageName implements sim.Message.
func (*OffsetCommitResponse) MessageName() string { return "OffsetCommitResponse" }

// MessageName implements sim.Message.
func (*OffsetFetchRequest) MessageName() string { return "OffsetFetch" }

// MessageName implements sim.Message.
func (*OffsetFetchResponse) MessageName() string { return "OffsetFetchResponse" }

// MessageName implements sim.Message.
func (*ConsumerGroupHeartbeatRequest) MessageName() string { return "ConsumerGroupHeartbeat" }

// MessageName implements sim.Message.
func (*ConsumerGroupHeartbeatResponse) MessageName() string {
	return "ConsumerGroupHeartbeatResponse"
}

// NotCoordinator answers with FindCoordinator's COORDINATOR_NOT_AVAILABLE.
func (m *FindCoordinatorRequest) NotCoordinator() sim.Message {
	return &FindCoordinatorResponse{CorrelationID: m.CorrelationID, Key: m.Key, Error: CoordinatorNotAvailable, NodeID: -1, Node: sim.NoNode}
}

// GroupRequest is a request a group coordinator serves: it names its group,
// and any error answers it with that error alone (Kafka's
// getErrorResponse).
type GroupRequest interface {
	sim.Message
	// GroupKey is the group the request is for.
	GroupKey() string
	// ErrorResponse is the request's answer with err.
	ErrorResponse(err ErrorCode) sim.Message
}

// GroupKey implements GroupRequest.
func (m *JoinGroupRequest) GroupKey() string { return m.GroupID }

// GroupKey implements GroupRequest.
func (m *SyncGroupRequest) GroupKey() string { return m.GroupID }

// GroupKey implements GroupRequest.
func (m *HeartbeatRequest) GroupKey() string { return m.GroupID }

// GroupKey implements GroupRequest.
func (m *LeaveGroupRequest) GroupKey() string { return m.GroupID }

// GroupKey implements GroupRequest.
func (m *OffsetCommitRequest) GroupKey() string { return m.GroupID }

// GroupKey implements GroupRequest.
func (m *OffsetFetchRequest) GroupKey() string { return m.GroupID }

// GroupKey implements GroupRequest.
func (m *ConsumerGroupHeartbeatRequest) GroupKey() string { return m.GroupID }

// ErrorResponse implements GroupRequest.
func (m *JoinGroupRequest) ErrorResponse(err ErrorCode) sim.Message {
	return &JoinGroupResponse{CorrelationID: m.CorrelationID, Error: err, GenerationID: -1, MemberID: m.MemberID}
}

// ErrorResponse implements GroupRequest.
func (m *SyncGroupRequest) ErrorResponse(err ErrorCode) sim.Message {
	return &SyncGroupResponse{CorrelationID: m.CorrelationID, Error: err}
}

// ErrorResponse implements GroupRequest.
func (m *HeartbeatRequest) ErrorResponse(err ErrorCode) sim.Message {
	return &HeartbeatResponse{CorrelationID: m.CorrelationID, Error: err}
}

// ErrorResponse implements GroupRequest.
func (m *LeaveGroupRequest) ErrorResponse(err ErrorCode) sim.Message {
	return &LeaveGroupResponse{CorrelationID: m.CorrelationID, Error: err}
}

// ErrorResponse implements GroupRequest: every partition carries err.
func (m *OffsetCommitRequest) ErrorResponse(err ErrorCode) sim.Message { return m.Refused(err) }

// Refused is the request's answer with err for every partition.
func (m *OffsetCommitRequest) Refused(err ErrorCode) *OffsetCommitResponse {
	r := &OffsetCommitResponse{CorrelationID: m.CorrelationID, Partitions: make([]OffsetCommitPartitionResponse, len(m.Partitions))}
	for i, p := range m.Partitions {
		r.Partitions[i] = OffsetCommitPartitionResponse{TopicPartition: p.TopicPartition, Error: err}
	}
	return r
}

// ErrorResponse implements GroupRequest.
func (m *OffsetFetchRequest) ErrorResponse(err ErrorCode) sim.Message {
	return &OffsetFetchResponse{CorrelationID: m.CorrelationID, Error: err}
}

// ErrorResponse implements GroupRequest.
func (m *ConsumerGroupHeartbeatRequest) ErrorResponse(err ErrorCode) sim.Message {
	return &ConsumerGroupHeartbeatResponse{CorrelationID: m.CorrelationID, Error: err, MemberID: m.MemberID, MemberEpoch: m.MemberEpoch}
}

// NotCoordinator answers with NOT_COORDINATOR.
func (m *JoinGroupRequest) NotCoordinator() sim.Message { return m.ErrorResponse(NotCoordinator) }

// NotCoordinator answers with NOT_COORDINATOR.
func (m *SyncGroupRequest) NotCoordinator() sim.Message { return m.ErrorResponse(NotCoordinator) }

// NotCoordinator answers with NOT_COORDINATOR.
func (m *HeartbeatRequest) NotCoordinator() sim.Message { return m.ErrorResponse(NotCoordinator) }

// NotCoordinator answers with NOT_COORDINATOR.
func (m *LeaveGroupRequest) NotCoordinator() sim.Message { return m.ErrorResponse(NotCoordinator) }

// NotCoordinator answers with NOT_COORDINATOR for every partition.
func (m *OffsetCommitRequest) NotCoordinator() sim.Message { return m.ErrorResponse(NotCoordinator) }

// NotCoordinator answers with NOT_COORDINATOR.
func (m *OffsetFetchRequest) NotCoordinator() sim.Message { return m.ErrorResponse(NotCoordinator) }

// NotCoordinator answers with NOT_COORDINATOR.
func (m *ConsumerGroupHeartbeatRequest) NotCoordinator() sim.Message {
	return m.ErrorResponse(NotCoordinator)
}
