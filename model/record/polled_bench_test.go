package record

import (
	"strconv"
	"testing"
)

// A poll's records decoded from a batch's bytes, as the checker, the
// history's writer and the report each do for every record a run read.
func BenchmarkPolledRecords(b *testing.B) {
	recs := make([]Record, 5)
	for i := range recs {
		recs[i] = Record{Key: "k" + strconv.Itoa(100+i), HasKey: true, Value: "p-0:" + strconv.Itoa(123450+i), Timestamp: int64(1000 + i)}
	}
	batch := New(recs, Producer{ID: 7, Epoch: 0, BaseSequence: 40}, false, CompressionNone)
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		batch.PolledRecords(0, len(recs), func(offset int64, key []byte, hasKey bool, value []byte) {
			n += len(key) + len(value) + int(offset)
		})
	}
	if n == 0 {
		b.Fatal("no records")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
}
