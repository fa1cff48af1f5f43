package checker

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"kafkasim/history"
)

// A foreign history's operation indexes need not be dense nor small, nor its
// times start near zero: spread 2^33 apart and its times past 2^50 ns (the
// sends' and reads' indexes and times then kept aside of their compact
// records), a history checks as it does dense, its examples naming the same
// operations by their own indexes.
func TestSparseIndexesCheckAsDense(t *testing.T) {
	type history_ struct {
		ops []history.Op
		cfg Config
	}
	hs := map[string]history_{}
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.send("p-0", "b", 0, 1, history.OK)
	h.send("p-1", "c", 0, 2, history.Invoke)
	h.poll("c-0", false, rec{0, 0, "a"}, rec{0, 2, "c"})
	h.send("p-1", "d", 1, 0, history.Info)
	h.send("p-0", "e", 0, 2, history.OK)
	h.poll("c-1", true, rec{0, 0, "a"}, rec{0, 2, "c"}, rec{1, 0, "d"})
	hs["lost and unacknowledged"] = history_{h.ops, strict}
	for _, file := range []string{"kfakerec-txn.jsonl.gz", "kfakerec-group-classic.jsonl"} {
		f, err := os.Open("testdata/" + file)
		if err != nil {
			t.Fatal(err)
		}
		var r io.Reader = f
		if strings.HasSuffix(file, ".gz") {
			if r, err = gzip.NewReader(f); err != nil {
				t.Fatal(err)
			}
		}
		ops, err := history.ReadAll(r)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		hs[file] = history_{ops, Config{Consumers: []ConsumerGuarantees{{Group: "billing", Commit: "after-processing"}}}}
	}
	const spread, from, later = 1 << 33, 5, 1 << 50
	for name, hx := range hs {
		dense := Check(hx.ops, hx.cfg)
		sparse := make([]history.Op, len(hx.ops))
		for i, o := range hx.ops {
			o.Index = o.Index*spread + from
			o.Time += later
			sparse[i] = o
		}
		got := Check(sparse, hx.cfg)
		want := reportOutline(dense, func(i int64) int64 { return i })
		if len(dense.Anomalies) == 0 && name != "kfakerec-group-classic.jsonl" {
			t.Fatalf("%s: no anomaly to compare\n%s", name, dense.Summary())
		}
		if got := reportOutline(got, func(i int64) int64 {
			if i < from || (i-from)%spread != 0 {
				return -i // not an index of the history's: shows as such
			}
			return (i - from) / spread
		}); got != want {
			t.Errorf("%s: sparse\n%s\ndense\n%s", name, got, want)
		}
	}
}

// reportOutline is what a report says, its examples' operations named
// through index.
func reportOutline(r *Report, index func(int64) int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "violations %d\nstats %+v\nlinearizability %+v\n", r.Violations, r.Stats, r.Linearizability)
	for _, an := range r.Anomalies {
		fmt.Fprintf(&b, "%s %s %d %s\n", an.Type, an.Verdict, an.Count, an.Because)
		for _, ex := range an.Examples {
			ops := make([]int64, len(ex.Ops))
			for i, o := range ex.Ops {
				ops[i] = index(o)
			}
			fmt.Fprintf(&b, "  %s@%d %s %s %v\n", ex.Partition, ex.Offset, ex.Value, ex.Process, ops)
		}
	}
	return b.String()
}
