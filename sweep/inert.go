package sweep

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// InertNotes warns about plots that draw a metric along an axis that moved
// it in no run: every pair of runs that differ only in that axis (same
// seed, same value of every other axis) measured exactly the same value.
// Such a plot shows nothing along the axis, and a reader would take the
// flat line for a finding about Kafka rather than about the model (bytes
// cost no time in kafkasim's network yet, so compression.type moves no
// latency). The check is on the data, so it needs no list of what the
// model ignores and never goes stale.
func InertNotes(res *Result, specs []PlotSpec) []string {
	values := map[string]map[string]string{}
	for _, c := range res.Cells {
		values[c.ID] = c.Values
	}
	var recs []RunRecord
	for _, c := range res.Cells {
		recs = append(recs, res.Records[c.ID]...)
	}
	names := plotNames(specs)
	seen := map[string]bool{}
	var out []string
	for i, s := range specs {
		var metric string
		var drawn []string
		switch s.Kind {
		case "heatmap":
			metric, drawn = s.Z, []string{s.X, s.Y}
		case "lines":
			metric, drawn = s.Y, append([]string{s.X}, s.Series...)
		default:
			continue
		}
		for _, axis := range drawn {
			a, ok := plotFindAxis(res.Axes, axis)
			if !ok || len(a.values) < 2 || seen[axis+"\x00"+metric] {
				continue
			}
			if inert(res.Axes, values, recs, axis, metric) {
				seen[axis+"\x00"+metric] = true
				out = append(out, fmt.Sprintf("plot %s: %s does not move %s in any run (runs that differ only in %s, seed by seed, measured the same): "+
					"the model does not let %s change %s here, so the plot shows nothing along it",
					names[i], axis, metric, axis, axis, metric))
			}
		}
	}
	return out
}

// inert reports whether, in every group of runs that differ only in axis,
// metric has one value, with at least one such group of two runs or more.
func inert(axes []Axis, values map[string]map[string]string, recs []RunRecord, axis, metric string) bool {
	groups := map[string][]float64{}
	for _, r := range recs {
		v, ok := values[r.Cell]
		if !ok {
			continue
		}
		m, ok := r.Metrics[metric]
		if !ok {
			return false
		}
		var key []string
		for _, a := range axes {
			if a.Name != axis {
				key = append(key, a.Name+"="+v[a.Name])
			}
		}
		key = append(key, "seed="+strconv.FormatUint(r.Seed, 10))
		k := strings.Join(key, ",")
		groups[k] = append(groups[k], m)
	}
	keys := make([]string, 0, len(groups))
	for k := range groups { // kafkasim:orderless: sorted below
		keys = append(keys, k)
	}
	sort.Strings(keys)
	compared := false
	for _, k := range keys {
		g := groups[k]
		for _, m := range g[1:] {
			if m != g[0] {
				return false
			}
		}
		compared = compared || len(g) > 1
	}
	return compared
}
