package sweep

import (
	"fmt"
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
		s := plotSeries{name: plotComboName(series, k), at: make([]plotAgg, len(x.values))}
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
		parts[i] = a.name + "=" + a.values[k%len(a.values)]
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
	ss := plotLineSeries(x, series, cells, s.Y)
	if len(ss) == 0 {
		return nil, nil
	}
	pos := func(i int) float64 {
		if x.numeric {
			return x.nums[i]
		}
		return float64(i)
	}

	title := s.Title
	if title == "" {
		title = fmt.Sprintf("%s against %s", s.Y, s.X)
	}
	named := append([]string{s.X}, s.Series...)
	subtitle := "one line per " + strings.Join(s.Series, ", ")
	if len(s.Series) == 0 {
		subtitle = "one line"
	}
	subtitle += "; each point: " + plotAverageNote(plotOtherAxes(axes, named...)) + "; bars: 95% interval"
	p := plotNew(title, subtitle)
	p.X.Label.Text = plotAxisLabel(s.X)
	p.Y.Label.Text = plotMetricLabel(s.Y)
	p.Add(plotter.NewGrid())

	legend := plotLegend()
	var entries []string
	for i, sr := range ss {
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
		colour := plotutil.Color(i)
		if len(bars.XYs) > 0 {
			b, err := plotter.NewYErrorBars(bars)
			if err != nil {
				return nil, err
			}
			b.LineStyle = draw.LineStyle{Color: colour, Width: vg.Points(0.8)}
			b.CapWidth = vg.Points(5)
			p.Add(b)
		}
		l, sc, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		l.Color, l.Width, l.Dashes = colour, vg.Points(1.4), plotutil.Dashes(i)
		sc.GlyphStyle = draw.GlyphStyle{Color: colour, Radius: vg.Points(3), Shape: plotutil.Shape(i)}
		p.Add(l, sc)
		name := sr.name
		if name == "" {
			name = "mean " + s.Y
		}
		legend.Add(name, l, sc)
		entries = append(entries, name)
	}

	// The X axis: categories at 0, 1, 2, ...; numbers at their value,
	// ticked at each value while there are few enough to read.
	if !x.numeric || len(x.values) <= 12 {
		ticks := make(plot.ConstantTicks, len(x.values))
		for i, v := range x.values {
			ticks[i] = plot.Tick{Value: pos(i), Label: v}
		}
		p.X.Tick.Marker = ticks
	}
	lo, hi := pos(0), pos(len(x.values)-1)
	pad := (hi - lo) * 0.05
	if !x.numeric {
		pad = 0.5
	} else if pad == 0 {
		pad = max(0.5, 0.1*max(hi, -lo))
	}
	p.X.Min, p.X.Max = lo-pad, hi+pad
	plotSetRange(&p.Y, s.Y)

	width := plotLegendWidth(legend, entries)
	return &plotFigure{
		title: title + " (" + subtitle + ")",
		w:     plotWidth, h: plotHeight,
		draw: func(c draw.Canvas) { plotWithLegend(c, p, legend, width) },
	}, nil
}
