package txn

import (
	"testing"

	"kafkasim/model/proto"
)

// TransactionState.VALID_PREVIOUS_STATES, every pair: the transitions
// Kafka allows and no other.
func TestValidTransitions(t *testing.T) {
	all := []State{Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort, Dead, PrepareEpochFence}
	legal := map[[2]State]bool{}
	for _, p := range [][2]State{
		{Empty, Empty}, {CompleteCommit, Empty}, {CompleteAbort, Empty},
		{Ongoing, Ongoing}, {Empty, Ongoing}, {CompleteCommit, Ongoing}, {CompleteAbort, Ongoing},
		{Ongoing, PrepareCommit},
		{Ongoing, PrepareAbort}, {PrepareEpochFence, PrepareAbort}, {Empty, PrepareAbort}, {CompleteCommit, PrepareAbort}, {CompleteAbort, PrepareAbort},
		{PrepareCommit, CompleteCommit},
		{PrepareAbort, CompleteAbort},
		{Empty, Dead}, {CompleteAbort, Dead}, {CompleteCommit, Dead},
		{Ongoing, PrepareEpochFence},
	} {
		legal[p] = true
	}
	for _, from := range all {
		for _, to := range all {
			if got := ValidTransition(from, to); got != legal[[2]State{from, to}] {
				t.Errorf("%s → %s: legal %v, want %v", from, to, got, !got)
			}
		}
	}
}

// The transaction log's value carries the whole metadata.
func TestRecordRoundTrip(t *testing.T) {
	tr := transit{ProducerID: 7, PrevProducerID: 3, NextProducerID: -1, ProducerEpoch: 4, LastProducerEpoch: 3, Timeout: 60e9,
		State: PrepareCommit, Partitions: []proto.TopicPartition{{Topic: "a", Partition: 1}, {Topic: "b", Partition: 0}}, StartTime: 5e9, LastUpdate: 6e9}
	id, got, ok, err := decodeRecord([]byte(encodeKey("tx")), []byte(encodeValue(tr)))
	if err != nil || !ok || id != "tx" {
		t.Fatalf("decode: %q %v %v", id, ok, err)
	}
	if got.ProducerID != 7 || got.PrevProducerID != 3 || got.ProducerEpoch != 4 || got.LastProducerEpoch != 3 || got.State != PrepareCommit ||
		len(got.Partitions) != 2 || got.Partitions[1] != tr.Partitions[1] || got.StartTime != tr.StartTime || got.Timeout != tr.Timeout {
		t.Fatalf("decoded %+v, want %+v", got, tr)
	}
	if _, _, ok, err := decodeRecord([]byte(encodeKey("tx")), nil); ok || err != nil {
		t.Fatalf("a tombstone: ok %v err %v", ok, err)
	}
}
