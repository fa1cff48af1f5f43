// Package sweep runs a grid of configurations × seeds (a sweep file) and
// aggregates what each configuration costs: durability against
// availability, latency, throughput.
package sweep

// Axis is one dimension of the grid: a Kafka configuration key (applied to
// every broker, topic, producer or consumer it belongs to) or one of
// kafkasim's own fields, with the values to try, as written.
type Axis struct {
	Name   string
	Values []string
}

// Stat is one metric of a cell: the mean over its runs and a 95% confidence
// interval [Lo, Hi] (Student's t; Lo = Hi = Mean for a single run).
type Stat struct {
	Mean, Lo, Hi float64
	N            int
}

// Cell is one configuration of the grid and what its runs measured.
type Cell struct {
	// ID is a stable name for the cell ("acks=1,min.insync.replicas=2").
	ID string
	// Values holds the cell's value of each axis, by axis name.
	Values map[string]string
	// Runs is how many runs finished; Invalid, when set, says why the
	// configuration could not run at all (min.insync.replicas above the
	// replication factor, say), and Metrics is empty.
	Runs int
	// Failed is how many of those runs did not pass: an expectation of the
	// base failed (verdict fail or liveness) or the simulator did (crash).
	Failed  int
	Invalid string
	// Metrics by name: availability, lost-acked-fraction, lost-acked,
	// unavailable-seconds, p99-produce-latency-ms, records-per-second,
	// bytes-per-record, violations, and each anomaly type's count.
	Metrics map[string]Stat
}

// PlotSpec is one plot of the sweep file.
type PlotSpec struct {
	Kind   string   // pareto, heatmap or lines
	X, Y   string   // axis names or metric names
	Z      string   // heatmap: the metric shown as colour
	Label  []string // pareto: axes that name each point
	Series []string // lines: axes that make one line each
	// Facets are axes drawn as small multiples, one panel per combination
	// of their values. Every other axis with more than one value that the
	// plot neither draws nor fixes with Where is faceted too: a plot never
	// averages over configurations (only over seed-offset, a seed axis).
	Facets []string
	// Where fixes axes to one value each: the plot shows that slice.
	Where []Fixed
	// Title, when empty, is derived from the kind and the fields.
	Title string
}

// Fixed is an axis fixed to one value by a plot's where.
type Fixed = SweepFixed

// named lists the axes the spec names, as SweepPlot.Named.
func (s PlotSpec) named() []string {
	return SweepPlot{Kind: s.Kind, X: s.X, Y: s.Y, Series: s.Series, Facets: s.Facets, Where: s.Where}.Named()
}

// PlotSpecs are a sweep file's plots.
func PlotSpecs(sw *SweepFile) []PlotSpec {
	var out []PlotSpec
	for _, p := range sw.Plots {
		out = append(out, PlotSpec{Kind: p.Kind, X: p.X, Y: p.Y, Z: p.Z, Label: p.Label, Series: p.Series,
			Facets: p.Facets, Where: p.Where, Title: p.Title})
	}
	return out
}

// RunsLosingAcked is the metric that is 1 for a run that lost at least one
// acknowledged write and 0 otherwise: a cell's mean is the fraction of its
// runs that lost any, with a Wilson interval. Loss under a fault schedule is
// rare and large, so this says more than the mean lost fraction.
const RunsLosingAcked = "runs-losing-acked"

// Metrics lists the metric names every run reports, besides anomaly counts;
// the sweep file's loader checks plots against the same list.
var Metrics = SweepMetrics
