package group

import (
	"math/rand/v2"
	"time"

	"kafkasim/model/proto"
)

// The consumer protocol's hook (KIP-848). Kafka's GroupMetadataManager
// runs both protocols in one shard; here the consumer protocol is a state
// machine of its own (model/group/consumergroup), which a shard builds with
// Config.Consumer and hands what is the consumer protocol's:
// ConsumerGroupHeartbeat requests, the records of types 3..8 (replayed in
// log order, at load and as its writes are appended), and the checks an
// OffsetCommit or OffsetFetch for one of its groups goes through
// (ConsumerGroup.validateOffsetCommit / validateOffsetFetch).

// ConsumerRecord is a record of types 3..8, as the consumer protocol writes
// it: its key (a big-endian int16 type first, then the group id as a
// Kafka string: an int16 length and the bytes) and value; Tombstone
// deletes the key.
type ConsumerRecord struct {
	Key, Value string
	Tombstone  bool
}

// ConsumerShardEnv is what the consumer protocol's state machine may do on
// its shard.
type ConsumerShardEnv interface {
	// Now is the broker's clock.
	Now() time.Duration
	// Schedule runs fn after d unless cancelled first, or unless the
	// shard is unloaded first; a second Schedule of key replaces the
	// first (Kafka's CoordinatorTimer keys). fn returns records to write,
	// as an operation's result.
	Schedule(key string, d time.Duration, fn func() []ConsumerRecord)
	// Cancel cancels the timer of key.
	Cancel(key string)
	// Rand is the broker's random stream (the ids of members that join
	// without one).
	Rand() *rand.Rand
	// PartitionCount is a topic's partition count in the broker's
	// metadata image (ok false: no such topic).
	PartitionCount(topic string) (int32, bool)
}

// ConsumerProtocol is a shard's consumer-protocol state machine. Its
// durable state is what Replay applied; Heartbeat must not change it, only
// return the records that do: the shard replays them once they are
// appended (an append that fails at once leaves the state as it was, as
// Kafka's runtime reverts to its snapshot) and answers once they are
// committed.
type ConsumerProtocol interface {
	// Heartbeat serves a ConsumerGroupHeartbeat.
	Heartbeat(req *proto.ConsumerGroupHeartbeatRequest) (*proto.ConsumerGroupHeartbeatResponse, []ConsumerRecord)
	// Replay applies a record of types 3..8.
	Replay(r ConsumerRecord)
	// HasGroup reports whether groupID is a consumer group.
	HasGroup(groupID string) bool
	// ValidateOffsetCommit is ConsumerGroup.validateOffsetCommit's error
	// (NONE, UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH...).
	ValidateOffsetCommit(groupID, memberID, instanceID string, memberEpoch int32) proto.ErrorCode
	// ValidateOffsetFetch is ConsumerGroup.validateOffsetFetch's error.
	ValidateOffsetFetch(groupID, memberID string, memberEpoch int32) proto.ErrorCode
	// OnLoaded is called once the shard has replayed its partition.
	OnLoaded()
	// MemberEpoch is a member's epoch (ok false: no such member).
	MemberEpoch(groupID, memberID string) (epoch int32, ok bool)
}
