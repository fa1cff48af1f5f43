package sweep

import (
	"fmt"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// A plot never shows a mean over configurations that promise different
// things: the axes it does not draw are either fixed (where: one slice of
// the grid, named in the subtitle) or drawn as small multiples (facets:
// one panel per combination of their values). An axis the spec leaves out
// is faceted automatically. Only the seed axis (seed-offset) is averaged
// over, as the seeds of a cell are.

// plotPanel is one panel: the cells with one combination of the facet
// axes' values (and the where values).
type plotPanel struct {
	// title names the combination, one facet a line ("" with no facets).
	title string
	cells []Cell
}

// plotPanels is how a plot splits the grid.
type plotPanels struct {
	facets     []plotAxis
	auto       []string // facets the spec did not ask for: it would have averaged over them
	where      []Fixed
	panels     []plotPanel // row-major
	rows, cols int
}

// plotSplit resolves a spec's facets and where against the sweep's axes
// and groups the cells into panels. It fails when an axis the spec names
// is not one of the sweep's, a where value is not one of its axis's, or
// the panels would be more than PanelsMax.
func plotSplit(axes []Axis, cells []Cell, s PlotSpec) (*plotPanels, error) {
	ps := &plotPanels{where: s.Where}
	for _, w := range s.Where {
		a, ok := plotFindAxis(axes, w.Axis)
		if !ok {
			return nil, fmt.Errorf("where: %q is not an axis of this sweep", w.Axis)
		}
		if a.index(w.Value) < 0 {
			return nil, fmt.Errorf("where: %q is not a value of axis %s (%s)", w.Value, w.Axis, strings.Join(a.values, ", "))
		}
	}
	var kept []Cell
	for _, c := range cells {
		in := true
		for _, w := range s.Where {
			in = in && c.Values[w.Axis] == w.Value
		}
		if in {
			kept = append(kept, c)
		}
	}
	ps.auto = PlotAveragedAxes(s.Kind, s.Named(), axes)
	names := append(append([]string{}, s.Facets...), ps.auto...)
	n := 1
	for _, name := range names {
		a, err := plotAxisField(axes, "facets", name)
		if err != nil {
			return nil, err
		}
		ps.facets = append(ps.facets, a)
		n *= len(a.values)
	}
	if err := PlotPanelsFit(s.Facets, ps.auto, axes); err != nil {
		return nil, err
	}
	ps.rows, ps.cols = plotGridShape(ps.facets, n)
	ps.panels = make([]plotPanel, n)
	for k := range n {
		var lines []string
		rest := k
		vals := make([]string, len(ps.facets))
		for i := len(ps.facets) - 1; i >= 0; i-- {
			a := ps.facets[i]
			vals[i] = a.values[rest%len(a.values)]
			rest /= len(a.values)
		}
		for i, a := range ps.facets {
			lines = append(lines, a.name+" = "+plotValueLabel(vals[i]))
		}
		p := plotPanel{title: strings.Join(lines, "\n")}
		for _, c := range kept {
			in := true
			for i, a := range ps.facets {
				in = in && c.Values[a.name] == vals[i]
			}
			if in {
				p.cells = append(p.cells, c)
			}
		}
		ps.panels[k] = p
	}
	return ps, nil
}

// plotGridShape lays n panels out: the combinations of the last facets
// across (as many facets as make at most four columns), the combinations
// of the others down, so that each row and each column holds the other
// facets fixed; a single facet with many values wraps into a squarish grid.
func plotGridShape(facets []plotAxis, n int) (rows, cols int) {
	if n <= 1 {
		return 1, 1
	}
	cols = 1
	for i := len(facets) - 1; i >= 0; i-- {
		if c := cols * len(facets[i].values); c <= 4 {
			cols = c
			continue
		}
		break
	}
	if cols == 1 { // the last facet alone has more than four values
		for cols*cols < n {
			cols++
		}
	}
	return (n + cols - 1) / cols, cols
}

// describe says which slice the plot shows and how it is split, for its
// subtitle: "where acks=all; one panel per log.flush.interval.messages".
func (ps *plotPanels) describe() string {
	var parts []string
	if len(ps.where) > 0 {
		var ws []string
		for _, w := range ps.where {
			ws = append(ws, w.Axis+"="+plotValueLabel(w.Value))
		}
		parts = append(parts, "where "+strings.Join(ws, ", "))
	}
	if len(ps.facets) > 0 {
		var fs []string
		for _, f := range ps.facets {
			fs = append(fs, f.name)
		}
		parts = append(parts, "one panel per "+strings.Join(fs, " × "))
	}
	return strings.Join(parts, "; ")
}

// layout starts a figure of these panels.
func (ps *plotPanels) layout(title, subtitle string) *plotLayout {
	w, h := plotPanelSize(ps.cols)
	if ps.rows*ps.cols > 1 {
		h += vg.Length(len(ps.facets)) * vg.Points(11) // the panel titles
	}
	return &plotLayout{
		title: title, subtitle: subtitle,
		rows: ps.rows, cols: ps.cols,
		panels: make([]*plot.Plot, ps.rows*ps.cols),
		empty:  make([]string, ps.rows*ps.cols),
		panelW: w, panelH: h,
	}
}

// plotValueLabel is how a plot writes an axis value: Kafka's "never" for
// a count or time, Long.MAX_VALUE, is named rather than printed.
func plotValueLabel(v string) string {
	if v == "9223372036854775807" {
		return "Long.MAX_VALUE"
	}
	return v
}
