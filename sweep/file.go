package sweep

import (
	"cmp"
	"fmt"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"kafkasim/checker"
	"kafkasim/scenarios"
)

// A sweep file: a base scenario, axes, seeds per cell, plots.
// It is read as strictly as a scenario, with the same file:line:column:
// key errors (scenarios.ReadYAML reads both).

// File is a loaded sweep file.
type File struct {
	Name string
	// BasePath is the base scenario's path (resolved against the sweep
	// file's folder); Base the scenario loaded from it.
	BasePath string
	Base     *scenarios.Scenario
	Seeds    int
	Axes     []Axis
	Plots    []PlotSpec
	File     string
}

// PanelsMax is how many panels (combinations of facet values) a plot
// may have: beyond it the panels are too small to read, and the loader asks
// for a where or fewer facets instead.
const PanelsMax = 16

// SeedAxis is the one axis a plot may average over without drawing it: its
// cells differ only in the seeds they run, and averaging over seeds is what
// seeds are for.
const SeedAxis = "seed-offset"

// PlotAveragedAxes lists, in the sweep's order, the axes a plot would
// average over: those with more than one value that it does not name
// (drawn, faceted or fixed), except the seed axis. A pareto plot draws one
// point per cell and so averages over nothing.
func PlotAveragedAxes(kind string, named []string, axes []Axis) []string {
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

// Limits of a sweep, so that a typo cannot make one that never ends.
const (
	SeedsMax = 10_000
	CellsMax = 10_000
)

// Fields are kafkasim's own axes (besides every Kafka key).
var Fields = []string{"nemesis-intensity", "duration", "settle", "controllers", "brokers", "replication.factor",
	"partitions", "rate", "keys", "seed-offset", "commit", "workers", "workers-commit", "side-effects", "static",
	"exactly-once", "commit-interval", "transactions.records", "transactions.abort"}

// Metrics are the metric names every run reports, besides anomaly counts:
// what plots may show, besides axes and anomaly types.
var Metrics = []string{"availability", "lost-acked-fraction", "lost-acked", "runs-losing-acked", "unavailable-seconds",
	"p99-produce-latency-ms", "records-per-second", "bytes-per-record", "violations"}

// Load reads and validates a sweep file and its base scenario.
func Load(path string) (*File, error) {
	r, root, err := scenarios.ReadYAML(path)
	if err != nil {
		return nil, err
	}
	sw := &File{Seeds: 10, File: path}
	var baseField, plotsField scenarios.YAMLField
	hasBase, hasPlots := false, false
	for _, g := range r.Fields(root, "", []string{"name", "base", "seeds", "axes", "plots"}) {
		switch g.Name {
		case "name":
			sw.Name = r.Name(g, "sweep name")
		case "base":
			baseField, hasBase = g, true
			sw.BasePath = r.Str(g)
		case "seeds":
			if n, ok := r.Int(g, 1, SeedsMax); ok {
				sw.Seeds = int(n)
			}
		case "axes":
			readAxes(r, g, sw)
		case "plots":
			// Read once the axes are known, wherever the file puts them.
			plotsField, hasPlots = g, true
		}
	}
	if hasPlots {
		readPlots(r, plotsField, sw)
	}
	if sw.Name == "" && r.Failures() == 0 {
		sw.Name = strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".yaml"), ".yml")
		if !scenarios.IsSafeName(sw.Name) {
			r.Fail(root, "name", "missing, and the file name cannot stand in for it")
		}
	}
	if !hasBase {
		r.Fail(root, "base", "missing: the scenario the sweep varies, relative to this file")
	}
	if r.Failures() > 0 {
		return nil, r.Report()
	}
	if !filepath.IsAbs(sw.BasePath) {
		sw.BasePath = filepath.Join(filepath.Dir(path), sw.BasePath)
	}
	base, err := scenarios.LoadFile(sw.BasePath)
	if err != nil {
		return nil, &scenarios.Error{File: path, Line: baseField.Key.Line, Column: baseField.Key.Column, Key: "base", Msg: err.Error()}
	}
	sw.Base = base
	if !hasGroup(base) {
		// Only a run with a group measures them: the plot would find no
		// cell reporting the metric after the whole sweep ran.
		for _, p := range sw.Plots {
			for _, m := range []string{p.X, p.Y, p.Z} {
				if contains(GroupMetrics, m) {
					return nil, &scenarios.Error{File: path, Line: p.Line, Key: "plots",
						Msg: fmt.Sprintf("%s is a consumer group's metric, and the base has no consumer with a group", m)}
				}
			}
		}
	}
	if !hasProcessor(base) {
		for _, p := range sw.Plots {
			for _, m := range []string{p.X, p.Y, p.Z} {
				if contains(ProcessorMetrics, m) {
					return nil, &scenarios.Error{File: path, Line: p.Line, Key: "plots",
						Msg: fmt.Sprintf("%s is a processor's metric, and the base has no processor", m)}
				}
			}
		}
	}
	cells := 1
	for _, a := range sw.Axes {
		cells *= len(a.Values)
		if cells > CellsMax {
			return nil, &scenarios.Error{File: path, Line: a.Line, Key: "axes", Msg: fmt.Sprintf("the grid has more than %d cells", CellsMax)}
		}
	}
	// Every axis value must apply to the base: a key nothing uses, or a
	// value out of range, is an error now, not a failed run later.
	for _, a := range sw.Axes {
		for _, v := range a.Values {
			c := *base
			c.Topics = append([]scenarios.Topic(nil), base.Topics...)
			c.Producers = append([]scenarios.Producer(nil), base.Producers...)
			c.Consumers = append([]scenarios.Consumer(nil), base.Consumers...)
			if err := c.Apply(a.Name, v); err != nil {
				return nil, &scenarios.Error{File: path, Line: a.Line, Key: "axes." + a.Name, Msg: err.Error()}
			}
		}
	}
	return sw, nil
}

func readAxes(r *scenarios.YAMLReader, f scenarios.YAMLField, sw *File) {
	for _, g := range r.Fields(f.Value, f.Path, nil) {
		ok := contains(Fields, g.Name) || scenarios.IsKafkaKey(g.Name)
		if !ok {
			msg := fmt.Sprintf("not a Kafka key kafkasim models, nor one of %s", strings.Join(Fields, ", "))
			if s := scenarios.Suggest(g.Name, append(append([]string{}, Fields...), scenarios.KafkaKeyNames()...)); s != "" {
				msg = fmt.Sprintf("unknown axis (did you mean %q?)", s)
			}
			r.Fail(g.Key, g.Path, "%s", msg)
			continue
		}
		vals := r.Strings(g)
		if len(vals) == 0 {
			r.Fail(cmp.Or(g.Value, g.Key), g.Path, "an axis needs at least one value")
			continue
		}
		seen := map[string]int{}
		dup := false
		for j, v := range vals {
			if k, ok := seen[v]; ok {
				r.Fail(g.Value, scenarios.ItemPath(g.Path, j), "%q is value %d too: a cell would run twice", v, k)
				dup = true
				break
			}
			seen[v] = j
		}
		if dup {
			continue
		}
		sw.Axes = append(sw.Axes, Axis{Name: g.Name, Values: vals, Line: g.Key.Line})
	}
}

func readPlots(r *scenarios.YAMLReader, f scenarios.YAMLField, sw *File) {
	axes := map[string]Axis{}
	var axisNames []string
	for _, a := range sw.Axes {
		axes[a.Name] = a
		axisNames = append(axisNames, a.Name)
	}
	isMetric := func(v string) bool {
		return contains(Metrics, v) || contains(GroupMetrics, v) || contains(ProcessorMetrics, v) || isAnomalyType(v)
	}
	for i, item := range r.List(f) {
		if item == nil {
			continue
		}
		path := scenarios.ItemPath(f.Path, i)
		p := PlotSpec{Line: item.Line}
		failuresBefore := r.Failures()
		var whereNode *yaml.Node
		fieldNode := map[string]*yaml.Node{}
		for _, g := range r.Fields(item, path, []string{"kind", "x", "y", "z", "label", "series", "facets", "where", "title"}) {
			fieldNode[g.Name] = g.Value
			switch g.Name {
			case "kind":
				p.Kind = r.Str(g)
				if !contains([]string{"pareto", "heatmap", "lines"}, p.Kind) {
					r.Fail(g.Value, g.Path, "want pareto, heatmap or lines, got %q", p.Kind)
				}
			case "x", "y", "z":
				v := r.Str(g)
				if _, ok := axes[v]; !ok && !isMetric(v) {
					r.Fail(g.Value, g.Path, "%q is neither an axis of this sweep (%s) nor a metric (%s, or an anomaly type)",
						v, strings.Join(axisNames, ", "), strings.Join(append(append(append([]string{}, Metrics...), GroupMetrics...), ProcessorMetrics...), ", "))
				}
				switch g.Name {
				case "x":
					p.X = v
				case "y":
					p.Y = v
				default:
					p.Z = v
				}
			case "label", "series", "facets":
				for j, v := range r.Strings(g) {
					if _, ok := axes[v]; !ok {
						r.Fail(g.Value, scenarios.ItemPath(g.Path, j), "%q is not an axis of this sweep (%s)", v, strings.Join(axisNames, ", "))
						continue
					}
					switch g.Name {
					case "label":
						p.Label = append(p.Label, v)
					case "series":
						p.Series = append(p.Series, v)
					default:
						p.Facets = append(p.Facets, v)
					}
				}
			case "where":
				whereNode = g.Value
				for _, w := range r.Fields(g.Value, g.Path, nil) {
					a, ok := axes[w.Name]
					if !ok {
						r.Fail(w.Key, w.Path, "%q is not an axis of this sweep (%s)", w.Name, strings.Join(axisNames, ", "))
						continue
					}
					v, ok := r.Scalar(w)
					if !ok {
						continue
					}
					if !contains(a.Values, v) {
						r.Fail(w.Value, w.Path, "%q is not a value of axis %s (%s)", v, w.Name, strings.Join(a.Values, ", "))
						continue
					}
					p.Where = append(p.Where, Fixed{Axis: w.Name, Value: v})
				}
			case "title":
				p.Title = r.Str(g)
			}
		}
		if r.Failures() > failuresBefore {
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
			r.Fail(item, path+".kind", "missing: pareto, heatmap or lines")
		case p.X == "" || p.Y == "":
			r.Fail(item, path, "a plot needs x and y")
		case p.Kind == "heatmap" && p.Z == "":
			r.Fail(item, path+".z", "a heatmap needs z: the metric shown as colour")
		case p.Kind == "pareto" && !isMetric(p.X):
			r.Fail(at("x"), path+".x", "a pareto plot's x is a metric, not the axis %q", p.X)
		case p.Kind == "pareto" && !isMetric(p.Y):
			r.Fail(at("y"), path+".y", "a pareto plot's y is a metric, not the axis %q", p.Y)
		case p.Kind == "heatmap" && !isAxis(p.X):
			r.Fail(at("x"), path+".x", "a heatmap's x is an axis, not the metric %q", p.X)
		case p.Kind == "heatmap" && !isAxis(p.Y):
			r.Fail(at("y"), path+".y", "a heatmap's y is an axis, not the metric %q", p.Y)
		case p.Kind == "heatmap" && !isMetric(p.Z):
			r.Fail(at("z"), path+".z", "a heatmap's z is a metric, not the axis %q", p.Z)
		case p.Kind == "lines" && !isAxis(p.X):
			r.Fail(at("x"), path+".x", "a lines plot's x is an axis, not the metric %q", p.X)
		case p.Kind == "lines" && !isMetric(p.Y):
			r.Fail(at("y"), path+".y", "a lines plot's y is a metric, not the axis %q", p.Y)
		default:
			checkPlotAxes(r, p, path, item, whereNode, sw.Axes)
		}
		sw.Plots = append(sw.Plots, p)
	}
}

// checkPlotAxes checks that a plot names each axis once (drawn, faceted or
// fixed) and that its panels stay few enough to read.
func checkPlotAxes(r *scenarios.YAMLReader, p PlotSpec, path string, item, whereNode *yaml.Node, axes []Axis) {
	role := map[string]string{}
	claim := func(axis, as string) bool {
		if prev, ok := role[axis]; ok {
			n := item
			if as == "fixed by where" && whereNode != nil {
				n = whereNode
			}
			r.Fail(n, path, "axis %s is %s and %s: name each axis once", axis, prev, as)
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
			r.Fail(item, path+".label", "axis %s is %s: every point of a panel has the same value, so it cannot tell points apart", l, role[l])
			return
		}
	}
	if err := PlotPanelsFit(p.Facets, PlotAveragedAxes(p.Kind, p.Named(), axes), axes); err != nil {
		r.Fail(item, path, "%v", err)
	}
}

// PlotPanelsFit says why a plot would draw too many panels to read (nil
// when it would not): it draws one per combination of the values of its
// facets and of the axes it would otherwise average over (averaged, see
// PlotAveragedAxes), at most PanelsMax.
func PlotPanelsFit(facets, averaged []string, axes []Axis) error {
	panels := 1
	for _, a := range axes {
		if contains(facets, a.Name) || contains(averaged, a.Name) {
			panels *= len(a.Values)
		}
	}
	if panels <= PanelsMax {
		return nil
	}
	msg := fmt.Sprintf("%d panels is more than %d", panels, PanelsMax)
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
