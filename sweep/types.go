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
	// Line is where the sweep file gives the axis (0: not from a file).
	Line int
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
	// Seed is the cell's first seed (the base's, moved by a seed-offset
	// axis): its runs are Seed, Seed+1, ... (0 for a cell that cannot run).
	Seed uint64
	// Metrics by name: availability, lost-acked-fraction, lost-acked,
	// unavailable-seconds, p99-produce-latency-ms, records-per-second,
	// bytes-per-record, violations, each anomaly type's count, and with a
	// consumer group the GroupMetrics, with a processor the
	// ProcessorMetrics.
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
	// plot neither draws nor fixes with Where is faceted too (see
	// PlotAveragedAxes): a plot never averages over configurations (only
	// over seed-offset, a seed axis).
	Facets []string
	// Where fixes axes to one value each: the plot shows that slice of the
	// grid and says so.
	Where []Fixed
	// Title, when set, replaces the title derived from the kind and the
	// fields: the lesson the plot teaches, say.
	Title string
	// Line is where the sweep file gives the plot (0: not from a file).
	Line int
}

// Fixed is one axis fixed to one of its values by a plot's where.
type Fixed struct{ Axis, Value string }

// Named lists the names a plot gives in x, y, series, facets and where:
// every axis it draws, splits into panels or fixes (and, for x and y, any
// metric).
func (p PlotSpec) Named() []string {
	out := []string{p.X, p.Y}
	out = append(out, p.Series...)
	out = append(out, p.Facets...)
	for _, w := range p.Where {
		out = append(out, w.Axis)
	}
	return out
}

// RunsLosingAcked is the metric that is 1 for a run that lost at least one
// acknowledged write and 0 otherwise: a cell's mean is the fraction of its
// runs that lost any, with a Wilson interval. Loss under a fault schedule is
// rare and large, so this says more than the mean lost fraction.
const RunsLosingAcked = "runs-losing-acked"
