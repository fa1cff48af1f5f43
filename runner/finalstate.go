package runner

import (
	"maps"
	"slices"
	"strconv"

	"kafkasim/model/cluster"
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
