package reports

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func testFinalState() FinalState {
	return FinalState{
		Topics: []TopicState{
			{Name: "orders", ID: 1, Configs: []KeyValue{{"min.insync.replicas", "2"}, {"unclean.leader.election.enable", "false"}, {"cleanup.policy", "compact"}}},
			{Name: "payments", ID: 2, Configs: []KeyValue{{"min.insync.replicas", "1"}, {"unclean.leader.election.enable", "true"}}},
		},
		Partitions: []PartitionState{
			{Topic: "payments", Partition: 0, Leader: -1, LeaderEpoch: 7, Replicas: []int32{1}, LastKnownELR: []int32{1}, HW: 0, LEO: 0},
			{Topic: "orders", Partition: 10, Leader: 1, LeaderEpoch: 2, Replicas: []int32{1, 2, 3}, ISR: []int32{1, 2, 3}, HW: 5, LEO: 5, LogStartOffset: 2},
			{Topic: "orders", Partition: 0, Leader: 2, LeaderEpoch: 4, Replicas: []int32{2, 3, 1}, ISR: []int32{2, 3}, ELR: []int32{1}, HW: 812, LEO: 815},
			{Topic: "orders", Partition: 2, Leader: 3, LeaderEpoch: 0, Replicas: []int32{3, 1, 2}, ISR: []int32{3, 1, 2}, HW: 800, LEO: 800},
		},
	}
}

func TestDescribeTopics(t *testing.T) {
	final := testFinalState()
	before := final.Partitions[0].Topic
	var buf bytes.Buffer
	if err := DescribeTopics(&buf, final); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Topic: orders\tTopicId: 1\tPartitionCount: 3\tReplicationFactor: 3\tConfigs: min.insync.replicas=2,unclean.leader.election.enable=false,cleanup.policy=compact",
		"\tTopic: orders\tPartition: 0\tLeader: 2\tReplicas: 2,3,1\tIsr: 2,3\tElr: 1\tLastKnownElr: \tLeaderEpoch: 4\tHW: 812\tLSO: 812\tLEO: 815\tLogStartOffset: 0",
		"\tTopic: orders\tPartition: 2\tLeader: 3\tReplicas: 3,1,2\tIsr: 3,1,2\tElr: \tLastKnownElr: \tLeaderEpoch: 0\tHW: 800\tLSO: 800\tLEO: 800\tLogStartOffset: 0",
		"\tTopic: orders\tPartition: 10\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3\tElr: \tLastKnownElr: \tLeaderEpoch: 2\tHW: 5\tLSO: 5\tLEO: 5\tLogStartOffset: 2",
		"Topic: payments\tTopicId: 2\tPartitionCount: 1\tReplicationFactor: 1\tConfigs: min.insync.replicas=1,unclean.leader.election.enable=true",
		"\tTopic: payments\tPartition: 0\tLeader: none\tReplicas: 1\tIsr: \tElr: \tLastKnownElr: 1\tLeaderEpoch: 7\tHW: 0\tLSO: 0\tLEO: 0\tLogStartOffset: 0",
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
	if final.Partitions[0].Topic != before {
		t.Error("DescribeTopics reordered the caller's slice")
	}
	// One topic.
	buf.Reset()
	DescribeTopics(&buf, final.Only("payments"))
	if lines := strings.Split(strings.TrimSpace(buf.String()), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "Topic: payments\tTopicId: 2") {
		t.Fatalf("Only(payments):\n%s", buf.String())
	}
}

func TestDescribeTopicsJSON(t *testing.T) {
	d := DescribeTopicsJSON(testFinalState())
	if len(d) != 2 || d[0].Topic != "orders" || d[0].PartitionCount != 3 || d[0].ReplicationFactor != 3 || *d[0].TopicID != 1 ||
		d[0].Configs["cleanup.policy"] != "compact" || d[0].Partitions[0].Partition != 0 || d[0].Partitions[0].ELR[0] != 1 ||
		d[1].Partitions[0].Leader != -1 || d[1].Partitions[0].LastKnownELR[0] != 1 || d[0].Partitions[1].ELR == nil {
		raw, _ := json.Marshal(d)
		t.Fatalf("%s", raw)
	}
}

// A run store written before final-state.json recorded topics holds a bare
// list of partitions: describe still reads it, without ids or configs.
func TestReadFinalStateOfAnEarlierRunStore(t *testing.T) {
	fs, err := ReadFinalState([]byte(`[{"Topic":"t","Partition":0,"Leader":1,"LeaderEpoch":0,"Replicas":[1],"ISR":[1],"ELR":null,"HW":3,"LEO":3,"LogStartOffset":0}]`))
	if err != nil || len(fs.Partitions) != 1 || len(fs.Topics) != 0 {
		t.Fatalf("%+v %v", fs, err)
	}
	var buf bytes.Buffer
	DescribeTopics(&buf, fs)
	if !strings.HasPrefix(buf.String(), "Topic: t\tPartitionCount: 1\tReplicationFactor: 1\n") {
		t.Fatalf("%q", buf.String())
	}
	data, _ := json.Marshal(testFinalState())
	again, err := ReadFinalState(data)
	if err != nil || len(again.Topics) != 2 || len(again.Partitions) != 4 {
		t.Fatalf("round trip: %+v %v", again, err)
	}
}

func TestDescribeTopicsEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := DescribeTopics(&buf, FinalState{}); err != nil || buf.Len() != 0 {
		t.Fatalf("DescribeTopics(nil) = %q, %v; want nothing", buf.String(), err)
	}
}
