package partlog

import (
	"fmt"
	"math"
	"testing"
)

// The segment and snapshot names are fmt's "%020d" without fmt: the same
// names at every width, at the edges and past them.
func TestFileNamesAsFmtWouldWrite(t *testing.T) {
	for _, off := range []int64{0, 1, 9, 10, 99, 100, 12345, 1 << 31, 99999999999999999, math.MaxInt64, -1, math.MinInt64} {
		if got, want := SegmentFile("data/t-0", off), fmt.Sprintf("%s/%020d.log", "data/t-0", off); got != want {
			t.Errorf("SegmentFile(%d) = %q, want %q", off, got, want)
		}
		if got, want := SnapshotFile("d", off), fmt.Sprintf("%s/%020d.snapshot", "d", off); got != want {
			t.Errorf("SnapshotFile(%d) = %q, want %q", off, got, want)
		}
	}
}
