package reports

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The figures of a run. Each builder returns nil when its plot would
// have no data, which WritePlots then skips. Every figure shares the time
// axis of the run (0 to its end, as the report's timeline) and its marks:
// the phases, the faults, the final reads.

// runView is what the figures of one run are built from.
type runView struct {
	r       *Run
	samples []*Sample
	cs      clientSeries
	// moves are what the readers' polls moved, gathered in the client
	// series' pass (the lag plot's).
	moves *readerMoves
	// finalProcs are the processes of the final reads: their polls are
	// the runner's check of what the log holds, not the scenario's
	// consumers, and are drawn apart from them.
	finalProcs map[string]bool
	end        time.Duration
	x          axis
	marks      runMarks
}

func newRunView(r *Run) *runView {
	h := r.history()
	// The final reads, the client series and the readers' moves in one
	// pass over the history's heads and one over its operations with the
	// polls' records: the final reads' processes are known before the
	// second, which counts their polls apart.
	fr := newFinalReads()
	v := &runView{r: r, samples: sortedSamples(r.Timeline), finalProcs: fr.procs, moves: newReaderMoves()}
	v.cs = newClientSeries(h, fr.procs, fr.add, v.moves.add)
	final := fr.start()
	v.end = runEnd(r, v.samples, v.cs)
	v.x = timeAxis(v.end)
	v.marks = newRunMarks(r, v.end, final)
	return v
}

// runEnd is where every time axis of the run ends: the end of the run, or
// of whatever it recorded last.
func runEnd(r *Run, samples []*Sample, cs clientSeries) time.Duration {
	end := r.SimTime
	for _, s := range samples {
		end = max(end, s.At)
	}
	for _, f := range r.Faults {
		end = max(end, f.At)
	}
	if cs.b.n > 0 {
		end = max(end, cs.last)
	}
	if end <= 0 {
		end = time.Second
	}
	return end
}

// finalReaders names the final reads' processes for a legend note.
func (v *runView) finalReaders() string {
	names := make([]string, 0, len(v.finalProcs))
	for n := range v.finalProcs {
		names = append(names, n)
	}
	sort.Strings(names)
	what := "the final reader "
	if len(names) > 1 {
		what = "the final readers "
	}
	return what + strings.Join(names, ", ")
}

func (v *runView) single(name, title string, p panelSpec) *figure {
	if !p.hasData() {
		return nil
	}
	return &figure{name: name, title: title, x: v.x, marks: &v.marks, panels: []panelSpec{p}}
}

// bucketXs are the bucket starts of b plus the end of the last bucket
// (cut at the end of the run): a per-bucket figure is drawn as a step that
// holds across its bucket.
func bucketXs(b buckets, end time.Duration) []float64 {
	xs := make([]float64, b.n+1)
	for i := range xs {
		xs[i] = b.start(i)
	}
	if e := end.Seconds(); b.n > 0 && e > xs[b.n-1] && e < xs[b.n] {
		xs[b.n] = e
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

func (v *runView) throughputFigure() *figure {
	cs := v.cs
	if !cs.hasSends && !cs.hasPolls {
		return nil
	}
	xs := bucketXs(cs.b, v.end)
	var ss []series
	if cs.hasSends {
		ss = append(ss,
			series{name: "acknowledged sends/s", xs: xs, ys: rates(cs.acked, cs.b), step: true},
			series{name: "failed or indeterminate sends/s", xs: xs, ys: rates(cs.unacked, cs.b), step: true})
	}
	if cs.hasPolls {
		ss = append(ss, series{name: "records polled/s", xs: xs, ys: rates(cs.polled, cs.b), step: true})
	}
	p := panelSpec{series: ss, y: burstyRateAxis("records/s", ss)}
	if cs.finalRecords > 0 {
		p.notes = append(p.notes, "left out: "+v.finalReaders()+" ("+fmtThousands(int64(cs.finalRecords))+" records polled after settle)")
	}
	return v.single("throughput", "Throughput (per "+cs.b.label()+" of simulated time)", p)
}

func (v *runView) latencyFigure() *figure {
	cs := v.cs
	if !cs.hasLatency {
		return nil
	}
	xs := bucketXs(cs.b, v.end)
	ss := []series{
		{name: "p50", xs: xs, ys: bucketYs(cs.latencyP50), step: true},
		{name: "p99", xs: xs, ys: bucketYs(cs.latencyP99), step: true},
	}
	return v.single("latency", "Produce latency of acknowledged sends (per "+cs.b.label()+")",
		panelSpec{series: ss, y: millisAxis("latency", top(ss))})
}

// isrFigure draws ISR size per partition with the replication factor and
// min.insync.replicas as reference lines: an ISR below min.insync.replicas
// means acks=all sends fail with NOT_ENOUGH_REPLICAS.
func (v *runView) isrFigure() *figure {
	r := v.r
	names := timelinePartitions(r.Timeline)
	if len(names) == 0 {
		return nil
	}
	xs, lines := perPartition(v.samples, names, func(p *PartitionSample) float64 { return float64(len(p.ISR)) })
	xs, lines = holdToEnd(xs, lines, v.end)
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
	x0, x1 := 0.0, v.end.Seconds()
	if rf := replicationFactor(r); rf > 0 {
		ss = append(ss, hline("replication factor "+strconv.Itoa(rf), x0, x1, float64(rf)))
	}
	if m, ok := minISR(r.Config, partitionTopics(names)); ok {
		ss = append(ss, hline("min.insync.replicas "+strconv.Itoa(m), x0, x1, float64(m)))
	}
	title := "ISR size per partition"
	if len(names) > maxLines {
		title = fmt.Sprintf("ISR size across %d partitions", len(names))
	}
	return v.single("isr", title, panelSpec{series: ss, y: countAxis("replicas in ISR", top(ss))})
}

// holdToEnd repeats the last sample at the end of the run, so that a
// state drawn as a step holds until the axis ends rather than stopping at
// the last sample.
func holdToEnd(xs []float64, lines [][]float64, end time.Duration) ([]float64, [][]float64) {
	e := end.Seconds()
	if len(xs) == 0 || xs[len(xs)-1] >= e {
		return xs, lines
	}
	xs = append(xs[:len(xs):len(xs)], e)
	for i, l := range lines {
		lines[i] = append(l[:len(l):len(l)], l[len(l)-1])
	}
	return xs, lines
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

// minISR finds the min.insync.replicas in force for the topics: a
// topic's own ("topic orders min.insync.replicas", or dotted
// "topic.orders.min.insync.replicas") overrides the broker's ("broker
// min.insync.replicas", or the bare key). It gives up when the topics'
// values differ, since one reference line would then mislead.
func minISR(cfg []KeyValue, topics []string) (int, bool) {
	const key = "min.insync.replicas"
	broker, hasBroker := 0, false
	perTopic := map[string]int{}
	var scoped []string // topics with a value of their own, in order
	for _, kv := range cfg {
		v, err := strconv.Atoi(strings.TrimSpace(kv.Value))
		if err != nil {
			continue
		}
		k := kv.Key
		switch {
		case k == key || k == "broker "+key:
			broker, hasBroker = v, true
		case strings.HasPrefix(k, "topic ") && strings.HasSuffix(k, " "+key):
			t := strings.TrimSuffix(strings.TrimPrefix(k, "topic "), " "+key)
			perTopic[t] = v
			scoped = append(scoped, t)
		case strings.HasPrefix(k, "topic.") && strings.HasSuffix(k, "."+key):
			t := strings.TrimSuffix(strings.TrimPrefix(k, "topic."), "."+key)
			perTopic[t] = v
			scoped = append(scoped, t)
		}
	}
	if len(topics) == 0 {
		topics = scoped
	}
	found, val := false, 0
	for _, t := range topics {
		v, ok := perTopic[t]
		if !ok {
			v, ok = broker, hasBroker
		}
		if !ok {
			continue
		}
		if found && v != val {
			return 0, false
		}
		found, val = true, v
	}
	if !found && hasBroker {
		return broker, true
	}
	return val, found
}

// partitionTopics lists the topics of partition names, once each, in order.
func partitionTopics(names []string) []string {
	var out []string
	for _, n := range names {
		t, _, ok := splitPartition(n)
		if ok && (len(out) == 0 || out[len(out)-1] != t) {
			out = append(out, t)
		}
	}
	return out
}

// unavailabilityFigure stacks three panels over the same time axis: the
// partitions without a leader (the cluster's view), the share of sends
// that failed, and the sends still waiting for an answer (the producers'
// view: a stalled cluster fails nothing, it answers nothing). They have
// different units, so they do not share a y axis.
func (v *runView) unavailabilityFigure() *figure {
	cs := v.cs
	f := &figure{name: "unavailability", title: "Unavailability", x: v.x, marks: &v.marks}
	hasPartitions := false
	for _, s := range v.samples {
		hasPartitions = hasPartitions || len(s.Partitions) > 0
	}
	if hasPartitions {
		xs, ys := leaderless(v.samples)
		xl, yl := holdToEnd(xs, [][]float64{ys}, v.end)
		ss := []series{{name: "leaderless partitions", xs: xl, ys: yl[0], step: true}}
		f.panels = append(f.panels, panelSpec{title: "Partitions without a leader", series: ss,
			y: countAxis("partitions", top(ss))})
	}
	if cs.hasSends {
		xs := bucketXs(cs.b, v.end)
		ys := make([]float64, cs.b.n)
		for i := range ys {
			done := cs.acked[i] + cs.unacked[i]
			ys[i] = math.NaN()
			if done > 0 {
				ys[i] = cs.unacked[i] / done
			}
		}
		waiting := []series{{name: "sends awaiting an answer", xs: xs, ys: bucketYs(cs.awaiting()), step: true}}
		f.panels = append(f.panels, panelSpec{
			title:  "Sends failed or indeterminate (share of the sends answered in each " + cs.b.label() + ")",
			series: []series{{name: "failed share", xs: xs, ys: bucketYs(ys), step: true}},
			y:      fractionAxis("failed"),
		}, panelSpec{
			title:  "Sends awaiting an answer (at the end of each " + cs.b.label() + ")",
			series: waiting,
			y:      countAxis("sends", top(waiting)),
		})
	}
	var keep []panelSpec
	for _, p := range f.panels {
		if p.hasData() {
			keep = append(keep, p)
		}
	}
	if len(keep) == 0 {
		return nil
	}
	f.panels = keep
	return f
}

func (v *runView) lagFigure() *figure {
	readers, lag := v.moves.lag(v.samples)
	var names []string
	var lines [][]float64
	for i, name := range readers {
		if v.finalProcs[name] || i >= len(lag) {
			continue
		}
		names = append(names, name)
		lines = append(lines, lag[i])
	}
	if len(names) == 0 {
		return nil
	}
	xs := make([]float64, len(v.samples))
	for i, s := range v.samples {
		xs[i] = seconds(s.At)
	}
	var ss []series
	title := "Consumer lag per reader"
	if len(names) == 1 {
		title = "Consumer lag of " + names[0]
	}
	if len(names) <= maxLines {
		for i, name := range names {
			ss = append(ss, series{name: name, xs: xs, ys: lines[i]})
		}
	} else {
		ss = spread("lag", xs, lines)
		title = fmt.Sprintf("Consumer lag across %d readers", len(names))
	}
	p := panelSpec{series: ss, y: countAxis("lag (records)", top(ss))}
	if len(v.finalProcs) > 0 {
		p.notes = append(p.notes, "left out: "+v.finalReaders())
	}
	return v.single("lag", title, p)
}
