package sweep

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// plotSeries is one line of a lines plot: a combination of the Series
// axes' values and, at each X value, the metric averaged over the cells
// with that combination and X value.
type plotSeries struct {
	name string
	// k is the combination's index among all the series axes' combinations:
	// its colour and dash, the same in every panel.
	k int
	// at[i] aggregates the cells at the X axis's i-th value.
	at []plotAgg
}

// plotLineSeries groups cells by their values of the series axes (every
// combination, in the axes' order, the last axis varying fastest) and of
// x, and averages metric over each group. Combinations without any finite
// value are left out.
func plotLineSeries(x plotAxis, series []plotAxis, cells []Cell, metric string) []plotSeries {
	combos := 1
	for _, a := range series {
		combos *= len(a.values)
	}
	groups := make([][]Cell, combos*len(x.values))
	for _, c := range cells {
		xi := x.index(c.Values[x.name])
		if xi < 0 {
			continue
		}
		k, ok := 0, true
		for _, a := range series {
			i := a.index(c.Values[a.name])
			if i < 0 {
				ok = false
				break
			}
			k = k*len(a.values) + i
		}
		if ok {
			groups[k*len(x.values)+xi] = append(groups[k*len(x.values)+xi], c)
		}
	}
	var out []plotSeries
	for k := range combos {
		s := plotSeries{name: plotComboName(series, k), k: k, at: make([]plotAgg, len(x.values))}
		has := false
		for xi := range x.values {
			s.at[xi] = plotAggregate(groups[k*len(x.values)+xi], metric)
			has = has || s.at[xi].Cells > 0
		}
		if has {
			out = append(out, s)
		}
	}
	return out
}

// plotComboName names the k-th combination of the series axes' values.
func plotComboName(series []plotAxis, k int) string {
	if len(series) == 0 {
		return ""
	}
	parts := make([]string, len(series))
	for i := len(series) - 1; i >= 0; i-- {
		a := series[i]
		parts[i] = a.name + "=" + plotValueLabel(a.values[k%len(a.values)])
		k /= len(a.values)
	}
	return strings.Join(parts, " ")
}

func plotLines(axes []Axis, cells []Cell, s PlotSpec) (*plotFigure, error) {
	x, err := plotAxisField(axes, "x", s.X)
	if err != nil {
		return nil, err
	}
	if err := plotMetricField(axes, cells, "y", s.Y); err != nil {
		return nil, err
	}
	var series []plotAxis
	for _, name := range s.Series {
		a, err := plotAxisField(axes, "series", name)
		if err != nil {
			return nil, err
		}
		series = append(series, a)
	}
	ps, err := plotSplit(axes, cells, s)
	if err != nil {
		return nil, err
	}
	perPanel := make([][]plotSeries, len(ps.panels))
	has := false
	// The Y range every panel shares, so that panels compare at a glance.
	ylo, yhi := math.Inf(1), math.Inf(-1)
	for i, p := range ps.panels {
		perPanel[i] = plotLineSeries(x, series, p.cells, s.Y)
		for _, sr := range perPanel[i] {
			for _, a := range sr.at {
				if a.Cells == 0 {
					continue
				}
				has = true
				lo, hi := plotClampInterval(s.Y, a.Mean, a.Lo, a.Hi)
				ylo, yhi = min(ylo, lo), max(yhi, hi)
			}
		}
	}
	if !has {
		return nil, nil
	}
	// Numbers are placed at their value, unless one is a sentinel such as
	// Long.MAX_VALUE ("never"), which would push the others into a corner.
	spaced := x.numeric
	for _, n := range x.nums {
		spaced = spaced && math.Abs(n) < 1e15
	}
	pos := func(i int) float64 {
		if spaced {
			return x.nums[i]
		}
		return float64(i)
	}

	title := s.Title
	if title == "" {
		title = fmt.Sprintf("%s against %s", s.Y, s.X)
	}
	lines := "one line per " + strings.Join(s.Series, " × ")
	if len(s.Series) == 0 {
		lines = "one line"
	}
	subtitle := plotJoin(ps.describe(), lines+"; each point is one configuration: the mean over its runs; bars: 95% interval")
	l := ps.layout(title, subtitle)
	yr := plot.Axis{Min: ylo, Max: yhi}
	plotSetRange(&yr, s.Y)
	pad := (yr.Max - yr.Min) * 0.05
	ymin, ymax := yr.Min-pad, yr.Max+pad
	if ylo >= 0 {
		ymin = max(ymin, 0)
	}
	if plotIsFraction(s.Y) {
		ymax = min(ymax, 1.02)
	}
	legend := map[int]plotLegendEntry{}
	var order []int
	for i, panel := range ps.panels {
		if len(perPanel[i]) == 0 {
			l.noCell(i, panel.title)
			continue
		}
		p := l.newPanel(i, panel.title, plotAxisLabel(s.X), plotMetricLabel(s.Y))
		p.Add(plotter.NewGrid())
		for _, sr := range perPanel[i] {
			var xys plotter.XYs
			var bars plotYErrs
			for xi, a := range sr.at {
				if a.Cells == 0 {
					continue
				}
				xys = append(xys, plotter.XY{X: pos(xi), Y: a.Mean})
				lo, hi := plotClampInterval(s.Y, a.Mean, a.Lo, a.Hi)
				if hi > lo {
					bars.XYs = append(bars.XYs, plotter.XY{X: pos(xi), Y: a.Mean})
					bars.YErrors = append(bars.YErrors, struct{ Low, High float64 }{a.Mean - lo, hi - a.Mean})
				}
			}
			colour := plotutil.Color(sr.k)
			if len(bars.XYs) > 0 {
				b, err := plotter.NewYErrorBars(bars)
				if err != nil {
					return nil, err
				}
				b.LineStyle = draw.LineStyle{Color: colour, Width: vg.Points(0.8)}
				b.CapWidth = vg.Points(5)
				p.Add(b)
			}
			ln, sc, err := plotter.NewLinePoints(xys)
			if err != nil {
				return nil, err
			}
			ln.Color, ln.Width, ln.Dashes = colour, vg.Points(1.4), plotutil.Dashes(sr.k)
			sc.GlyphStyle = draw.GlyphStyle{Color: colour, Radius: vg.Points(3), Shape: plotutil.Shape(sr.k)}
			p.Add(ln, sc)
			if _, ok := legend[sr.k]; !ok {
				name := sr.name
				if name == "" {
					name = s.Y
				}
				legend[sr.k] = plotLegendEntry{name: name, thumbs: []plot.Thumbnailer{ln, sc}}
				order = append(order, sr.k)
			}
		}
		// The X axis: categories at 0, 1, 2, ...; numbers at their value,
		// ticked at each value while there are few enough to read.
		if !spaced || len(x.values) <= 12 {
			ticks := make(plot.ConstantTicks, len(x.values))
			for i, v := range x.values {
				ticks[i] = plot.Tick{Value: pos(i), Label: plotValueLabel(v)}
			}
			p.X.Tick.Marker = ticks
		}
		lo, hi := pos(0), pos(len(x.values)-1)
		xpad := (hi - lo) * 0.05
		if !spaced {
			xpad = 0.5
		} else if xpad == 0 {
			xpad = max(0.5, 0.1*max(hi, -lo))
		}
		p.X.Min, p.X.Max = lo-xpad, hi+xpad
		p.Y.Min, p.Y.Max = ymin, ymax
		p.Y.Tick.Marker = plotTicks{}
		if spaced && len(x.values) > 12 {
			p.X.Tick.Marker = plotTicks{}
		}
		l.panels[i] = p
	}
	sort.Ints(order)
	var entries []plotLegendEntry
	for _, k := range order {
		entries = append(entries, legend[k])
	}
	l.below = func(width vg.Length) []plotBlock {
		return []plotBlock{plotLegendBlock(entries, width)}
	}
	return l.figure(title + " (" + subtitle + ")"), nil
}
