package scenarios

import (
	"fmt"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"kafkasim/checker"
)

// A sweep file: a base scenario, axes, seeds per cell, plots.
// It is read as strictly as a scenario, with the same file:line:column:
// key errors.

// SweepFile is a loaded sweep file.
type SweepFile struct {
	Name string
	// BasePath is the base scenario's path (resolved against the sweep
	// file's folder); Base the scenario loaded from it.
	BasePath string
	Base     *Scenario
	Seeds    int
	Axes     []SweepAxis
	Plots    []SweepPlot
	File     string
}

// SweepAxis is one axis: a Kafka key or a kafkasim field, and its values.
type SweepAxis struct {
	Name   string
	Values []string
	Line   int
}

// SweepPlot is one plot request.
type SweepPlot struct {
	Kind          string
	X, Y, Z       string
	Label, Series []string
	// Facets are axes drawn as small multiples: one panel per combination
	// of their values. An axis with more than one value that the plot
	// neither draws, facets nor fixes with Where is added to Facets when
	// the plot is drawn (see PlotAveragedAxes): a plot never averages over
	// configurations.
	Facets []string
	// Where fixes axes to one value each: the plot shows that slice of the
	// grid and says so.
	Where []SweepFixed
	// Title, when set, replaces the plot's derived title: the lesson the
	// plot teaches, say.
	Title string
	Line  int
}

// SweepFixed is one axis fixed to one of its values by a plot's where.
type SweepFixed struct{ Axis, Value string }

// SweepPanelsMax is how many panels (combinations of facet values) a plot
// may have: beyond it the panels are too small to read, and the loader asks
// for a where or fewer facets instead.
const SweepPanelsMax = 16

// SeedAxis is the one axis a plot may average over without drawing it: its
// cells differ only in the seeds they run, and averaging over seeds is what
// seeds are for.
const SeedAxis = "seed-offset"

// PlotAveragedAxes lists, in the sweep's order, the axes a plot would
// average over: those with more than one value that it does not name
// (drawn, faceted or fixed), except the seed axis. A pareto plot draws one
// point per cell and so averages over nothing.
func PlotAveragedAxes(kind string, named []string, axes []SweepAxis) []string {
	if kind == "pareto" {
		return nil
	}
	var out []string
	for _, a := range axes {
		if a.Name == SeedAxis || contains(named, a.Name) || len(a.Values) < 2 {
			continue
		}
		out = append(out, a.Name)
	}
	return out
}

// Named lists the names a plot gives in x, y, series, facets and where:
// every axis it draws, splits into panels or fixes (and, for x and y, any
// metric).
func (p SweepPlot) Named() []string {
	out := []string{p.X, p.Y}
	out = append(out, p.Series...)
	out = append(out, p.Facets...)
	for _, w := range p.Where {
		out = append(out, w.Axis)
	}
	return out
}

// Limits of a sweep, so that a typo cannot make one that never ends.
const (
	SweepSeedsMax = 10_000
	SweepCellsMax = 10_000
)

// SweepFields are kafkasim's own axes (besides every Kafka key).
var SweepFields = []string{"nemesis-intensity", "duration", "settle", "controllers", "brokers", "replication.factor",
	"partitions", "rate", "keys", "seed-offset"}

// SweepMetrics are what plots may show, besides axes and anomaly types.
var SweepMetrics = []string{"availability", "lost-acked-fraction", "lost-acked", "runs-losing-acked", "unavailable-seconds",
	"p99-produce-latency-ms", "records-per-second", "bytes-per-record", "violations"}

// LoadSweepFile reads and validates a sweep file and its base scenario.
func LoadSweepFile(path string) (*SweepFile, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	root, err := parseDocument(path, data)
	if err != nil {
		return nil, err
	}
	r := newReader(path, len(data))
	sw := &SweepFile{Seeds: 10, File: path}
	var baseField, plotsField field
	hasBase, hasPlots := false, false
	for _, g := range r.fields(root, "", []string{"name", "base", "seeds", "axes", "plots"}) {
		switch g.name {
		case "name":
			sw.Name = r.name(g, "sweep name")
		case "base":
			baseField, hasBase = g, true
			sw.BasePath = r.str(g)
		case "seeds":
			if n, ok := r.int(g, 1, SweepSeedsMax); ok {
				sw.Seeds = int(n)
			}
		case "axes":
			r.sweepAxes(g, sw)
		case "plots":
			// Read once the axes are known, wherever the file puts them.
			plotsField, hasPlots = g, true
		}
	}
	if hasPlots {
		r.sweepPlots(plotsField, sw)
	}
	if sw.Name == "" && r.failures == 0 {
		sw.Name = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".yaml"), ".yml")
		if !safeName.MatchString(sw.Name) {
			r.fail(root, "name", "missing, and the file name cannot stand in for it")
		}
	}
	if !hasBase {
		r.fail(root, "base", "missing: the scenario the sweep varies, relative to this file")
	}
	if r.failures > 0 {
		return nil, r.report()
	}
	if !filepath.IsAbs(sw.BasePath) {
		sw.BasePath = filepath.Join(filepath.Dir(path), sw.BasePath)
	}
	base, err := LoadFile(sw.BasePath)
	if err != nil {
		return nil, &Error{File: path, Line: baseField.key.Line, Column: baseField.key.Column, Key: "base", Msg: err.Error()}
	}
	sw.Base = base
	cells := 1
	for _, a := range sw.Axes {
		cells *= len(a.Values)
		if cells > SweepCellsMax {
			return nil, &Error{File: path, Line: a.Line, Key: "axes", Msg: fmt.Sprintf("the grid has more than %d cells", SweepCellsMax)}
		}
	}
	// Every axis value must apply to the base: a key nothing uses, or a
	// value out of range, is an error now, not a failed run later.
	for _, a := range sw.Axes {
		for _, v := range a.Values {
			c := *base
			c.Topics = append([]Topic(nil), base.Topics...)
			c.Producers = append([]Producer(nil), base.Producers...)
			c.Consumers = append([]Consumer(nil), base.Consumers...)
			if err := c.Apply(a.Name, v); err != nil {
				return nil, &Error{File: path, Line: a.Line, Key: "axes." + a.Name, Msg: err.Error()}
			}
		}
	}
	return sw, nil
}

func (r *reader) sweepAxes(f field, sw *SweepFile) {
	for _, g := range r.fields(f.value, f.path, nil) {
		ok := contains(SweepFields, g.name) || knownKafkaKey(g.name)
		if !ok {
			msg := fmt.Sprintf("not a Kafka key kafkasim models, nor one of %s", strings.Join(SweepFields, ", "))
			if s := suggest(g.name, append(append([]string{}, SweepFields...), allKafkaKeys()...)); s != "" {
				msg = fmt.Sprintf("unknown axis (did you mean %q?)", s)
			}
			r.fail(g.key, g.path, "%s", msg)
			continue
		}
		vals := r.strings(g)
		if len(vals) == 0 {
			r.fail(nodeOr(g.value, g.key), g.path, "an axis needs at least one value")
			continue
		}
		seen := map[string]int{}
		dup := false
		for j, v := range vals {
			if k, ok := seen[v]; ok {
				r.fail(g.value, index(g.path, j), "%q is value %d too: a cell would run twice", v, k)
				dup = true
				break
			}
			seen[v] = j
		}
		if dup {
			continue
		}
		sw.Axes = append(sw.Axes, SweepAxis{Name: g.name, Values: vals, Line: g.key.Line})
	}
}

func (r *reader) sweepPlots(f field, sw *SweepFile) {
	axes := map[string]SweepAxis{}
	var axisNames []string
	for _, a := range sw.Axes {
		axes[a.Name] = a
		axisNames = append(axisNames, a.Name)
	}
	isMetric := func(v string) bool { return contains(SweepMetrics, v) || isAnomalyType(v) }
	for i, item := range r.list(f) {
		if item == nil {
			continue
		}
		path := index(f.path, i)
		p := SweepPlot{Line: item.Line}
		failuresBefore := r.failures
		var whereNode *yaml.Node
		fieldNode := map[string]*yaml.Node{}
		for _, g := range r.fields(item, path, []string{"kind", "x", "y", "z", "label", "series", "facets", "where", "title"}) {
			fieldNode[g.name] = g.value
			switch g.name {
			case "kind":
				p.Kind = r.str(g)
				if !contains([]string{"pareto", "heatmap", "lines"}, p.Kind) {
					r.fail(g.value, g.path, "want pareto, heatmap or lines, got %q", p.Kind)
				}
			case "x", "y", "z":
				v := r.str(g)
				if _, ok := axes[v]; !ok && !isMetric(v) {
					r.fail(g.value, g.path, "%q is neither an axis of this sweep (%s) nor a metric (%s, or an anomaly type)",
						v, strings.Join(axisNames, ", "), strings.Join(SweepMetrics, ", "))
				}
				switch g.name {
				case "x":
					p.X = v
				case "y":
					p.Y = v
				default:
					p.Z = v
				}
			case "label", "series", "facets":
				for j, v := range r.strings(g) {
					if _, ok := axes[v]; !ok {
						r.fail(g.value, index(g.path, j), "%q is not an axis of this sweep (%s)", v, strings.Join(axisNames, ", "))
						continue
					}
					switch g.name {
					case "label":
						p.Label = append(p.Label, v)
					case "series":
						p.Series = append(p.Series, v)
					default:
						p.Facets = append(p.Facets, v)
					}
				}
			case "where":
				whereNode = g.value
				for _, w := range r.fields(g.value, g.path, nil) {
					a, ok := axes[w.name]
					if !ok {
						r.fail(w.key, w.path, "%q is not an axis of this sweep (%s)", w.name, strings.Join(axisNames, ", "))
						continue
					}
					v, ok := r.scalar(w)
					if !ok {
						continue
					}
					if !contains(a.Values, v) {
						r.fail(w.value, w.path, "%q is not a value of axis %s (%s)", v, w.name, strings.Join(a.Values, ", "))
						continue
					}
					p.Where = append(p.Where, SweepFixed{Axis: w.name, Value: v})
				}
			case "title":
				p.Title = r.str(g)
			}
		}
		if r.failures > failuresBefore {
			sw.Plots = append(sw.Plots, p)
			continue // the plot is already wrong where it says so
		}
		at := func(key string) *yaml.Node {
			if n := fieldNode[key]; n != nil {
				return n
			}
			return item
		}
		isAxis := func(v string) bool { _, ok := axes[v]; return ok }
		switch {
		case p.Kind == "":
			r.fail(item, path+".kind", "missing: pareto, heatmap or lines")
		case p.X == "" || p.Y == "":
			r.fail(item, path, "a plot needs x and y")
		case p.Kind == "heatmap" && p.Z == "":
			r.fail(item, path+".z", "a heatmap needs z: the metric shown as colour")
		case p.Kind == "pareto" && !isMetric(p.X):
			r.fail(at("x"), path+".x", "a pareto plot's x is a metric, not the axis %q", p.X)
		case p.Kind == "pareto" && !isMetric(p.Y):
			r.fail(at("y"), path+".y", "a pareto plot's y is a metric, not the axis %q", p.Y)
		case p.Kind == "heatmap" && !isAxis(p.X):
			r.fail(at("x"), path+".x", "a heatmap's x is an axis, not the metric %q", p.X)
		case p.Kind == "heatmap" && !isAxis(p.Y):
			r.fail(at("y"), path+".y", "a heatmap's y is an axis, not the metric %q", p.Y)
		case p.Kind == "heatmap" && !isMetric(p.Z):
			r.fail(at("z"), path+".z", "a heatmap's z is a metric, not the axis %q", p.Z)
		case p.Kind == "lines" && !isAxis(p.X):
			r.fail(at("x"), path+".x", "a lines plot's x is an axis, not the metric %q", p.X)
		case p.Kind == "lines" && !isMetric(p.Y):
			r.fail(at("y"), path+".y", "a lines plot's y is a metric, not the axis %q", p.Y)
		default:
			r.sweepPlotAxes(p, path, item, whereNode, sw.Axes)
		}
		sw.Plots = append(sw.Plots, p)
	}
}

// sweepPlotAxes checks that a plot names each axis once (drawn, faceted or
// fixed) and that its panels stay few enough to read.
func (r *reader) sweepPlotAxes(p SweepPlot, path string, item, whereNode *yaml.Node, axes []SweepAxis) {
	role := map[string]string{}
	claim := func(axis, as string) bool {
		if prev, ok := role[axis]; ok {
			n := item
			if as == "fixed by where" && whereNode != nil {
				n = whereNode
			}
			r.fail(n, path, "axis %s is %s and %s: name each axis once", axis, prev, as)
			return false
		}
		role[axis] = as
		return true
	}
	if p.Kind != "pareto" { // a pareto plot's x and y are metrics
		if !claim(p.X, "x") {
			return
		}
		// A heatmap of an axis against itself draws its diagonal.
		if p.Y != p.X && !claim(p.Y, "y") {
			return
		}
	}
	for _, s := range p.Series {
		if !claim(s, "a series") {
			return
		}
	}
	for _, f := range p.Facets {
		if !claim(f, "a facet") {
			return
		}
	}
	for _, w := range p.Where {
		if !claim(w.Axis, "fixed by where") {
			return
		}
	}
	for _, l := range p.Label {
		if role[l] == "fixed by where" || role[l] == "a facet" {
			r.fail(item, path+".label", "axis %s is %s: every point of a panel has the same value, so it cannot tell points apart", l, role[l])
			return
		}
	}
	if err := PlotPanelsFit(p.Facets, PlotAveragedAxes(p.Kind, p.Named(), axes), axes); err != nil {
		r.fail(item, path, "%v", err)
	}
}

// PlotPanelsFit says why a plot would draw too many panels to read (nil
// when it would not): it draws one per combination of the values of its
// facets and of the axes it would otherwise average over (averaged, see
// PlotAveragedAxes), at most SweepPanelsMax.
func PlotPanelsFit(facets, averaged []string, axes []SweepAxis) error {
	panels := 1
	for _, a := range axes {
		if contains(facets, a.Name) || contains(averaged, a.Name) {
			panels *= len(a.Values)
		}
	}
	if panels <= SweepPanelsMax {
		return nil
	}
	msg := fmt.Sprintf("%d panels is more than %d", panels, SweepPanelsMax)
	if len(averaged) > 0 {
		msg = fmt.Sprintf("the plot does not draw %s, and a plot never averages over configurations: "+
			"it would draw one panel per combination of their values (%s)", strings.Join(averaged, ", "), msg)
	}
	return fmt.Errorf("%s; fix axes with where: {axis: value}, or draw them as x, y or series", msg)
}

func isAnomalyType(s string) bool {
	for _, t := range checker.AnomalyTypes {
		if t == s {
			return true
		}
	}
	return false
}
