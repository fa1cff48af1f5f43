package checker

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// sortObservations gives what sorting by cmpObservation gives, for dense
// offsets (counted into place) and sparse ones (sorted), many or few.
func TestSortObservationsIsTheSort(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 3000).Draw(t, "n")
		spread := rapid.SampledFrom([]int64{1, 50, 1000, 1 << 40}).Draw(t, "spread")
		base := rapid.Int64Range(0, 1<<50).Draw(t, "base")
		obs := make([]observation, n)
		for i := range obs {
			op := rapid.Int64Range(0, 200).Draw(t, "op")
			sess := rapid.Int32Range(-1, 5).Draw(t, "sess")
			// One operation is one process and one poll's flags: equal
			// keys are equal observations, as in a history.
			obs[i] = observation{off: base + rapid.Int64Range(0, spread).Draw(t, "off"), val: rapid.Int32Range(0, 30).Draw(t, "val"),
				op: op, sess: sess}
		}
		want := slices.Clone(obs)
		slices.SortFunc(want, cmpObservation)
		sortObservations(obs)
		if !slices.Equal(obs, want) {
			t.Fatalf("sorted differently:\n%v\nwant\n%v", obs, want)
		}
	})
}
