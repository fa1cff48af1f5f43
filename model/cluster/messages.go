package cluster

import "slices"

// MessageNames are the Kafka APIs the simulated cluster speaks, as its
// messages name themselves (sim.Message): what a stall fault may hold. A
// qualified name stands for part of an API (a follower's fetch, a KRaft
// voter's). A test holds the list to what a run sends.
var MessageNames = []string{
	"AlterPartition", "AlterPartitionResponse",
	"BeginQuorumEpoch", "BeginQuorumEpochResponse",
	"BrokerHeartbeat", "BrokerHeartbeatResponse",
	"BrokerRegistration", "BrokerRegistrationResponse",
	"CreatePartitions", "CreatePartitionsResponse",
	"CreateTopics", "CreateTopicsResponse",
	"EndQuorumEpoch", "EndQuorumEpochResponse",
	"Fetch", "Fetch(replica)", "Fetch(metadata)",
	"FetchResponse", "FetchResponse(metadata)",
	"InitProducerId", "InitProducerIdResponse",
	"ListOffsets", "ListOffsetsResponse",
	"Metadata", "MetadataResponse",
	"OffsetsForLeaderEpoch", "OffsetsForLeaderEpochResponse",
	"Produce", "ProduceResponse",
	"Vote", "VoteResponse",
}

// KnownMessageName reports whether name is one of MessageNames.
func KnownMessageName(name string) bool { return slices.Contains(MessageNames, name) }
