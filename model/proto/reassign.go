package proto

import "kafkasim/sim"

// AlterPartitionReassignmentsRequest asks the controller to move partitions
// to other brokers (KIP-455, kafka-reassign-partitions.sh --execute): each
// partition's replicas become Replicas once the new ones have caught up.
type AlterPartitionReassignmentsRequest struct {
	CorrelationID uint64
	Partitions    []ReassignablePartition
}

// ReassignablePartition is one partition's target assignment.
type ReassignablePartition struct {
	Partition TopicPartition
	Replicas  []int32
}

// ReassignablePartitionResult is one partition's answer.
type ReassignablePartitionResult struct {
	Partition TopicPartition
	Error     ErrorCode
	Message   string
}

// AlterPartitionReassignmentsResponse answers it: the reassignments are
// started (the answer waits for their records' commit), not finished.
type AlterPartitionReassignmentsResponse struct {
	CorrelationID  uint64
	Error          ErrorCode
	Results        []ReassignablePartitionResult
	ControllerHint sim.NodeID
}

// MessageName implements sim.Message.
func (*AlterPartitionReassignmentsRequest) MessageName() string { return "AlterPartitionReassignments" }

// MessageName implements sim.Message.
func (*AlterPartitionReassignmentsResponse) MessageName() string {
	return "AlterPartitionReassignmentsResponse"
}
