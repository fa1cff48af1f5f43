package reports

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// series is one named line of a plot. A NaN in ys is a gap: the line breaks
// there rather than drawing a slope across time that had no data.
type series struct {
	name   string
	xs, ys []float64
	// step draws a state that holds until the next sample (ISR size,
	// leaderless partitions) as a staircase, not as a ramp.
	step bool
	// reference marks a horizontal reference line, drawn dashed and grey.
	reference bool
}

// hasData reports whether the series has at least one point to draw.
func (s series) hasData() bool {
	for i := range s.ys {
		if i < len(s.xs) && finite(s.xs[i]) && finite(s.ys[i]) {
			return true
		}
	}
	return false
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// runs splits the series at its gaps into runs of finite points.
func (s series) runs() []plotter.XYs {
	var out []plotter.XYs
	var cur plotter.XYs
	for i := range s.ys {
		if i >= len(s.xs) {
			break
		}
		if !finite(s.xs[i]) || !finite(s.ys[i]) {
			if len(cur) > 0 {
				out = append(out, cur)
				cur = nil
			}
			continue
		}
		cur = append(cur, plotter.XY{X: s.xs[i], Y: s.ys[i]})
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// seriesPalette colours data series: Tableau 10 with its red and green
// last, since red and green mark faults and their undoing.
var seriesPalette = []color.Color{
	rgb(0x4e79a7), rgb(0xf28e2b), rgb(0xb07aa1), rgb(0x76b7b2), rgb(0x9c755f),
	rgb(0xff9da7), rgb(0xedc948), rgb(0x17becf), rgb(0xbab0ac), rgb(0x59a14f), rgb(0xe15759),
}

func rgb(v uint32) color.Color {
	return color.NRGBA{R: uint8(v >> 16), G: uint8(v >> 8), B: uint8(v), A: 0xff}
}

// referenceDashes tell reference lines apart (replication factor, min
// ISR): grey, each dashed its own way.
var referenceDashes = [][]vg.Length{
	{vg.Points(5), vg.Points(3)},
	{vg.Points(1.5), vg.Points(2)},
	{vg.Points(8), vg.Points(2), vg.Points(1.5), vg.Points(2)},
}

// seriesStyle is how a series is drawn: a data series coloured by its
// position among them, the ref-th reference line dashed and grey.
func seriesStyle(s series, colour, ref int) draw.LineStyle {
	st := draw.LineStyle{Color: seriesPalette[colour%len(seriesPalette)], Width: vg.Points(1.2)}
	if s.reference {
		st.Color = color.Gray{Y: 90}
		st.Dashes = referenceDashes[ref%len(referenceDashes)]
	}
	return st
}

// addSeries draws ss onto p and returns their legend entries.
func addSeries(p *plot.Plot, ss []series) ([]legendEntry, error) {
	var legend []legendEntry
	colour, ref := 0, 0
	for _, s := range ss {
		st := seriesStyle(s, colour, ref)
		if s.reference {
			ref++
		} else {
			colour++
		}
		for _, xys := range s.runs() {
			l, err := plotter.NewLine(xys)
			if err != nil {
				return nil, fmt.Errorf("series %q: %w", s.name, err)
			}
			l.LineStyle = st
			if s.step {
				l.StepStyle = plotter.PostStep
			}
			p.Add(l)
		}
		if s.name != "" {
			name := s.name
			if s.allZero() {
				name += " (none)"
			}
			legend = append(legend, legendEntry{text: name, line: &st})
		}
	}
	return legend, nil
}

// allZero reports whether every drawn point of s is 0: such a line lies on
// the axis, so its legend says so.
func (s series) allZero() bool {
	if s.reference || !s.hasData() {
		return false
	}
	for _, y := range s.ys {
		if finite(y) && y != 0 {
			return false
		}
	}
	return true
}

// top is the largest finite value of the series, 0 when none.
func top(ss []series) float64 {
	t := 0.0
	for _, s := range ss {
		for _, y := range s.ys {
			if finite(y) {
				t = max(t, y)
			}
		}
	}
	return t
}

// spread summarises many lines as three: the minimum, mean and maximum
// across them at each x, for when one line each would be unreadable. NaNs
// (a line with no value at that x) are left out.
func spread(label string, xs []float64, lines [][]float64) []series {
	lo := make([]float64, len(xs))
	mean := make([]float64, len(xs))
	hi := make([]float64, len(xs))
	for i := range xs {
		lo[i], hi[i] = math.Inf(1), math.Inf(-1)
		sum, n := 0.0, 0
		for _, ys := range lines {
			if i >= len(ys) || !finite(ys[i]) {
				continue
			}
			lo[i], hi[i] = min(lo[i], ys[i]), max(hi[i], ys[i])
			sum += ys[i]
			n++
		}
		if n == 0 {
			lo[i], mean[i], hi[i] = math.NaN(), math.NaN(), math.NaN()
			continue
		}
		mean[i] = sum / float64(n)
	}
	return []series{
		{name: "min " + label, xs: xs, ys: lo},
		{name: "mean " + label, xs: xs, ys: mean},
		{name: "max " + label, xs: xs, ys: hi},
	}
}
