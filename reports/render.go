package reports

import (
	"image/color"
	"slices"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Font sizes, in points.
const (
	titlePt      = 12
	panelTitlePt = 10
	axisLabelPt  = 10
	tickPt       = 9
	legendPt     = 8.5
	stripPt      = 8
)

// Heights and gaps, in points.
var (
	figPad       = vg.Points(6)
	titleH       = vg.Points(20)
	panelTitleH  = vg.Points(15)
	legendRowH   = vg.Points(13)
	stripRowH    = vg.Points(13)
	stripGap     = vg.Points(4)
	panelH       = vg.Points(150) // one panel with its time axis
	stackedH     = vg.Points(100) // each of several stacked panels
	axisLabelH   = vg.Points(14)
	legendThumbW = vg.Points(18)
	legendSpace  = vg.Points(14)
)

// minPadLeft is where the data area starts at the least, so that the
// figures of a report, stacked on its page, share their time axis.
var minPadLeft = vg.Points(62)

// The marks' colours: faults red as on the timeline, their undoing green,
// skipped faults grey; the final reads grey; phases in pale tints.
var (
	faultLine    = color.NRGBA{R: 0xc0, G: 0x39, B: 0x2b, A: 0xb0}
	undoLine     = color.NRGBA{R: 0x27, G: 0xae, B: 0x60, A: 0xb0}
	skippedLine  = color.NRGBA{R: 0x88, G: 0x88, B: 0x88, A: 0xff}
	faultShade   = color.NRGBA{R: 0xc0, G: 0x39, B: 0x2b, A: 0x18}
	faultBar     = color.NRGBA{R: 0xe8, G: 0xa2, B: 0x96, A: 0xff}
	finalShade   = color.NRGBA{R: 0x60, G: 0x60, B: 0x60, A: 0x22}
	boundaryLine = color.NRGBA{R: 0x44, G: 0x44, B: 0x44, A: 0xff}
	textColour   = color.NRGBA{R: 0x22, G: 0x22, B: 0x22, A: 0xff}
	noteColour   = color.NRGBA{R: 0x55, G: 0x55, B: 0x55, A: 0xff}
	phaseFill    = map[string]color.Color{
		phaseFaults:   color.NRGBA{R: 0xfb, G: 0xe4, B: 0xe0, A: 0xff},
		phaseSettle:   color.NRGBA{R: 0xe3, G: 0xf2, B: 0xe5, A: 0xff},
		phaseConverge: color.NRGBA{R: 0xee, G: 0xee, B: 0xee, A: 0xff},
		phaseFinal:    color.NRGBA{R: 0xcc, G: 0xcc, B: 0xcc, A: 0xff},
	}
)

var dashes = []vg.Length{vg.Points(3), vg.Points(2)}

// textStyle is the plotting library's default font at size pt.
func textStyle(pt float64, xa text.XAlignment, ya text.YAlignment) text.Style {
	st := plot.New().X.Tick.Label
	st.Font.Size = vg.Points(pt)
	st.Color = textColour
	st.XAlign, st.YAlign = xa, ya
	return st
}

// legendEntry is one item of a legend: a line sample and its name, or a
// note without a line.
type legendEntry struct {
	text string
	line *draw.LineStyle
}

func (e legendEntry) width(st text.Style) vg.Length {
	w := st.Width(e.text)
	if e.line != nil {
		w += legendThumbW + vg.Points(4)
	}
	return w
}

// flowLegend lays entries out left to right in rows no wider than w.
func flowLegend(entries []legendEntry, w vg.Length) [][]legendEntry {
	st := textStyle(legendPt, draw.XLeft, draw.YCenter)
	var rows [][]legendEntry
	var row []legendEntry
	x := vg.Length(0)
	for _, e := range entries {
		ew := e.width(st)
		if len(row) > 0 && x+ew > w {
			rows = append(rows, row)
			row, x = nil, 0
		}
		row = append(row, e)
		x += ew + legendSpace
	}
	if len(row) > 0 {
		rows = append(rows, row)
	}
	return rows
}

// figureLayout is a figure's pieces, measured.
type figureLayout struct {
	f       *figure
	plots   []*plot.Plot
	legends [][][]legendEntry // per panel, rows of entries
	strip   []stripRow
	labelW  vg.Length // the widest strip row label
}

func newFigureLayout(f *figure) (*figureLayout, error) {
	l := &figureLayout{f: f}
	// Legends wrap at about the data area's width.
	legendW := plotWidth - 2*figPad - vg.Points(60)
	for i, ps := range f.panels {
		p, legend, err := newPanelPlot(f, ps, i == len(f.panels)-1)
		if err != nil {
			return nil, err
		}
		l.plots = append(l.plots, p)
		l.legends = append(l.legends, flowLegend(legend, legendW))
	}
	l.strip = stripRows(f.marks)
	st := textStyle(stripPt, draw.XRight, draw.YCenter)
	for _, r := range l.strip {
		l.labelW = max(l.labelW, st.Width(r.label))
	}
	return l, nil
}

func (l *figureLayout) stripHeight() vg.Length {
	if len(l.strip) == 0 {
		return 0
	}
	return stripRowH*vg.Length(len(l.strip)) + stripGap
}

// panelHeight is the height of panel i's plot; the bottom one of a stack
// also carries the time axis's label.
func (l *figureLayout) panelHeight(i int) vg.Length {
	switch {
	case len(l.plots) == 1:
		return panelH
	case i == len(l.plots)-1:
		return stackedH + axisLabelH
	}
	return stackedH
}

func (l *figureLayout) height() vg.Length {
	h := 2*figPad + titleH + l.stripHeight()
	for i := range l.plots {
		if len(l.plots) > 1 {
			h += panelTitleH
		}
		h += legendRowH*vg.Length(len(l.legends[i])) + l.panelHeight(i)
	}
	return h
}

// draw lays the figure out from the top: title, strip, then each panel's
// title, legend and plot. The panels' data areas are aligned (the widest
// y axis decides where they start), and the strip is drawn over the same
// horizontal extent, so that one time lines up in every part.
func (l *figureLayout) draw(c draw.Canvas) {
	left, right := c.Min.X+figPad, c.Max.X-figPad
	y := c.Max.Y - figPad
	c.FillText(textStyle(titlePt, draw.XCenter, draw.YTop), vg.Point{X: (left + right) / 2, Y: y}, l.f.title)
	y -= titleH
	stripTop := y
	y -= l.stripHeight()

	type block struct {
		titleY, legendY vg.Length
		area            draw.Canvas
	}
	blocks := make([]block, len(l.plots))
	for i := range l.plots {
		var b block
		if len(l.plots) > 1 {
			b.titleY = y
			y -= panelTitleH
		}
		b.legendY = y
		y -= legendRowH * vg.Length(len(l.legends[i]))
		h := l.panelHeight(i)
		b.area = draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: left, Y: y - h}, Max: vg.Point{X: right, Y: y}}}
		y -= h
		blocks[i] = b
	}

	// Align the data areas: each plot's axes take what they need, and
	// the widest decides for all (the strip's row labels count too).
	padL, padR := max(l.labelW+vg.Points(10), minPadLeft), vg.Length(0)
	for i, p := range l.plots {
		dc := p.DataCanvas(blocks[i].area)
		padL = max(padL, dc.Min.X-blocks[i].area.Min.X)
		padR = max(padR, blocks[i].area.Max.X-dc.Max.X)
	}
	var x0, x1 vg.Length
	for i, p := range l.plots {
		a := &blocks[i].area
		dc := p.DataCanvas(*a)
		a.Min.X += padL - (dc.Min.X - a.Min.X)
		a.Max.X -= padR - (a.Max.X - dc.Max.X)
		dc = p.DataCanvas(*a)
		x0, x1 = dc.Min.X, dc.Max.X
	}
	if len(l.plots) == 0 {
		x0, x1 = left+padL, right
	}

	drawStrip(c, l.strip, l.f.marks, x0, x1, stripTop)
	for i, p := range l.plots {
		b := blocks[i]
		if len(l.plots) > 1 {
			c.FillText(textStyle(panelTitlePt, draw.XCenter, draw.YTop), vg.Point{X: (x0 + x1) / 2, Y: b.titleY}, l.f.panels[i].title)
		}
		drawLegend(c, l.legends[i], x0, b.legendY)
		p.Draw(b.area)
	}
}

// drawLegend draws rows of legend entries from (x, top) down.
func drawLegend(c draw.Canvas, rows [][]legendEntry, x, top vg.Length) {
	st := textStyle(legendPt, draw.XLeft, draw.YCenter)
	note := st
	note.Color = noteColour
	for r, row := range rows {
		cy := top - legendRowH*vg.Length(r) - legendRowH/2
		cx := x
		for _, e := range row {
			if e.line != nil {
				c.StrokeLine2(*e.line, cx, cy, cx+legendThumbW, cy)
				cx += legendThumbW + vg.Points(4)
				c.FillText(st, vg.Point{X: cx, Y: cy}, e.text)
			} else {
				c.FillText(note, vg.Point{X: cx, Y: cy}, e.text)
			}
			cx += st.Width(e.text) + legendSpace
		}
	}
}

// stripRow is one row of the marks strip: the phases, or faults.
type stripRow struct {
	label string
	phase bool
	spans []span
}

func stripRows(m *runMarks) []stripRow {
	if m == nil {
		return nil
	}
	var rows []stripRow
	if len(m.phases) > 0 {
		rows = append(rows, stripRow{label: "phase", phase: true, spans: m.phases})
	}
	for _, r := range m.rows {
		rows = append(rows, stripRow{label: r.kind, spans: r.spans})
	}
	return rows
}

// interval is a horizontal extent taken by a bar or a label.
type interval struct{ lo, hi vg.Length }

func (iv interval) overlaps(o interval) bool { return iv.lo < o.hi && o.lo < iv.hi }

// drawStrip draws the phase row and the fault rows between x0 and x1 from
// top down: phases as tinted segments, lasting faults as bars from when
// they struck to when they ended, instants as ticks, each labelled where
// its label fits without covering another.
func drawStrip(c draw.Canvas, rows []stripRow, m *runMarks, x0, x1, top vg.Length) {
	if len(rows) == 0 {
		return
	}
	at := func(t time.Duration) vg.Length {
		return x0 + (x1-x0)*vg.Length(float64(t)/float64(m.end))
	}
	rowLabel := textStyle(stripPt, draw.XRight, draw.YCenter)
	label := textStyle(stripPt, draw.XLeft, draw.YCenter)
	for r, row := range rows {
		y1 := top - stripRowH*vg.Length(r) - vg.Points(1)
		y0 := y1 - stripRowH + vg.Points(2)
		cy := (y0 + y1) / 2
		c.FillText(rowLabel, vg.Point{X: x0 - vg.Points(6), Y: cy}, row.label)
		var taken []interval
		bars := make([]interval, len(row.spans))
		for i, s := range row.spans {
			a, b := at(s.from), at(s.to)
			switch {
			case row.phase:
				fill := phaseFill[s.label]
				if fill == nil {
					fill = phaseFill[phaseConverge]
				}
				c.FillPolygon(fill, rect(a, y0, max(b, a+vg.Points(1)), y1))
			case s.skipped:
				c.StrokeLine2(draw.LineStyle{Color: skippedLine, Width: vg.Points(1), Dashes: dashes}, a, y0, a, y1)
			case s.instant():
				c.StrokeLine2(draw.LineStyle{Color: faultLine, Width: vg.Points(1.5)}, a, y0, a, y1)
			default:
				b = max(b, a+vg.Points(1.5))
				c.FillPolygon(faultBar, rect(a, y0, b, y1))
				c.StrokeLine2(draw.LineStyle{Color: faultLine, Width: vg.Points(1)}, a, y0, a, y1)
				if s.undone {
					c.StrokeLine2(draw.LineStyle{Color: undoLine, Width: vg.Points(1)}, b, y0, b, y1)
				}
			}
			bars[i] = interval{a, max(b, a+vg.Points(1.5))}
		}
		if !row.phase {
			taken = append(taken, bars...)
		}
		// Wide spans place their labels first; a label goes inside its
		// span when it fits, else just after it, else just before it.
		order := make([]int, len(row.spans))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(i, j int) int {
			// The final reads' label before the convergence wait's.
			if pi, pj := labelPriority(row.spans[i]), labelPriority(row.spans[j]); pi != pj {
				return pi - pj
			}
			wi, wj := bars[i].hi-bars[i].lo, bars[j].hi-bars[j].lo
			switch {
			case wi > wj:
				return -1
			case wi < wj:
				return 1
			}
			return 0
		})
		for _, i := range order {
			s := row.spans[i]
			w := label.Width(s.label)
			bar := bars[i]
			pad := vg.Points(3)
			candidates := []interval{{bar.hi + pad, bar.hi + pad + w}, {bar.lo - pad - w, bar.lo - pad}}
			if bar.hi-bar.lo >= w+2*pad {
				mid := (bar.lo + bar.hi) / 2
				candidates = append([]interval{{mid - w/2, mid + w/2}}, candidates...)
			}
			for _, cand := range candidates {
				if cand.lo < x0 || cand.hi > x1 || (!row.phase && !inside(cand, bar) && anyOverlap(cand, taken)) ||
					(row.phase && anyOverlap(cand, taken)) {
					continue
				}
				c.FillText(label, vg.Point{X: cand.lo, Y: cy}, s.label)
				taken = append(taken, cand)
				break
			}
		}
	}
}

func labelPriority(s span) int {
	if s.label == phaseConverge {
		return 1
	}
	return 0
}

func inside(a, b interval) bool { return a.lo >= b.lo && a.hi <= b.hi }

func anyOverlap(iv interval, taken []interval) bool {
	for _, t := range taken {
		if iv.overlaps(t) {
			return true
		}
	}
	return false
}

func rect(x0, y0, x1, y1 vg.Length) []vg.Point {
	return []vg.Point{{X: x0, Y: y0}, {X: x1, Y: y0}, {X: x1, Y: y1}, {X: x0, Y: y1}}
}

// maxFaultLines is how many faults a panel draws start and end lines for;
// beyond it, their shading only.
const maxFaultLines = 24

// marksPlotter draws the run's marks under a panel's data: the final reads
// shaded grey, each fault shaded from when it struck to when it ended with
// a red line at its start and a green one at its undoing (an instant a red
// line, a skipped fault a dashed grey one), and the phase boundaries as
// dashed lines.
type marksPlotter struct{ m *runMarks }

// Plot implements plot.Plotter.
func (mp marksPlotter) Plot(c draw.Canvas, p *plot.Plot) {
	x, _ := p.Transforms(&c)
	at := func(t time.Duration) vg.Length { return x(t.Seconds()) }
	band := func(a, b vg.Length, fill color.Color) {
		a, b = max(a, c.Min.X), min(b, c.Max.X)
		if b > a {
			c.FillPolygon(fill, rect(a, c.Min.Y, b, c.Max.Y))
		}
	}
	vline := func(px vg.Length, st draw.LineStyle) {
		if px >= c.Min.X && px <= c.Max.X {
			c.StrokeLine2(st, px, c.Min.Y, px, c.Max.Y)
		}
	}
	m := mp.m
	if fr := m.finalReads; fr.to > fr.from {
		band(at(fr.from), at(fr.to), finalShade)
	}
	// Many faults (a long nemesis run) would hide the data behind their
	// lines: they are then shaded only, the strip above telling them apart.
	lines := m.faultCount() <= maxFaultLines
	for _, r := range m.rows {
		for _, s := range r.spans {
			a := at(s.from)
			switch {
			case s.skipped:
				if lines {
					vline(a, draw.LineStyle{Color: skippedLine, Width: vg.Points(0.75), Dashes: dashes})
				}
			case s.instant() && lines:
				vline(a, draw.LineStyle{Color: faultLine, Width: vg.Points(1)})
			case s.instant():
				vline(a, draw.LineStyle{Color: faultShade, Width: vg.Points(1)})
			default:
				b := at(s.to)
				band(a, b, faultShade)
				if lines {
					vline(a, draw.LineStyle{Color: faultLine, Width: vg.Points(0.75)})
					if s.undone {
						vline(b, draw.LineStyle{Color: undoLine, Width: vg.Points(0.75)})
					}
				}
			}
		}
	}
	for _, b := range m.bounds {
		vline(at(b.at), draw.LineStyle{Color: boundaryLine, Width: vg.Points(0.75), Dashes: dashes})
	}
}
