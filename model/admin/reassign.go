package admin

import (
	"fmt"
	"strings"

	"kafkasim/model/proto"
)

// Reassign queues an AlterPartitionReassignments request (KIP-455) moving
// tp to replicas. The answer says the reassignment started, not that it
// finished (kafka-reassign-partitions.sh --execute returns then too); a
// partition's error is logged, not retried.
func (n *Node) Reassign(tp proto.TopicPartition, replicas []int32) {
	n.enqueue(&op{reassign: &proto.AlterPartitionReassignmentsRequest{
		Partitions: []proto.ReassignablePartition{{Partition: tp, Replicas: replicas}}}})
}

// noteReassignment logs an AlterPartitionReassignments answer, one line:
// "reassign: orders-0 NONE" or "reassign: orders-0 INVALID_REPLICA_ASSIGNMENT
// (...)".
func (n *Node) noteReassignment(m *proto.AlterPartitionReassignmentsResponse) {
	var b strings.Builder
	b.WriteString("reassign:")
	for i, r := range m.Results {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, " %s-%d %s", r.Partition.Topic, r.Partition.Partition, r.Error)
		if r.Message != "" {
			b.WriteString(" (" + r.Message + ")")
		}
	}
	n.env.Note("admin", b.String())
	n.Log = append(n.Log, fmt.Sprintf("%v %s", n.env.Now(), b.String()))
}
