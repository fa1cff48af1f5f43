package reports

import (
	"fmt"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/vgimg"
)

// Plot is one figure of the run store, written as both PNG and SVG.
type Plot struct {
	Name  string // "throughput", "latency", "isr", "unavailability", "lag", "group-lag"
	Title string
	PNG   string // file name relative to the run directory
	SVG   string
}

// maxLines is how many partitions or readers get a line each; beyond it a
// plot shows min/mean/max across them, since 50 coloured lines say nothing.
const maxLines = 12

// plotWidth is every figure's width; its height follows from what it
// stacks (title, marks strip, legends, panels).
const plotWidth = 8 * vg.Inch

// panelSpec is one panel of a figure: its series over the run's time axis,
// its y axis, and legend notes on what it leaves out.
type panelSpec struct {
	title  string // drawn above the panel when the figure has several
	y      axis
	series []series
	notes  []string
}

// hasData reports whether a series other than a reference line has a point.
func (p panelSpec) hasData() bool {
	for _, s := range p.series {
		if !s.reference && s.hasData() {
			return true
		}
	}
	return false
}

// figure is a plot ready to draw: one panel, or panels stacked over the
// same time axis, under the strip of the run's phases and faults.
type figure struct {
	name, title string
	x           axis
	marks       *runMarks
	panels      []panelSpec
}

// WritePlots writes the run's plots over simulated time into dir as
// NAME.png and NAME.svg: throughput, produce latency, ISR size,
// unavailability, consumer lag and, for a history with consumer groups,
// each group's lag. A plot with no data (no sends, no
// timeline) is skipped, not returned and not an error, so that a run that
// ended early still gets a report.
func WritePlots(dir string, r *Run) ([]Plot, error) {
	if r == nil {
		return nil, nil
	}
	var out []Plot
	for _, f := range buildFigures(r) {
		p, err := saveFigure(dir, f)
		if err != nil {
			return out, err
		}
		out = append(out, p)
	}
	return out, nil
}

// buildFigures decides every figure of r: what each draws, on which axes.
func buildFigures(r *Run) []*figure {
	v := newRunView(r)
	var figs []*figure
	for _, f := range []*figure{v.throughputFigure(), v.latencyFigure(), v.isrFigure(), v.unavailabilityFigure(), v.lagFigure(), v.groupLagFigure()} {
		if f != nil {
			figs = append(figs, f)
		}
	}
	return figs
}

// saveFigure writes f as NAME.png and NAME.svg in dir.
func saveFigure(dir string, f *figure) (Plot, error) {
	l, err := newFigureLayout(f)
	if err != nil {
		return Plot{}, fmt.Errorf("plot %s: %w", f.name, err)
	}
	p := Plot{Name: f.name, Title: f.title, PNG: f.name + ".png", SVG: f.name + ".svg"}
	if err := WriteImages(dir, p, plotWidth, l.height(), vgimg.DefaultDPI, l.draw); err != nil {
		return Plot{}, fmt.Errorf("plot %s: %w", f.name, err)
	}
	return p, nil
}

// newPanelPlot builds the plotting library's plot of one panel: the axes
// as decided, a grid, the run's marks under the data, the series.
func newPanelPlot(f *figure, ps panelSpec, bottom bool) (*plot.Plot, []legendEntry, error) {
	p := plot.New()
	p.X.Min, p.X.Max = f.x.min, f.x.max
	p.X.Tick.Marker = constantTicks(f.x.ticks)
	p.X.Tick.Label.Font.Size = vg.Points(tickPt)
	if bottom {
		p.X.Label.Text = f.x.label
		p.X.Label.TextStyle.Font.Size = vg.Points(axisLabelPt)
	}
	p.Y.Min, p.Y.Max = ps.y.plotted(ps.y.min), ps.y.plotted(ps.y.max)
	yt := make([]tick, len(ps.y.ticks))
	for i, t := range ps.y.ticks {
		yt[i] = tick{ps.y.plotted(t.v), t.label}
	}
	p.Y.Tick.Marker = constantTicks(yt)
	p.Y.Tick.Label.Font.Size = vg.Points(tickPt)
	p.Y.Label.Text = ps.y.label
	p.Y.Label.TextStyle.Font.Size = vg.Points(axisLabelPt)
	p.Add(plotter.NewGrid())
	if f.marks != nil {
		p.Add(marksPlotter{f.marks})
	}
	ss := ps.series
	if ps.y.symlog {
		ss = make([]series, len(ps.series))
		for i, s := range ps.series {
			s.ys = slices.Clone(s.ys)
			for k, y := range s.ys {
				s.ys[k] = ps.y.plotted(y)
			}
			ss[i] = s
		}
	}
	legend, err := addSeries(p, ss)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", f.title, err)
	}
	// One series needs no legend: the title names it.
	if len(legend) == 1 {
		legend = nil
	}
	for _, n := range ps.notes {
		legend = append(legend, legendEntry{text: n})
	}
	return p, legend, nil
}

func constantTicks(ts []tick) plot.ConstantTicks {
	out := make([]plot.Tick, len(ts))
	for i, t := range ts {
		out[i] = plot.Tick{Value: t.v, Label: t.label}
	}
	return out
}
