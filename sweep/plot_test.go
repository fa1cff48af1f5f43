package sweep

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	"image/png"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// plotUpdate is -update: rewrite the golden files from the current output
// (go test ./sweep/ -run Golden -update). If another test file of the
// package already defined the flag, its value is used.
var plotUpdate = plotUpdateFlag()

func plotUpdateFlag() func() bool {
	if f := flag.Lookup("update"); f != nil {
		return func() bool {
			g, ok := f.Value.(flag.Getter)
			if !ok {
				return false
			}
			b, _ := g.Get().(bool)
			return b
		}
	}
	p := flag.Bool("update", false, "rewrite sweep/testdata/golden from the current output")
	return func() bool { return *p }
}

// plotTestAxes is a 2×2×2 grid.
var plotTestAxes = []Axis{
	{Name: "acks", Values: []string{"1", "all"}},
	{Name: "min.insync.replicas", Values: []string{"1", "2"}},
	{Name: "nemesis-intensity", Values: []string{"0.5", "1"}},
}

// plotTestStat is a mean with an interval of ±hw, kept at or above 0 as
// for any metric; plotTestFrac keeps it within 0..1 as well, as for a
// fraction.
func plotTestStat(mean, hw float64) Stat {
	return Stat{Mean: mean, Lo: math.Max(0, mean-hw), Hi: mean + hw, N: 20}
}

func plotTestFrac(mean, hw float64) Stat {
	st := plotTestStat(mean, hw)
	st.Hi = math.Min(1, st.Hi)
	return st
}

// plotTestCells is the grid in order (acks outermost, nemesis-intensity
// innermost). Against availability (higher is better) and
// lost-acked-fraction (lower is better) the frontier is cells 6
// (acks=all min.insync.replicas=2 at 0.5: no loss), 4 (acks=all
// min.insync.replicas=1 at 0.5), and 0 and 2, which tie (acks=1 at 0.5):
// cell 1 and 3 are beaten by 0, 5 by 4 and 7 by 6 (same Y, lower X).
func plotTestCells() []Cell {
	type row struct {
		acks, isr, ni string
		avail, lost   float64
	}
	rows := []row{
		{"1", "1", "0.5", 0.99, 0.02},
		{"1", "1", "1", 0.98, 0.05},
		{"1", "2", "0.5", 0.99, 0.02},
		{"1", "2", "1", 0.97, 0.05},
		{"all", "1", "0.5", 0.97, 0.001},
		{"all", "1", "1", 0.95, 0.004},
		{"all", "2", "0.5", 0.93, 0},
		{"all", "2", "1", 0.85, 0},
	}
	var out []Cell
	for i, r := range rows {
		out = append(out, Cell{
			ID:     fmt.Sprintf("acks=%s,min.insync.replicas=%s,nemesis-intensity=%s", r.acks, r.isr, r.ni),
			Values: map[string]string{"acks": r.acks, "min.insync.replicas": r.isr, "nemesis-intensity": r.ni},
			Runs:   20,
			Metrics: map[string]Stat{
				"availability":           plotTestFrac(r.avail, 0.01),
				"lost-acked-fraction":    plotTestFrac(r.lost, r.lost/2),
				"lost-acked":             plotTestStat(r.lost*10000, r.lost*5000),
				"unavailable-seconds":    plotTestStat(math.Round((1-r.avail)*100), 1),
				"p99-produce-latency-ms": plotTestStat(float64(20+5*i), 2),
				"records-per-second":     plotTestStat(1000*r.avail, 10),
				"bytes-per-record":       plotTestStat(120, 0),
				"violations":             plotTestStat(0, 0),
			},
		})
	}
	return out
}

var plotTestSpecs = []PlotSpec{
	{Kind: "pareto", X: "availability", Y: "lost-acked-fraction", Label: []string{"acks", "min.insync.replicas"}},
	{Kind: "heatmap", X: "min.insync.replicas", Y: "nemesis-intensity", Z: "lost-acked-fraction"},
	{Kind: "lines", X: "nemesis-intensity", Y: "availability", Series: []string{"acks", "min.insync.replicas"}},
}

// plotCheckFiles asserts that each plot's PNG decodes and its SVG is
// well-formed XML with an <svg> root.
func plotCheckFiles(t *testing.T, dir string, ps []Plot) {
	t.Helper()
	for _, p := range ps {
		if p.Title == "" || p.Name == "" {
			t.Errorf("plot %+v lacks a name or title", p)
		}
		if p.PNG != p.Name+".png" || p.SVG != p.Name+".svg" {
			t.Errorf("plot %s: files %q, %q; want NAME.png and NAME.svg", p.Name, p.PNG, p.SVG)
		}
		b, err := os.ReadFile(filepath.Join(dir, p.PNG))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Errorf("%s: %v", p.PNG, err)
		} else if r := img.Bounds(); r.Dx() < 400 || r.Dy() < 300 {
			t.Errorf("%s: %v is too small", p.PNG, r)
		}
		svg, err := os.ReadFile(filepath.Join(dir, p.SVG))
		if err != nil {
			t.Fatal(err)
		}
		if err := plotCheckXML(svg, "svg"); err != nil {
			t.Errorf("%s: %v", p.SVG, err)
		}
	}
}

// plotCheckXML asserts that b is well-formed XML whose root element is root.
func plotCheckXML(b []byte, root string) error {
	d := xml.NewDecoder(bytes.NewReader(b))
	d.Strict = true
	var first string
	depth := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if first == "" {
				first = e.Name.Local
			}
			depth++
		case xml.EndElement:
			depth--
		}
	}
	if first != root || depth != 0 {
		return fmt.Errorf("root <%s>, depth at end %d; want <%s>, 0", first, depth, root)
	}
	return nil
}

func TestPlotWriteAll(t *testing.T) {
	dir := t.TempDir()
	ps, err := WritePlots(dir, plotTestAxes, plotTestCells(), plotTestSpecs)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	want := []string{
		"pareto-lost-acked-fraction-vs-availability",
		"heatmap-lost-acked-fraction-by-min-insync-replicas-and-nemesis-intensity",
		"lines-availability-vs-nemesis-intensity-by-acks-min-insync-replicas",
	}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("names = %q, want %q", names, want)
	}
	plotCheckFiles(t, dir, ps)

	svg := func(i int) string {
		b, _ := os.ReadFile(filepath.Join(dir, ps[i].SVG))
		return string(b)
	}
	// Labels with units, legends, the key of the points' numbers, the
	// values in the squares and how the grid is split.
	for i, wants := range [][]string{
		{"availability (fraction, 0–1)", "lost-acked-fraction (fraction, 0–1)", "Pareto frontier",
			"loses no acknowledged write", "loses acknowledged writes", "acks=all min.insync.replicas=2",
			"frontier: higher availability and lower lost-acked-fraction", "numbered as in the key"},
		// The heatmap draws min ISR × intensity; acks is a panel each,
		// and every square is one cell: acks=all at min ISR 1 shows its
		// own 0.004 and 0.001, never a mean with acks=1 (0.027, 0.0105).
		{"min.insync.replicas", "nemesis-intensity (× every nemesis rate)", "lost-acked-fraction (fraction, 0–1)",
			"one panel per acks", ">acks = 1<", ">acks = all<", ">0.004<", ">0.001<", ">0.05<", ">0.02<", ">[0.002, 0.006]<",
			"colour scale 0 to 0.05"},
		{"availability (fraction, 0–1)", "nemesis-intensity", "acks=1 min.insync.replicas=2",
			"acks=all min.insync.replicas=2", "one line per acks × min.insync.replicas"},
	} {
		for _, w := range wants {
			if !strings.Contains(svg(i), w) {
				t.Errorf("%s lacks %q", ps[i].SVG, w)
			}
		}
	}
	for _, mean := range []string{">0.0105<", ">0.027<", "mean over acks"} {
		if strings.Contains(svg(1), mean) {
			t.Errorf("%s shows %q: a mean over acks=1 and acks=all", ps[1].SVG, mean)
		}
	}
	if !strings.Contains(ps[1].Title, "one panel per acks") {
		t.Errorf("heatmap title %q does not say it is split by acks", ps[1].Title)
	}
}

// A plot never averages over the axes it does not draw: fixed by where, it
// shows that slice and says so; left out, the axis becomes panels; too
// many panels is an error that says how to fix it.
func TestPlotNeverAveragesOverConfigurations(t *testing.T) {
	dir := t.TempDir()
	specs := []PlotSpec{
		{Kind: "heatmap", X: "min.insync.replicas", Y: "nemesis-intensity", Z: "lost-acked-fraction",
			Where: []Fixed{{Axis: "acks", Value: "all"}}},
		{Kind: "lines", X: "nemesis-intensity", Y: "availability", Series: []string{"acks"}},
	}
	ps, err := WritePlots(dir, plotTestAxes, plotTestCells(), specs)
	if err != nil || len(ps) != 2 {
		t.Fatalf("plots %v, %v", ps, err)
	}
	read := func(p Plot) string {
		b, err := os.ReadFile(filepath.Join(dir, p.SVG))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	where := read(ps[0])
	for _, w := range []string{"where acks=all", ">0.004<", ">0.001<", ">0<"} {
		if !strings.Contains(where, w) {
			t.Errorf("the where-slice lacks %q", w)
		}
	}
	if strings.Contains(where, ">0.05<") || strings.Contains(where, "one panel per") {
		t.Error("the where-slice shows acks=1's cells or panels")
	}
	// min.insync.replicas is neither x nor a series: one panel per value,
	// and each point is a cell's own mean (acks=1, ISR 1, 0.5 is 0.99).
	lines := read(ps[1])
	for _, w := range []string{"one panel per min.insync.replicas", "min.insync.replicas = 1", "min.insync.replicas = 2"} {
		if !strings.Contains(lines, w) {
			t.Errorf("the lines plot lacks %q", w)
		}
	}

	// Sixteen panels at most: five undrawn axes of two values are 32.
	var axes []Axis
	cells := []Cell{{ID: "c", Values: map[string]string{}, Runs: 1, Metrics: map[string]Stat{"availability": {Mean: 1}}}}
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g"} {
		axes = append(axes, Axis{Name: n, Values: []string{"1", "2"}})
		cells[0].Values[n] = "1"
	}
	_, err = WritePlots(t.TempDir(), axes, cells, []PlotSpec{{Kind: "heatmap", X: "a", Y: "b", Z: "availability"}})
	if err == nil || !strings.Contains(err.Error(), "does not draw c, d, e, f, g") || !strings.Contains(err.Error(), "32 panels is more than 16") ||
		!strings.Contains(err.Error(), "fix axes with where") {
		t.Errorf("32 panels: %v", err)
	}
	_, err = WritePlots(t.TempDir(), axes, cells, []PlotSpec{{Kind: "heatmap", X: "a", Y: "b", Z: "availability",
		Where: []Fixed{{Axis: "c", Value: "1"}}}})
	if err != nil {
		t.Errorf("16 panels: %v", err)
	}
	// seed-offset is a seed axis: averaged over, never a panel.
	axes = []Axis{{Name: "acks", Values: []string{"1", "all"}}, {Name: "seed-offset", Values: []string{"0", "100"}}}
	cells = nil
	for _, a := range []string{"1", "all"} {
		for k, o := range []string{"0", "100"} {
			cells = append(cells, Cell{ID: a + o, Values: map[string]string{"acks": a, "seed-offset": o}, Runs: 1,
				Metrics: map[string]Stat{"availability": {Mean: 0.5 + 0.25*float64(k), Lo: 0.5, Hi: 1}}})
		}
	}
	dir = t.TempDir()
	ps, err = WritePlots(dir, axes, cells, []PlotSpec{{Kind: "lines", X: "acks", Y: "availability"}})
	if err != nil || len(ps) != 1 {
		t.Fatalf("seed-offset: %v, %v", ps, err)
	}
	if s := read(ps[0]); strings.Contains(s, "panel") {
		t.Error("seed-offset made panels")
	}
}

// Colour scales start at 0: a heatmap of two close values (0.269, 0.303,
// the bundled sweep's old figures) no longer paints one deep blue and the
// other deep red.
func TestPlotColorScaleStartsAtZero(t *testing.T) {
	for _, tc := range []struct {
		metric         string
		lo, hi         float64
		wantLo, wantHi float64
	}{
		{"lost-acked-fraction", 0.269, 0.303, 0, 0.31},
		{"lost-acked-fraction", 0, 0, 0, 1},
		{"lost-acked-fraction", 0.01, 0.9, 0, 0.9},
		{"lost-acked-fraction", 0.01, 0.995, 0, 1},
		{"availability", 0.85, 0.99, 0, 1},
		{RunsLosingAcked, 0, 0.3, 0, 0.3},
		{"bytes-per-record", 31, 105.04, 0, 110},
		{"p99-produce-latency-ms", 12, 12, 0, 12},
		{"p99-produce-latency-ms", 0.0123, 0.01234, 0, 0.013},
	} {
		lo, hi := plotColorRange(tc.metric, tc.lo, tc.hi)
		if lo != tc.wantLo || hi != tc.wantHi {
			t.Errorf("%s %v..%v: scale %v..%v, want %v..%v", tc.metric, tc.lo, tc.hi, lo, hi, tc.wantLo, tc.wantHi)
		}
	}
}

func TestPlotParetoFrontierOfCells(t *testing.T) {
	var pts []ParetoPoint
	for _, c := range plotTestCells() {
		pts = append(pts, ParetoPoint{X: c.Metrics["availability"].Mean, Y: c.Metrics["lost-acked-fraction"].Mean})
	}
	got := ParetoFrontier(pts, HigherIsBetter("availability"), HigherIsBetter("lost-acked-fraction"))
	if want := []int{6, 4, 0, 2}; !reflect.DeepEqual(got, want) {
		t.Fatalf("frontier = %v, want %v", got, want)
	}
}

func TestPlotParetoFrontier(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name         string
		pts          []ParetoPoint
		xHigh, yHigh bool
		want         []int
	}{
		{"empty", nil, true, false, nil},
		{"one", []ParetoPoint{{1, 1}}, true, false, []int{0}},
		// Higher X, lower Y is better: (3,1) beats (2,2) and (3,2).
		{"higher x lower y", []ParetoPoint{{1, 0}, {2, 2}, {3, 1}, {3, 2}}, true, false, []int{0, 2}},
		// The same points with lower X better: (1,0) beats every other.
		{"lower x lower y", []ParetoPoint{{1, 0}, {2, 2}, {3, 1}, {3, 2}}, false, false, []int{0}},
		// Higher is better on both: (3,2) beats every other.
		{"higher x higher y", []ParetoPoint{{1, 0}, {2, 2}, {3, 1}, {3, 2}}, true, true, []int{3}},
		// Lower X, higher Y: (1,0) and (2,2) trade.
		{"lower x higher y", []ParetoPoint{{1, 0}, {2, 2}, {3, 1}, {3, 2}}, false, true, []int{0, 1}},
		// Identical points dominate neither other: both stay.
		{"identical", []ParetoPoint{{1, 1}, {1, 1}, {0, 2}}, true, false, []int{0, 1}},
		{"identical and a trade", []ParetoPoint{{1, 1}, {1, 1}, {0, 0}}, true, false, []int{2, 0, 1}},
		// A tie on X with a worse Y is beaten; a tie on Y with a worse X too.
		{"tie on x", []ParetoPoint{{1, 1}, {1, 2}}, true, false, []int{0}},
		{"tie on y", []ParetoPoint{{1, 1}, {2, 1}}, true, false, []int{1}},
		// Identical but beaten points are both off.
		{"identical beaten", []ParetoPoint{{1, 2}, {1, 2}, {2, 1}}, true, false, []int{2}},
		// NaN is never on the frontier and beats nothing.
		{"nan", []ParetoPoint{{nan, 0}, {1, 1}, {2, nan}}, true, false, []int{1}},
		// A staircase: all four trade.
		{"staircase", []ParetoPoint{{4, 4}, {1, 1}, {3, 3}, {2, 2}}, true, true, []int{0}},
		{"staircase trade", []ParetoPoint{{4, 4}, {1, 1}, {3, 3}, {2, 2}}, true, false, []int{1, 3, 2, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ParetoFrontier(tc.pts, tc.xHigh, tc.yHigh)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("frontier = %v, want %v", got, tc.want)
			}
			// Cross-check against the definition.
			if brute := plotBruteFrontier(tc.pts, tc.xHigh, tc.yHigh); !reflect.DeepEqual(plotTestSet(got), plotTestSet(brute)) {
				t.Fatalf("frontier = %v, brute force %v", got, brute)
			}
		})
	}
}

func plotBruteFrontier(pts []ParetoPoint, xHigh, yHigh bool) []int {
	better := func(a, b float64, high bool) int { // 1 if a better than b, 0 tie, -1 worse
		switch {
		case a == b:
			return 0
		case (a > b) == high:
			return 1
		}
		return -1
	}
	var out []int
	for i, p := range pts {
		if math.IsNaN(p.X) || math.IsNaN(p.Y) {
			continue
		}
		dominated := false
		for j, q := range pts {
			if i == j || math.IsNaN(q.X) || math.IsNaN(q.Y) {
				continue
			}
			bx, by := better(q.X, p.X, xHigh), better(q.Y, p.Y, yHigh)
			if bx >= 0 && by >= 0 && (bx > 0 || by > 0) {
				dominated = true
			}
		}
		if !dominated {
			out = append(out, i)
		}
	}
	return out
}

func plotTestSet(is []int) map[int]bool {
	m := map[int]bool{}
	for _, i := range is {
		m[i] = true
	}
	return m
}

func TestPlotHigherIsBetter(t *testing.T) {
	for m, want := range map[string]bool{
		"availability": true, "records-per-second": true,
		"lost-acked": false, "lost-acked-fraction": false, "violations": false,
		"p99-produce-latency-ms": false, "unavailable-seconds": false, "bytes-per-record": false,
		"duplicate": false,
	} {
		if got := HigherIsBetter(m); got != want {
			t.Errorf("HigherIsBetter(%q) = %v, want %v", m, got, want)
		}
	}
}

// plotHeatGrid averages the cells given for each square: a panel's cells,
// which differ only in seed-offset (see TestPlotNeverAveragesOverConfigurations).
func TestPlotHeatGridAveragesCellsOfASquare(t *testing.T) {
	x, _ := plotFindAxis(plotTestAxes, "min.insync.replicas")
	y, _ := plotFindAxis(plotTestAxes, "nemesis-intensity")
	g := plotHeatGrid(x, y, plotTestCells(), "lost-acked-fraction")
	if c, r := g.Dims(); c != 2 || r != 2 {
		t.Fatalf("dims = %d×%d, want 2×2", c, r)
	}
	// Each square averages acks=1 and acks=all.
	want := [2][2]float64{
		{(0.02 + 0.001) / 2, (0.05 + 0.004) / 2}, // min.insync.replicas=1 at 0.5, 1
		{(0.02 + 0) / 2, (0.05 + 0) / 2},         // min.insync.replicas=2
	}
	for c := range 2 {
		for r := range 2 {
			if got := g.Z(c, r); math.Abs(got-want[c][r]) > 1e-12 {
				t.Errorf("Z(%d,%d) = %v, want %v", c, r, got, want[c][r])
			}
			if g.n[c][r] != 2 {
				t.Errorf("n(%d,%d) = %d, want 2", c, r, g.n[c][r])
			}
		}
		if g.X(c) != float64(c) || g.Y(c) != float64(c) {
			t.Errorf("X(%d), Y(%d) = %v, %v; want %d", c, c, g.X(c), g.Y(c), c)
		}
	}

	// A square no cell reaches is NaN; cells outside the axis's values and
	// cells without the metric are left out.
	cells := plotTestCells()[:1]
	cells = append(cells, Cell{Values: map[string]string{"min.insync.replicas": "3", "nemesis-intensity": "0.5"},
		Runs: 1, Metrics: map[string]Stat{"lost-acked-fraction": {Mean: 9}}})
	cells = append(cells, Cell{Values: map[string]string{"min.insync.replicas": "1", "nemesis-intensity": "0.5"},
		Runs: 1, Metrics: map[string]Stat{"availability": {Mean: 9}}})
	g = plotHeatGrid(x, y, cells, "lost-acked-fraction")
	if g.Z(0, 0) != 0.02 || g.n[0][0] != 1 {
		t.Errorf("Z(0,0) = %v over %d cells, want 0.02 over 1", g.Z(0, 0), g.n[0][0])
	}
	for _, cr := range [][2]int{{0, 1}, {1, 0}, {1, 1}} {
		if z := g.Z(cr[0], cr[1]); !math.IsNaN(z) {
			t.Errorf("Z(%d,%d) = %v, want NaN", cr[0], cr[1], z)
		}
	}
}

func TestPlotAggregate(t *testing.T) {
	cells := []Cell{
		{Metrics: map[string]Stat{"m": {Mean: 1, Lo: 0, Hi: 2}}},
		{Metrics: map[string]Stat{"m": {Mean: 3, Lo: 3, Hi: 3}}},
		{Metrics: map[string]Stat{"m": {Mean: math.NaN()}}},
		{Metrics: map[string]Stat{}},
	}
	a := plotAggregate(cells, "m")
	if a.Mean != 2 || a.Cells != 2 || a.Lo != 1.5 || a.Hi != 2.5 {
		t.Errorf("aggregate = %+v, want mean 2 over 2 cells, [1.5, 2.5]", a)
	}
	if a := plotAggregate(cells[:1], "m"); a.Mean != 1 || a.Lo != 0 || a.Hi != 2 {
		t.Errorf("one cell = %+v, want its own interval", a)
	}
	if a := plotAggregate(nil, "m"); !math.IsNaN(a.Mean) || a.Cells != 0 {
		t.Errorf("no cells = %+v, want NaN", a)
	}
}

func TestPlotLineSeries(t *testing.T) {
	x, _ := plotFindAxis(plotTestAxes, "nemesis-intensity")
	acks, _ := plotFindAxis(plotTestAxes, "acks")
	ss := plotLineSeries(x, []plotAxis{acks}, plotTestCells(), "availability")
	if len(ss) != 2 || ss[0].name != "acks=1" || ss[1].name != "acks=all" {
		t.Fatalf("series = %+v", ss)
	}
	// acks=1 at 0.5 averages min.insync.replicas 1 and 2: 0.99, 0.99.
	if m := ss[0].at[0].Mean; math.Abs(m-0.99) > 1e-12 {
		t.Errorf("acks=1 at 0.5 = %v, want 0.99", m)
	}
	if m := ss[1].at[1].Mean; math.Abs(m-0.90) > 1e-12 {
		t.Errorf("acks=all at 1 = %v, want 0.90", m)
	}
}

func TestPlotAxisOrder(t *testing.T) {
	a, _ := plotFindAxis([]Axis{{Name: "n", Values: []string{"10", "2", "1e3", "2"}}}, "n")
	if !a.numeric || !reflect.DeepEqual(a.values, []string{"2", "10", "1e3"}) || !reflect.DeepEqual(a.nums, []float64{2, 10, 1000}) {
		t.Errorf("numeric axis = %+v", a)
	}
	c, _ := plotFindAxis([]Axis{{Name: "c", Values: []string{"zstd", "10", "lz4"}}}, "c")
	if c.numeric || !reflect.DeepEqual(c.values, []string{"zstd", "10", "lz4"}) {
		t.Errorf("categorical axis = %+v", c)
	}
}

func TestPlotDeterministic(t *testing.T) {
	write := func() (string, []Plot) {
		dir := t.TempDir()
		ps, err := WritePlots(dir, plotTestAxes, plotTestCells(), plotTestSpecs)
		if err != nil {
			t.Fatal(err)
		}
		return dir, ps
	}
	d1, p1 := write()
	d2, p2 := write()
	if !reflect.DeepEqual(p1, p2) {
		t.Fatalf("plots differ: %v vs %v", p1, p2)
	}
	for _, p := range p1 {
		for _, f := range []string{p.PNG, p.SVG} {
			a, _ := os.ReadFile(filepath.Join(d1, f))
			b, _ := os.ReadFile(filepath.Join(d2, f))
			if len(a) == 0 || !bytes.Equal(a, b) {
				t.Errorf("%s differs between two writes (%d vs %d bytes)", f, len(a), len(b))
			}
		}
	}
}

func TestPlotSkipsInvalidCells(t *testing.T) {
	base := t.TempDir()
	ps, err := WritePlots(base, plotTestAxes, plotTestCells(), plotTestSpecs)
	if err != nil {
		t.Fatal(err)
	}
	// Cells that did not run, with values that would show if drawn.
	hostile := map[string]Stat{"availability": {Mean: 0.1, Lo: 0, Hi: 0.2}, "lost-acked-fraction": {Mean: 0.9, Lo: 0.8, Hi: 1}}
	cells := append(plotTestCells(),
		Cell{ID: "invalid", Values: map[string]string{"acks": "all", "min.insync.replicas": "2", "nemesis-intensity": "1"},
			Invalid: "min.insync.replicas 2 above replication.factor 1", Metrics: hostile},
		Cell{ID: "no runs", Values: map[string]string{"acks": "1", "min.insync.replicas": "1", "nemesis-intensity": "0.5"},
			Metrics: hostile})
	dir := t.TempDir()
	ps2, err := WritePlots(dir, plotTestAxes, cells, plotTestSpecs)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ps, ps2) {
		t.Fatalf("plots differ: %v vs %v", ps, ps2)
	}
	for _, p := range ps {
		for _, f := range []string{p.PNG, p.SVG} {
			a, _ := os.ReadFile(filepath.Join(base, f))
			b, _ := os.ReadFile(filepath.Join(dir, f))
			if !bytes.Equal(a, b) {
				t.Errorf("%s changed when cells that did not run were added", f)
			}
		}
	}
}

func TestPlotEmptyInput(t *testing.T) {
	invalid := plotTestCells()
	for i := range invalid {
		invalid[i].Invalid = "no"
	}
	for name, tc := range map[string]struct {
		cells []Cell
		specs []PlotSpec
	}{
		"no cells":           {nil, plotTestSpecs},
		"no specs":           {plotTestCells(), nil},
		"only invalid":       {invalid, plotTestSpecs},
		"nothing at all":     {nil, nil},
		"metric all NaN":     {[]Cell{{Values: map[string]string{"acks": "1"}, Runs: 1, Metrics: map[string]Stat{"availability": {Mean: math.NaN()}, "lost-acked-fraction": {Mean: math.NaN()}}}}, plotTestSpecs},
		"cells off the axes": {[]Cell{{Values: map[string]string{"acks": "2"}, Runs: 1, Metrics: map[string]Stat{"availability": {Mean: 1}, "lost-acked-fraction": {Mean: 1}}}}, plotTestSpecs[1:]},
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			ps, err := WritePlots(dir, plotTestAxes, tc.cells, tc.specs)
			if err != nil || len(ps) != 0 {
				t.Fatalf("WritePlots = %v, %v; want nothing", ps, err)
			}
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("the directory was created: %v", err)
			}
		})
	}
}

func TestPlotBadSpecs(t *testing.T) {
	specs := []PlotSpec{
		{Kind: "pie", X: "acks", Y: "availability"},
		{Kind: "pareto", X: "acks", Y: "availability"},
		{Kind: "heatmap", X: "availability", Y: "acks", Z: "lost-acked"},
		{Kind: "lines", X: "acks", Y: "no-such-metric"},
		{Kind: "lines", X: "acks", Y: "availability", Series: []string{"nope"}},
		plotTestSpecs[0],
	}
	dir := t.TempDir()
	ps, err := WritePlots(dir, plotTestAxes, plotTestCells(), specs)
	if err == nil {
		t.Fatal("no error for bad specs")
	}
	for _, w := range []string{"unknown kind \"pie\"", "x: \"acks\" is an axis", "x: \"availability\" is not an axis",
		"no cell reports a metric \"no-such-metric\"", "series: \"nope\" is not an axis"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
	if len(ps) != 1 || ps[0].Name != "pareto-lost-acked-fraction-vs-availability" {
		t.Errorf("plots = %v, want the one good spec's", ps)
	}
}

func TestPlotNamesUnique(t *testing.T) {
	names := plotNames([]PlotSpec{plotTestSpecs[0], plotTestSpecs[0], {Kind: "lines", X: "<x>", Y: "*"}, plotTestSpecs[0]})
	want := []string{"pareto-lost-acked-fraction-vs-availability", "pareto-lost-acked-fraction-vs-availability-2",
		"lines-vs-x", "pareto-lost-acked-fraction-vs-availability-3"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("names = %q, want %q", names, want)
	}
}

// Degenerate data: one cell, every value the same, a categorical x axis.
func TestPlotDegenerate(t *testing.T) {
	axes := []Axis{{Name: "compression.type", Values: []string{"none", "zstd"}}}
	same := map[string]Stat{"availability": {Mean: 1, Lo: 1, Hi: 1}, "lost-acked-fraction": {Mean: 0, Lo: 0, Hi: 0}}
	cells := []Cell{
		{Values: map[string]string{"compression.type": "none"}, Runs: 1, Metrics: same},
		{Values: map[string]string{"compression.type": "zstd"}, Runs: 1, Metrics: same},
	}
	specs := []PlotSpec{
		{Kind: "pareto", X: "availability", Y: "lost-acked-fraction"},
		{Kind: "heatmap", X: "compression.type", Y: "compression.type", Z: "availability"},
		{Kind: "lines", X: "compression.type", Y: "lost-acked-fraction"},
	}
	for _, cs := range [][]Cell{cells, cells[:1]} {
		dir := t.TempDir()
		ps, err := WritePlots(dir, axes, cs, specs)
		if err != nil {
			t.Fatal(err)
		}
		if len(ps) != 3 {
			t.Fatalf("plots = %v", ps)
		}
		plotCheckFiles(t, dir, ps)
	}
}

// The golden files pin the exact bytes of a tiny sweep's plots. Floating
// point may round differently on other architectures (arm64 fuses
// multiply-adds), so the bytes are compared on amd64 only, where they were
// made; regenerate with go test ./sweep/ -run Golden -update.
func TestPlotGolden(t *testing.T) {
	axes := []Axis{
		{Name: "acks", Values: []string{"1", "all"}},
		{Name: "min.insync.replicas", Values: []string{"1", "2"}},
	}
	var cells []Cell
	for _, c := range plotTestCells() {
		if c.Values["nemesis-intensity"] == "1" {
			delete(c.Values, "nemesis-intensity")
			cells = append(cells, c)
		}
	}
	specs := []PlotSpec{
		{Kind: "pareto", X: "availability", Y: "lost-acked-fraction", Label: []string{"acks", "min.insync.replicas"}},
		{Kind: "heatmap", X: "acks", Y: "min.insync.replicas", Z: "lost-acked-fraction"},
		{Kind: "lines", X: "min.insync.replicas", Y: "availability", Series: []string{"acks"}},
	}
	dir := t.TempDir()
	ps, err := WritePlots(dir, axes, cells, specs)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 3 {
		t.Fatalf("plots = %v", ps)
	}
	golden := filepath.Join("testdata", "golden")
	if plotUpdate() {
		if err := os.MkdirAll(golden, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if !plotUpdate() && runtime.GOARCH != "amd64" {
		t.Skipf("golden bytes are from amd64; this is %s", runtime.GOARCH)
	}
	for _, p := range ps {
		for _, f := range []string{p.SVG, p.PNG} {
			got, err := os.ReadFile(filepath.Join(dir, f))
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(golden, f)
			if plotUpdate() {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./sweep/ -run Golden -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from %s (%d vs %d bytes); if the change is intended, run go test ./sweep/ -run Golden -update",
					f, path, len(got), len(want))
			}
		}
	}
}
