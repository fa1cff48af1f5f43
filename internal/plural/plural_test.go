package plural

import "testing"

func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int
		noun string
		want string
	}{
		{1, "failure", "1 failure"}, {0, "failure", "0 failures"}, {2, "batch", "2 batches"},
		{1, "seed", "1 seed"}, {3, "seed", "3 seeds"}, {2, "acknowledged write", "2 acknowledged writes"},
		{4, "box", "4 boxes"}, {-1, "run", "-1 runs"},
	} {
		if got := Count(c.n, c.noun); got != c.want {
			t.Errorf("Count(%d, %q) = %q, want %q", c.n, c.noun, got, c.want)
		}
	}
	if got := Count(uint64(1), "event"); got != "1 event" {
		t.Errorf("Count(uint64(1)) = %q", got)
	}
}

func TestTimes(t *testing.T) {
	if Times(1) != "once" || Times(2) != "2 times" || Times(0) != "0 times" {
		t.Fatalf("%q %q %q", Times(1), Times(2), Times(0))
	}
}
