package controller

import (
	"testing"

	"kafkasim/model/metadata"
	"kafkasim/model/proto"
)

// validation unit tests: a controller with a hand-made draft image.
func draftController(bug bool) *Node {
	im := metadata.NewImage("c", nil)
	for id, epoch := range map[int32]int64{1: 10, 2: 20, 3: 30} {
		im.Brokers[id] = &metadata.Broker{ID: id, Epoch: epoch}
	}
	im.Brokers[3].Fenced = true
	im.Topics["t"] = &metadata.Topic{Name: "t", MinInsyncReplicas: 2, Partitions: []*metadata.Partition{{
		TopicPartition: metadata.TopicPartition{Topic: "t", Partition: 0}, Replicas: []int32{1, 2, 3},
		ISR: []int32{1}, Leader: 1, LeaderEpoch: 5, PartitionEpoch: 7}}}
	cfg := DefaultConfig(nil)
	cfg.BugStaleAlterPartition = bug
	return &Node{cfg: cfg, draft: im}
}

func TestValidateAlterPartition(t *testing.T) {
	for _, bug := range []bool{false, true} {
		n := draftController(bug)
		p := n.draft.Partition(metadata.TopicPartition{Topic: "t", Partition: 0})
		item := func(leaderEpoch, partitionEpoch int32, isr ...proto.ReplicaState) proto.AlterPartitionItem {
			return proto.AlterPartitionItem{Topic: "t", Partition: 0, LeaderEpoch: leaderEpoch, PartitionEpoch: partitionEpoch, NewISR: isr}
		}
		r := func(id int32, epoch int64) proto.ReplicaState {
			return proto.ReplicaState{BrokerID: id, BrokerEpoch: epoch}
		}
		cases := []struct {
			name string
			from int32
			item proto.AlterPartitionItem
			want proto.ErrorCode
		}{
			{"valid expansion", 1, item(5, 7, r(1, 10), r(2, 20)), proto.None},
			{"epoch unknown (-1) is not checked", 1, item(5, 7, r(1, -1), r(2, -1)), proto.None},
			{"newer leader epoch than the controller's", 1, item(6, 7, r(1, 10)), proto.NotController},
			{"stale leader epoch", 1, item(4, 7, r(1, 10)), proto.FencedLeaderEpoch},
			{"not the leader", 2, item(5, 7, r(2, 20)), proto.InvalidRequest},
			{"stale partition epoch", 1, item(5, 6, r(1, 10)), proto.InvalidUpdateVersion},
			{"ISR without the leader", 1, item(5, 7, r(2, 20)), proto.InvalidRequest},
			{"ISR member not a replica", 1, item(5, 7, r(1, 10), r(4, 1)), proto.InvalidRequest},
			{"fenced ISR member", 1, item(5, 7, r(1, 10), r(3, 30)), proto.IneligibleReplica},
		}
		for _, c := range cases {
			if got := n.validateAlterPartition(c.from, c.item, p); got != c.want {
				t.Errorf("bug=%v %s: got %s, want %s", bug, c.name, got, c.want)
			}
		}
		// KIP-903: broker 2 re-registered (epoch 25) after the leader saw it
		// at epoch 20, perhaps with an empty disk.
		n.draft.Brokers[2].Epoch = 25
		got := n.validateAlterPartition(1, item(5, 7, r(1, 10), r(2, 20)), p)
		want := proto.IneligibleReplica
		if bug {
			want = proto.None // stale-alter-partition: the stale expansion passes
		}
		if got != want {
			t.Errorf("bug=%v: expansion naming a stale broker epoch: got %s, want %s", bug, got, want)
		}
	}
}
