package reports

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestDescribeTransactions(t *testing.T) {
	lso := int64(3)
	fs := FinalState{
		Partitions: []PartitionState{{Topic: "orders", Partition: 0, Leader: 1, Replicas: []int32{1}, ISR: []int32{1}, HW: 5, LSO: &lso, LEO: 5}},
		Transactions: []TransactionState{
			{TransactionalID: "pay-0", Coordinator: 2, ProducerID: 1000, ProducerEpoch: 4, State: "Ongoing", TimeoutMs: 60000, StartTimeMs: 12000, EndMs: 15500,
				Partitions: []TopicPartition{{Topic: "orders", Partition: 1}, {Topic: "orders", Partition: 0}}},
			{TransactionalID: "pay-1", Coordinator: 1, ProducerID: 0, ProducerEpoch: 7, State: "CompleteAbort", TimeoutMs: 60000, StartTimeMs: -1, EndMs: 15500},
		}}
	var b bytes.Buffer
	if err := DescribeTransactions(&b, fs, nil); err != nil {
		t.Fatal(err)
	}
	want := `CoordinatorId TransactionalId ProducerId ProducerEpoch TransactionState TransactionTimeoutMs CurrentTransactionStartTimeMs TransactionDurationMs TopicPartitions
2             pay-0           1000       4             Ongoing          60000                12000                         3500                  orders-0,orders-1
1             pay-1           0          7             CompleteAbort    60000                -1                            -1
`
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	if err := DescribeTopics(&b, fs); err != nil || !strings.Contains(b.String(), "HW: 5\tLSO: 3\tLEO: 5") {
		t.Fatalf("describe topics: %v\n%s", err, b.String())
	}
	// A run store written before the LSO was recorded: the high watermark.
	fs.Partitions[0].LSO = nil
	if got := DescribeTopicsJSON(fs)[0].Partitions[0].LastStable; got != 5 {
		t.Fatalf("LSO without a recorded one = %d, want the high watermark 5", got)
	}
	js, _ := json.Marshal(DescribeTransactionsJSON(fs, []string{"pay-1"}))
	if !strings.Contains(string(js), `"transactional_id":"pay-1"`) || strings.Contains(string(js), "pay-0") || !strings.Contains(string(js), `"topic_partitions":[]`) {
		t.Fatalf("json: %s", js)
	}
}
