package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A value given twice on one axis would run a cell twice and count its runs
// twice: an error naming the value. A rate is written as in a scenario.
func TestSweepAxisValues(t *testing.T) {
	dir := t.TempDir()
	base, err := os.ReadFile("../sweeps/batching-base.yaml")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "batching-base.yaml"), base, 0o644)
	write := func(axes string) string {
		p := filepath.Join(dir, "s.yaml")
		os.WriteFile(p, []byte("name: s\nbase: batching-base.yaml\nseeds: 1\naxes:\n"+axes), 0o644)
		return p
	}
	_, err = Load(write("  acks: [all, \"1\", all]\n"))
	if err == nil || !strings.Contains(err.Error(), "s.yaml:5") || !strings.Contains(err.Error(), `"all" is value 0 too`) {
		t.Fatalf("duplicate axis value: %v", err)
	}
	sw, err := Load(write("  rate: [50/s, 200]\n"))
	if err != nil {
		t.Fatalf("rate axis: %v", err)
	}
	s := *sw.Base
	if err := s.Apply("rate", "50/s"); err != nil || s.Producers[0].Rate != 50 {
		t.Fatalf("rate 50/s: %v, rate %v", err, s.Producers[0].Rate)
	}
}

// A plot's facets, where and title load; every mistake in them is an error
// at load time naming the line, not a plot missing after the sweep ran.
func TestSweepPlotFacetsAndWhere(t *testing.T) {
	dir := t.TempDir()
	base, err := os.ReadFile("../sweeps/batching-base.yaml")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "batching-base.yaml"), base, 0o644)
	const axes = "axes:\n  acks: [\"1\", all]\n  linger.ms: [0, 5, 10, 20]\n  batch.size: [1024, 16384]\n  compression.type: [none, gzip]\n  seed-offset: [0, 1000]\n"
	write := func(plots string) string {
		p := filepath.Join(dir, "s.yaml")
		// The plots come before the axes: they are read once the axes are known.
		os.WriteFile(p, []byte("name: s\nbase: batching-base.yaml\nseeds: 1\nplots:\n"+plots+axes), 0o644)
		return p
	}
	sw, err := Load(write(`  - { kind: heatmap, x: linger.ms, y: batch.size, z: bytes-per-record, where: { acks: all }, facets: compression.type, title: "Bytes per record" }
`))
	if err != nil {
		t.Fatal(err)
	}
	p := sw.Plots[0]
	if len(p.Where) != 1 || p.Where[0] != (Fixed{Axis: "acks", Value: "all"}) || len(p.Facets) != 1 || p.Facets[0] != "compression.type" || p.Title != "Bytes per record" {
		t.Fatalf("plot = %+v", p)
	}
	// Nothing left to average over but the seeds.
	if got := PlotAveragedAxes(p.Kind, p.Named(), sw.Axes); len(got) != 0 {
		t.Errorf("averaged axes = %v", got)
	}
	if got := PlotAveragedAxes("lines", []string{"linger.ms", "bytes-per-record"}, sw.Axes); strings.Join(got, ",") != "acks,batch.size,compression.type" {
		t.Errorf("averaged axes of a lines plot of linger.ms = %v", got)
	}
	for _, tc := range []struct{ plot, want string }{
		{`  - { kind: heatmap, x: linger.ms, y: batch.size, z: bytes-per-record, where: { acks: "0" } }`, `s.yaml:5:87: plots[0].where.acks: "0" is not a value of axis acks (1, all)`},
		{`  - { kind: heatmap, x: linger.ms, y: batch.size, z: bytes-per-record, where: { nope: 1 } }`, `"nope" is not an axis of this sweep`},
		{`  - { kind: heatmap, x: linger.ms, y: batch.size, z: bytes-per-record, facets: [availability] }`, `plots[0].facets[0]: "availability" is not an axis`},
		{`  - { kind: heatmap, x: linger.ms, y: batch.size, z: bytes-per-record, facets: [linger.ms] }`, `axis linger.ms is x and a facet: name each axis once`},
		{`  - { kind: lines, x: linger.ms, y: bytes-per-record, series: [acks], where: { acks: all } }`, `axis acks is a series and fixed by where`},
		{`  - { kind: heatmap, x: bytes-per-record, y: batch.size, z: acks }`, `a heatmap's x is an axis, not the metric "bytes-per-record"`},
		{`  - { kind: pareto, x: availability, y: acks }`, `a pareto plot's y is a metric, not the axis "acks"`},
		{`  - { kind: pareto, x: availability, y: bytes-per-record, facets: [acks], label: [acks] }`, `axis acks is a facet: every point of a panel has the same value`},
		{`  - { kind: lines, x: linger.ms, y: bytes-per-record, facet: [acks] }`, `unknown key (did you mean "facets"?)`},
		// acks × linger.ms × compression.type: 2 × 4 × 2 = 16 panels is
		// the most; one more axis of two values is too many.
		{`  - { kind: lines, x: seed-offset, y: bytes-per-record }`, `the plot does not draw acks, linger.ms, batch.size, compression.type, and a plot never averages over configurations: it would draw one panel per combination of their values (32 panels is more than 16); fix axes with where`},
	} {
		_, err := Load(write(tc.plot + "\n"))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s", tc.plot, err, tc.want)
		}
	}
	if _, err := Load(write("  - { kind: lines, x: batch.size, y: bytes-per-record }\n")); err != nil {
		t.Errorf("16 panels: %v", err)
	}
}
