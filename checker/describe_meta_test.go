package checker

import "testing"

// The linearizability visualisation names each operation by the history
// entries it stands for, read from the operation itself.
func TestDescribeMetaNamesTheHistoryEntries(t *testing.T) {
	for _, c := range []struct {
		info any
		want string
	}{
		{&logOp{call: 3, ret: 7}, "history #3–#7"},
		{&logOp{call: 3, ret: 9, unreturned: true}, "history #3"},
		{&logOp{call: 5, ret: 5}, "history #5"},
		{&regOp{ops: [2]int64{10, 12}}, "history #10–#12"},
		{[2]int64{1, 2}, ""},
		{nil, ""},
	} {
		if got := describeMeta(c.info); got != c.want {
			t.Errorf("describeMeta(%#v) = %q, want %q", c.info, got, c.want)
		}
	}
}
