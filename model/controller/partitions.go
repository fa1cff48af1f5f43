package controller

import (
	"fmt"
	"slices"
	"strconv"

	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// Topics and partitions on the active controller: creation with placement,
// partition-count increases, and AlterPartition, the leaders' ISR changes.

func (n *Node) handleCreateTopics(from sim.NodeID, m *proto.CreateTopicsRequest) {
	reply := &proto.CreateTopicsResponse{CorrelationID: m.CorrelationID}
	var batch metadata.Batch
	nextID := n.draft.NextTopicID
	for _, t := range m.Topics {
		res := proto.CreateTopicResult{Name: t.Name}
		records, err, msg := n.createTopic(t, nextID)
		res.Error, res.Message = err, msg
		if err == proto.None {
			batch = append(batch, records...)
			nextID++
		}
		reply.Topics = append(reply.Topics, res)
	}
	n.decide(batch, from, reply, nil)
}

func (n *Node) createTopic(t proto.CreatableTopic, id int32) (metadata.Batch, proto.ErrorCode, string) {
	if _, exists := n.draft.Topics[t.Name]; exists {
		return nil, proto.TopicAlreadyExists, "topic " + t.Name + " already exists"
	}
	assignment := t.Assignment
	if len(assignment) == 0 {
		partitions, rf := t.NumPartitions, t.ReplicationFactor
		if rf == 0 {
			rf = n.cfg.DefaultReplicationFactor
		}
		if partitions < 1 {
			return nil, proto.InvalidPartitions, "number of partitions must be larger than 0"
		}
		placed, err := metadata.Place(n.brokers(), partitions, rf, n.env.Rand())
		if err != nil {
			return nil, proto.InvalidReplicationFactor, err.Error()
		}
		assignment = placed
	} else if err := n.validAssignment(assignment); err != "" {
		return nil, proto.InvalidReplicaAssignment, err
	}
	// A config the topic does not set is the broker default in force now:
	// the dynamic cluster-wide one, else the static one.
	var inherited []string
	minISR := t.MinInsyncReplicas
	if minISR == 0 {
		minISR = n.cfg.MinInsyncReplicas
		if v, ok := n.draft.ClusterConfigs[metadata.MinInsyncReplicasConfig]; ok {
			minISR, _ = strconv.Atoi(v)
		}
		inherited = append(inherited, metadata.MinInsyncReplicasConfig)
	}
	unclean := n.cfg.UncleanLeaderElection
	if t.UncleanLeaderElection != nil {
		unclean = *t.UncleanLeaderElection
	} else {
		if v, ok := n.draft.ClusterConfigs[metadata.UncleanLeaderElectionConfig]; ok {
			unclean = v == "true"
		}
		inherited = append(inherited, metadata.UncleanLeaderElectionConfig)
	}
	batch := metadata.Batch{{Topic: &metadata.TopicRecord{Name: t.Name, ID: id, MinInsyncReplicas: minISR,
		UncleanLeaderElection: unclean, Configs: t.Configs, Inherited: inherited}}}
	parts, code, msg := n.newPartitions(t.Name, 0, assignment)
	if code != proto.None {
		return nil, code, msg
	}
	return append(batch, parts...), proto.None, ""
}

// newPartitions builds the records of new partitions: the ISR is the active
// replicas, the leader the first of them.
func (n *Node) newPartitions(topic string, first int32, assignment [][]int32) (metadata.Batch, proto.ErrorCode, string) {
	var batch metadata.Batch
	for i, replicas := range assignment {
		var isr []int32
		for _, r := range replicas {
			if n.draft.IsActive(r) {
				isr = append(isr, r)
			}
		}
		if len(isr) == 0 {
			return nil, proto.InvalidReplicationFactor, "all brokers of the assignment are currently fenced or shutting down"
		}
		batch = append(batch, metadata.Record{Partition: &metadata.PartitionRecord{
			Topic: topic, Partition: first + int32(i), Replicas: slices.Clone(replicas), ISR: isr, Leader: isr[0]}})
	}
	return batch, proto.None, ""
}

func (n *Node) validAssignment(assignment [][]int32) string {
	rf := len(assignment[0])
	for i, replicas := range assignment {
		if len(replicas) != rf {
			return fmt.Sprintf("partition %d has %d replicas, partition 0 has %d", i, len(replicas), rf)
		}
		for j, r := range replicas {
			if _, ok := n.draft.Brokers[r]; !ok {
				return fmt.Sprintf("partition %d: broker %d is not registered", i, r)
			}
			if slices.Contains(replicas[:j], r) {
				return fmt.Sprintf("partition %d: broker %d appears twice", i, r)
			}
		}
	}
	return ""
}

func (n *Node) brokers() []*metadata.Broker {
	var out []*metadata.Broker
	for _, id := range n.draft.BrokerIDs() {
		out = append(out, n.draft.Brokers[id])
	}
	return out
}

func (n *Node) handleCreatePartitions(from sim.NodeID, m *proto.CreatePartitionsRequest) {
	reply := &proto.CreatePartitionsResponse{CorrelationID: m.CorrelationID}
	t, ok := n.draft.Topics[m.Topic]
	switch {
	case !ok:
		reply.Error, reply.Message = proto.UnknownTopicOrPartition, "unknown topic "+m.Topic
	case m.Count <= len(t.Partitions):
		reply.Error, reply.Message = proto.InvalidPartitions, fmt.Sprintf("topic has %d partitions; cannot go to %d", len(t.Partitions), m.Count)
	}
	if reply.Error != proto.None {
		n.gate.Send(from, reply)
		return
	}
	rf := len(t.Partitions[0].Replicas)
	placed, err := metadata.Place(n.brokers(), m.Count-len(t.Partitions), rf, n.env.Rand())
	if err != nil {
		reply.Error, reply.Message = proto.InvalidReplicationFactor, err.Error()
		n.gate.Send(from, reply)
		return
	}
	batch, code, msg := n.newPartitions(m.Topic, int32(len(t.Partitions)), placed)
	if code != proto.None {
		reply.Error, reply.Message = code, msg
		n.gate.Send(from, reply)
		return
	}
	n.decide(batch, from, reply, nil)
}

// handleAlterPartition validates a leader's ISR change in Kafka's order and
// applies the ones that pass.
func (n *Node) handleAlterPartition(from sim.NodeID, m *proto.AlterPartitionRequest) {
	reply := &proto.AlterPartitionResponse{CorrelationID: m.CorrelationID}
	if b := n.draft.Brokers[m.BrokerID]; b == nil || b.Epoch != m.BrokerEpoch {
		reply.Error = proto.StaleBrokerEpoch
		n.gate.Send(from, reply)
		return
	}
	var batch metadata.Batch
	var accepted []int
	for _, item := range m.Partitions {
		res := proto.AlterPartitionResult{Topic: item.Topic, Partition: item.Partition}
		p := n.draft.Partition(metadata.TopicPartition{Topic: item.Topic, Partition: item.Partition})
		res.Error = n.validateAlterPartition(m.BrokerID, item, p)
		if res.Error == proto.None {
			b := n.changeBuilder(p, n.draft.IsActive)
			b.TargetISR = isrIDs(item.NewISR)
			b.Recovered = item.Recovered
			if rec, _ := b.Build(); rec != nil {
				batch = append(batch, metadata.Record{PartitionChange: rec})
			}
			accepted = append(accepted, len(reply.Partitions))
		}
		reply.Partitions = append(reply.Partitions, res)
	}
	n.decide(batch, from, reply, func() {
		for _, i := range accepted {
			r := &reply.Partitions[i]
			p := n.draft.Partition(metadata.TopicPartition{Topic: r.Topic, Partition: r.Partition})
			r.Leader, r.LeaderEpoch, r.PartitionEpoch, r.ISR = p.Leader, p.LeaderEpoch, p.PartitionEpoch, slices.Clone(p.ISR)
			if p.Leader != m.BrokerID {
				r.Error = proto.NewLeaderElected
			}
		}
	})
}

func isrIDs(states []proto.ReplicaState) []int32 {
	ids := make([]int32, len(states))
	for i, s := range states {
		ids[i] = s.BrokerID
	}
	return ids
}

func (n *Node) validateAlterPartition(brokerID int32, item proto.AlterPartitionItem, p *metadata.Partition) proto.ErrorCode {
	switch {
	case p == nil:
		return proto.UnknownTopicOrPartition
	case item.LeaderEpoch > p.LeaderEpoch || item.PartitionEpoch > p.PartitionEpoch:
		return proto.NotController // the sender knows a newer state than this controller
	case item.LeaderEpoch < p.LeaderEpoch:
		return proto.FencedLeaderEpoch
	case brokerID != p.Leader:
		return proto.InvalidRequest
	case item.PartitionEpoch < p.PartitionEpoch:
		return proto.InvalidUpdateVersion
	}
	ids := isrIDs(item.NewISR)
	if !slices.Contains(ids, brokerID) {
		return proto.InvalidRequest
	}
	for i, id := range ids {
		if !slices.Contains(p.Replicas, id) || slices.Contains(ids[:i], id) {
			return proto.InvalidRequest
		}
	}
	if p.Recovering && len(ids) > 1 && !item.Recovered {
		return proto.InvalidRequest
	}
	for _, s := range item.NewISR {
		b := n.draft.Brokers[s.BrokerID]
		if b == nil || !b.Active() {
			return proto.IneligibleReplica
		}
		// KIP-903: the leader saw this replica at some broker epoch; if the
		// broker has registered again since (a restart, perhaps with an
		// empty disk), what the leader saw is no longer that broker.
		if !n.cfg.BugStaleAlterPartition && s.BrokerEpoch != -1 && s.BrokerEpoch != b.Epoch {
			return proto.IneligibleReplica
		}
	}
	return proto.None
}
