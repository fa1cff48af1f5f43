package group

import "kafkasim/internal/kafkahash"

// partitionFor is the partition of __consumer_offsets whose leader
// coordinates groupID (GroupCoordinatorService.partitionFor:
// Utils.abs(groupId.hashCode()) % numPartitions).
func partitionFor(groupID string, numPartitions int) int32 {
	return kafkahash.CoordinatorPartition(groupID, numPartitions)
}
