package broker

import (
	"fmt"
	"slices"
	"testing"

	"kafkasim/model/metadata"
)

type recordingCoordinator struct{ calls []string }

func (c *recordingCoordinator) OnBecomeLeader(tp metadata.TopicPartition, leaderEpoch int32) {
	c.calls = append(c.calls, fmt.Sprintf("leader %s %d", tp, leaderEpoch))
}

func (c *recordingCoordinator) OnResign(tp metadata.TopicPartition, leaderEpoch int32) {
	c.calls = append(c.calls, fmt.Sprintf("resign %s %d", tp, leaderEpoch))
}

// A metadata batch's leadership news reaches the coordinators partitions in
// order, each partition's in the order it happened, whatever order the
// batch's records came in; only the hosted topics' partitions are told.
func TestLeadershipNewsIsToldInPartitionOrder(t *testing.T) {
	c := &recordingCoordinator{}
	rm := &replicaManager{coordinators: []*hostedCoordinator{{topic: "__consumer_offsets", c: c}}}
	offsets := func(i int32) *partition {
		return &partition{tp: metadata.TopicPartition{Topic: "__consumer_offsets", Partition: i}}
	}
	rm.leadershipChanged(offsets(10), 4, true)
	rm.leadershipChanged(offsets(2), 7, false)
	rm.leadershipChanged(&partition{tp: metadata.TopicPartition{Topic: "orders", Partition: 0}}, 1, true)
	rm.leadershipChanged(offsets(10), 5, false)
	rm.leadershipChanged(offsets(2), 8, true)
	rm.leadershipChanged(offsets(1), 3, true)
	rm.tellLeadership()
	want := []string{
		"leader __consumer_offsets-1 3",
		"resign __consumer_offsets-2 7",
		"leader __consumer_offsets-2 8",
		"leader __consumer_offsets-10 4",
		"resign __consumer_offsets-10 5",
	}
	if !slices.Equal(c.calls, want) {
		t.Fatalf("got %q, want %q", c.calls, want)
	}
	rm.tellLeadership()
	if len(c.calls) != len(want) {
		t.Fatalf("news told twice: %q", c.calls[len(want):])
	}
}
