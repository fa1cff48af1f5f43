package proto

import (
	"fmt"
	"testing"
)

// An AlterPartition's trace detail is built without fmt: it must read as
// fmt's format did, the ISR's states as %v prints them.
func TestAlterPartitionDetailReadsAsFormatted(t *testing.T) {
	for _, m := range []*AlterPartitionRequest{
		{BrokerID: 3, BrokerEpoch: 12},
		{BrokerID: -1, BrokerEpoch: -1, Partitions: []AlterPartitionItem{
			{Topic: "orders", Partition: 17, LeaderEpoch: 4, PartitionEpoch: 9, NewISR: []ReplicaState{{BrokerID: 1, BrokerEpoch: 5}, {BrokerID: 2, BrokerEpoch: -7}}},
			{Topic: "a-b", Partition: 0, LeaderEpoch: -1, PartitionEpoch: 0},
			{Topic: "x", Partition: 2, NewISR: []ReplicaState{}},
		}},
	} {
		want := fmt.Sprintf("AlterPartition broker=%d epoch=%d", m.BrokerID, m.BrokerEpoch)
		for _, p := range m.Partitions {
			want += fmt.Sprintf(" %s-%d(leaderEpoch=%d partitionEpoch=%d isr=%v)", p.Topic, p.Partition, p.LeaderEpoch, p.PartitionEpoch, p.NewISR)
		}
		if got := m.String(); got != want {
			t.Errorf("got %q, want %q", got, want)
		}
	}
}
