package reader

import (
	"strconv"
	"testing"

	"kafkasim/history"
	"kafkasim/model/record"
)

// batches are n batches of one record each from offset base, in leader
// epoch 2, their values "v<offset>".
func batches(base int64, n int) []*record.Batch {
	var out []*record.Batch
	for i := range int64(n) {
		out = append(out, batch(base+i, 1))
	}
	return out
}

// batch is a batch of n records from offset base, in leader epoch 2.
func batch(base int64, n int) *record.Batch {
	var recs []record.Record
	for i := range int64(n) {
		recs = append(recs, record.Record{Value: "v" + strconv.FormatInt(base+i, 10)})
	}
	return record.New(recs, record.Producer{ID: record.NoProducer}, false, record.CompressionNone).Stamp(base, 2)
}

// polled is what the collector's spans hold: "topic-partition@offset=value".
func polled(spans []history.RecordSpan) []string {
	var out []string
	for _, s := range spans {
		s.Src.PolledRecords(int(s.Lo), int(s.Hi), func(offset int64, _ []byte, _ bool, value []byte) {
			out = append(out, partKey{s.Topic, s.Partition}.String()+"@"+strconv.FormatInt(offset, 10)+"="+string(value))
		})
	}
	return out
}

// A poll's records: those at or after each position, partitions in order,
// up to max.poll.records; the position moves past what was taken, the
// buffer keeps what was not.
func TestCollectFetch(t *testing.T) {
	// thinned holds offsets 20 and 22 of 20..23: compaction removed 21 and 23.
	thinned := batch(20, 4).Compacted(func(offset int64, _ []byte, _ bool) bool { return offset%2 == 0 })
	for _, c := range []struct {
		name        string
		max         int
		bufs        [][]*record.Batch // by partition
		offsets     []int64
		want        []string
		wantOffsets []int64
		wantBuffers []int
	}{
		{"everything buffered", 10, [][]*record.Batch{{batch(0, 3), batch(3, 2)}}, []int64{0},
			[]string{"t-0@0=v0", "t-0@1=v1", "t-0@2=v2", "t-0@3=v3", "t-0@4=v4"}, []int64{5}, []int{0}},
		{"from a position inside a batch", 10, [][]*record.Batch{{batch(0, 3)}}, []int64{2},
			[]string{"t-0@2=v2"}, []int64{3}, []int{0}},
		{"cut by max.poll.records inside a batch", 4, [][]*record.Batch{{batch(0, 3), batch(3, 3)}}, []int64{0},
			[]string{"t-0@0=v0", "t-0@1=v1", "t-0@2=v2", "t-0@3=v3"}, []int64{4}, []int{1}},
		{"partitions in order, the last cut", 4, [][]*record.Batch{{batch(0, 3)}, {batch(7, 3)}}, []int64{0, 7},
			[]string{"t-0@0=v0", "t-0@1=v1", "t-0@2=v2", "t-1@7=v7"}, []int64{3, 8}, []int{0, 1}},
		{"a thinned batch: the kept records' own offsets, then past the batch", 10, [][]*record.Batch{{thinned}}, []int64{20},
			[]string{"t-0@20=v20", "t-0@22=v22"}, []int64{24}, []int{0}},
		{"a thinned batch from a removed offset", 10, [][]*record.Batch{{thinned}}, []int64{21},
			[]string{"t-0@22=v22"}, []int64{24}, []int{0}},
		{"a thinned batch with nothing left at the position", 10, [][]*record.Batch{{thinned}}, []int64{23},
			nil, []int64{24}, []int{0}},
	} {
		var parts []*partitionState
		for i, buf := range c.bufs {
			parts = append(parts, &partitionState{key: partKey{"t", int32(i)}, buf: buf, fetchPosition: fetchPosition{offset: c.offsets[i], offsetEpoch: -1}})
		}
		col := fetchCollector{maxPollRecords: c.max}
		col.collectFetch(parts)
		got := polled(col.spans)
		if len(got) != col.n || len(got) != len(c.want) {
			t.Fatalf("%s: polled %v (counted %d), want %v", c.name, got, col.n, c.want)
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Fatalf("%s: polled %v, want %v", c.name, got, c.want)
			}
		}
		for i, p := range parts {
			if p.offset != c.wantOffsets[i] || len(p.buf) != c.wantBuffers[i] {
				t.Errorf("%s: partition %d at %d with %d batches buffered, want %d with %d", c.name, i, p.offset, len(p.buf), c.wantOffsets[i], c.wantBuffers[i])
			}
			if p.offset > c.offsets[i] && p.offsetEpoch != 2 {
				t.Errorf("%s: partition %d read past %d in epoch %d, want the batches' 2", c.name, i, c.offsets[i], p.offsetEpoch)
			}
		}
	}
}

// A transaction marker the collector skips moves the position, not what
// the application saw of it: a position reset there stays one with no
// record polled since (ResetUnconsumed, the auto-commit's allConsumed)
// until a record is returned, as CompletedFetch.nextFetchedRecord moves
// past control batches without handing them over (fuzz seed 15421).
func TestCollectFetchMarkerLeavesResetUnpolled(t *testing.T) {
	marker := record.NewControl(7, 0, true, 0, 0).Stamp(5, 2)
	p := &partitionState{key: partKey{"t", 0}, buf: []*record.Batch{marker}}
	p.seek(fetchPosition{offset: 5, offsetEpoch: -1}, sourceReset)
	col := fetchCollector{maxPollRecords: 10}
	col.collectFetch([]*partitionState{p})
	if col.n != 0 || p.offset != 6 || p.handed != 5 || p.handedBy != sourceReset {
		t.Fatalf("after the marker: %d polled, position %d, handed %d by %d; want 0, 6, 5 by reset", col.n, p.offset, p.handed, p.handedBy)
	}
	p.buf = []*record.Batch{batch(6, 2)}
	col.reset()
	col.collectFetch([]*partitionState{p})
	if col.n != 2 || p.offset != 8 || p.handed != 8 || p.handedBy != sourceRecord {
		t.Fatalf("after the records: %d polled, position %d, handed %d by %d; want 2, 8, 8 by a record", col.n, p.offset, p.handed, p.handedBy)
	}
}
