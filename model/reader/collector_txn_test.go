package reader

import (
	"slices"
	"testing"

	"kafkasim/model/proto"
	"kafkasim/model/record"
)

// txnLog is a partition's log with two producers' transactions:
//
//	0 a0 (producer 1)  1 b1 (producer 2)  2 a2 (producer 1)  3 ABORT 1
//	4 COMMIT 2  5 p5 (no producer)  6 a6 (producer 1, epoch 1)  7 COMMIT 1
func txnLog() []*record.Batch {
	data := func(pid int64, epoch int16, seq int32, off int64, v string) *record.Batch {
		p := record.Producer{ID: pid, Epoch: epoch, BaseSequence: seq}
		if pid < 0 {
			p = record.Producer{ID: record.NoProducer}
		}
		return record.New([]record.Record{{Value: v}}, p, pid >= 0, record.CompressionNone).Stamp(off, 2)
	}
	marker := func(pid int64, epoch int16, commit bool, off int64) *record.Batch {
		return record.NewControl(pid, epoch, commit, 0, 0).Stamp(off, 2)
	}
	return []*record.Batch{data(1, 0, 0, 0, "a0"), data(2, 0, 0, 1, "b1"), data(1, 0, 1, 2, "a2"), marker(1, 1, false, 3),
		marker(2, 1, true, 4), data(-1, 0, 0, 5, "p5"), data(1, 1, 0, 6, "a6"), marker(1, 2, true, 7)}
}

// A read_committed consumer drops the records of aborted transactions,
// from the first offset the fetch answer lists for the producer up to its
// abort marker; no consumer sees a marker, and the position moves past
// them.
func TestCollectDropsAbortedTransactions(t *testing.T) {
	aborted := []proto.AbortedTransaction{{ProducerID: 1, FirstOffset: 0}}
	for _, c := range []struct {
		name          string
		readCommitted bool
		from          int64
		aborted       []proto.AbortedTransaction
		want          []string
	}{
		{"read_committed", true, 0, aborted, []string{"t-0@1=b1", "t-0@5=p5", "t-0@6=a6"}},
		{"read_committed from inside the aborted transaction", true, 2, aborted, []string{"t-0@5=p5", "t-0@6=a6"}},
		{"read_committed past the abort", true, 4, nil, []string{"t-0@5=p5", "t-0@6=a6"}},
		{"read_uncommitted: every data record, no marker", false, 0, nil, []string{"t-0@0=a0", "t-0@1=b1", "t-0@2=a2", "t-0@5=p5", "t-0@6=a6"}},
	} {
		log := txnLog()
		var buf []*record.Batch
		for _, b := range log {
			if b.LastOffset() >= c.from {
				buf = append(buf, b)
			}
		}
		p := &partitionState{key: partKey{"t", 0}, buf: buf, aborted: c.aborted, fetchPosition: fetchPosition{offset: c.from, offsetEpoch: -1}}
		col := fetchCollector{maxPollRecords: 100, readCommitted: c.readCommitted}
		col.collectFetch([]*partitionState{p})
		if got := polled(col.spans); !slices.Equal(got, c.want) || col.n != len(c.want) {
			t.Errorf("%s: polled %v (counted %d), want %v", c.name, got, col.n, c.want)
		}
		if p.offset != 8 || len(p.buf) != 0 {
			t.Errorf("%s: position %d with %d batches buffered, want 8 and none", c.name, p.offset, len(p.buf))
		}
	}
	// max.poll.records cuts the poll; the next poll goes on where it
	// stopped, the aborted producers remembered.
	p := &partitionState{key: partKey{"t", 0}, buf: txnLog(), aborted: aborted, fetchPosition: fetchPosition{offset: 0, offsetEpoch: -1}}
	col := fetchCollector{maxPollRecords: 1, readCommitted: true}
	var got []string
	for range 5 {
		col.reset()
		col.collectFetch([]*partitionState{p})
		got = append(got, polled(col.spans)...)
	}
	if want := []string{"t-0@1=b1", "t-0@5=p5", "t-0@6=a6"}; !slices.Equal(got, want) || p.offset != 8 {
		t.Errorf("one record a poll: %v, position %d; want %v, 8", got, p.offset, want)
	}
}
