package sweep

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// plotGrid is a heatmap's data: for each value of the X axis (a column)
// and of the Y axis (a row), the mean of a metric over the cells with
// those two values, so averaged over every other axis. It implements
// plotter.GridXYZ with the columns at 0, 1, 2, ... and the rows likewise,
// so that every square is the same size whatever the axis values are; the
// tick labels give the values.
type plotGrid struct {
	x, y plotAxis
	// z[c][r] is the mean (NaN where no cell has a finite value) and
	// n[c][r] how many cells it averages.
	z [][]float64
	n [][]int
}

var _ plotter.GridXYZ = (*plotGrid)(nil)

func (g *plotGrid) Dims() (c, r int)   { return len(g.x.values), len(g.y.values) }
func (g *plotGrid) Z(c, r int) float64 { return g.z[c][r] }
func (g *plotGrid) X(c int) float64    { return float64(c) }
func (g *plotGrid) Y(r int) float64    { return float64(r) }

// plotHeatGrid averages metric over the cells sharing each pair of x and
// y values (see plotAggregate). Cells whose value of x or y is not one of
// the axis's values are left out.
func plotHeatGrid(x, y plotAxis, cells []Cell, metric string) *plotGrid {
	cols, rows := len(x.values), len(y.values)
	groups := make([][][]Cell, cols)
	g := &plotGrid{x: x, y: y, z: make([][]float64, cols), n: make([][]int, cols)}
	for c := range cols {
		groups[c] = make([][]Cell, rows)
		g.z[c] = make([]float64, rows)
		g.n[c] = make([]int, rows)
	}
	for _, cell := range cells {
		c, r := x.index(cell.Values[x.name]), y.index(cell.Values[y.name])
		if c < 0 || r < 0 {
			continue
		}
		groups[c][r] = append(groups[c][r], cell)
	}
	for c := range cols {
		for r := range rows {
			a := plotAggregate(groups[c][r], metric)
			g.z[c][r], g.n[c][r] = a.Mean, a.Cells
		}
	}
	return g
}

// zRange is the smallest and largest finite value, and whether there is one.
func (g *plotGrid) zRange() (lo, hi float64, ok bool) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, col := range g.z {
		for _, v := range col {
			if plotFinite(v) {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	}
	return lo, hi, lo <= hi
}

// plotColorScale maps a metric's values onto blue (better) to red (worse)
// through grey: Moreland's smooth diverging map, turned round for a metric
// where higher is better.
type plotColorScale struct {
	palette.ColorMap
	flip bool
}

func newPlotColorScale(metric string, lo, hi float64) plotColorScale {
	cm := moreland.SmoothBlueRed()
	cm.SetMax(hi)
	cm.SetMin(lo)
	return plotColorScale{ColorMap: cm, flip: HigherIsBetter(metric)}
}

func (s plotColorScale) At(v float64) (color.Color, error) {
	if s.flip {
		v = s.Max() - (v - s.Min())
	}
	return s.ColorMap.At(min(max(v, s.Min()), s.Max()))
}

func (s plotColorScale) Palette(n int) palette.Palette {
	cs := make([]color.Color, n)
	for i := range cs {
		v := s.Min() + (s.Max()-s.Min())*float64(i)/float64(max(n-1, 1))
		c, err := s.At(v)
		if err != nil {
			panic(err)
		}
		cs[i] = c
	}
	return plotPalette(cs)
}

type plotPalette []color.Color

func (p plotPalette) Colors() []color.Color { return p }

// plotColorRange is the range of the colour scale: the values' own, or
// around a single value when they are all the same.
func plotColorRange(metric string, lo, hi float64) (float64, float64) {
	if hi > lo {
		return lo, hi
	}
	a := plot.Axis{Min: lo, Max: hi}
	plotSetRange(&a, metric)
	return a.Min, a.Max
}

// plotHeatColors is how many colours the squares choose from.
const plotHeatColors = 255

func plotHeatmap(axes []Axis, cells []Cell, s PlotSpec) (*plotFigure, error) {
	x, err := plotAxisField(axes, "x", s.X)
	if err != nil {
		return nil, err
	}
	y, err := plotAxisField(axes, "y", s.Y)
	if err != nil {
		return nil, err
	}
	if err := plotMetricField(axes, cells, "z", s.Z); err != nil {
		return nil, err
	}
	g := plotHeatGrid(x, y, cells, s.Z)
	lo, hi, ok := g.zRange()
	if !ok {
		return nil, nil
	}
	lo, hi = plotColorRange(s.Z, lo, hi)
	scale := newPlotColorScale(s.Z, lo, hi)

	title := s.Title
	if title == "" {
		title = fmt.Sprintf("%s by %s and %s", s.Z, s.X, s.Y)
	}
	subtitle := "each square: " + plotAverageNote(plotOtherAxes(axes, s.X, s.Y)) + "; blue is better, red worse"
	p := plotNew(title, subtitle)
	p.X.Label.Text = plotAxisLabel(s.X)
	p.Y.Label.Text = plotAxisLabel(s.Y)
	pal := scale.Palette(plotHeatColors)
	hm := plotter.NewHeatMap(g, pal)
	hm.Min, hm.Max = lo, hi
	hm.NaN = color.Gray{Y: 235}
	p.Add(hm)
	p.X.Tick.Marker = plotIndexTicks(x.values)
	p.Y.Tick.Marker = plotIndexTicks(y.values)

	// The value in each square, dark on light colours and light on dark.
	labels := &plotter.Labels{}
	cols, rows := g.Dims()
	for c := range cols {
		for r := range rows {
			v := g.Z(c, r)
			txt, ink := "no runs", color.Color(color.Gray{Y: 90})
			if plotFinite(v) {
				txt = plotFormat(v)
				ink = plotInkOn(pal.Colors()[int((v-lo)*float64(plotHeatColors-1)/(hi-lo)+0.5)])
			}
			labels.XYs = append(labels.XYs, plotter.XY{X: g.X(c), Y: g.Y(r)})
			labels.Labels = append(labels.Labels, txt)
			labels.TextStyle = append(labels.TextStyle, text.Style{
				Color:   ink,
				Font:    plotFont(9),
				Handler: plot.DefaultTextHandler,
				XAlign:  text.XCenter,
				YAlign:  text.YCenter,
			})
		}
	}
	p.Add(labels)

	bar := plot.New()
	bar.HideX()
	bar.X.Padding, bar.Y.Padding = 0, 0
	bar.Y.Label.Text = plotMetricLabel(s.Z)
	bar.Y.Label.TextStyle.Font.Size = vg.Points(10)
	bar.Add(&plotter.ColorBar{ColorMap: scale, Vertical: true, Colors: plotHeatColors})

	const barWidth = 1.4 * vg.Inch
	return &plotFigure{
		title: title + " (" + subtitle + ")",
		w:     plotWidth, h: plotHeight,
		draw: func(c draw.Canvas) {
			main := draw.Crop(c, 0, -barWidth, 0, 0)
			p.Draw(main)
			dc := p.DataCanvas(main)
			side := draw.Crop(c, c.Max.X-c.Min.X-barWidth+vg.Points(14), 0, 0, 0)
			side.Min.Y, side.Max.Y = dc.Min.Y, dc.Max.Y
			// A bar 16 points wide, its axis to its left, as tall as
			// the squares.
			bc := bar.DataCanvas(side)
			side.Max.X -= bc.Max.X - bc.Min.X - vg.Points(16)
			side.Min.Y += dc.Min.Y - bc.Min.Y
			side.Max.Y += dc.Max.Y - bc.Max.Y
			bar.Draw(side)
		},
	}, nil
}

// plotIndexTicks labels positions 0, 1, 2, ... with the given values.
func plotIndexTicks(values []string) plot.ConstantTicks {
	ts := make(plot.ConstantTicks, len(values))
	for i, v := range values {
		ts[i] = plot.Tick{Value: float64(i), Label: v}
	}
	return ts
}

// plotInkOn is black or white, whichever reads better on c.
func plotInkOn(c color.Color) color.Color {
	r, g, b, _ := c.RGBA()
	lum := (0.2126*float64(r) + 0.7152*float64(g) + 0.0722*float64(b)) / 0xffff
	if lum < 0.45 {
		return color.White
	}
	return color.Black
}
