package sweep

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"kafkasim/checker"
	"kafkasim/internal/cputime"
	"kafkasim/internal/shardset"
	"kafkasim/reports"
	"kafkasim/runner"
	"kafkasim/scenarios"
)

// Options configure a sweep run.
type Options struct {
	// Seeds overrides the file's seeds per cell when > 0.
	Seeds    int
	Parallel int
	Out      string
	// Progress is called after every run (done counts resumed runs too;
	// failed, the runs so far whose verdict was not a pass).
	Progress func(done, total, failed int)
	// Stop, when closed, ends the sweep early; finished runs are kept and
	// a later sweep resumes from them.
	Stop <-chan struct{}
	// ShardIndex and ShardCount, when ShardCount > 0, run one shard of the
	// sweep: of the runs of the valid cells in grid order, then by seed,
	// those whose index i has i mod ShardCount = ShardIndex ("kafkasim
	// sweep --shard K/N"). Merge joins the shards' folders.
	ShardIndex, ShardCount int
}

// Result is what a sweep produced.
type Result struct {
	Dir   string
	Axes  []Axis
	Cells []Cell
	// Seeds is the number of seeds per cell.
	Seeds   int
	Runs    int // runs executed now (not resumed)
	Resumed int
	// Planned is how many runs the sweep (or its shard) has to make.
	Planned int
	// Records holds every finished run's figures, by cell ID, by seed.
	Records map[string][]RunRecord
	// Failed lists the runs whose verdict is not a pass, in grid order,
	// then by seed.
	Failed      []FailedRun
	Interrupted bool
	Plots       []Plot
	Notes       []string
	// Shard is the shard the folder holds, "K/N" (empty: the whole
	// sweep); a merged sweep's is the shards merged, "0..2/3".
	Shard string
	// Shards lists, in a merged sweep, each shard merged.
	Shards []SummaryShard
	// Digest identifies what the sweep runs: its name, seeds per cell,
	// every cell's resolved scenario (or why it cannot run) and its plots.
	// Shards of one sweep have the same.
	Digest string
	// WallNs is the wall time the runs took; CPUNs the CPU time the
	// process used meanwhile (0: not measured). A merged sweep's are the
	// longest shard's wall time and the shards' CPU time summed.
	WallNs, CPUNs int64
}

// FailedRun is a run whose expectations did not hold (verdict fail or
// liveness) or whose simulator failed (crash), with what it takes to
// replay it: Scenario is the cell's resolved scenario at that seed,
// relative to the sweep's folder.
type FailedRun struct {
	Cell     string            `json:"cell"`
	Values   map[string]string `json:"values"`
	Seed     uint64            `json:"seed"`
	Verdict  string            `json:"verdict"`
	Headline string            `json:"headline"`
	Scenario string            `json:"scenario"`
}

// RunRecord is one run's figures, stored per run so that a sweep resumes.
type RunRecord struct {
	Cell      string             `json:"cell"`
	Seed      uint64             `json:"seed"`
	Verdict   string             `json:"verdict"`
	TraceHash string             `json:"trace_hash"`
	Metrics   map[string]float64 `json:"metrics"`
	// Headline says in a sentence what the run showed: which expectation
	// failed, for a run that did not pass.
	Headline string `json:"headline,omitempty"`
	// Scenario digests the resolved scenario the run ran: a resumed sweep
	// reuses a record only if its cell's scenario is still that one (the
	// base or the sweep file may have changed since).
	Scenario string `json:"scenario_digest"`
}

// digestAt is the digest of s run at seed.
func digestAt(s *scenarios.Scenario, seed uint64) string {
	c := *s
	c.Seed = seed
	return scenarioDigest(&c)
}

// scenarioDigest is a short digest of a scenario as resolved.
func scenarioDigest(s *scenarios.Scenario) string {
	data, err := s.Resolved()
	if err != nil {
		return ""
	}
	h := fnv.New64a()
	h.Write(data)
	return fmt.Sprintf("%016x", h.Sum64())
}

type cellPlan struct {
	cell     *Cell
	scenario *scenarios.Scenario
}

// Run runs a sweep file's grid.
func Run(sw *File, opts Options) (*Result, error) {
	if opts.Parallel <= 0 {
		opts.Parallel = runtime.NumCPU()
	}
	seeds := sw.Seeds
	if opts.Seeds > 0 {
		seeds = opts.Seeds
	}
	dir := filepath.Join(opts.Out, sw.Name)
	if err := os.MkdirAll(filepath.Join(dir, "runs"), 0o755); err != nil {
		return nil, err
	}
	res := &Result{Dir: dir, Seeds: seeds}
	for _, a := range sw.Axes {
		res.Axes = append(res.Axes, Axis{Name: a.Name, Values: a.Values})
	}
	started := time.Now()
	cpuBefore, cpuKnown := cputime.Process()
	plans := grid(sw, res)
	res.Digest = sweepDigest(sw, seeds, plans)
	if opts.ShardCount > 0 {
		res.Shard = shardset.String([]int{opts.ShardIndex}, opts.ShardCount)
		res.Notes = append(res.Notes, fmt.Sprintf("shard %s: these outputs hold this shard's runs only; kafkasim sweep merge joins the shards' folders into the whole sweep", res.Shard))
	}
	type job struct {
		plan *cellPlan
		seed uint64
		path string
	}
	var jobs []job
	records := map[string][]RunRecord{}
	index := 0 // the run's place among the grid's runs: what shards split
	for _, p := range plans {
		if p.cell.Invalid != "" {
			continue
		}
		for i := range seeds {
			index++
			if opts.ShardCount > 1 && (index-1)%opts.ShardCount != opts.ShardIndex {
				continue
			}
			// The cell's seed: the base's, moved by a seed-offset axis.
			seed := p.scenario.Seed + uint64(i)
			path := recordPath(dir, p.cell.ID, seed)
			if rec, ok := readRecord(path); ok && rec.Scenario == digestAt(p.scenario, seed) && measuresGroups(rec, p.scenario) && measuresProcessors(rec, p.scenario) {
				records[p.cell.ID] = append(records[p.cell.ID], rec)
				res.Resumed++
				continue
			}
			jobs = append(jobs, job{plan: p, seed: seed, path: path})
		}
	}
	total := len(jobs) + res.Resumed
	res.Planned = total
	work := make(chan job)
	var mu sync.Mutex
	var wg sync.WaitGroup
	var firstErr error
	done := res.Resumed
	failed := 0
	for range opts.Parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				s := *j.plan.scenario
				s.Seed = j.seed
				r, err := runner.Run(&s, runner.Options{})
				var rec RunRecord
				if err == nil {
					rec = record(j.plan.cell.ID, &s, r)
					rec.Scenario = scenarioDigest(&s)
					err = errors.Join(writeReplay(j.path, j.plan.cell, &s, rec), writeRecord(j.path, rec))
				}
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("cell %s seed %d: %w", j.plan.cell.ID, j.seed, err)
				}
				if err == nil {
					records[j.plan.cell.ID] = append(records[j.plan.cell.ID], rec)
					res.Runs++
					if rec.Verdict != runner.Pass {
						failed++
					}
				}
				done++
				d, f := done, failed
				mu.Unlock()
				if opts.Progress != nil {
					opts.Progress(d, total, f)
				}
			}
		}()
	}
	interrupted := false
feed:
	for _, j := range jobs {
		select {
		case work <- j:
		case <-opts.Stop:
			interrupted = true
			break feed
		}
	}
	close(work)
	wg.Wait()
	res.WallNs = int64(time.Since(started))
	if cpuAfter, ok := cputime.Process(); ok && cpuKnown && cpuAfter > cpuBefore {
		res.CPUNs = int64(cpuAfter - cpuBefore)
	}
	if firstErr != nil {
		return res, firstErr
	}
	if interrupted {
		res.Interrupted = true
		res.Notes = append(res.Notes, "interrupted: run the same command again to finish the remaining runs")
	}
	return res, assemble(res, plans, records)
}

// assemble builds a sweep's result and tables from its kept runs, by cell
// ID: each cell's figures and failed runs, runs.csv and cells.csv. It runs
// nothing: Run calls it once its runs finish, Merge on the runs of every
// shard.
func assemble(res *Result, plans []*cellPlan, records map[string][]RunRecord) error {
	for _, p := range plans {
		recs := records[p.cell.ID]
		sort.Slice(recs, func(i, j int) bool { return recs[i].Seed < recs[j].Seed })
		p.cell.Runs = len(recs)
		if p.cell.Invalid == "" {
			p.cell.Metrics = aggregate(recs)
		}
		for _, r := range recs {
			if r.Verdict == runner.Pass {
				continue
			}
			p.cell.Failed++
			res.Failed = append(res.Failed, FailedRun{Cell: p.cell.ID, Values: p.cell.Values, Seed: r.Seed,
				Verdict: r.Verdict, Headline: r.Headline, Scenario: filepath.ToSlash(replayPath(recordPath("", p.cell.ID, r.Seed)))})
		}
		res.Cells = append(res.Cells, *p.cell)
	}
	res.Records = records
	return writeCSVs(res.Dir, res, records, plans)
}

// sweepDigest identifies what a sweep runs: its name, seeds per cell, every
// cell's resolved scenario (its seed included) or why it cannot run, and
// its plots. Shards of one sweep have the same; Merge refuses shards whose
// differ.
func sweepDigest(sw *File, seeds int, plans []*cellPlan) string {
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d\x00", sw.Name, seeds)
	for _, p := range plans {
		fmt.Fprintf(h, "%s\x00%s\x00", p.cell.ID, p.cell.Invalid)
		if p.scenario != nil {
			fmt.Fprintf(h, "%s\x00", scenarioDigest(p.scenario))
		}
	}
	specs, _ := json.Marshal(summarySpecs(sw.Plots))
	h.Write(specs)
	return fmt.Sprintf("%016x", h.Sum64())
}

// grid builds every cell: the product of the axes, each applied to a copy of
// the base. A cell whose configuration is impossible (min.insync.replicas
// above the replication factor) is kept, marked invalid, and not run.
func grid(sw *File, res *Result) []*cellPlan {
	var plans []*cellPlan
	for _, c := range gridCells(sw.Axes) {
		s := copyScenario(sw.Base)
		var invalid error
		for _, a := range sw.Axes {
			if invalid == nil {
				invalid = s.Apply(a.Name, c.Values[a.Name])
			}
		}
		s.Name = sw.Name
		var norm *scenarios.Scenario
		if invalid == nil {
			norm, invalid = scenarios.Normalize(s)
		}
		if invalid != nil {
			c.Invalid = cellProblem(invalid)
			res.Notes = append(res.Notes, invalidNote(c))
		} else {
			c.Seed = norm.Seed
		}
		plans = append(plans, &cellPlan{cell: c, scenario: norm})
	}
	return plans
}

// gridCells is every cell of the axes' product, in the sweep's order (the
// first axis slowest), each with its ID and values.
func gridCells(axes []Axis) []*Cell {
	var cells []*Cell
	var walk func(i int, values []string)
	walk = func(i int, values []string) {
		if i == len(axes) {
			c := &Cell{Values: map[string]string{}}
			var id []string
			for k, a := range axes {
				c.Values[a.Name] = values[k]
				id = append(id, a.Name+"="+values[k])
			}
			c.ID = strings.Join(id, ",")
			if c.ID == "" {
				c.ID = "base"
			}
			cells = append(cells, c)
			return
		}
		for _, v := range axes[i].Values {
			walk(i+1, append(append([]string{}, values...), v))
		}
	}
	walk(0, nil)
	return cells
}

// invalidNote is the note a cell that cannot run gets.
func invalidNote(c *Cell) string { return fmt.Sprintf("cell %s not run: %s", c.ID, c.Invalid) }

// recordPath is where a run's figures are kept, under the sweep's folder.
func recordPath(dir, cell string, seed uint64) string {
	return filepath.Join(dir, "runs", slug(cell), fmt.Sprintf("seed-%d.json", seed))
}

// replayPath is where a failed run's scenario is written, beside its
// record: the cell's resolved scenario at the run's seed.
func replayPath(record string) string {
	return strings.TrimSuffix(record, ".json") + ".yaml"
}

// writeReplay writes a failed run's scenario, named after the sweep and the
// cell, so that "kafkasim run" replays it with a full run store and report;
// a run that passes removes the one an earlier, failing version of its cell
// left.
func writeReplay(record string, cell *Cell, s *scenarios.Scenario, rec RunRecord) error {
	path := replayPath(record)
	if rec.Verdict == runner.Pass {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			return err
		}
		return nil
	}
	c := *s
	name := s.Name
	if len(name) > 90 { // a scenario name is at most 100 characters
		name = name[:90]
	}
	c.Name = name + "-" + fmt.Sprintf("%016x", fnvString(cell.ID))[:8]
	c.Description = fmt.Sprintf("Cell %s of sweep %s, seed %d: %s. %s", cell.ID, s.Name, s.Seed, rec.Verdict, rec.Headline)
	data, err := c.Resolved()
	if err != nil {
		return err
	}
	return writeBytesAtomic(path, data)
}

func fnvString(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

func copyScenario(b *scenarios.Scenario) *scenarios.Scenario {
	c := *b
	c.Topics = append([]scenarios.Topic(nil), b.Topics...)
	c.Producers = append([]scenarios.Producer(nil), b.Producers...)
	c.Consumers = append([]scenarios.Consumer(nil), b.Consumers...)
	c.Faults = append([]scenarios.ScheduledFault(nil), b.Faults...)
	c.Nemesis = append([]scenarios.NemesisRule(nil), b.Nemesis...)
	return &c
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// slug makes a cell id a safe folder name.
func slug(id string) string {
	var b strings.Builder
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_', r == '=':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

func readRecord(path string) (RunRecord, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return RunRecord{}, false
	}
	var r RunRecord
	if json.Unmarshal(data, &r) != nil || r.Metrics == nil {
		return RunRecord{}, false
	}
	return r, true
}

// writeRecord writes a run's figures atomically: a resumed sweep never sees
// half a file.
func writeRecord(path string, r RunRecord) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return writeBytesAtomic(path, data)
}

// writeBytesAtomic writes data to path, its folder made if need be, as
// writeFileAtomic does: a reader, or a resumed sweep, never sees half a file.
func writeBytesAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return writeFileAtomic(path, func(w *bufio.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// record measures one run.
func record(cell string, s *scenarios.Scenario, r *runner.Result) RunRecord {
	m := map[string]float64{}
	// Every anomaly type's count is a metric, zero included:
	// a plot of one that never happened is a line at zero, not an error.
	for _, t := range checker.AnomalyTypes {
		m[t] = 0
	}
	if r.Report != nil {
		st := r.Report.Stats
		m["availability"] = st.Availability
		m["lost-acked"] = float64(st.LostAcked)
		if st.LostAcked > 0 {
			m[RunsLosingAcked] = 1
		} else {
			m[RunsLosingAcked] = 0
		}
		if st.Acked > 0 {
			m["lost-acked-fraction"] = float64(st.LostAcked) / float64(st.Acked)
		}
		m["records-per-second"] = float64(st.Acked) / max(s.Duration.Seconds(), 1e-9)
		for _, a := range r.Report.Anomalies {
			m[a.Type] += float64(a.Count)
		}
	}
	m["violations"] = float64(r.ViolationCount())
	m["unavailable-seconds"] = unavailableSeconds(r)
	m["p99-produce-latency-ms"] = r.P99ProduceLatencyMs()
	var bytes, sent float64
	for _, p := range r.Producers {
		bytes, sent = bytes+float64(p.BytesSent), sent+float64(p.Sent)
	}
	if sent > 0 {
		m["bytes-per-record"] = bytes / sent
	}
	if hasGroup(s) {
		h := reports.OpsHistory(nil)
		if r.History != nil {
			h = reports.RecorderHistory(r.History)
		}
		for k, v := range groupMetrics(h) { // kafkasim:orderless: fills a map
			m[k] = v
		}
	}
	if hasProcessor(s) {
		h := reports.OpsHistory(nil)
		if r.History != nil {
			h = reports.RecorderHistory(r.History)
		}
		for k, v := range processorMetrics(h, int64(s.Duration)) { // kafkasim:orderless: fills a map
			m[k] = v
		}
	}
	rec := RunRecord{Cell: cell, Seed: s.Seed, Verdict: r.Verdict, TraceHash: fmt.Sprintf("%016x", r.TraceHash), Metrics: m}
	if r.Verdict != runner.Pass && (r.Report != nil || r.Verdict == runner.Crash) {
		rec.Headline = r.Headline()
	}
	return rec
}

// cellProblem words why a cell cannot run: the key and the message, not the
// place in the scenario the cell resolved to (a file that does not exist).
func cellProblem(err error) string {
	var es scenarios.Errors
	var e *scenarios.Error
	switch {
	case errors.As(err, &es) && len(es) > 0:
		e = es[0]
	case errors.As(err, &e):
	default:
		return firstLine(err.Error())
	}
	if e.Key == "" {
		return e.Msg
	}
	return e.Key + ": " + e.Msg
}

// unavailableSeconds is how long, over the run, some partition had no
// leader, from the timeline's samples.
func unavailableSeconds(r *runner.Result) float64 {
	if r.Timeline == nil {
		return 0
	}
	samples := r.Timeline.Samples
	total := time.Duration(0)
	for i := 0; i+1 < len(samples); i++ {
		for _, p := range samples[i].Partitions {
			if p.Leader < 0 {
				total += samples[i+1].At - samples[i].At
				break
			}
		}
	}
	return total.Seconds()
}

// aggregate is each metric's mean and 95% interval over a cell's runs.
func aggregate(recs []RunRecord) map[string]Stat {
	names := map[string]bool{}
	for _, r := range recs {
		for k := range r.Metrics { // kafkasim:orderless: a set
			names[k] = true
		}
	}
	out := map[string]Stat{}
	for name := range names { // kafkasim:orderless: fills a map
		xs := make([]float64, len(recs))
		for i, r := range recs {
			xs[i] = r.Metrics[name]
		}
		st := meanCI(xs)
		if name == RunsLosingAcked {
			// A proportion: Student's t would give 0 of 20 runs an
			// interval of [0, 0], as if it could not happen.
			st.Lo, st.Hi = wilson(st.Mean, st.N)
		}
		// The interval stays within what the metric can be: every metric
		// is at least 0, and the fractions at most 1.
		st.Lo = max(st.Lo, 0)
		if plotIsFraction(name) {
			st.Hi = min(st.Hi, 1)
		}
		out[name] = st
	}
	return out
}

// meanCI is the mean and its 95% confidence interval (Student's t).
func meanCI(xs []float64) Stat {
	n := len(xs)
	if n == 0 {
		return Stat{}
	}
	mean := 0.0
	for _, x := range xs {
		mean += x
	}
	mean /= float64(n)
	if n == 1 {
		return Stat{Mean: mean, Lo: mean, Hi: mean, N: 1}
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	sd := math.Sqrt(ss / float64(n-1))
	h := tQuantile975(n-1) * sd / math.Sqrt(float64(n))
	return Stat{Mean: mean, Lo: mean - h, Hi: mean + h, N: n}
}

// wilson is the 95% Wilson score interval of a proportion p of n trials.
func wilson(p float64, n int) (float64, float64) {
	if n == 0 {
		return p, p
	}
	const z = 1.959964
	nf := float64(n)
	centre := (p + z*z/(2*nf)) / (1 + z*z/nf)
	half := z / (1 + z*z/nf) * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf))
	return max(0, centre-half), min(1, centre+half)
}

// tQuantile975 is Student's t 97.5% quantile for df degrees of freedom.
func tQuantile975(df int) float64 {
	table := []float64{0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}
	if df < len(table) {
		return table[df]
	}
	return 1.96 + 2.4/float64(df) // close to the table's tail
}

// writeCSVs writes runs.csv (one row per run) and cells.csv (one row per
// cell: mean and interval of every metric).
func writeCSVs(dir string, res *Result, records map[string][]RunRecord, plans []*cellPlan) error {
	metrics := metricNames(records)
	axes := make([]string, len(res.Axes))
	for i, a := range res.Axes {
		axes[i] = a.Name
	}
	runs := [][]string{append(append(append([]string{}, axes...), "seed", "verdict", "trace_hash"), metrics...)}
	cells := [][]string{append(append([]string{}, axes...), "runs", "invalid")}
	for _, m := range metrics {
		cells[0] = append(cells[0], m+"_mean", m+"_lo", m+"_hi")
	}
	for _, p := range plans {
		vals := make([]string, len(axes))
		for i, a := range axes {
			vals[i] = p.cell.Values[a]
		}
		for _, r := range records[p.cell.ID] {
			row := append(append([]string{}, vals...), strconv.FormatUint(r.Seed, 10), r.Verdict, r.TraceHash)
			for _, m := range metrics {
				row = append(row, formatFloat(r.Metrics[m]))
			}
			runs = append(runs, row)
		}
		row := append(append([]string{}, vals...), strconv.Itoa(len(records[p.cell.ID])), p.cell.Invalid)
		for _, m := range metrics {
			if len(records[p.cell.ID]) == 0 {
				row = append(row, "", "", "") // no run, no figure: not a zero
				continue
			}
			st := statOf(res, p.cell.ID, m)
			row = append(row, formatFloat(st.Mean), formatFloat(st.Lo), formatFloat(st.Hi))
		}
		cells = append(cells, row)
	}
	return errors.Join(writeCSV(filepath.Join(dir, "runs.csv"), runs), writeCSV(filepath.Join(dir, "cells.csv"), cells))
}

func statOf(res *Result, id, metric string) Stat {
	for _, c := range res.Cells {
		if c.ID == id {
			return c.Metrics[metric]
		}
	}
	return Stat{}
}

func metricNames(records map[string][]RunRecord) []string {
	set := map[string]bool{}
	for _, m := range Metrics {
		set[m] = true
	}
	for _, rs := range records { // kafkasim:orderless: a set
		for _, r := range rs {
			for k := range r.Metrics { // kafkasim:orderless: a set
				set[k] = true
			}
		}
	}
	out := append([]string{}, Metrics...)
	for _, k := range append(append([]string{}, GroupMetrics...), ProcessorMetrics...) {
		if set[k] {
			out = append(out, k)
		}
	}
	var extra []string
	for k := range set { // kafkasim:orderless: sorted below
		if !contains(Metrics, k) && !contains(GroupMetrics, k) && !contains(ProcessorMetrics, k) {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	return append(out, extra...)
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func formatFloat(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }

func writeCSV(path string, rows [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	if err := w.WriteAll(rows); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
