// Package group is Kafka 4's group coordinator, hosted on the brokers on
// the partitions of __consumer_offsets: FindCoordinator, the classic group
// protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup), OffsetCommit and
// OffsetFetch, and the hook where the consumer protocol (KIP-848) plugs in.
// It follows group-coordinator's GroupCoordinatorService, the
// CoordinatorRuntime that runs one shard per partition of the topic,
// GroupMetadataManager (classic groups), OffsetMetadataManager and
// ClassicGroup; docs/model.md says what is simplified.
package group

import (
	"math"
	"strconv"
	"time"

	"kafkasim/model/broker"
	"kafkasim/model/proto"
)

// Topic is the group coordinator's internal topic.
const Topic = "__consumer_offsets"

// Config is the group coordinator's configuration: the broker configs of
// the same names (units last), with Kafka's defaults in DefaultConfig.
type Config struct {
	// OffsetsTopicNumPartitions is offsets.topic.num.partitions (50): the
	// partition count a FindCoordinator creates the topic with, and the one
	// partitionFor uses until the topic exists.
	OffsetsTopicNumPartitions int
	// OffsetsTopicReplicationFactor is offsets.topic.replication.factor (3).
	OffsetsTopicReplicationFactor int
	// OffsetsTopicConfigs are the topic configs the topic is created with
	// besides cleanup.policy=compact (segment.bytes is Kafka's
	// offsets.topic.segment.bytes; a scenario may set min.insync.replicas
	// and others): topic configs as Kafka spells them.
	OffsetsTopicConfigs map[string]string
	// OffsetsCommitTimeout is offsets.commit.timeout.ms (5000): the
	// coordinator runtime's write timeout.
	OffsetsCommitTimeout time.Duration
	// OffsetsLoadBufferSizeBytes is offsets.load.buffer.size (5 MiB): how
	// much of the log the loader reads at a time.
	OffsetsLoadBufferSizeBytes int
	// GroupInitialRebalanceDelay is group.initial.rebalance.delay.ms (3000).
	GroupInitialRebalanceDelay time.Duration
	// GroupMinSessionTimeout is group.min.session.timeout.ms (6000).
	GroupMinSessionTimeout time.Duration
	// GroupMaxSessionTimeout is group.max.session.timeout.ms (1800000).
	GroupMaxSessionTimeout time.Duration
	// GroupMaxSize is group.max.size (Integer.MAX_VALUE).
	GroupMaxSize int
	// GroupConsumerSessionTimeout is group.consumer.session.timeout.ms
	// (45000), for the consumer protocol (Consumer).
	GroupConsumerSessionTimeout time.Duration
	// GroupConsumerHeartbeatInterval is group.consumer.heartbeat.interval.ms
	// (5000), for the consumer protocol (Consumer).
	GroupConsumerHeartbeatInterval time.Duration
	// Consumer builds the consumer protocol's state machine for a shard
	// (consumer.go); nil: no group is a consumer group, and a
	// ConsumerGroupHeartbeat is answered GROUP_ID_NOT_FOUND.
	Consumer func(ConsumerShardEnv) ConsumerProtocol
	// Bugs switched on (docs/bug-zoo.md names).
	Bugs Bugs
	// Audit sees what the god view's group invariants check (nil: none).
	Audit Auditor
}

// Bugs are the bug zoo switches that live in the group coordinator.
type Bugs struct {
	// NoGenerationFencing is no-generation-fencing: OffsetCommit is accepted
	// from stale generations and unknown members.
	NoGenerationFencing bool
}

// classicGroupNewMemberJoinTimeout is Kafka's
// GroupMetadataManager.classicGroupNewMemberJoinTimeoutMs (5 minutes, not
// a config): how long a new member's parked JoinGroup may wait.
const classicGroupNewMemberJoinTimeout = 5 * time.Minute

// DefaultConfig has Kafka's defaults.
func DefaultConfig() Config {
	return Config{
		OffsetsTopicNumPartitions:      50,
		OffsetsTopicReplicationFactor:  3,
		OffsetsCommitTimeout:           5 * time.Second,
		OffsetsLoadBufferSizeBytes:     5 << 20,
		GroupInitialRebalanceDelay:     3 * time.Second,
		GroupMinSessionTimeout:         6 * time.Second,
		GroupMaxSessionTimeout:         30 * time.Minute,
		GroupMaxSize:                   math.MaxInt32,
		GroupConsumerSessionTimeout:    45 * time.Second,
		GroupConsumerHeartbeatInterval: 5 * time.Second,
	}
}

// Spec is the group coordinator as a broker hosts it: one per broker
// start, serving the partitions of __consumer_offsets the broker leads.
func Spec(cfg Config) broker.CoordinatorSpec {
	return broker.CoordinatorSpec{Topic: Topic, New: func(t *broker.InternalTopics) broker.Coordinator { return newCoordinator(cfg, t) }}
}

// offsetsTopic is the topic a FindCoordinator asks the controller to
// create: compacted, as Kafka's GroupCoordinator.groupMetadataTopicConfigs.
func (cfg Config) offsetsTopic() proto.CreatableTopic {
	t := proto.CreatableTopic{Name: Topic, NumPartitions: cfg.OffsetsTopicNumPartitions,
		ReplicationFactor: cfg.OffsetsTopicReplicationFactor, Configs: map[string]string{}}
	for k, v := range cfg.OffsetsTopicConfigs { // kafkasim:orderless: copying into a map
		switch k {
		case "min.insync.replicas":
			if n, err := strconv.Atoi(v); err == nil {
				t.MinInsyncReplicas = n
			}
		case "unclean.leader.election.enable":
			u := v == "true"
			t.UncleanLeaderElection = &u
		default:
			t.Configs[k] = v
		}
	}
	t.Configs["cleanup.policy"] = "compact"
	return t
}
