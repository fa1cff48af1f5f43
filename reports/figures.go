package reports

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
)

// The five figures of a run: each builder returns nil when its plot would
// have no data, which WritePlots then skips.

// panel makes a one-panel figure of the series that have data, or nil when
// none has.
func panel(title, ylabel string, ss []series) (*plot.Plot, error) {
	var keep []series
	data := false
	for _, s := range ss {
		if s.hasData() {
			keep = append(keep, s)
			data = data || !s.reference
		}
	}
	if !data {
		return nil, nil
	}
	return newLinePlot(title, ylabel, keep)
}

func single(name, title, ylabel string, ss []series) (*figure, error) {
	p, err := panel(title, ylabel, ss)
	if p == nil || err != nil {
		return nil, err
	}
	return &figure{name: name, title: title, panels: []*plot.Plot{p}}, nil
}

// bucketXs are the bucket starts of b plus the end of the last bucket: a
// per-bucket figure is drawn as a step that holds across its bucket.
func bucketXs(b buckets) []float64 {
	xs := make([]float64, b.n+1)
	for i := range xs {
		xs[i] = b.start(i)
	}
	return xs
}

// bucketYs repeats the last bucket's value at the end of the last bucket,
// to go with bucketXs.
func bucketYs(ys []float64) []float64 {
	if len(ys) == 0 {
		return ys
	}
	return append(ys, ys[len(ys)-1])
}

func rates(counts []float64, b buckets) []float64 {
	ys := make([]float64, len(counts))
	for i, c := range counts {
		ys[i] = c / b.seconds()
	}
	return bucketYs(ys)
}

func throughputFigure(cs clientSeries) (*figure, error) {
	if !cs.hasSends && !cs.hasPolls {
		return nil, nil
	}
	xs := bucketXs(cs.b)
	var ss []series
	if cs.hasSends {
		ss = append(ss,
			series{name: "acknowledged sends/s", xs: xs, ys: rates(cs.acked, cs.b), step: true},
			series{name: "failed or indeterminate sends/s", xs: xs, ys: rates(cs.unacked, cs.b), step: true})
	}
	if cs.hasPolls {
		ss = append(ss, series{name: "records polled/s", xs: xs, ys: rates(cs.polled, cs.b), step: true})
	}
	title := "Throughput (per " + cs.b.label() + " of simulated time)"
	return single("throughput", title, "per second", ss)
}

func latencyFigure(cs clientSeries) (*figure, error) {
	if !cs.hasLatency {
		return nil, nil
	}
	xs := bucketXs(cs.b)
	p50 := make([]float64, len(cs.latencyMS))
	p99 := make([]float64, len(cs.latencyMS))
	for i, l := range cs.latencyMS {
		p50[i], p99[i] = percentile(l, 0.50), percentile(l, 0.99)
	}
	title := "Produce latency of acknowledged sends (per " + cs.b.label() + ")"
	return single("latency", title, "ms", []series{
		{name: "p50", xs: xs, ys: bucketYs(p50), step: true},
		{name: "p99", xs: xs, ys: bucketYs(p99), step: true},
	})
}

// isrFigure draws ISR size per partition with the replication factor and
// min.insync.replicas as reference lines: an ISR below min.insync.replicas
// means acks=all sends fail with NOT_ENOUGH_REPLICAS.
func isrFigure(r *Run, samples []*Sample) (*figure, error) {
	names := timelinePartitions(r.Timeline)
	if len(names) == 0 {
		return nil, nil
	}
	xs, lines := perPartition(samples, names, func(p *PartitionSample) float64 { return float64(len(p.ISR)) })
	var ss []series
	if len(names) <= maxLines {
		for i, n := range names {
			ss = append(ss, series{name: n, xs: xs, ys: lines[i], step: true})
		}
	} else {
		for _, s := range spread("ISR size", xs, lines) {
			s.step = true
			ss = append(ss, s)
		}
	}
	x0, x1 := xs[0], xs[len(xs)-1]
	if rf := replicationFactor(r); rf > 0 {
		ss = append(ss, hline("replication factor "+strconv.Itoa(rf), x0, x1, float64(rf)))
	}
	if m, ok := minISR(r.Config); ok {
		ss = append(ss, hline("min.insync.replicas "+strconv.Itoa(m), x0, x1, float64(m)))
	}
	title := "ISR size per partition"
	if len(names) > maxLines {
		title = fmt.Sprintf("ISR size across %d partitions", len(names))
	}
	return single("isr", title, "replicas in ISR", ss)
}

// perPartition extracts one value per partition per sample; NaN where the
// partition is absent from a sample.
func perPartition(samples []*Sample, names []string, f func(*PartitionSample) float64) (xs []float64, lines [][]float64) {
	at := make(map[string]int, len(names))
	for i, n := range names {
		at[n] = i
	}
	xs = make([]float64, len(samples))
	lines = make([][]float64, len(names))
	for i := range lines {
		lines[i] = make([]float64, len(samples))
		for j := range lines[i] {
			lines[i][j] = math.NaN()
		}
	}
	for j, s := range samples {
		xs[j] = seconds(s.At)
		for k := range s.Partitions {
			if i, ok := at[s.Partitions[k].Name]; ok {
				lines[i][j] = f(&s.Partitions[k])
			}
		}
	}
	return xs, lines
}

func hline(name string, x0, x1, y float64) series {
	return series{name: name, xs: []float64{x0, x1}, ys: []float64{y, y}, reference: true}
}

// replicationFactor is the largest replica set at the end of the run.
func replicationFactor(r *Run) int {
	rf := 0
	for _, p := range r.Final {
		rf = max(rf, len(p.Replicas))
	}
	return rf
}

// minISR finds min.insync.replicas in the effective configuration, under
// its own name or scoped ("topic.orders.min.insync.replicas"). It gives up
// when scopes disagree, since one reference line would then mislead.
func minISR(cfg []KeyValue) (int, bool) {
	found, val := false, 0
	for _, kv := range cfg {
		if kv.Key != "min.insync.replicas" && !strings.HasSuffix(kv.Key, ".min.insync.replicas") &&
			!strings.HasSuffix(kv.Key, "/min.insync.replicas") {
			continue
		}
		v, err := strconv.Atoi(strings.TrimSpace(kv.Value))
		if err != nil {
			continue
		}
		if found && v != val {
			return 0, false
		}
		found, val = true, v
	}
	return val, found
}

// unavailabilityFigure stacks two panels over the same time axis: the
// partitions without a leader (the cluster's view) and the fraction of
// sends that failed (the clients' view). They have different units, so
// they do not share a y axis.
func unavailabilityFigure(cs clientSeries, samples []*Sample) (*figure, error) {
	f := &figure{name: "unavailability", title: "Unavailability"}
	hasPartitions := false
	for _, s := range samples {
		hasPartitions = hasPartitions || len(s.Partitions) > 0
	}
	if hasPartitions {
		xs, ys := leaderless(samples)
		p, err := panel("Partitions without a leader", "partitions",
			[]series{{name: "leaderless partitions", xs: xs, ys: ys, step: true}})
		if err != nil {
			return nil, err
		}
		if p != nil {
			f.panels = append(f.panels, p)
		}
	}
	if cs.hasSends {
		xs := bucketXs(cs.b)
		ys := make([]float64, cs.b.n)
		for i := range ys {
			done := cs.acked[i] + cs.unacked[i]
			ys[i] = math.NaN()
			if done > 0 {
				ys[i] = cs.unacked[i] / done
			}
		}
		p, err := panel("Sends failed or indeterminate (fraction per "+cs.b.label()+")", "fraction",
			[]series{{name: "failed fraction", xs: xs, ys: bucketYs(ys), step: true}})
		if err != nil {
			return nil, err
		}
		if p != nil {
			p.Y.Max = 1
			f.panels = append(f.panels, p)
		}
	}
	if len(f.panels) == 0 {
		return nil, nil
	}
	// Stacked panels share one time axis.
	xmax := math.Inf(-1)
	for _, p := range f.panels {
		xmax = max(xmax, p.X.Max)
	}
	for _, p := range f.panels {
		p.X.Max = xmax
	}
	return f, nil
}

func lagFigure(r *Run, samples []*Sample) (*figure, error) {
	readers, lag := readerLag(r.history(), samples)
	if len(readers) == 0 || len(lag) == 0 {
		return nil, nil
	}
	xs := make([]float64, len(samples))
	for i, s := range samples {
		xs[i] = seconds(s.At)
	}
	var ss []series
	title := "Consumer lag per reader"
	if len(readers) <= maxLines {
		for i, name := range readers {
			ss = append(ss, series{name: name, xs: xs, ys: lag[i]})
		}
	} else {
		ss = spread("lag", xs, lag)
		title = fmt.Sprintf("Consumer lag across %d readers", len(readers))
	}
	return single("lag", title, "records behind high watermark", ss)
}
