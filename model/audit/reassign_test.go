package audit

import (
	"testing"

	"kafkasim/model/metadata"
)

// A reassignment deletes a removed replica's log, committed batches and
// all: that is no loss (the new replicas, all in the ISR, hold them), while
// cutting the same batches from a replica is one.
func TestDeletedReplicaIsNoLoss(t *testing.T) {
	tp := metadata.TopicPartition{Topic: "orders", Partition: 0}
	for _, deleted := range []bool{true, false} {
		a, logs := replicaLogs(t, []vb{{"a", 0}, {"b", 0}}, []vb{{"a", 0}, {"b", 0}})
		a.ReplicaHW(1, tp, 0, true, 2, logs[0])
		a.ReplicaHW(2, tp, 0, false, 2, logs[1])
		if deleted {
			a.ReplicaDeleted(1, tp)
			expect(t, a, CommittedDataKept, 0)
			if c := a.part(tp).findCheck(1); c != nil {
				t.Fatalf("the deleted replica is still checked: %+v", c)
			}
			continue
		}
		a.ReplicaTruncated(1, tp, 0, logs[0].Batches(0), "a truncation nothing permits")
		expect(t, a, CommittedDataKept, 1)
	}
}
