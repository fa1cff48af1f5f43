package reports

import (
	"bytes"
	"strings"
	"testing"
)

func TestDescribeTopics(t *testing.T) {
	final := []PartitionState{
		{Topic: "payments", Partition: 0, Leader: -1, LeaderEpoch: 7, Replicas: []int32{1}, HW: 0, LEO: 0},
		{Topic: "orders", Partition: 10, Leader: 1, LeaderEpoch: 2, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}, HW: 5, LEO: 5, LogStartOffset: 2},
		{Topic: "orders", Partition: 0, Leader: 2, LeaderEpoch: 4, Replicas: []int32{2, 3, 1}, ISR: []int32{2, 3}, ELR: []int32{1}, HW: 812, LEO: 815},
		{Topic: "orders", Partition: 2, Leader: 3, LeaderEpoch: 0, Replicas: []int32{3, 1, 2}, ISR: []int32{3, 1, 2}, HW: 800, LEO: 800},
	}
	before := final[0].Topic
	var buf bytes.Buffer
	if err := DescribeTopics(&buf, final); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Topic: orders\tPartitionCount: 3\tReplicationFactor: 3",
		"\tTopic: orders\tPartition: 0\tLeader: 2\tLeaderEpoch: 4\tReplicas: 2,3,1\tIsr: 2,3\tElr: 1\tHW: 812\tLSO: 812\tLEO: 815\tLogStartOffset: 0",
		"\tTopic: orders\tPartition: 2\tLeader: 3\tLeaderEpoch: 0\tReplicas: 3,1,2\tIsr: 3,1,2\tElr: \tHW: 800\tLSO: 800\tLEO: 800\tLogStartOffset: 0",
		"\tTopic: orders\tPartition: 10\tLeader: 1\tLeaderEpoch: 2\tReplicas: 1,2,3\tIsr: 1,2,3\tElr: \tHW: 5\tLSO: 5\tLEO: 5\tLogStartOffset: 2",
		"Topic: payments\tPartitionCount: 1\tReplicationFactor: 1",
		"\tTopic: payments\tPartition: 0\tLeader: none\tLeaderEpoch: 7\tReplicas: 1\tIsr: \tElr: \tHW: 0\tLSO: 0\tLEO: 0\tLogStartOffset: 0",
	}
	got := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(got), len(want), buf.String())
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d:\n got %q\nwant %q", i, got[i], want[i])
		}
	}
	if final[0].Topic != before {
		t.Error("DescribeTopics reordered the caller's slice")
	}
}

func TestDescribeTopicsEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := DescribeTopics(&buf, nil); err != nil || buf.Len() != 0 {
		t.Fatalf("DescribeTopics(nil) = %q, %v; want nothing", buf.String(), err)
	}
}
