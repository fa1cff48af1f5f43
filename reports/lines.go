package reports

import (
	"fmt"
	"image/color"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
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

// newLinePlot draws series over simulated time. The caller has checked that
// at least one series has data.
func newLinePlot(title, ylabel string, ss []series) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "simulated time (s)"
	p.Y.Label.Text = ylabel
	// Time starts at 0 and every figure here is a count, a rate or a
	// latency, so both axes start at 0 and stacked panels line up.
	p.X.Min, p.Y.Min = 0, 0
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(legendFontPt)
	// One series needs no legend: the title names it.
	legend := len(ss) > 1
	colour := 0
	for _, s := range ss {
		c, dashes := color.Color(color.Gray{Y: 110}), []vg.Length{vg.Points(4), vg.Points(3)}
		if !s.reference {
			c, dashes = plotutil.Color(colour), nil
			colour++
		}
		for i, xys := range s.runs() {
			l, err := plotter.NewLine(xys)
			if err != nil {
				return nil, fmt.Errorf("%s: series %q: %w", title, s.name, err)
			}
			l.Color = c
			l.Dashes = dashes
			l.Width = vg.Points(1.2)
			if s.step {
				l.StepStyle = plotter.PostStep
			}
			p.Add(l)
			if legend && i == 0 && s.name != "" {
				p.Legend.Add(s.name, l)
			}
		}
	}
	if legend {
		makeRoomForLegend(p, len(ss))
	}
	return p, nil
}

// legendFontPt is the legend's font size; a legend row is about 1.25 of it.
const legendFontPt = 8

// makeRoomForLegend raises the y axis so that the data stay under the
// legend in the top right corner instead of being drawn over by it.
func makeRoomForLegend(p *plot.Plot, entries int) {
	if !finite(p.Y.Max) || p.Y.Max <= p.Y.Min {
		return
	}
	dataHeight := plotHeight.Points() - 70 // title, x axis and its label
	f := math.Min(float64(entries)*legendFontPt*1.25/dataHeight, 0.6)
	p.Y.Max = p.Y.Min + (p.Y.Max-p.Y.Min)/(1-f)
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
