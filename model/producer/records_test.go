package producer

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"kafkasim/model/record"
)

// A partition's batches take their records from one block, and each keeps
// exactly what was appended to it: batches of every size, the newest
// growing in place and moving to a new block when its block runs out, an
// older batch appended to again (which moves it), and nothing appended to
// a batch ever reaching another (each is capped at its length).
func TestBatchesShareARecordBlockWithoutOverlap(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var st partitionState
	var got [][]record.Record
	var want [][]string
	for b := 0; b < 2000; b++ {
		var recs []record.Record
		var vals []string
		n := 1 + rng.IntN(8)
		if rng.IntN(50) == 0 {
			n = 300 + rng.IntN(300) // past a block
		}
		for i := range n {
			v := strconv.Itoa(b) + "/" + strconv.Itoa(i)
			recs = st.appendRecord(recs, record.Record{Value: v})
			vals = append(vals, v)
			if cap(recs) != len(recs) {
				t.Fatalf("batch %d: capacity %d past its %d records", b, cap(recs), len(recs))
			}
		}
		got, want = append(got, recs), append(want, vals)
		if k := rng.IntN(len(got)); rng.IntN(20) == 0 {
			v := "again-" + strconv.Itoa(b)
			got[k] = st.appendRecord(got[k], record.Record{Value: v})
			want[k] = append(want[k], v)
		}
	}
	for b := range got {
		if len(got[b]) != len(want[b]) {
			t.Fatalf("batch %d: %d records, want %d", b, len(got[b]), len(want[b]))
		}
		for i, r := range got[b] {
			if r.Value != want[b][i] {
				t.Fatalf("batch %d record %d: %q, want %q", b, i, r.Value, want[b][i])
			}
		}
	}
}
