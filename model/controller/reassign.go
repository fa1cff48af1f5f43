package controller

import (
	"fmt"
	"slices"

	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// Partition reassignment (KIP-455): AlterPartitionReassignments starts one,
// writing the union of the current and target replicas with the replicas
// being added and removed; the brokers added create the replica and fetch;
// the change that finds every target replica in the ISR (usually the
// leader's AlterPartition) completes it (metadata.ChangeBuilder).

// Reassign is ReplicationControlManager.changePartitionReassignment for one
// partition of an AlterPartitionReassignments request: it validates the
// target as validateManualPartitionAssignment does and builds the change
// that starts (or, when nothing needs to catch up, at once completes) the
// reassignment; no change means the partition already has that assignment.
func Reassign(im *metadata.Image, tp metadata.TopicPartition, target []int32, elr bool) (*metadata.PartitionChange, proto.ErrorCode, string) {
	t := im.Topics[tp.Topic]
	if t == nil {
		return nil, proto.UnknownTopicOrPartition, "Unable to find a topic named " + tp.Topic + "."
	}
	p := im.Partition(tp)
	if p == nil {
		return nil, proto.UnknownTopicOrPartition, fmt.Sprintf("Unable to find partition %s:%d.", tp.Topic, tp.Partition)
	}
	if msg := validManualAssignment(im, target); msg != "" {
		return nil, proto.InvalidReplicaAssignment, msg
	}
	r := metadata.NewReassignment(p.Replicas, target)
	election := metadata.ElectionOnline
	if t.UncleanLeaderElection {
		election = metadata.ElectionUnclean
	}
	b := metadata.NewChangeBuilder(p, im.IsActive, elr, election, t.EffectiveMinISR())
	if !slices.Equal(r.Replicas, p.Replicas) {
		b.TargetReplicas = r.Replicas
	}
	// Kafka sets removing and adding only when non-empty: a second
	// reassignment that adds nothing leaves the first one's adding list.
	if len(r.Removing) > 0 {
		b.TargetRemoving = r.Removing
	}
	if len(r.Adding) > 0 {
		b.TargetAdding = r.Adding
	}
	rec, _ := b.Build()
	return rec, proto.None, ""
}

// validManualAssignment is ReplicationControlManager's
// validateManualPartitionAssignment: not empty, every broker registered,
// none twice.
func validManualAssignment(im *metadata.Image, replicas []int32) string {
	if len(replicas) == 0 {
		return "The manual partition assignment includes an empty replica list."
	}
	ids := slices.Sorted(slices.Values(replicas))
	for i, id := range ids {
		if _, ok := im.Brokers[id]; !ok {
			return fmt.Sprintf("The manual partition assignment includes broker %d, but no such broker is registered.", id)
		}
		if i > 0 && ids[i-1] == id {
			return fmt.Sprintf("The manual partition assignment includes the broker %d more than once.", id)
		}
	}
	return ""
}

// handleAlterPartitionReassignments answers AlterPartitionReassignments
// (ReplicationControlManager.alterPartitionReassignments): each partition's
// change is built on the draft as it was before the request, all are
// written as one batch, and the answer waits for its commit.
func (n *Node) handleAlterPartitionReassignments(from sim.NodeID, m *proto.AlterPartitionReassignmentsRequest) {
	reply := &proto.AlterPartitionReassignmentsResponse{CorrelationID: m.CorrelationID}
	var batch metadata.Batch
	for i, rp := range m.Partitions {
		if i >= MaxElectLeadersPartitions {
			break // MAX_RECORDS_PER_USER_OP, as for ElectLeaders
		}
		tp := metadata.TopicPartition{Topic: rp.Partition.Topic, Partition: rp.Partition.Partition}
		rec, code, msg := Reassign(n.draft, tp, rp.Replicas, n.cfg.ELREnabled)
		if rec != nil {
			batch = append(batch, metadata.Record{PartitionChange: rec})
		}
		reply.Results = append(reply.Results, proto.ReassignablePartitionResult{Partition: rp.Partition, Error: code, Message: msg})
	}
	if len(batch) > 0 {
		n.env.Note("controller", fmt.Sprintf("AlterPartitionReassignments: %d partition(s) change their assignment", len(batch)))
	}
	n.decide(batch, from, reply, nil)
}
