package controller

import (
	"slices"
	"strings"
	"testing"

	"kafkasim/model/metadata"
	"kafkasim/model/proto"
)

// reassignImage is brokers 1-6 (broker 6 fenced) and topic t with one
// partition on 1, 2, 3 led by 1.
func reassignImage() *metadata.Image {
	im := metadata.NewImage("c", nil)
	for id := int32(1); id <= 6; id++ {
		im.Brokers[id] = &metadata.Broker{ID: id, Epoch: int64(id) * 10, Fenced: id == 6}
	}
	p := &metadata.Partition{TopicPartition: metadata.TopicPartition{Topic: "t"}, Replicas: []int32{1, 2, 3},
		ISR: []int32{1, 2, 3}, Leader: 1, LeaderEpoch: 4, PartitionEpoch: 8}
	im.Topics["t"] = &metadata.Topic{Name: "t", MinInsyncReplicas: 2, Partitions: []*metadata.Partition{p}}
	return im
}

// ReplicationControlManager.changePartitionReassignment's decisions: the
// errors Kafka answers, and the record that starts a reassignment.
func TestReassign(t *testing.T) {
	cases := []struct {
		name     string
		tp       metadata.TopicPartition
		target   []int32
		code     proto.ErrorCode
		msg      string
		noChange bool
		replicas []int32 // the assignment after the change
		adding   []int32
		removing []int32
		isr      []int32
		leader   int32
	}{
		{name: "unknown topic", tp: metadata.TopicPartition{Topic: "x"}, target: []int32{1}, code: proto.UnknownTopicOrPartition, msg: "topic named x"},
		{name: "unknown partition", tp: metadata.TopicPartition{Topic: "t", Partition: 1}, target: []int32{1}, code: proto.UnknownTopicOrPartition, msg: "partition t:1"},
		{name: "empty list", tp: metadata.TopicPartition{Topic: "t"}, target: []int32{}, code: proto.InvalidReplicaAssignment, msg: "empty replica list"},
		{name: "broker not registered", tp: metadata.TopicPartition{Topic: "t"}, target: []int32{4, 9}, code: proto.InvalidReplicaAssignment, msg: "broker 9, but no such broker is registered"},
		{name: "duplicate", tp: metadata.TopicPartition{Topic: "t"}, target: []int32{4, 5, 4}, code: proto.InvalidReplicaAssignment, msg: "broker 4 more than once"},
		{name: "same assignment", tp: metadata.TopicPartition{Topic: "t"}, target: []int32{1, 2, 3}, noChange: true},
		{name: "full move starts", tp: metadata.TopicPartition{Topic: "t"}, target: []int32{5, 4, 3},
			replicas: []int32{5, 4, 3, 1, 2}, adding: []int32{4, 5}, removing: []int32{1, 2}, isr: []int32{1, 2, 3}, leader: 1},
		{name: "a fenced broker may be a target (it catches up once unfenced)", tp: metadata.TopicPartition{Topic: "t"}, target: []int32{1, 2, 6},
			replicas: []int32{1, 2, 6, 3}, adding: []int32{6}, removing: []int32{3}, isr: []int32{1, 2, 3}, leader: 1},
		{name: "fewer replicas completes at once; the removed leader hands over", tp: metadata.TopicPartition{Topic: "t"}, target: []int32{3, 2},
			replicas: []int32{3, 2}, isr: []int32{2, 3}, leader: 3},
		{name: "more replicas", tp: metadata.TopicPartition{Topic: "t"}, target: []int32{1, 2, 3, 4},
			replicas: []int32{1, 2, 3, 4}, adding: []int32{4}, isr: []int32{1, 2, 3}, leader: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			im := reassignImage()
			rec, code, msg := Reassign(im, c.tp, c.target, true)
			if code != c.code || !strings.Contains(msg, c.msg) {
				t.Fatalf("got %s %q, want %s %q", code, msg, c.code, c.msg)
			}
			if code != proto.None || c.noChange {
				if rec != nil {
					t.Fatalf("want no change, got %+v", rec)
				}
				return
			}
			if rec == nil {
				t.Fatal("no change")
			}
			if err := im.Apply(im.Offset, metadata.Batch{{PartitionChange: rec}}); err != nil {
				t.Fatal(err)
			}
			p := im.Partition(c.tp)
			if !slices.Equal(p.Replicas, c.replicas) || !slices.Equal(p.AddingReplicas, c.adding) || !slices.Equal(p.RemovingReplicas, c.removing) ||
				!slices.Equal(p.ISR, c.isr) || p.Leader != c.leader {
				t.Fatalf("got %s", p)
			}
		})
	}
}

// A reassignment from start to end on the controller: AlterPartition
// requests from the leader add the new replicas to the ISR one by one; the
// one that brings the last in completes it, the leader (a removed replica)
// gets NEW_LEADER_ELECTED, and leadership goes to the first target replica.
// Leader balancing then finds nothing to do: the preferred replica leads.
func TestReassignmentCompletesOnAlterPartition(t *testing.T) {
	im := reassignImage()
	im.Brokers[6].Fenced = false
	tp := metadata.TopicPartition{Topic: "t"}
	rec, _, _ := Reassign(im, tp, []int32{4, 5, 6}, true)
	mustApply(t, im, rec)
	for _, isr := range [][]int32{{1, 2, 3, 4}, {1, 2, 3, 4, 5}} {
		p := im.Partition(tp)
		b := metadata.NewChangeBuilder(p, im.IsActive, true, metadata.ElectionOnline, im.Topics["t"].EffectiveMinISR())
		b.TargetISR = isr
		rec, _ := b.Build()
		mustApply(t, im, rec)
		if p := im.Partition(tp); !p.Reassigning() || p.Leader != 1 {
			t.Fatalf("after ISR %v: %s", isr, p)
		}
	}
	p := im.Partition(tp)
	b := metadata.NewChangeBuilder(p, im.IsActive, true, metadata.ElectionOnline, im.Topics["t"].EffectiveMinISR())
	b.TargetISR = []int32{1, 2, 3, 4, 5, 6}
	rec, _ = b.Build()
	mustApply(t, im, rec)
	p = im.Partition(tp)
	if p.Reassigning() || p.Leader != 4 || !slices.Equal(p.Replicas, []int32{4, 5, 6}) || !slices.Equal(p.ISR, []int32{4, 5, 6}) {
		t.Fatalf("not completed: %s", p)
	}
	if batch, _ := BalanceLeaders(im, true, 10); len(batch) != 0 {
		t.Fatalf("leader balancing after the move: %v", batch)
	}
}

func mustApply(t *testing.T, im *metadata.Image, rec *metadata.PartitionChange) {
	t.Helper()
	if rec == nil {
		t.Fatal("no change")
	}
	if err := im.Apply(im.Offset, metadata.Batch{{PartitionChange: rec}}); err != nil {
		t.Fatal(err)
	}
}
