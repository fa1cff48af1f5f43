package cluster

import (
	"testing"

	"kafkasim/model/partlog"
	"kafkasim/model/record"
)

// What a group's member can be handed past its committed offset: markers
// never; an aborted transaction's records only at read_uncommitted; a
// committed transaction's and plain records always.
func TestHandedToMembers(t *testing.T) {
	data := func(pid int64, at int64) *record.Batch {
		return record.New([]record.Record{{Value: "v"}}, record.Producer{ID: pid, Epoch: 0, BaseSequence: 0}, true, record.CompressionNone).Stamped(at, 0)
	}
	plain := record.New([]record.Record{{Value: "v"}}, record.Producer{ID: record.NoProducer}, false, record.CompressionNone).Stamped(9, 0)
	marker := record.NewControl(7, 1, true, 0, 0).Stamped(5, 0)
	aborted := []partlog.AbortedTxn{{ProducerID: 8, FirstOffset: 6, LastOffset: 8}}
	for _, c := range []struct {
		name          string
		b             *record.Batch
		readCommitted bool
		want          bool
	}{
		{"a marker", marker, false, false},
		{"a marker, read_committed", marker, true, false},
		{"an aborted transaction's record, read_committed", data(8, 7), true, false},
		{"an aborted transaction's record, read_uncommitted", data(8, 7), false, true},
		{"a record of another producer", data(9, 7), true, true},
		{"a record after the abort marker", data(8, 10), true, true},
		{"a plain record", plain, true, true},
		{"a batch before the committed offset", data(9, 2), false, false},
	} {
		if got := handedToMembers(c.b, 5, aborted, c.readCommitted); got != c.want {
			t.Errorf("%s: handed to members %v, want %v", c.name, got, c.want)
		}
	}
}
