package reports

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Plot is one figure of the run store, written as both PNG and SVG.
type Plot struct {
	Name  string // "throughput", "latency", "isr", "unavailability", "lag"
	Title string
	PNG   string // file name relative to the run directory
	SVG   string
}

// maxLines is how many partitions or readers get a line each; beyond it a
// plot shows min/mean/max across them, since 50 coloured lines say nothing.
const maxLines = 12

// Plot sizes: wide and short, to read as strips over the same time axis.
const (
	plotWidth  = 8 * vg.Inch
	plotHeight = 3 * vg.Inch
)

// figure is a plot ready to draw: one panel, or panels stacked vertically
// over the same time axis.
type figure struct {
	name, title string
	panels      []*plot.Plot
}

// WritePlots writes the run's plots over simulated time into dir as
// NAME.png and NAME.svg: throughput, produce latency, ISR size,
// unavailability and consumer lag. A plot with no data (no sends, no
// timeline) is skipped, not returned and not an error, so that a run that
// ended early still gets a report.
func WritePlots(dir string, r *Run) ([]Plot, error) {
	if r == nil {
		return nil, nil
	}
	cs := newClientSeries(r.history())
	samples := sortedSamples(r.Timeline)
	var figs []figure
	for _, build := range []func() (*figure, error){
		func() (*figure, error) { return throughputFigure(cs) },
		func() (*figure, error) { return latencyFigure(cs) },
		func() (*figure, error) { return isrFigure(r, samples) },
		func() (*figure, error) { return unavailabilityFigure(cs, samples) },
		func() (*figure, error) { return lagFigure(r, samples) },
	} {
		f, err := build()
		if err != nil {
			return nil, err
		}
		if f != nil {
			figs = append(figs, *f)
		}
	}
	var out []Plot
	for _, f := range figs {
		p, err := saveFigure(dir, f)
		if err != nil {
			return out, err
		}
		out = append(out, p)
	}
	return out, nil
}

// saveFigure writes f as NAME.png and NAME.svg in dir.
func saveFigure(dir string, f figure) (Plot, error) {
	h := plotHeight
	if len(f.panels) > 1 {
		h = plotHeight * 4 / 3
	}
	drawTo := func(c draw.Canvas) {
		if len(f.panels) == 1 {
			f.panels[0].Draw(c)
			return
		}
		rows := make([][]*plot.Plot, len(f.panels))
		for i, p := range f.panels {
			rows[i] = []*plot.Plot{p}
		}
		t := draw.Tiles{Rows: len(rows), Cols: 1, PadY: vg.Points(6)}
		for i, c := range plot.Align(rows, t, c) {
			rows[i][0].Draw(c[0])
		}
	}
	p := Plot{Name: f.name, Title: f.title, PNG: f.name + ".png", SVG: f.name + ".svg"}
	if err := WriteImages(dir, p, plotWidth, h, drawTo); err != nil {
		return Plot{}, fmt.Errorf("plot %s: %w", f.name, err)
	}
	return p, nil
}
