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

// plotMaxLabelled is how many distinct points a Pareto plot labels; beyond
// it only the frontier's points are labelled.
const plotMaxLabelled = 12

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
	labelAxes := s.Label
	if len(labelAxes) == 0 {
		labelAxes = plotOtherAxes(axes)
	}
	// When less is better along Y, zero is the best there is: a cell
	// with Y = 0 (no acknowledged write lost) is marked apart from one
	// with Y > 0.
	splitZero := !HigherIsBetter(s.Y)

	var pcs []paretoCell
	var pts []ParetoPoint
	for _, c := range cells {
		mx, okx := c.Metrics[s.X]
		my, oky := c.Metrics[s.Y]
		if !okx || !oky || !plotFinite(mx.Mean) || !plotFinite(my.Mean) {
			continue
		}
		pc := paretoCell{label: plotCellLabel(c, labelAxes), x: mx.Mean, y: my.Mean}
		pc.xlo, pc.xhi = plotClampInterval(s.X, mx.Mean, mx.Lo, mx.Hi)
		pc.ylo, pc.yhi = plotClampInterval(s.Y, my.Mean, my.Lo, my.Hi)
		pc.positive = splitZero && my.Mean > 0
		pcs = append(pcs, pc)
		pts = append(pts, ParetoPoint{X: mx.Mean, Y: my.Mean})
	}
	if len(pcs) == 0 {
		return nil, nil
	}
	frontier := ParetoFrontier(pts, HigherIsBetter(s.X), HigherIsBetter(s.Y))
	for _, i := range frontier {
		pcs[i].frontier = true
	}

	title := s.Title
	if title == "" {
		title = fmt.Sprintf("Pareto: %s against %s", s.Y, s.X)
	}
	subtitle := fmt.Sprintf("one point per cell; frontier: %s %s and %s %s; bars: 95%% interval",
		plotWay(s.X), s.X, plotWay(s.Y), s.Y)
	p := plotNew(title, subtitle)
	p.X.Label.Text = plotMetricLabel(s.X)
	p.Y.Label.Text = plotMetricLabel(s.Y)
	grid := plotter.NewGrid()
	grid.Vertical.Color = color.Gray{Y: 225}
	grid.Horizontal.Color = color.Gray{Y: 225}
	p.Add(grid)

	if err := plotParetoErrorBars(p, pcs); err != nil {
		return nil, err
	}
	legend := plotLegend()
	var entries []string
	addEntry := func(name string, th ...plot.Thumbnailer) {
		legend.Add(name, th...)
		entries = append(entries, name)
	}

	var line *plotter.Line
	if len(frontier) > 0 {
		xys := make(plotter.XYs, len(frontier))
		for k, i := range frontier {
			xys[k] = plotter.XY{X: pcs[i].x, Y: pcs[i].y}
		}
		var err error
		if line, err = plotter.NewLine(xys); err != nil {
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
	zeroName, positiveName := "cell", ""
	if splitZero {
		zeroName, positiveName = s.Y+" = 0", s.Y+" > 0"
		if strings.HasPrefix(s.Y, "lost-acked") {
			zeroName, positiveName = "loses no acknowledged write", "loses acknowledged writes"
		}
	}
	if len(zero) > 0 {
		sc, err := plotter.NewScatter(zero)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: plotBlue, Radius: vg.Points(3.5), Shape: draw.CircleGlyph{}}
		p.Add(sc)
		addEntry(zeroName, sc)
	}
	if len(positive) > 0 {
		sc, err := plotter.NewScatter(positive)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: plotRed, Radius: vg.Points(4), Shape: draw.PyramidGlyph{}}
		p.Add(sc)
		addEntry(positiveName, sc)
	}
	if line != nil {
		ring := plotter.XYs{}
		for _, i := range frontier {
			ring = append(ring, plotter.XY{X: pcs[i].x, Y: pcs[i].y})
		}
		sc, err := plotter.NewScatter(ring)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: plotBlack, Radius: vg.Points(6.5), Shape: draw.RingGlyph{}}
		p.Add(sc)
		addEntry("Pareto frontier", line, sc)
	}
	if labels := plotParetoLabels(pcs); labels != nil {
		p.Add(labels)
	}
	plotSetRange(&p.X, s.X)
	plotSetRange(&p.Y, s.Y)

	width := plotLegendWidth(legend, entries)
	return &plotFigure{
		title: title + " (" + subtitle + ")",
		w:     plotWidth, h: plotHeight,
		draw: func(c draw.Canvas) { plotWithLegend(c, p, legend, width) },
	}, nil
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

// plotParetoLabels labels the points: cells at the same place share one
// label listing up to three of them. With more than plotMaxLabelled
// places, only the frontier's are labelled.
func plotParetoLabels(pcs []paretoCell) *plotPlacedLabels {
	type place struct {
		x, y     float64
		labels   []string
		frontier bool
	}
	var places []*place
	at := map[[2]float64]*place{}
	l := &plotPlacedLabels{
		style: text.Style{
			Color:   color.Gray{Y: 40},
			Font:    plotFont(plotLabelFont),
			Handler: plot.DefaultTextHandler,
		},
		gap: vg.Points(8),
	}
	for _, pc := range pcs {
		l.points = append(l.points, plotter.XY{X: pc.x, Y: pc.y})
		key := [2]float64{pc.x, pc.y}
		pl := at[key]
		if pl == nil {
			pl = &place{x: pc.x, y: pc.y}
			at[key] = pl
			places = append(places, pl)
		}
		pl.frontier = pl.frontier || pc.frontier
		if pc.label != "" && !slices.Contains(pl.labels, pc.label) {
			pl.labels = append(pl.labels, pc.label)
		}
	}
	for _, pl := range places {
		if len(pl.labels) == 0 || (len(places) > plotMaxLabelled && !pl.frontier) {
			continue
		}
		shown := pl.labels
		more := ""
		if len(shown) > 3 {
			more = "\n+" + strconv.Itoa(len(shown)-3) + " more"
			shown = shown[:3]
		}
		l.at = append(l.at, plotter.XY{X: pl.x, Y: pl.y})
		l.texts = append(l.texts, strings.Join(shown, "\n")+more)
		l.must = append(l.must, pl.frontier)
	}
	if len(l.at) == 0 {
		return nil
	}
	return l
}

// plotPlacedLabels is a plotter of point labels that keeps them apart:
// each label goes right of its point, or else left, above, below or
// diagonally, wherever it first overlaps neither a point nor a label
// already placed. The frontier's labels are placed first and always drawn
// (right of the point if nothing is free); another label with no free
// place is left out, the index's table naming every cell.
type plotPlacedLabels struct {
	at     []plotter.XY // where each label's point is
	texts  []string
	must   []bool       // drawn even without a free place
	points []plotter.XY // every point of the plot, to keep labels off
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
	r := vg.Points(4.5)
	for _, q := range l.points {
		pt := vg.Point{X: trX(q.X), Y: trY(q.Y)}
		taken = append(taken, vg.Rectangle{Min: vg.Point{X: pt.X - r, Y: pt.Y - r}, Max: vg.Point{X: pt.X + r, Y: pt.Y + r}})
	}
	var order []int
	for _, must := range []bool{true, false} {
		for i := range l.texts {
			if l.must[i] == must {
				order = append(order, i)
			}
		}
	}
	for _, i := range order {
		pt := vg.Point{X: trX(l.at[i].X), Y: trY(l.at[i].Y)}
		for k, pl := range plotLabelPlaces {
			sty := l.style
			sty.XAlign, sty.YAlign = pl.xalign, pl.yalign
			anchor := vg.Point{X: pt.X + vg.Length(pl.dx)*l.gap, Y: pt.Y + vg.Length(pl.dy)*l.gap}
			rect := sty.Rectangle(l.texts[i]).Add(anchor)
			// GlyphBoxes made room for the first place; any other must
			// fit in the data area.
			free := k == 0 || plotInside(rect, c.Rectangle)
			for _, t := range taken {
				free = free && !plotOverlap(rect, t)
			}
			last := k == len(plotLabelPlaces)-1
			if !free && !(last && l.must[i]) {
				continue
			}
			if !free { // a frontier label with nowhere free: right of it
				sty.XAlign, sty.YAlign = text.XLeft, text.YCenter
				anchor = vg.Point{X: pt.X + l.gap, Y: pt.Y}
				rect = sty.Rectangle(l.texts[i]).Add(anchor)
			}
			c.FillText(sty, anchor, l.texts[i])
			taken = append(taken, rect)
			break
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
