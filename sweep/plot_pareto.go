package sweep

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// ParetoPoint is one configuration's place in a trade-off between two
// metrics.
type ParetoPoint struct{ X, Y float64 }

// ParetoFrontier returns the indices of the points on the Pareto frontier:
// those that no other point dominates. Which way is better along each
// coordinate is given by xHigherIsBetter and yHigherIsBetter (see
// [HigherIsBetter]: a cell is better for higher availability but lower
// lost-acked-fraction, say).
//
// Point q dominates p when q is at least as good as p on both coordinates
// and strictly better on one. So of two identical points neither dominates
// the other and both are on the frontier (or neither is), and a point tied
// with a frontier point on one coordinate but worse on the other is not on
// it. A point with a NaN or infinite coordinate is never on the frontier
// and dominates nothing.
//
// The indices are ordered by X, then Y, then index: the order in which to
// draw the frontier as a line.
func ParetoFrontier(pts []ParetoPoint, xHigherIsBetter, yHigherIsBetter bool) []int {
	sx, sy := -1.0, -1.0
	if xHigherIsBetter {
		sx = 1
	}
	if yHigherIsBetter {
		sy = 1
	}
	// In (a, b) = (sx·X, sy·Y) higher is better on both. Taken by a
	// descending, a point is dominated by one in its own group of equal a
	// iff its b is below the group's best, and by one of an earlier group
	// iff its b is at most the best b seen so far.
	var idx []int
	for i, p := range pts {
		if plotFinite(p.X) && plotFinite(p.Y) {
			idx = append(idx, i)
		}
	}
	a := func(i int) float64 { return sx * pts[i].X }
	b := func(i int) float64 { return sy * pts[i].Y }
	sort.SliceStable(idx, func(i, j int) bool {
		if a(idx[i]) != a(idx[j]) {
			return a(idx[i]) > a(idx[j])
		}
		return b(idx[i]) > b(idx[j])
	})
	var out []int
	best := math.Inf(-1)
	for start := 0; start < len(idx); {
		end := start
		for end < len(idx) && a(idx[end]) == a(idx[start]) {
			end++
		}
		top := b(idx[start]) // sorted by b descending within the group
		if top > best {
			for _, i := range idx[start:end] {
				if b(i) == top {
					out = append(out, i)
				}
			}
			best = top
		}
		start = end
	}
	sort.Slice(out, func(i, j int) bool {
		p, q := pts[out[i]], pts[out[j]]
		if p.X != q.X {
			return p.X < q.X
		}
		if p.Y != q.Y {
			return p.Y < q.Y
		}
		return out[i] < out[j]
	})
	return out
}

// paretoCell is one cell's point on a Pareto plot.
type paretoCell struct {
	label              string
	x, xlo, xhi        float64
	y, ylo, yhi        float64
	frontier, positive bool
}

// Colours of the Pareto plot.
var (
	plotBlue  = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	plotRed   = color.RGBA{R: 214, G: 39, B: 40, A: 255}
	plotGrey  = color.RGBA{R: 150, G: 150, B: 150, A: 255}
	plotBlack = color.RGBA{A: 255}
)

func plotPareto(axes []Axis, cells []Cell, s PlotSpec) (*plotFigure, error) {
	if err := plotMetricField(axes, cells, "x", s.X); err != nil {
		return nil, err
	}
	if err := plotMetricField(axes, cells, "y", s.Y); err != nil {
		return nil, err
	}
	for _, l := range s.Label {
		if _, ok := plotFindAxis(axes, l); !ok {
			return nil, fmt.Errorf("label: %q is not an axis of this sweep", l)
		}
	}
	ps, err := plotSplit(axes, cells, s)
	if err != nil {
		return nil, err
	}
	labelAxes := s.Label
	if len(labelAxes) == 0 {
		// Every axis that tells a panel's cells apart.
		labelAxes = plotOtherAxes(axes, s.Named()...)
	}
	// When less is better along Y, zero is the best there is: a cell
	// with Y = 0 (no acknowledged write lost) is marked apart from one
	// with Y > 0.
	splitZero := !HigherIsBetter(s.Y)

	// Each distinct label gets a number, the same in every panel; the key
	// under the grid says which configuration each number is.
	number := map[string]int{}
	var key []string
	perPanel := make([][]paretoCell, len(ps.panels))
	xr, yr := plot.Axis{Min: math.Inf(1), Max: math.Inf(-1)}, plot.Axis{Min: math.Inf(1), Max: math.Inf(-1)}
	for i, panel := range ps.panels {
		var pts []ParetoPoint
		for _, c := range panel.cells {
			mx, okx := c.Metrics[s.X]
			my, oky := c.Metrics[s.Y]
			if !okx || !oky || !plotFinite(mx.Mean) || !plotFinite(my.Mean) {
				continue
			}
			pc := paretoCell{label: plotCellLabel(c, labelAxes), x: mx.Mean, y: my.Mean}
			pc.xlo, pc.xhi = plotClampInterval(s.X, mx.Mean, mx.Lo, mx.Hi)
			pc.ylo, pc.yhi = plotClampInterval(s.Y, my.Mean, my.Lo, my.Hi)
			pc.positive = splitZero && my.Mean > 0
			if _, ok := number[pc.label]; !ok && pc.label != "" {
				key = append(key, pc.label)
				number[pc.label] = len(key)
			}
			perPanel[i] = append(perPanel[i], pc)
			pts = append(pts, ParetoPoint{X: mx.Mean, Y: my.Mean})
			xr.Min, xr.Max = min(xr.Min, pc.xlo), max(xr.Max, pc.xhi)
			yr.Min, yr.Max = min(yr.Min, pc.ylo), max(yr.Max, pc.yhi)
		}
		for _, k := range ParetoFrontier(pts, HigherIsBetter(s.X), HigherIsBetter(s.Y)) {
			perPanel[i][k].frontier = true
		}
	}
	if len(key) == 0 && math.IsInf(xr.Min, 1) {
		return nil, nil
	}
	plotSetRange(&xr, s.X)
	plotSetRange(&yr, s.Y)
	xpad, ypad := (xr.Max-xr.Min)*0.06, (yr.Max-yr.Min)*0.06

	title := s.Title
	if title == "" {
		title = fmt.Sprintf("Pareto: %s against %s", s.Y, s.X)
	}
	subtitle := plotJoin(ps.describe(), fmt.Sprintf("one point per configuration, numbered as in the key; frontier: %s %s and %s %s; bars: 95%% interval",
		plotWay(s.X), s.X, plotWay(s.Y), s.Y))
	l := ps.layout(title, subtitle)
	zeroName, positiveName := "configuration", ""
	if splitZero {
		zeroName, positiveName = s.Y+" = 0", s.Y+" > 0"
		if strings.HasPrefix(s.Y, "lost-acked") {
			zeroName, positiveName = "loses no acknowledged write", "loses acknowledged writes"
		}
	}
	legend := map[string]plotLegendEntry{}
	for i, panel := range ps.panels {
		pcs := perPanel[i]
		if len(pcs) == 0 {
			l.noCell(i, panel.title)
			continue
		}
		p := l.newPanel(i, panel.title, plotMetricLabel(s.X), plotMetricLabel(s.Y))
		grid := plotter.NewGrid()
		grid.Vertical.Color = color.Gray{Y: 225}
		grid.Horizontal.Color = color.Gray{Y: 225}
		p.Add(grid)
		if err := plotParetoErrorBars(p, pcs); err != nil {
			return nil, err
		}
		var frontier plotter.XYs
		var fx []paretoCell
		for _, pc := range pcs {
			if pc.frontier {
				fx = append(fx, pc)
			}
		}
		sort.SliceStable(fx, func(a, b int) bool {
			if fx[a].x != fx[b].x {
				return fx[a].x < fx[b].x
			}
			return fx[a].y < fx[b].y
		})
		for _, pc := range fx {
			frontier = append(frontier, plotter.XY{X: pc.x, Y: pc.y})
		}
		var line *plotter.Line
		if len(frontier) > 0 {
			if line, err = plotter.NewLine(frontier); err != nil {
				return nil, err
			}
			line.Color = plotBlack
			line.Width = vg.Points(1.2)
			line.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
			p.Add(line)
		}
		zero, positive := plotter.XYs{}, plotter.XYs{}
		for _, pc := range pcs {
			if pc.positive {
				positive = append(positive, plotter.XY{X: pc.x, Y: pc.y})
			} else {
				zero = append(zero, plotter.XY{X: pc.x, Y: pc.y})
			}
		}
		if len(zero) > 0 {
			sc, err := plotter.NewScatter(zero)
			if err != nil {
				return nil, err
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: plotBlue, Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}
			p.Add(sc)
			legend["a"] = plotLegendEntry{name: zeroName, thumbs: []plot.Thumbnailer{sc}}
		}
		if len(positive) > 0 {
			sc, err := plotter.NewScatter(positive)
			if err != nil {
				return nil, err
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: plotRed, Radius: vg.Points(4), Shape: draw.PyramidGlyph{}}
			p.Add(sc)
			legend["b"] = plotLegendEntry{name: positiveName, thumbs: []plot.Thumbnailer{sc}}
		}
		if line != nil {
			sc, err := plotter.NewScatter(frontier)
			if err != nil {
				return nil, err
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: plotBlack, Radius: vg.Points(6.5), Shape: draw.RingGlyph{}}
			p.Add(sc)
			legend["c"] = plotLegendEntry{name: "Pareto frontier", thumbs: []plot.Thumbnailer{line, sc}}
		}
		if labels := plotParetoLabels(pcs, number); labels != nil {
			p.Add(labels)
		}
		p.X.Min, p.X.Max = xr.Min-xpad, xr.Max+xpad
		p.Y.Min, p.Y.Max = yr.Min-ypad, yr.Max+ypad
		if plotIsFraction(s.X) {
			p.X.Min, p.X.Max = max(p.X.Min, -0.02), min(p.X.Max, 1.02)
		}
		if plotIsFraction(s.Y) {
			p.Y.Min, p.Y.Max = max(p.Y.Min, -0.02), min(p.Y.Max, 1.02)
		}
		p.X.Tick.Marker, p.Y.Tick.Marker = plotTicks{}, plotTicks{}
		l.panels[i] = p
	}
	var entries []plotLegendEntry
	for _, k := range []string{"a", "b", "c"} {
		if e, ok := legend[k]; ok {
			entries = append(entries, e)
		}
	}
	l.below = func(width vg.Length) []plotBlock {
		return []plotBlock{plotLegendBlock(entries, width), plotKeyBlock(key, width)}
	}
	return l.figure(title + " (" + subtitle + ")"), nil
}

// plotKeyBlock is the key of a Pareto plot's numbers: "3  acks=all
// min.insync.replicas=2", in as many columns as fit.
func plotKeyBlock(key []string, width vg.Length) plotBlock {
	if len(key) == 0 {
		return plotBlock{}
	}
	sty := plotTextStyle(plotLegendFont, color.Black)
	num := plotTextStyle(plotLegendFont, color.Black)
	numW := num.Width(strconv.Itoa(len(key))) + vg.Points(6)
	colW := vg.Length(0)
	for _, k := range key {
		colW = max(colW, numW+sty.Width(k))
	}
	colW += vg.Points(18)
	cols := max(1, min(len(key), int(width/colW)))
	rows := (len(key) + cols - 1) / cols
	lineH := sty.Height("Ag") + vg.Points(2)
	return plotBlock{h: vg.Length(rows)*lineH + vg.Points(10), draw: func(c draw.Canvas) {
		left := c.Min.X + (c.Max.X-c.Min.X-vg.Length(cols)*colW)/2
		for i, k := range key {
			col, row := i/rows, i%rows
			x := left + vg.Length(col)*colW
			y := c.Max.Y - vg.Points(6) - vg.Length(row)*lineH
			n := num
			n.XAlign, n.YAlign = text.XRight, text.YTop
			c.FillText(n, vg.Point{X: x + numW - vg.Points(6), Y: y}, strconv.Itoa(i+1))
			t := sty
			t.YAlign = text.YTop
			c.FillText(t, vg.Point{X: x + numW, Y: y}, k)
		}
	}}
}

// plotWay is how a metric improves, as a word.
func plotWay(metric string) string {
	if HigherIsBetter(metric) {
		return "higher"
	}
	return "lower"
}

// plotParetoErrorBars adds each point's intervals as grey bars, leaving
// out the bars of no width.
func plotParetoErrorBars(p *plot.Plot, pcs []paretoCell) error {
	var xs plotXErrs
	var ys plotYErrs
	for _, pc := range pcs {
		if pc.xhi > pc.xlo {
			xs.XYs = append(xs.XYs, plotter.XY{X: pc.x, Y: pc.y})
			xs.XErrors = append(xs.XErrors, struct{ Low, High float64 }{pc.x - pc.xlo, pc.xhi - pc.x})
		}
		if pc.yhi > pc.ylo {
			ys.XYs = append(ys.XYs, plotter.XY{X: pc.x, Y: pc.y})
			ys.YErrors = append(ys.YErrors, struct{ Low, High float64 }{pc.y - pc.ylo, pc.yhi - pc.y})
		}
	}
	style := draw.LineStyle{Color: plotGrey, Width: vg.Points(0.7)}
	if len(xs.XYs) > 0 {
		b, err := plotter.NewXErrorBars(xs)
		if err != nil {
			return err
		}
		b.LineStyle, b.CapWidth = style, vg.Points(4)
		p.Add(b)
	}
	if len(ys.XYs) > 0 {
		b, err := plotter.NewYErrorBars(ys)
		if err != nil {
			return err
		}
		b.LineStyle, b.CapWidth = style, vg.Points(4)
		p.Add(b)
	}
	return nil
}

// plotXErrs and plotYErrs are points with their error bars.
type plotXErrs struct {
	plotter.XYs
	plotter.XErrors
}

type plotYErrs struct {
	plotter.XYs
	plotter.YErrors
}

// plotParetoLabels numbers the points: cells at the same place share one
// label ("1,2").
func plotParetoLabels(pcs []paretoCell, number map[string]int) *plotPlacedLabels {
	type place struct {
		x, y     float64
		nums     []int
		frontier bool
	}
	var places []*place
	at := map[[2]float64]*place{}
	l := &plotPlacedLabels{
		style: text.Style{
			Color:   color.Gray{Y: 20},
			Font:    plotFont(plotLabelFont + 1),
			Handler: plot.DefaultTextHandler,
		},
		gap: vg.Points(8),
	}
	for _, pc := range pcs {
		l.points = append(l.points, plotter.XY{X: pc.x, Y: pc.y})
		if pc.yhi > pc.ylo {
			l.segs = append(l.segs, [2]plotter.XY{{X: pc.x, Y: pc.ylo}, {X: pc.x, Y: pc.yhi}})
		}
		if pc.xhi > pc.xlo {
			l.segs = append(l.segs, [2]plotter.XY{{X: pc.xlo, Y: pc.y}, {X: pc.xhi, Y: pc.y}})
		}
		key := [2]float64{pc.x, pc.y}
		pl := at[key]
		if pl == nil {
			pl = &place{x: pc.x, y: pc.y}
			at[key] = pl
			places = append(places, pl)
		}
		pl.frontier = pl.frontier || pc.frontier
		if n, ok := number[pc.label]; ok && !slices.Contains(pl.nums, n) {
			pl.nums = append(pl.nums, n)
		}
	}
	// Frontier points first: they get the nearest places.
	sort.SliceStable(places, func(i, j int) bool { return places[i].frontier && !places[j].frontier })
	for _, pl := range places {
		if len(pl.nums) == 0 {
			continue
		}
		sort.Ints(pl.nums)
		parts := make([]string, len(pl.nums))
		for i, n := range pl.nums {
			parts[i] = strconv.Itoa(n)
		}
		l.at = append(l.at, plotter.XY{X: pl.x, Y: pl.y})
		l.texts = append(l.texts, strings.Join(parts, ","))
	}
	if len(l.at) == 0 {
		return nil
	}
	return l
}

// plotPlacedLabels is a plotter of point labels that keeps them apart:
// each label goes right of its point, or else left, above, below or
// diagonally, and then twice and three times as far (with a thin leader
// line back to its point), wherever it first overlaps no point, no error
// bar and no label already placed and stays inside the data area. A label
// with no free place at all goes right of its point.
type plotPlacedLabels struct {
	at     []plotter.XY // where each label's point is
	texts  []string
	points []plotter.XY    // every point of the plot, to keep labels off
	segs   [][2]plotter.XY // every error bar, likewise
	style  text.Style
	gap    vg.Length
}

// plotLabelPlace is one place to try for a label: the anchor and the
// alignment of the text on it, relative to the point.
type plotLabelPlace struct {
	dx, dy float64 // in gaps
	xalign text.XAlignment
	yalign text.YAlignment
}

var plotLabelPlaces = []plotLabelPlace{
	{1, 0, text.XLeft, text.YCenter},     // right
	{-1, 0, text.XRight, text.YCenter},   // left
	{0, 1, text.XCenter, text.YBottom},   // above
	{0, -1, text.XCenter, text.YTop},     // below
	{0.7, 0.7, text.XLeft, text.YBottom}, // above right
	{0.7, -0.7, text.XLeft, text.YTop},   // below right
	{-0.7, 0.7, text.XRight, text.YBottom},
	{-0.7, -0.7, text.XRight, text.YTop},
}

func (l *plotPlacedLabels) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	var taken []vg.Rectangle
	r := vg.Points(7) // a frontier point's ring
	for _, q := range l.points {
		pt := vg.Point{X: trX(q.X), Y: trY(q.Y)}
		taken = append(taken, vg.Rectangle{Min: vg.Point{X: pt.X - r, Y: pt.Y - r}, Max: vg.Point{X: pt.X + r, Y: pt.Y + r}})
	}
	bar := vg.Points(1.5)
	for _, sg := range l.segs {
		a, b := vg.Point{X: trX(sg[0].X), Y: trY(sg[0].Y)}, vg.Point{X: trX(sg[1].X), Y: trY(sg[1].Y)}
		taken = append(taken, vg.Rectangle{Min: vg.Point{X: min(a.X, b.X) - bar, Y: min(a.Y, b.Y) - bar},
			Max: vg.Point{X: max(a.X, b.X) + bar, Y: max(a.Y, b.Y) + bar}})
	}
	for i, txt := range l.texts {
		pt := vg.Point{X: trX(l.at[i].X), Y: trY(l.at[i].Y)}
		placed := false
		for _, far := range []float64{1, 2, 3.2} {
			for _, pl := range plotLabelPlaces {
				sty := l.style
				sty.XAlign, sty.YAlign = pl.xalign, pl.yalign
				anchor := vg.Point{X: pt.X + vg.Length(pl.dx*far)*l.gap, Y: pt.Y + vg.Length(pl.dy*far)*l.gap}
				rect := sty.Rectangle(txt).Add(anchor)
				free := plotInside(rect, c.Rectangle)
				for _, t := range taken {
					free = free && !plotOverlap(rect, t)
				}
				if !free {
					continue
				}
				if far > 1 {
					c.StrokeLine2(draw.LineStyle{Color: color.Gray{Y: 140}, Width: vg.Points(0.5)},
						pt.X+vg.Length(pl.dx)*r, pt.Y+vg.Length(pl.dy)*r, anchor.X, anchor.Y)
				}
				c.FillText(sty, anchor, txt)
				taken = append(taken, rect)
				placed = true
				break
			}
			if placed {
				break
			}
		}
		if !placed {
			sty := l.style
			sty.XAlign, sty.YAlign = text.XLeft, text.YCenter
			anchor := vg.Point{X: pt.X + l.gap, Y: pt.Y}
			c.FillText(sty, anchor, txt)
			taken = append(taken, sty.Rectangle(txt).Add(anchor))
		}
	}
}

// GlyphBoxes reserves room for each label right of its point, so that the
// plot is padded enough for the first choice of place.
func (l *plotPlacedLabels) GlyphBoxes(p *plot.Plot) []plot.GlyphBox {
	sty := l.style
	sty.XAlign, sty.YAlign = text.XLeft, text.YCenter
	bs := make([]plot.GlyphBox, len(l.texts))
	for i, t := range l.texts {
		bs[i] = plot.GlyphBox{
			X:         p.X.Norm(l.at[i].X),
			Y:         p.Y.Norm(l.at[i].Y),
			Rectangle: sty.Rectangle(t).Add(vg.Point{X: l.gap}),
		}
	}
	return bs
}

func plotInside(r, outer vg.Rectangle) bool {
	return r.Min.X >= outer.Min.X && r.Min.Y >= outer.Min.Y && r.Max.X <= outer.Max.X && r.Max.Y <= outer.Max.Y
}

func plotOverlap(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}
