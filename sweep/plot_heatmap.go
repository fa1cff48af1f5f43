package sweep

import (
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// plotGrid is one panel of a heatmap: for each value of the X axis (a
// column) and of the Y axis (a row), the metric of the panel's cell with
// those two values (the mean over cells differing only in seed-offset,
// when the sweep has that seed axis). It implements
// plotter.GridXYZ with the columns at 0, 1, 2, ... and the rows likewise,
// so that every square is the same size whatever the axis values are; the
// tick labels give the values.
type plotGrid struct {
	x, y plotAxis
	// z[c][r] is the mean (NaN where no cell has a finite value), lo[c][r]
	// and hi[c][r] its 95% interval, n[c][r] how many cells it averages and
	// runs[c][r] how many runs those cells had.
	z, lo, hi [][]float64
	n, runs   [][]int
	metric    string
}

var _ plotter.GridXYZ = (*plotGrid)(nil)

func (g *plotGrid) Dims() (c, r int)   { return len(g.x.values), len(g.y.values) }
func (g *plotGrid) Z(c, r int) float64 { return g.z[c][r] }
func (g *plotGrid) X(c int) float64    { return float64(c) }
func (g *plotGrid) Y(r int) float64    { return float64(r) }

// plotHeatGrid averages metric over the cells sharing each pair of x and
// y values (see plotAggregate): a panel's cells, so cells that differ in
// nothing else but their seeds. Cells whose value of x or y is not one of
// the axis's values are left out.
func plotHeatGrid(x, y plotAxis, cells []Cell, metric string) *plotGrid {
	cols, rows := len(x.values), len(y.values)
	groups := make([][][]Cell, cols)
	g := &plotGrid{x: x, y: y, z: make([][]float64, cols), lo: make([][]float64, cols), hi: make([][]float64, cols),
		n: make([][]int, cols), runs: make([][]int, cols), metric: metric}
	for c := range cols {
		groups[c] = make([][]Cell, rows)
		g.z[c] = make([]float64, rows)
		g.lo[c] = make([]float64, rows)
		g.hi[c] = make([]float64, rows)
		g.n[c] = make([]int, rows)
		g.runs[c] = make([]int, rows)
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
			if a.Cells > 0 {
				g.lo[c][r], g.hi[c][r] = plotClampInterval(metric, a.Mean, a.Lo, a.Hi)
			}
			for _, cell := range groups[c][r] {
				g.runs[c][r] += cell.Metrics[metric].N
			}
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

// plotColorRange is the range of a colour scale: from 0 (every metric is
// a count, a rate, a time or a fraction, so 0 is where "none" is) to the
// largest value rounded up to two significant digits, or to 1 for a
// fraction where higher is better (availability). A scale spanning only the data
// would paint 0.269 deep blue and 0.303 deep red.
func plotColorRange(metric string, lo, hi float64) (float64, float64) {
	if lo < 0 {
		return lo, max(hi, lo+1)
	}
	switch {
	case plotIsFraction(metric) && HigherIsBetter(metric):
		return 0, 1
	case hi <= 0:
		return 0, 1
	case plotIsFraction(metric):
		return 0, min(1, plotCeil2(hi))
	}
	return 0, plotCeil2(hi)
}

// plotCeil2 rounds x > 0 up to two significant digits (0.303 to 0.31, 105
// to 110).
func plotCeil2(x float64) float64 {
	step := math.Pow(10, math.Floor(math.Log10(x))-1)
	v := math.Ceil(x/step*(1-1e-12)) * step
	// Printed as the data's own digits, not 0.31000000000000005.
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 2, 64), 64)
	return max(r, x)
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
	ps, err := plotSplit(axes, cells, s)
	if err != nil {
		return nil, err
	}
	grids := make([]*plotGrid, len(ps.panels))
	lo, hi, any := math.Inf(1), math.Inf(-1), false
	for i, p := range ps.panels {
		grids[i] = plotHeatGrid(x, y, p.cells, s.Z)
		if l, h, ok := grids[i].zRange(); ok {
			lo, hi, any = min(lo, l), max(hi, h), true
		}
	}
	if !any {
		return nil, nil
	}
	lo, hi = plotColorRange(s.Z, lo, hi)
	scale := newPlotColorScale(s.Z, lo, hi)
	pal := scale.Palette(plotHeatColors)

	title := s.Title
	if title == "" {
		title = fmt.Sprintf("%s by %s and %s", s.Z, s.X, s.Y)
	}
	subtitle := plotJoin(ps.describe(),
		"each square is one configuration: the mean over its runs [95% interval]; blue is better, red worse")
	l := ps.layout(title, subtitle)
	several := len(ps.panels) > 1
	for i, panel := range ps.panels {
		g := grids[i]
		if _, _, ok := g.zRange(); !ok {
			l.noCell(i, panel.title)
			continue
		}
		p := l.newPanel(i, panel.title, plotAxisLabel(s.X), plotAxisLabel(s.Y))
		hm := plotter.NewHeatMap(g, pal)
		hm.Min, hm.Max = lo, hi
		hm.NaN = color.Gray{Y: 235}
		p.Add(hm)
		p.X.Tick.Marker = plotIndexTicks(x.values)
		p.Y.Tick.Marker = plotIndexTicks(y.values)
		p.Add(plotHeatLabels(g, pal, lo, hi, several))
		l.panels[i] = p
	}
	l.below = func(width vg.Length) []plotBlock {
		return []plotBlock{plotColorBarBlock(s.Z, scale, lo, hi, width)}
	}
	return l.figure(title + " (" + subtitle + ")"), nil
}

// plotHeatLabels prints each square's value, dark on light colours and
// light on dark, with its 95% interval beneath when it has one; a fraction
// of runs is printed as a count of runs ("5 of 20 runs").
func plotHeatLabels(g *plotGrid, pal palette.Palette, lo, hi float64, small bool) *plotter.Labels {
	labels := &plotter.Labels{}
	size := 10.0
	if small {
		size = 9
	}
	cols, rows := g.Dims()
	for c := range cols {
		for r := range rows {
			v := g.Z(c, r)
			txt, ink := "no runs", color.Color(color.Gray{Y: 90})
			if plotFinite(v) {
				txt = plotFormat(v)
				if n := g.runs[c][r]; g.metric == RunsLosingAcked && n > 0 {
					txt = fmt.Sprintf("%d of %d runs", int(math.Round(v*float64(n))), n)
				}
				if l, h := g.lo[c][r], g.hi[c][r]; h > l {
					txt += "\n[" + plotFormat2(l) + ", " + plotFormat2(h) + "]"
				}
				k := int((min(max(v, lo), hi)-lo)*float64(plotHeatColors-1)/(hi-lo) + 0.5)
				ink = plotInkOn(pal.Colors()[k])
			}
			labels.XYs = append(labels.XYs, plotter.XY{X: g.X(c), Y: g.Y(r)})
			labels.Labels = append(labels.Labels, txt)
			labels.TextStyle = append(labels.TextStyle, text.Style{
				Color:   ink,
				Font:    plotFont(size),
				Handler: plot.DefaultTextHandler,
				XAlign:  text.XCenter,
				YAlign:  text.YCenter,
			})
		}
	}
	return labels
}

// plotColorBarBlock is the colour scale under the grid, labelled with the
// metric and its ends.
func plotColorBarBlock(metric string, scale plotColorScale, lo, hi float64, width vg.Length) plotBlock {
	bar := plot.New()
	bar.HideY()
	bar.X.Padding, bar.Y.Padding = 0, 0
	bar.X.Label.Text = plotMetricLabel(metric) + ": colour scale " + plotFormat(lo) + " to " + plotFormat(hi)
	bar.X.Label.TextStyle.Font.Size = vg.Points(9)
	bar.X.Tick.Label.Font.Size = vg.Points(plotTickFont)
	bar.X.Tick.Marker = plotEndTicks{lo: lo, hi: hi}
	bar.X.Min, bar.X.Max = lo, hi
	bar.Add(&plotter.ColorBar{ColorMap: scale, Colors: plotHeatColors})
	w := min(width, 4.5*vg.Inch)
	return plotBlock{h: 0.85 * vg.Inch, draw: func(c draw.Canvas) {
		mid := (c.Min.X + c.Max.X) / 2
		c.Min.X, c.Max.X = mid-w/2, mid+w/2
		c.Max.Y -= vg.Points(8)
		bar.Draw(c)
	}}
}

// plotEndTicks are the default ticks with both ends of the range labelled,
// so that a reader sees where the scale starts and stops.
type plotEndTicks struct{ lo, hi float64 }

func (t plotEndTicks) Ticks(lo, hi float64) []plot.Tick {
	var out []plot.Tick
	near := (t.hi - t.lo) * 0.12
	for _, tk := range (plot.DefaultTicks{}).Ticks(lo, hi) {
		if tk.Label != "" && (math.Abs(tk.Value-t.lo) < near || math.Abs(tk.Value-t.hi) < near) {
			continue
		}
		if tk.Label != "" {
			tk.Label = plotFormat(tk.Value)
		}
		out = append(out, tk)
	}
	return append(out, plot.Tick{Value: t.lo, Label: plotFormat(t.lo)}, plot.Tick{Value: t.hi, Label: plotFormat(t.hi)})
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
