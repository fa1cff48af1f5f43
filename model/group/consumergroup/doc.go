// Package consumergroup is one KIP-848 consumer group on its coordinator: the
// decisions of a ConsumerGroupHeartbeat (join, subscription change, target
// assignment, reconciliation, fencing, leave, static membership), the session
// and rebalance timeouts, the records the coordinator writes to
// __consumer_offsets and their replay, the OffsetCommit / OffsetFetch checks
// of a consumer group, and what `describe groups` shows.
//
// It follows Kafka 4.x's group coordinator
// (group-coordinator/src/main/java/org/apache/kafka/coordinator/group/):
// GroupMetadataManager.consumerGroupHeartbeat and consumerGroupLeave,
// modern/consumer/ConsumerGroup, ConsumerGroupMember and
// CurrentAssignmentBuilder, modern/TargetAssignmentBuilder and
// GroupCoordinatorRecordHelpers.
//
// As in Kafka, a handler does not change the group: it returns the records
// that describe the change, and the group changes only by replaying them
// (Group.Replay). The coordinator shell replays a heartbeat's records at
// once, answers once they are committed, and, should the append fail,
// restores the Group it cloned before (Kafka reverts to its snapshot
// registry's last committed offset). Loading a partition replays the same
// records, so a failover rebuilds exactly the state the old coordinator had.
//
// The package is pure: it knows nothing of brokers, the network or the
// scheduler. What it needs from the world comes in an Env: the random
// stream member ids are drawn from, the partition counts of the broker's
// metadata image, the assignors and the configuration.
package consumergroup
