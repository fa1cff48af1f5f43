package sweep

import (
	"path/filepath"
	"strings"
	"testing"
)

// Every bundled sweep loads (its base, axes and plots), and every bundled
// base is some sweep's.
func TestBundledSweepsLoad(t *testing.T) {
	files, err := filepath.Glob("../sweeps/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bundled sweeps: %v", err)
	}
	bases := map[string]bool{}
	loaded := 0
	for _, f := range files {
		if strings.HasSuffix(f, "-base.yaml") {
			bases[filepath.Clean(f)] = false
			continue
		}
		sw, err := Load(f)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		loaded++
		bases[filepath.Clean(sw.BasePath)] = true
		if len(sw.Plots) == 0 {
			t.Errorf("%s: no plots", f)
		}
	}
	for b, used := range bases {
		if !used {
			t.Errorf("%s is no bundled sweep's base", b)
		}
	}
	if loaded < 4 {
		t.Errorf("%d bundled sweeps loaded, want processor-eos and the others", loaded)
	}
}

// The processor-eos sweep's story, at one commit interval and one seed: an
// exactly-once processor's outputs become visible at its transactions'
// commits, so its end-to-end latency is about the commit interval; an
// at-least-once processor's once acknowledged. Both keep up with the
// input.
func TestProcessorEOSSweepStory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the cluster")
	}
	sw, err := Load("../sweeps/processor-eos.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sw.Axes = []Axis{{Name: "exactly-once", Values: []string{"false", "true"}}, {Name: "commit-interval", Values: []string{"1s"}}}
	sw.Plots = nil
	out := t.TempDir()
	res, err := Run(sw, Options{Parallel: 1, Seeds: 1, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]map[string]float64{}
	for _, c := range res.Cells {
		if c.Invalid != "" || c.Failed > 0 {
			t.Fatalf("cell %s: invalid %q, %d failed", c.ID, c.Invalid, c.Failed)
		}
		m[c.Values["exactly-once"]] = res.Records[c.ID][0].Metrics
	}
	alo, eos := m["false"], m["true"]
	if alo["p99-end-to-end-latency-ms"] <= 0 || alo["p99-end-to-end-latency-ms"] > 500 {
		t.Errorf("at-least-once p99 end-to-end latency %v ms, want a positive one well under the 1 s commit interval", alo["p99-end-to-end-latency-ms"])
	}
	if eos["p99-end-to-end-latency-ms"] < 1000 || eos["mean-end-to-end-latency-ms"] < 400 || eos["mean-end-to-end-latency-ms"] < 4*alo["mean-end-to-end-latency-ms"] {
		t.Errorf("exactly-once latency p99 %v ms, mean %v ms (at-least-once mean %v ms): want the outputs to wait for the 1 s commit",
			eos["p99-end-to-end-latency-ms"], eos["mean-end-to-end-latency-ms"], alo["mean-end-to-end-latency-ms"])
	}
	for name, x := range m {
		if x["committed-outputs-per-second"] < 90 || x["committed-outputs-per-second"] > 110 {
			t.Errorf("exactly-once=%s: %v committed outputs per second, want about the input's 100", name, x["committed-outputs-per-second"])
		}
	}
	// A record written before the processor metrics existed is run again,
	// not read as zeros.
	rec := res.Records[res.Cells[0].ID][0]
	for _, name := range ProcessorMetrics {
		delete(rec.Metrics, name)
	}
	if err := writeRecord(recordPath(res.Dir, rec.Cell, rec.Seed), rec); err != nil {
		t.Fatal(err)
	}
	if again, err := Run(sw, Options{Parallel: 1, Seeds: 1, Out: out}); err != nil || again.Runs != 1 || again.Resumed != 1 {
		t.Fatalf("a record without processor metrics: %d runs, %d resumed (%v)", again.Runs, again.Resumed, err)
	}
}
