package cluster

import (
	"fmt"
	"slices"

	"kafkasim/model/proto"
)

// Reassign is the admin operation of the custom fault reassign: an
// AlterPartitionReassignments request (KIP-455, kafka-reassign-partitions.sh
// --execute) moving Topic-Partition to Replicas, the first of them its
// preferred leader.
type Reassign struct {
	Topic     string
	Partition int32
	Replicas  []int32
}

func (r Reassign) String() string {
	return fmt.Sprintf("reassign %s-%d to %v", r.Topic, r.Partition, r.Replicas)
}

func (c *Cluster) reassign(op Reassign) (string, error) {
	a := c.AdminNode()
	if a == nil {
		return "", fmt.Errorf("the admin client is down")
	}
	a.Reassign(proto.TopicPartition{Topic: op.Topic, Partition: op.Partition}, slices.Clone(op.Replicas))
	return "requested", nil
}
