package proto

import (
	"fmt"
	"strconv"

	"kafkasim/sim"
)

// The controller APIs: what brokers and admin clients ask of the active
// controller. Every request carries a correlation id that its response
// echoes. A controller that is not active answers NOT_CONTROLLER with the
// active controller it knows of (ControllerHint), as Kafka's do.

// BrokerRegistrationRequest registers a booting broker. PreviousBrokerEpoch is
// the epoch its clean-shutdown file recorded, or -1 after an unclean stop
// (KIP-966).
type BrokerRegistrationRequest struct {
	CorrelationID       uint64
	BrokerID            int32
	IncarnationID       uint64
	Rack                string
	PreviousBrokerEpoch int64
}

// BrokerRegistrationResponse gives the broker its epoch.
type BrokerRegistrationResponse struct {
	CorrelationID  uint64
	Error          ErrorCode
	BrokerEpoch    int64
	ControllerHint sim.NodeID
}

// BrokerHeartbeatRequest keeps a broker's session alive and asks for state
// changes.
type BrokerHeartbeatRequest struct {
	CorrelationID         uint64
	BrokerID              int32
	BrokerEpoch           int64
	CurrentMetadataOffset int64
	WantFence             bool
	WantShutDown          bool
}

// BrokerHeartbeatResponse tells the broker where it stands.
type BrokerHeartbeatResponse struct {
	CorrelationID  uint64
	Error          ErrorCode
	IsCaughtUp     bool
	IsFenced       bool
	ShouldShutDown bool
	ControllerHint sim.NodeID
}

// ReplicaState names an ISR member with the broker epoch the leader saw it
// with (KIP-903).
type ReplicaState struct {
	BrokerID    int32
	BrokerEpoch int64
}

// AlterPartitionItem is one partition's proposed ISR.
type AlterPartitionItem struct {
	Topic          string
	Partition      int32
	LeaderEpoch    int32
	PartitionEpoch int32
	NewISR         []ReplicaState
	// Recovered reports leaderRecoveryState RECOVERED after an unclean election.
	Recovered bool
}

// AlterPartitionRequest is a partition leader's request to change ISRs.
type AlterPartitionRequest struct {
	CorrelationID uint64
	BrokerID      int32
	BrokerEpoch   int64
	Partitions    []AlterPartitionItem
}

// AlterPartitionResult is one partition's outcome and its state afterwards.
type AlterPartitionResult struct {
	Topic          string
	Partition      int32
	Error          ErrorCode
	Leader         int32
	LeaderEpoch    int32
	PartitionEpoch int32
	ISR            []int32
}

// AlterPartitionResponse answers an AlterPartitionRequest.
type AlterPartitionResponse struct {
	CorrelationID  uint64
	Error          ErrorCode
	Partitions     []AlterPartitionResult
	ControllerHint sim.NodeID
}

// CreatableTopic is one topic to create. Zero values mean the broker
// defaults; Assignment, when given, fixes the replicas (first = preferred
// leader), as kafka-topics --replica-assignment does.
type CreatableTopic struct {
	Name                  string
	NumPartitions         int
	ReplicationFactor     int
	Assignment            [][]int32
	MinInsyncReplicas     int
	UncleanLeaderElection *bool
	// Configs are other topic configs, as Kafka spells them.
	Configs map[string]string
}

// CreateTopicsRequest creates topics.
type CreateTopicsRequest struct {
	CorrelationID uint64
	Topics        []CreatableTopic
}

// CreateTopicResult is one topic's outcome.
type CreateTopicResult struct {
	Name    string
	Error   ErrorCode
	Message string
}

// CreateTopicsResponse answers CreateTopicsRequest.
type CreateTopicsResponse struct {
	CorrelationID  uint64
	Error          ErrorCode
	Topics         []CreateTopicResult
	ControllerHint sim.NodeID
}

// CreatePartitionsRequest raises a topic's partition count.
type CreatePartitionsRequest struct {
	CorrelationID uint64
	Topic         string
	Count         int
}

// CreatePartitionsResponse answers it.
type CreatePartitionsResponse struct {
	CorrelationID  uint64
	Error          ErrorCode
	Message        string
	ControllerHint sim.NodeID
}

// ElectionType is ElectLeaders' election type (Kafka's ElectionType).
type ElectionType uint8

const (
	// ElectionPreferred moves leadership to the preferred replica, the
	// first of the assignment, when it is in the ISR and may lead.
	ElectionPreferred ElectionType = iota
	// ElectionUnclean elects a leader for a partition that has none, from
	// outside the ISR if no ISR member may lead: data may be lost.
	ElectionUnclean
)

func (t ElectionType) String() string {
	if t == ElectionUnclean {
		return "unclean"
	}
	return "preferred"
}

// ElectLeadersRequest asks the controller to elect leaders (KIP-460,
// kafka-leader-election.sh). Partitions nil means every partition of every
// topic, as Kafka's null topicPartitions.
type ElectLeadersRequest struct {
	CorrelationID uint64
	Type          ElectionType
	Partitions    []TopicPartition
}

// ElectLeadersResult is one partition's outcome.
type ElectLeadersResult struct {
	Partition TopicPartition
	Error     ErrorCode
	Message   string
}

// ElectLeadersResponse answers ElectLeadersRequest.
type ElectLeadersResponse struct {
	CorrelationID  uint64
	Error          ErrorCode
	Results        []ElectLeadersResult
	ControllerHint sim.NodeID
}

// MessageName implements sim.Message.
func (*ElectLeadersRequest) MessageName() string { return "ElectLeaders" }

// MessageName implements sim.Message.
func (*ElectLeadersResponse) MessageName() string { return "ElectLeadersResponse" }

// MessageName implements sim.Message.
func (*BrokerRegistrationRequest) MessageName() string { return "BrokerRegistration" }

// MessageName implements sim.Message.
func (*BrokerRegistrationResponse) MessageName() string { return "BrokerRegistrationResponse" }

// MessageName implements sim.Message.
func (*BrokerHeartbeatRequest) MessageName() string { return "BrokerHeartbeat" }

// MessageName implements sim.Message.
func (*BrokerHeartbeatResponse) MessageName() string { return "BrokerHeartbeatResponse" }

// MessageName implements sim.Message.
func (*AlterPartitionRequest) MessageName() string { return "AlterPartition" }

// MessageName implements sim.Message.
func (*AlterPartitionResponse) MessageName() string { return "AlterPartitionResponse" }

// MessageName implements sim.Message.
func (*CreateTopicsRequest) MessageName() string { return "CreateTopics" }

// MessageName implements sim.Message.
func (*CreateTopicsResponse) MessageName() string { return "CreateTopicsResponse" }

// MessageName implements sim.Message.
func (*CreatePartitionsRequest) MessageName() string { return "CreatePartitions" }

// MessageName implements sim.Message.
func (*CreatePartitionsResponse) MessageName() string { return "CreatePartitionsResponse" }

func (m *BrokerHeartbeatRequest) String() string {
	return fmt.Sprintf("BrokerHeartbeat broker=%d epoch=%d metadataOffset=%d wantFence=%v wantShutDown=%v",
		m.BrokerID, m.BrokerEpoch, m.CurrentMetadataOffset, m.WantFence, m.WantShutDown)
}

func (m *BrokerHeartbeatResponse) String() string {
	return fmt.Sprintf("BrokerHeartbeatResponse err=%s caughtUp=%v fenced=%v shouldShutDown=%v", m.Error, m.IsCaughtUp, m.IsFenced, m.ShouldShutDown)
}

func (m *AlterPartitionRequest) String() string { return string(m.AppendDetail(nil)) }

// AppendDetail appends String's words (sim.DetailAppender), which read as
// fmt's %v of the ISR's states ("[{1 5} {2 7}]"): a broker crash has the
// leaders of a big cluster shrink hundreds of ISRs, a string each before.
func (m *AlterPartitionRequest) AppendDetail(b []byte) []byte {
	b = append(b, "AlterPartition broker="...)
	b = strconv.AppendInt(b, int64(m.BrokerID), 10)
	b = append(b, " epoch="...)
	b = strconv.AppendInt(b, m.BrokerEpoch, 10)
	for _, p := range m.Partitions {
		b = append(b, ' ')
		b = append(b, p.Topic...)
		b = append(b, '-')
		b = strconv.AppendInt(b, int64(p.Partition), 10)
		b = append(b, "(leaderEpoch="...)
		b = strconv.AppendInt(b, int64(p.LeaderEpoch), 10)
		b = append(b, " partitionEpoch="...)
		b = strconv.AppendInt(b, int64(p.PartitionEpoch), 10)
		b = append(b, " isr=["...)
		for i, r := range p.NewISR {
			if i > 0 {
				b = append(b, ' ')
			}
			b = append(b, '{')
			b = strconv.AppendInt(b, int64(r.BrokerID), 10)
			b = append(b, ' ')
			b = strconv.AppendInt(b, r.BrokerEpoch, 10)
			b = append(b, '}')
		}
		b = append(b, "])"...)
	}
	return b
}
