package reader

import (
	"slices"
	"strconv"
	"testing"

	"kafkasim/history"
	"kafkasim/model/record"
)

// workItems names each polled record by the offset its batch gives it:
// BaseOffset plus its index in a whole batch (read without decoding), the
// record's own offset in one compaction thinned.
func TestWorkItemsAreThePolledRecordsOffsets(t *testing.T) {
	batch := func(n int, codec record.Compression, base int64, epoch int32) *record.Batch {
		recs := make([]record.Record, n)
		for i := range recs {
			recs[i] = record.Record{Key: "k" + strconv.Itoa(i), HasKey: true, Value: "v"}
		}
		return record.New(recs, record.Producer{ID: record.NoProducer}, false, codec).Stamped(base, epoch)
	}
	whole := batch(6, record.CompressionNone, 100, 3)
	gzipped := batch(4, record.CompressionGzip, 40, 2)
	// Offsets 200..205, the odd ones kept: 201, 203, 205.
	thinned := batch(6, record.CompressionNone, 200, 5).Compacted(func(offset int64, _ []byte, _ bool) bool { return offset%2 == 1 })
	if !thinned.Thinned() || whole.Thinned() {
		t.Fatal("the test's batches are not what it means them to be")
	}
	type want struct {
		offsets []int64
		epochs  []int32
	}
	for _, tc := range []struct {
		name  string
		spans []history.RecordSpan
		want  want
	}{
		{"none", nil, want{}},
		{"empty span", []history.RecordSpan{{Src: whole, Topic: "t", Partition: 0, Lo: 2, Hi: 2}}, want{}},
		{"whole batch", []history.RecordSpan{{Src: whole, Topic: "t", Partition: 0, Lo: 0, Hi: 6}}, want{[]int64{100, 101, 102, 103, 104, 105}, []int32{3, 3, 3, 3, 3, 3}}},
		{"middle of a batch", []history.RecordSpan{{Src: whole, Topic: "t", Partition: 0, Lo: 2, Hi: 4}}, want{[]int64{102, 103}, []int32{3, 3}}},
		{"compressed", []history.RecordSpan{{Src: gzipped, Topic: "t", Partition: 1, Lo: 1, Hi: 4}}, want{[]int64{41, 42, 43}, []int32{2, 2, 2}}},
		{"thinned", []history.RecordSpan{{Src: thinned, Topic: "t", Partition: 2, Lo: 1, Hi: 3}}, want{[]int64{203, 205}, []int32{5, 5}}},
		{"several", []history.RecordSpan{
			{Src: thinned, Topic: "t", Partition: 2, Lo: 0, Hi: 1},
			{Src: whole, Topic: "t", Partition: 0, Lo: 5, Hi: 6},
		}, want{[]int64{201, 105}, []int32{5, 3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items := workItems(tc.spans, false)
			var offsets []int64
			var epochs []int32
			for _, it := range items {
				offsets, epochs = append(offsets, it.offset), append(epochs, it.epoch)
			}
			if !slices.Equal(offsets, tc.want.offsets) || !slices.Equal(epochs, tc.want.epochs) {
				t.Fatalf("offsets %v epochs %v, want %v %v", offsets, epochs, tc.want.offsets, tc.want.epochs)
			}
			// Each item names its span's partition, and the record the
			// span's source yields there.
			k := 0
			for _, s := range tc.spans {
				s.Src.PolledRecords(int(s.Lo), int(s.Hi), func(offset int64, _ []byte, _ bool, _ []byte) {
					if it := items[k]; it.key != (partKey{s.Topic, s.Partition}) || it.offset != offset {
						t.Fatalf("item %d is %+v, the source yields %s-%d@%d", k, it, s.Topic, s.Partition, offset)
					}
					k++
				})
			}
			if k != len(items) {
				t.Fatalf("%d items for %d polled records", len(items), k)
			}
		})
	}
}
