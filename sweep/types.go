// Package sweep runs a grid of configurations × seeds (SPEC.md §6) and
// aggregates what each configuration costs: durability against
// availability, latency, throughput.
package sweep

import "kafkasim/scenarios"

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
	Runs    int
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
	// Title, when empty, is derived from the kind and the fields.
	Title string
}

// Metrics lists the metric names every run reports, besides anomaly counts;
// the sweep file's loader checks plots against the same list.
var Metrics = scenarios.SweepMetrics
