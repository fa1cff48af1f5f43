package runner

import (
	"maps"
	"slices"
	"strconv"

	"kafkasim/model/cluster"
	"kafkasim/model/group"
	"kafkasim/model/proto"
	"kafkasim/model/txn"
	"kafkasim/reports"
	"kafkasim/sim"
)

// The cluster's state when the run ended, for final-state.json and the
// describe commands: every partition and every topic.

// FinalState is every partition at the end of the run, for describe topics.
func FinalState(c *cluster.Cluster) []reports.PartitionState {
	im := c.Metadata()
	if im == nil {
		return nil
	}
	var out []reports.PartitionState
	for _, p := range im.Partitions() {
		st := reports.PartitionState{Topic: p.Topic, Partition: p.Partition, Leader: p.Leader, LeaderEpoch: p.LeaderEpoch,
			Replicas: slices.Clone(p.Replicas), ISR: slices.Clone(p.ISR), ELR: slices.Clone(p.ELR), LastKnownELR: slices.Clone(p.LastKnownELR),
			HW: -1, LEO: -1, LogStartOffset: -1, ReplicaLEO: map[int32]int64{}}
		for _, r := range p.Replicas {
			st.ReplicaLEO[r] = -1
			b := c.Broker(r)
			if b == nil || c.World.State(c.BrokerNode(r)) != sim.Running {
				continue
			}
			v := b.Partition(p.TopicPartition)
			if v == nil {
				continue
			}
			st.ReplicaLEO[r] = v.Log().LEO()
			if r == p.Leader && v.IsLeader() {
				st.HW, st.LEO, st.LogStartOffset = v.HighWatermark(), v.Log().LEO(), v.Log().LogStartOffset()
				lso := v.Log().LastStableOffset(st.HW)
				st.LSO = &lso
			}
		}
		out = append(out, st)
	}
	return out
}

// FinalTopics is each topic as the final committed metadata holds it, for
// final-state.json (describe topics).
func FinalTopics(c *cluster.Cluster) []reports.TopicState {
	im := c.Metadata()
	if im == nil {
		return nil
	}
	var out []reports.TopicState
	for _, name := range slices.Sorted(maps.Keys(im.Topics)) {
		t := im.Topics[name]
		st := reports.TopicState{Name: t.Name, ID: t.ID, Configs: []reports.KeyValue{
			{Key: "min.insync.replicas", Value: strconv.Itoa(t.MinInsyncReplicas)},
			{Key: "unclean.leader.election.enable", Value: strconv.FormatBool(t.UncleanLeaderElection)}}}
		for _, k := range slices.Sorted(maps.Keys(t.Configs)) {
			st.Configs = append(st.Configs, reports.KeyValue{Key: k, Value: t.Configs[k]})
		}
		out = append(out, st)
	}
	return out
}

// FinalGroups is each consumer group as its coordinator holds it at the
// end of the run (describe groups); a group whose coordinator is down or
// has not loaded it is listed as Dead with no coordinator, as Kafka's
// describe would find no group there.
func FinalGroups(c *cluster.Cluster) []reports.GroupState {
	var out []reports.GroupState
	for _, id := range c.Groups() {
		d, ok := c.DescribeGroup(id)
		if !ok {
			out = append(out, reports.GroupState{GroupID: id, Protocol: "classic", State: "Dead", Coordinator: -1,
				Generation: -1, GroupEpoch: -1, AssignmentEpoch: -1})
			continue
		}
		st := reports.GroupState{GroupID: id, Protocol: d.Protocol, State: d.State, Coordinator: c.GroupCoordinator(id),
			Generation: d.Generation, Leader: d.Leader, GroupEpoch: -1, AssignmentEpoch: -1, Assignor: d.Assignor}
		if d.Protocol == "consumer" {
			st.Generation, st.GroupEpoch, st.AssignmentEpoch = -1, d.Generation, d.AssignmentEpoch
		}
		for _, m := range d.Members {
			ms := reports.MemberState{MemberID: m.MemberID, GroupInstanceID: m.InstanceID, ClientID: m.ClientID,
				Host: memberHost(c, m), MemberEpoch: m.MemberEpoch, Assignment: reportPartitions(m.Assigned)}
			if d.Protocol == "consumer" {
				ms.TargetAssignment = reportPartitions(m.Target)
			}
			st.Members = append(st.Members, ms)
		}
		for _, o := range d.Offsets {
			st.Offsets = append(st.Offsets, reports.CommittedOffset{Topic: o.Topic, Partition: o.Partition, Offset: o.Offset, LeaderEpoch: o.LeaderEpoch})
		}
		out = append(out, st)
	}
	return out
}

// memberHost is the node a member runs on: its client id (the instance
// name) when the coordinator has one, else the instance whose member id it
// is.
func memberHost(c *cluster.Cluster, m group.MemberDescription) string {
	if m.ClientID != "" {
		return m.ClientID
	}
	for _, id := range c.Readers {
		if r := c.Reader(id); r != nil {
			if _, _, member, ok := r.Group(); ok && member == m.MemberID {
				return c.World.Name(id)
			}
		}
	}
	return ""
}

func reportPartitions(tps []proto.TopicPartition) []reports.TopicPartition {
	out := make([]reports.TopicPartition, 0, len(tps))
	for _, tp := range tps {
		out = append(out, reports.TopicPartition{Topic: tp.Topic, Partition: tp.Partition})
	}
	return out
}

// FinalTransactions is each transactional id as the coordinator leading its
// partition of __transaction_state holds it at the end of the run
// (describe transactions), by id.
func FinalTransactions(c *cluster.Cluster) []reports.TransactionState {
	var out []reports.TransactionState
	end := c.World.Now().Milliseconds()
	for _, t := range c.Transactions() {
		st := reports.TransactionState{TransactionalID: t.TransactionalID, Coordinator: t.Coordinator, ProducerID: t.ProducerID,
			ProducerEpoch: t.ProducerEpoch, State: t.State, TimeoutMs: t.TransactionTimeout.Milliseconds(), StartTimeMs: -1, EndMs: end,
			Partitions: reportPartitions(t.Partitions)}
		if t.StartTime >= 0 && txn.Open(t.State) {
			st.StartTimeMs = t.StartTime.Milliseconds()
		}
		out = append(out, st)
	}
	return out
}
