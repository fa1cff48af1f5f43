package reports

import (
	"reflect"
	"testing"
	"time"

	"kafkasim/history"
)

// A run's recorder, served as a History, reads as the operations it
// recorded: the group activities a sweep measures from it are those of
// the same operations in a slice.
func TestRecorderHistoryReadsAsItsOps(t *testing.T) {
	ops := groupHistory()
	var now time.Duration
	rec := history.NewRecorder(func() time.Duration { return now })
	for _, op := range ops {
		now = time.Duration(op.Time)
		if op.Type == history.Invoke {
			rec.Invoke(op.Process, op.F, op.Value)
		} else {
			rec.Complete(op.Process, op.Type, op.F, op.Value)
		}
	}
	h := RecorderHistory(rec)
	if h.Len() != len(ops) {
		t.Fatalf("Len %d, want %d", h.Len(), len(ops))
	}
	want := GroupActivities(OpsHistory(ops))
	if len(want) == 0 {
		t.Fatal("the fixture has no group")
	}
	if got := GroupActivities(h); !reflect.DeepEqual(got, want) {
		t.Fatalf("from the recorder:\n%+v\nfrom the ops:\n%+v", got, want)
	}
	for _, p := range []int{0, len(ops) / 2, len(ops) - 1} {
		if at := h.At(p); at.F != ops[p].F || at.Process != ops[p].Process || at.Time != ops[p].Time || at.Index != int64(p) {
			t.Errorf("At(%d) = %v, want %v", p, at, ops[p])
		}
		if i, ok := h.Find(int64(p)); !ok || i != p {
			t.Errorf("Find(%d) = %d, %v", p, i, ok)
		}
	}
	if _, ok := h.Find(int64(len(ops))); ok {
		t.Error("Find past the end found an operation")
	}
}
