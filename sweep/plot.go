package sweep

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"kafkasim/reports"
)

// Plot is one figure of a sweep, written as both PNG and SVG:
// Name is a slug of the plot's kind and fields
// ("pareto-lost-acked-fraction-vs-availability"), unique within a sweep,
// and the files are Name.png and Name.svg.
type Plot = reports.Plot

// WritePlots draws each plot of a sweep into dir as NAME.png and NAME.svg
// and returns them in the order of specs.
//
// Only cells that ran are drawn: a cell with Invalid set or no finished run
// is left out of every plot. With no such cell, or no spec, nothing is
// written and nothing is an error. A spec whose fields cannot be drawn (an
// unknown kind, a metric no cell reports, a heatmap over a metric instead of
// an axis) is an error, but the other plots are still written: the error
// joins every failed spec's and the plots returned are those written. A spec
// whose cells lack the values it needs (every mean NaN) is skipped silently.
//
// The same input gives byte-identical files: nothing depends on map order,
// the clock or the machine's fonts.
//
// A plot never averages over configurations: Where fixes axes to one
// value (the subtitle names the slice), Facets draws axes as small
// multiples, one panel per combination of their values, and every other
// axis with more than one value that the plot does not draw is faceted too
// (seed-offset, a seed axis, is averaged over like seeds). The panels
// share their scales. More panels than PanelsMax is an
// error.
//
// The three kinds:
//
//   - pareto: one point per cell at (mean X, mean Y), both metrics, with
//     their 95% intervals as error bars, numbered by the Label axes'
//     values (every other axis when Label is empty) with a key under the
//     panels. The Pareto frontier of each panel (see [ParetoFrontier] and
//     [HigherIsBetter]) is drawn as a line and its points ringed. When Y
//     is a metric where lower is better, points with Y > 0 (losing data,
//     say) are drawn as red triangles and points with Y = 0 as blue
//     circles.
//   - heatmap: X and Y are axes, Z a metric; each square is one cell's
//     mean of Z, printed in the square with half its 95% interval. The
//     colour scale runs from 0 to the largest value rounded up (to 1 for
//     availability); blue is better and red worse.
//   - lines: X is an axis, Y a metric; one line per combination of the
//     Series axes' values, each point one cell's mean of Y with its 95%
//     interval as error bars.
//
// An axis whose values all parse as numbers is numeric: its values are
// ordered by number and, on a lines plot, placed at their value. Any other
// axis is categorical, in the order the axis lists its values.
func WritePlots(dir string, axes []Axis, cells []Cell, specs []PlotSpec) ([]Plot, error) {
	valid := plotValidCells(cells)
	if len(valid) == 0 || len(specs) == 0 {
		return nil, nil
	}
	names := plotNames(specs)
	var out []Plot
	var errs []error
	for i, s := range specs {
		fig, err := plotFigureFor(axes, valid, s)
		if err != nil {
			errs = append(errs, fmt.Errorf("plot %d (%s %s): %w", i+1, s.Kind, names[i], err))
			continue
		}
		if fig == nil {
			continue
		}
		p := Plot{Name: names[i], Title: fig.title, PNG: names[i] + ".png", SVG: names[i] + ".svg"}
		if err := reports.WriteImages(dir, p, fig.w, fig.h, plotDPI, fig.draw); err != nil {
			errs = append(errs, fmt.Errorf("plot %d (%s %s): %w", i+1, s.Kind, names[i], err))
			continue
		}
		out = append(out, p)
	}
	return out, errors.Join(errs...)
}

// plotFigure is a plot ready to draw onto a canvas of w × h.
type plotFigure struct {
	title string
	w, h  vg.Length
	draw  func(draw.Canvas)
}

func plotFigureFor(axes []Axis, cells []Cell, s PlotSpec) (*plotFigure, error) {
	switch s.Kind {
	case "pareto":
		return plotPareto(axes, cells, s)
	case "heatmap":
		return plotHeatmap(axes, cells, s)
	case "lines":
		return plotLines(axes, cells, s)
	}
	return nil, fmt.Errorf("unknown kind %q: want pareto, heatmap or lines", s.Kind)
}

// plotValidCells keeps the cells that ran: not invalid, at least one run.
func plotValidCells(cells []Cell) []Cell {
	var out []Cell
	for _, c := range cells {
		if c.Invalid == "" && c.Runs > 0 {
			out = append(out, c)
		}
	}
	return out
}

// Sizes of the figures.
const (
	plotWidth        = 8 * vg.Inch
	plotHeight       = 5 * vg.Inch
	plotLegendFont   = 8 // points
	plotLabelFont    = 7 // points: the labels of points
	plotMaxSlugBytes = 96
)

// plotNames gives each spec a unique slug of its kind and fields, in spec
// order; a repeated slug gets "-2", "-3", ...
func plotNames(specs []PlotSpec) []string {
	used := map[string]bool{}
	out := make([]string, len(specs))
	for i, s := range specs {
		base := plotSlug(plotSlugParts(s)...)
		name := base
		for n := 2; used[name]; n++ {
			name = base + "-" + strconv.Itoa(n)
		}
		used[name] = true
		out[i] = name
	}
	return out
}

func plotSlugParts(s PlotSpec) []string {
	switch s.Kind {
	case "pareto":
		return []string{"pareto", s.Y, "vs", s.X}
	case "heatmap":
		return []string{"heatmap", s.Z, "by", s.X, "and", s.Y}
	case "lines":
		parts := []string{"lines", s.Y, "vs", s.X}
		if len(s.Series) > 0 {
			parts = append(append(parts, "by"), s.Series...)
		}
		return parts
	}
	return []string{s.Kind, s.X, s.Y, s.Z}
}

// plotSlug joins parts into lower-case letters, digits and single dashes.
func plotSlug(parts ...string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(strings.Join(parts, " ")) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			if b.Len() >= plotMaxSlugBytes {
				break
			}
			continue
		}
		dash = true
	}
	if b.Len() == 0 {
		return "plot"
	}
	return b.String()
}

// plotAxis is one axis of the grid as a plot sees it.
type plotAxis struct {
	name    string
	values  []string  // numeric: by number; categorical: as the axis lists them
	numeric bool      // every value parses as a finite number
	nums    []float64 // numeric: each value's number
}

// plotFindAxis returns the axis called name, with its values deduplicated
// and, when all are numbers, ordered by number.
func plotFindAxis(axes []Axis, name string) (plotAxis, bool) {
	for _, a := range axes {
		if a.Name != name {
			continue
		}
		pa := plotAxis{name: name, numeric: len(a.Values) > 0}
		seen := map[string]bool{}
		for _, v := range a.Values {
			if seen[v] {
				continue
			}
			seen[v] = true
			pa.values = append(pa.values, v)
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || !plotFinite(f) {
				pa.numeric = false
			}
			pa.nums = append(pa.nums, f)
		}
		if !pa.numeric {
			pa.nums = nil
			return pa, true
		}
		idx := make([]int, len(pa.values))
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(i, j int) bool { return pa.nums[idx[i]] < pa.nums[idx[j]] })
		vals, nums := make([]string, len(idx)), make([]float64, len(idx))
		for i, k := range idx {
			vals[i], nums[i] = pa.values[k], pa.nums[k]
		}
		pa.values, pa.nums = vals, nums
		return pa, true
	}
	return plotAxis{}, false
}

// index returns the position of v among the axis's values, or -1.
func (a plotAxis) index(v string) int { return slices.Index(a.values, v) }

// plotAxisField resolves a spec field that must name an axis.
func plotAxisField(axes []Axis, field, name string) (plotAxis, error) {
	if name == "" {
		return plotAxis{}, fmt.Errorf("%s is missing: want an axis", field)
	}
	a, ok := plotFindAxis(axes, name)
	if !ok {
		return plotAxis{}, fmt.Errorf("%s: %q is not an axis of this sweep", field, name)
	}
	if len(a.values) == 0 {
		return plotAxis{}, fmt.Errorf("%s: axis %q has no values", field, name)
	}
	return a, nil
}

// plotMetricField checks that a spec field names a metric some cell
// reports, not an axis.
func plotMetricField(axes []Axis, cells []Cell, field, name string) error {
	if name == "" {
		return fmt.Errorf("%s is missing: want a metric", field)
	}
	if _, ok := plotFindAxis(axes, name); ok {
		return fmt.Errorf("%s: %q is an axis; want a metric (%s, or an anomaly type)", field, name, strings.Join(Metrics, ", "))
	}
	for _, c := range cells {
		if _, ok := c.Metrics[name]; ok {
			return nil
		}
	}
	return fmt.Errorf("%s: no cell reports a metric %q", field, name)
}

// plotOtherAxes lists the axes, besides those named, that take more than
// one value: what a plot averages over.
func plotOtherAxes(axes []Axis, named ...string) []string {
	var out []string
	for _, a := range axes {
		if slices.Contains(named, a.Name) {
			continue
		}
		if pa, _ := plotFindAxis(axes, a.Name); len(pa.values) > 1 {
			out = append(out, a.Name)
		}
	}
	return out
}

// HigherIsBetter reports which way a metric improves: true for
// availability, records-per-second and committed-outputs-per-second, false for every other metric
// (lost-acked, lost-acked-fraction, violations, unavailable-seconds,
// p99-produce-latency-ms, bytes-per-record and every anomaly type's count),
// where less is better.
func HigherIsBetter(metric string) bool {
	switch metric {
	case "availability", "records-per-second", "committed-outputs-per-second":
		return true
	}
	return false
}

// plotIsFraction reports whether a metric is a fraction in 0..1.
func plotIsFraction(metric string) bool {
	return metric == "availability" || metric == "lost-acked-fraction" || metric == RunsLosingAcked || metric == "reprocessed-fraction"
}

// plotMetricLabel is a metric's axis label, with its unit.
func plotMetricLabel(metric string) string {
	switch metric {
	case "availability", "lost-acked-fraction", "reprocessed-fraction":
		return metric + " (fraction, 0–1)"
	case RunsLosingAcked:
		return metric + " (fraction of runs, 0–1)"
	case "lost-acked":
		return metric + " (records)"
	case "unavailable-seconds", "max-unowned-seconds":
		return metric + " (s)"
	case "unowned-seconds", "unowned-seconds-per-rebalance":
		return metric + " (partition-seconds)"
	case "p99-produce-latency-ms", "p99-end-to-end-latency-ms", "mean-end-to-end-latency-ms":
		return metric + " (ms)"
	case "records-per-second", "committed-outputs-per-second":
		return metric + " (records/s)"
	case "bytes-per-record":
		return metric + " (bytes)"
	}
	return metric + " (count)"
}

// plotAxisLabel is an axis's label, with a unit where its name says one.
func plotAxisLabel(name string) string {
	switch {
	case name == "nemesis-intensity":
		return name + " (× every nemesis rate)"
	case strings.HasSuffix(name, ".ms"):
		return name + " (ms)"
	case strings.HasSuffix(name, ".bytes"):
		return name + " (bytes)"
	case strings.HasSuffix(name, ".messages"):
		return name + " (messages)"
	}
	return name
}

// plotAgg is a metric averaged over some cells.
type plotAgg struct {
	Mean, Lo, Hi float64
	Cells        int // cells with a finite mean
}

// plotAggregate averages metric over cells: the mean of their means, and
// an interval whose half-widths below and above are the cells'
// half-widths added in quadrature and divided by their number, the
// interval of a mean of independent estimates. One cell keeps its own
// interval. Cells without a finite mean are left out; with none, every
// field is NaN and Cells is 0.
func plotAggregate(cells []Cell, metric string) plotAgg {
	var sum, lo2, hi2 float64
	n := 0
	for _, c := range cells {
		st, ok := c.Metrics[metric]
		if !ok || !plotFinite(st.Mean) {
			continue
		}
		sum += st.Mean
		if plotFinite(st.Lo) {
			lo2 += (st.Mean - st.Lo) * (st.Mean - st.Lo)
		}
		if plotFinite(st.Hi) {
			hi2 += (st.Hi - st.Mean) * (st.Hi - st.Mean)
		}
		n++
	}
	if n == 0 {
		return plotAgg{Mean: math.NaN(), Lo: math.NaN(), Hi: math.NaN()}
	}
	m := sum / float64(n)
	return plotAgg{Mean: m, Lo: m - math.Sqrt(lo2)/float64(n), Hi: m + math.Sqrt(hi2)/float64(n), Cells: n}
}

// plotClampInterval keeps an interval within what the metric can be:
// never below 0 (every metric is a count, rate, time or fraction), never
// above 1 for a fraction, and always around the mean.
func plotClampInterval(metric string, mean, lo, hi float64) (float64, float64) {
	if !plotFinite(lo) || lo > mean {
		lo = mean
	}
	if !plotFinite(hi) || hi < mean {
		hi = mean
	}
	lo = max(lo, min(0, mean))
	if plotIsFraction(metric) {
		hi = min(hi, max(1, mean))
	}
	return lo, hi
}

// plotCellLabel names a cell by its values of the given axes
// ("acks=1 min.insync.replicas=2").
func plotCellLabel(c Cell, axes []string) string {
	parts := make([]string, 0, len(axes))
	for _, a := range axes {
		parts = append(parts, a+"="+c.Values[a])
	}
	return strings.Join(parts, " ")
}

func plotFinite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// plotFormat prints a value compactly: integers in full up to a billion,
// three significant digits otherwise.
func plotFormat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "n/a"
	case math.IsInf(v, 0):
		return strconv.FormatFloat(v, 'f', -1, 64)
	case v == 0:
		return "0"
	case math.Abs(v) >= 1e9:
		return strconv.FormatFloat(v, 'g', 3, 64)
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(math.Round(v), 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// plotFormat2 prints an interval's end with two significant digits.
func plotFormat2(v float64) string {
	if !plotFinite(v) || v == 0 || math.Abs(v) >= 100 {
		return plotFormat(v)
	}
	return strconv.FormatFloat(v, 'g', 2, 64)
}

// plotSetRange widens a degenerate axis range (every value the same) so
// that it shows something sensible around the value: a fraction stays
// within 0..1 where it can.
func plotSetRange(a *plot.Axis, metric string) {
	if !plotFinite(a.Min) || !plotFinite(a.Max) || a.Max > a.Min {
		return
	}
	v := a.Min
	pad := math.Abs(v) * 0.1
	if pad == 0 {
		pad = 1
	}
	lo, hi := v-pad, v+pad
	if plotIsFraction(metric) {
		pad = 0.1
		lo, hi = v-pad, v+pad
		if lo < 0 {
			lo, hi = 0, max(v, 0)+2*pad
		}
		if hi > 1 {
			lo, hi = min(v, 1)-2*pad, 1
		}
	} else if lo < 0 && v >= 0 {
		lo = 0
	}
	a.Min, a.Max = lo, hi
}

// plotDPI is the PNGs' resolution: the sweep's figures carry small print
// (facet titles, keys, values in squares) that 96 dpi blurs.
const plotDPI = 144

// plotFont is the default font at size points.
func plotFont(size float64) font.Font {
	return font.From(plot.DefaultFont, vg.Points(size))
}

// plotJoin joins the non-empty parts of a subtitle.
func plotJoin(parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, "; ")
}

// plotTicks are gonum's default ticks labelled compactly ("100", "0.25"),
// not with a fixed number of decimals ("100.00").
type plotTicks struct{}

func (plotTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := (plot.DefaultTicks{}).Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = plotFormat(ts[i].Value)
		}
	}
	return ts
}
