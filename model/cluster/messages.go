package cluster

import "slices"

// MessageNames are the Kafka APIs the simulated cluster speaks, as its
// messages name themselves (sim.Message): what a stall fault may hold. A
// qualified name stands for part of an API (a follower's fetch, a KRaft
// voter's). A test holds the list to what a run sends.
var MessageNames = []string{
	"AddPartitionsToTxn", "AddPartitionsToTxnResponse",
	"AllocateProducerIds", "AllocateProducerIdsResponse",
	"AlterPartition", "AlterPartitionResponse",
	"AlterPartitionReassignments", "AlterPartitionReassignmentsResponse",
	"BeginQuorumEpoch", "BeginQuorumEpochResponse",
	"BrokerHeartbeat", "BrokerHeartbeatResponse",
	"BrokerRegistration", "BrokerRegistrationResponse",
	"CreatePartitions", "CreatePartitionsResponse",
	"ConsumerGroupHeartbeat", "ConsumerGroupHeartbeatResponse",
	"CreateTopics", "CreateTopicsResponse",
	"ElectLeaders", "ElectLeadersResponse",
	"EndQuorumEpoch", "EndQuorumEpochResponse",
	"EndTxn", "EndTxnResponse",
	"Fetch", "Fetch(replica)", "Fetch(metadata)",
	"FetchResponse", "FetchResponse(metadata)",
	"FindCoordinator", "FindCoordinatorResponse",
	"Heartbeat", "HeartbeatResponse",
	"IncrementalAlterConfigs", "IncrementalAlterConfigsResponse",
	"InitProducerId", "InitProducerIdResponse",
	"JoinGroup", "JoinGroupResponse",
	"LeaveGroup", "LeaveGroupResponse",
	"ListOffsets", "ListOffsetsResponse",
	"Metadata", "MetadataResponse",
	"OffsetCommit", "OffsetCommitResponse",
	"OffsetFetch", "OffsetFetchResponse",
	"OffsetsForLeaderEpoch", "OffsetsForLeaderEpochResponse",
	"Produce", "ProduceResponse",
	"StoreApply", "StoreApplyResponse",
	"SyncGroup", "SyncGroupResponse",
	"Vote", "VoteResponse",
	"WriteTxnMarkers", "WriteTxnMarkersResponse",
}

// KnownMessageName reports whether name is one of MessageNames.
func KnownMessageName(name string) bool { return slices.Contains(MessageNames, name) }
