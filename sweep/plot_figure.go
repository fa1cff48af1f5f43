package sweep

import (
	"image/color"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A figure is a title block, a grid of panels (small multiples, one per
// combination of the facet axes' values; one panel when there are none)
// and blocks below the grid: a legend, a colour scale, a key. Every part
// is laid out inside the figure, so nothing is cut off at its edges and
// nothing floats over the data.

// plotBlock is a strip of the figure, as wide as the figure and h tall.
type plotBlock struct {
	h    vg.Length
	draw func(draw.Canvas)
}

// plotLayout is a figure before it is drawn.
type plotLayout struct {
	title, subtitle string
	rows, cols      int
	// panels holds rows × cols plots, row-major; nil where a combination
	// of facet values has no cell that ran (empty says so in its place).
	panels []*plot.Plot
	empty  []string
	panelW vg.Length
	panelH vg.Length
	// below is built once the figure's width is known.
	below func(width vg.Length) []plotBlock
}

// Margins and fonts of a figure.
const (
	plotMargin       = 10 // points, round the figure
	plotTitleFont    = 12
	plotSubtitleFont = 9
	plotPanelFont    = 9 // panel titles: the facet values
	plotTickFont     = 8
)

// plotPanelSize is the size of each panel for a grid of cols columns:
// one panel fills the figure's width; several share it, but never shrink
// below what their labels need.
func plotPanelSize(cols int) (vg.Length, vg.Length) {
	if cols <= 1 {
		return plotWidth, plotHeight
	}
	w := max(plotWidth/vg.Length(cols), 3.3*vg.Inch)
	return w, w * 0.78
}

// figure turns a layout into a figure of a fixed size.
func (l *plotLayout) figure(name string) *plotFigure {
	width := vg.Length(l.cols) * l.panelW
	width = max(width, plotWidth)
	inner := width - 2*vg.Points(plotMargin)
	title := plotWrap(plotTextStyle(plotTitleFont, color.Black), l.title, inner)
	sub := plotWrap(plotTextStyle(plotSubtitleFont, color.Gray{Y: 60}), l.subtitle, inner)
	titleH := plotTextStyle(plotTitleFont, color.Black).Height(strings.Join(title, "\n"))
	if len(sub) > 0 {
		titleH += vg.Points(3) + plotTextStyle(plotSubtitleFont, color.Black).Height(strings.Join(sub, "\n"))
	}
	titleH += vg.Points(8)
	var below []plotBlock
	if l.below != nil {
		below = l.below(inner)
	}
	belowH := vg.Length(0)
	for _, b := range below {
		belowH += b.h
	}
	gridH := vg.Length(l.rows) * l.panelH
	height := vg.Points(plotMargin)*2 + titleH + gridH + belowH
	return &plotFigure{
		title: name,
		w:     width, h: height,
		draw: func(c draw.Canvas) {
			c = draw.Crop(c, vg.Points(plotMargin), -vg.Points(plotMargin), vg.Points(plotMargin), -vg.Points(plotMargin))
			y := c.Max.Y
			ts := plotTextStyle(plotTitleFont, color.Black)
			ts.XAlign, ts.YAlign = text.XCenter, text.YTop
			mid := (c.Min.X + c.Max.X) / 2
			for _, line := range title {
				c.FillText(ts, vg.Point{X: mid, Y: y}, line)
				y -= ts.Height(line)
			}
			if len(sub) > 0 {
				y -= vg.Points(3)
				ss := plotTextStyle(plotSubtitleFont, color.Gray{Y: 60})
				ss.XAlign, ss.YAlign = text.XCenter, text.YTop
				for _, line := range sub {
					c.FillText(ss, vg.Point{X: mid, Y: y}, line)
					y -= ss.Height(line)
				}
			}
			top := c.Max.Y - titleH
			grid := c
			grid.Max.Y = top
			grid.Min.Y = top - gridH
			l.drawGrid(grid)
			y = grid.Min.Y
			for _, b := range below {
				bc := c
				bc.Max.Y, bc.Min.Y = y, y-b.h
				b.draw(bc)
				y -= b.h
			}
		},
	}
}

// drawGrid draws the panels with their data areas aligned: the same size
// and at the same places in every row and column.
func (l *plotLayout) drawGrid(c draw.Canvas) {
	plots := make([][]*plot.Plot, l.rows)
	for r := range l.rows {
		plots[r] = l.panels[r*l.cols : (r+1)*l.cols]
	}
	tiles := draw.Tiles{Rows: l.rows, Cols: l.cols, PadX: vg.Points(10), PadY: vg.Points(8)}
	canvases := plot.Align(plots, tiles, c)
	for r := range l.rows {
		for k := range l.cols {
			p := plots[r][k]
			if p != nil {
				p.Draw(canvases[r][k])
				continue
			}
			if msg := l.empty[r*l.cols+k]; msg != "" {
				sty := plotTextStyle(plotPanelFont, color.Gray{Y: 90})
				sty.XAlign, sty.YAlign = text.XCenter, text.YCenter
				t := canvases[r][k]
				t.FillText(sty, vg.Point{X: (t.Min.X + t.Max.X) / 2, Y: (t.Min.Y + t.Max.Y) / 2}, msg)
			}
		}
	}
}

// plotTextStyle is the figures' font at size points.
func plotTextStyle(size float64, ink color.Color) text.Style {
	return text.Style{Color: ink, Font: plotFont(size), Handler: plot.DefaultTextHandler}
}

// plotWrap breaks s into lines no wider than width, at spaces; a word
// wider than width gets a line of its own. Newlines in s are kept.
func plotWrap(sty text.Style, s string, width vg.Length) []string {
	if s == "" {
		return nil
	}
	var out []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			try := word
			if line != "" {
				try = line + " " + word
			}
			if line != "" && sty.Width(try) > width {
				out = append(out, line)
				line = word
				continue
			}
			line = try
		}
		out = append(out, line)
	}
	return out
}

// plotLegendEntry is one entry of a legend: a name and what it stands for.
type plotLegendEntry struct {
	name   string
	thumbs []plot.Thumbnailer
}

// plotLegendBlock lays legend entries out in rows under the grid, each a
// thumbnail and its name, wrapping at the figure's width.
func plotLegendBlock(entries []plotLegendEntry, width vg.Length) plotBlock {
	if len(entries) == 0 {
		return plotBlock{}
	}
	sty := plotTextStyle(plotLegendFont, color.Black)
	thumb := vg.Points(18)
	gap := vg.Points(14)
	lineH := sty.Height("Ag") + vg.Points(5)
	type placed struct {
		x   vg.Length
		row int
	}
	var at []placed
	x, row := vg.Length(0), 0
	var rowW []vg.Length
	for _, e := range entries {
		w := thumb + vg.Points(4) + sty.Width(e.name)
		if x > 0 && x+w > width {
			rowW = append(rowW, x-gap)
			x, row = 0, row+1
		}
		at = append(at, placed{x: x, row: row})
		x += w + gap
	}
	rowW = append(rowW, x-gap)
	rows := row + 1
	return plotBlock{
		h: vg.Length(rows)*lineH + vg.Points(6),
		draw: func(c draw.Canvas) {
			for i, e := range entries {
				p := at[i]
				left := c.Min.X + (c.Max.X-c.Min.X-rowW[p.row])/2 + p.x
				top := c.Max.Y - vg.Points(4) - vg.Length(p.row)*lineH
				box := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
					Min: vg.Point{X: left, Y: top - lineH + vg.Points(3)},
					Max: vg.Point{X: left + thumb, Y: top},
				}}
				for _, t := range e.thumbs {
					t.Thumbnail(&box)
				}
				s := sty
				s.XAlign, s.YAlign = text.XLeft, text.YCenter
				c.FillText(s, vg.Point{X: left + thumb + vg.Points(4), Y: (box.Min.Y + box.Max.Y) / 2}, e.name)
			}
		},
	}
}

// noCell marks panel i, titled title, as one where no cell ran.
func (l *plotLayout) noCell(i int, title string) {
	l.empty[i] = "no cell ran"
	if title != "" {
		l.empty[i] = title + ":\nno cell ran"
	}
}

// newPanel starts panel i, titled title, in the figures' style. Panels
// share their scales, so only the bottom row is labelled xLabel and only
// the left column yLabel.
func (l *plotLayout) newPanel(i int, title, xLabel, yLabel string) *plot.Plot {
	several := l.rows*l.cols > 1
	p := plot.New()
	plotPanelStyle(p, title, several)
	if !several || i/l.cols == l.rows-1 {
		p.X.Label.Text = xLabel
	}
	if !several || i%l.cols == 0 {
		p.Y.Label.Text = yLabel
	}
	return p
}

// plotPanelStyle sets a panel's fonts: smaller when there are several.
func plotPanelStyle(p *plot.Plot, title string, several bool) {
	p.Title.Text = title
	p.Title.TextStyle = plotTextStyle(plotPanelFont, color.Black)
	p.Title.TextStyle.XAlign, p.Title.TextStyle.YAlign = text.XCenter, text.YTop
	p.Title.Padding = vg.Points(4)
	size, tick := 10.0, plotTickFont+1.0
	if several {
		size, tick = 9, plotTickFont
	}
	p.X.Label.TextStyle.Font.Size = vg.Points(size)
	p.Y.Label.TextStyle.Font.Size = vg.Points(size)
	p.X.Tick.Label.Font.Size = vg.Points(tick)
	p.Y.Tick.Label.Font.Size = vg.Points(tick)
}
