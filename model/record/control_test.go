package record

import "testing"

func TestControlBatchRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		committed bool
		want      ControlType
		epoch     int32
	}{{true, ControlCommit, 7}, {false, ControlAbort, 0}, {true, ControlCommit, 1 << 20}} {
		b := NewControl(42, 3, tc.committed, tc.epoch, 1234).Stamped(100, 5)
		d, n, err := Decode(b.Encode(nil))
		if err != nil || n != b.SizeBytes() {
			t.Fatalf("decode: %v (%d of %d bytes)", err, n, b.SizeBytes())
		}
		for _, x := range []*Batch{b, d} {
			typ, epoch, ok := x.Marker()
			if !ok || typ != tc.want || epoch != tc.epoch {
				t.Fatalf("marker = %v %d %v, want %v %d", typ, epoch, ok, tc.want, tc.epoch)
			}
			if !x.Control || !x.Transactional || x.ProducerID != 42 || x.ProducerEpoch != 3 || x.BaseSequence != -1 || x.Count() != 1 {
				t.Fatalf("header: %+v", x)
			}
			if x.IsCommit() != tc.committed || x.IsAbort() == tc.committed {
				t.Fatalf("IsCommit/IsAbort wrong for %v", tc.want)
			}
		}
	}
	data := New([]Record{{Key: "k", HasKey: true, Value: "v"}}, Producer{ID: 1, Epoch: 0, BaseSequence: 0}, true, CompressionNone)
	if _, _, ok := data.Marker(); ok {
		t.Fatal("a data batch read as a marker")
	}
}
