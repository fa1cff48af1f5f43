package reports

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"kafkasim/history"
)

// finalRecords is how many records the final reader of withFinalReads
// polls in its one second: far more than the clients do in any second.
const finalRecords = 60000

// withFinalReads turns the synthetic run into one with the runner's
// phases: the fault phase ends at 25 s (the liveness heal), settle at
// 31 s, and the final reader (final polls) reads the whole log from 31.5 s
// in one second.
func withFinalReads(r *Run) *Run {
	r.SimTime = 33 * time.Second
	r.Phases = Phases{FaultsEnd: 25 * time.Second, SettleEnd: 31 * time.Second}
	r.Faults = append(r.Faults, Fault{At: 25 * time.Second, Kind: "heal", What: "heal all", Origin: "heal"})
	ops := r.Ops
	add := func(t time.Duration, typ history.Type, v history.Value) {
		v.Final = true
		ops = append(ops, history.Op{Index: int64(len(ops)), Time: int64(t), Process: "kafkasim-final-0", Type: typ, F: history.FPoll, Value: v})
	}
	recs := make([]history.Record, finalRecords)
	for i := range recs {
		recs[i] = history.Record{Topic: "orders", Partition: int32(i % 3), Offset: int64(i / 3), Value: fmt.Sprint("v", i)}
	}
	add(31500*time.Millisecond, history.Invoke, history.NoValue())
	add(31600*time.Millisecond, history.OK, pollValue(recs...))
	r.Ops = ops
	return r
}

func figureNamed(figs []*figure, name string) *figure {
	for _, f := range figs {
		if f.name == name {
			return f
		}
	}
	return nil
}

func seriesNames(p panelSpec) []string {
	var out []string
	for _, s := range p.series {
		out = append(out, s.name)
	}
	return out
}

// The final reads poll the whole log in a second: they are left out of
// the throughput's scale and the lag, and the plots say so.
func TestFinalReadsAreLeftOutOfTheScales(t *testing.T) {
	r := withFinalReads(func() *Run { r, _ := syntheticRun(); return r }())
	figs := buildFigures(r)

	tp := figureNamed(figs, "throughput")
	if tp == nil {
		t.Fatal("no throughput figure")
	}
	p := tp.panels[0]
	if p.y.max >= finalRecords || top(p.series) >= 1000 {
		t.Errorf("throughput axis runs to %v (data top %v): scaled to the final reads", p.y.max, top(p.series))
	}
	if len(p.notes) != 1 || !strings.Contains(p.notes[0], "kafkasim-final-0") || !strings.Contains(p.notes[0], "60,000 records") {
		t.Errorf("throughput notes %q should say that the final reader's 60,000 records are left out", p.notes)
	}
	checkAxis(t, "throughput", p.y, top(p.series))

	lag := figureNamed(figs, "lag")
	if lag == nil {
		t.Fatal("no lag figure")
	}
	if names := seriesNames(lag.panels[0]); slices.Contains(names, "kafkasim-final-0") || !slices.Contains(names, "c-0") {
		t.Errorf("lag lines %v: the scenario's reader, not the final reader", names)
	}
	if len(lag.panels[0].notes) != 1 {
		t.Errorf("lag notes %q", lag.panels[0].notes)
	}
	fr := tp.marks.finalReads
	if fr.from != 31500*time.Millisecond || fr.to != 33*time.Second {
		t.Errorf("final reads marked %v..%v, want 31.5s..33s", fr.from, fr.to)
	}
}

// Every figure runs over the run's whole time axis and carries the same
// marks: the phases and every fault.
func TestEveryFigureMarksPhasesAndFaults(t *testing.T) {
	r := withFinalReads(func() *Run { r, _ := syntheticRun(); return r }())
	figs := buildFigures(r)
	if len(figs) != 5 {
		t.Fatalf("%d figures", len(figs))
	}
	for _, f := range figs {
		if f.x.min != 0 || f.x.max != 33 || f.marks == nil {
			t.Fatalf("%s: time axis %v..%v, marks %v", f.name, f.x.min, f.x.max, f.marks)
		}
		var phases []string
		for _, s := range f.marks.phases {
			phases = append(phases, s.label)
		}
		if want := []string{phaseFaults, phaseSettle, phaseConverge, phaseFinal}; !slices.Equal(phases, want) {
			t.Errorf("%s: phases %v, want %v", f.name, phases, want)
		}
		var bounds []time.Duration
		for _, b := range f.marks.bounds {
			bounds = append(bounds, b.at)
		}
		if want := []time.Duration{25 * time.Second, 31 * time.Second, 31500 * time.Millisecond}; !slices.Equal(bounds, want) {
			t.Errorf("%s: phase boundaries %v, want %v", f.name, bounds, want)
		}
		var kinds []string
		for _, row := range f.marks.rows {
			kinds = append(kinds, row.kind)
		}
		if !slices.Equal(kinds, []string{"crash", "partition"}) {
			t.Fatalf("%s: fault rows %v", f.name, kinds)
		}
		crash := f.marks.rows[0].spans
		if len(crash) != 1 || crash[0].from != 10*time.Second || crash[0].to != 20*time.Second || !crash[0].undone || crash[0].label != "broker-1" {
			t.Errorf("%s: crash marked %+v, want broker-1 from 10s to its restart at 20s", f.name, crash)
		}
		if part := f.marks.rows[1].spans; len(part) != 1 || !part[0].skipped || !strings.Contains(part[0].title, "no such node") {
			t.Errorf("%s: skipped partition marked %+v", f.name, part)
		}
		for _, p := range f.panels {
			checkAxis(t, f.name+"/"+p.y.label, p.y, top(p.series))
		}
	}
	// Whole quantities: the ISR and the leaderless partitions count from
	// 0 in whole steps.
	if got := tickLabels(figureNamed(figs, "isr").panels[0].y); !slices.Equal(got, []string{"0", "1", "2", "3"}) {
		t.Errorf("ISR ticks %v", got)
	}
	un := figureNamed(figs, "unavailability")
	if got := tickLabels(un.panels[0].y); !slices.Equal(got, []string{"0", "1"}) {
		t.Errorf("leaderless partitions ticks %v", got)
	}
	if len(un.panels) != 3 || !strings.Contains(un.panels[2].title, "awaiting") {
		t.Errorf("unavailability panels %d", len(un.panels))
	}
}

// The marks reach the pictures: every plot's SVG names the phases and the
// fault kinds in its strip.
func TestEveryPlotDrawsTheMarks(t *testing.T) {
	r := withFinalReads(func() *Run { r, _ := syntheticRun(); return r }())
	dir := t.TempDir()
	ps, err := WritePlots(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 5 {
		t.Fatalf("plots %v", plotNames(ps))
	}
	for _, p := range ps {
		svg, err := os.ReadFile(filepath.Join(dir, p.SVG))
		if err != nil {
			t.Fatal(err)
		}
		for _, label := range []string{"phase", "fault phase", "settle", "final reads", "crash", "partition", "broker-1"} {
			if !bytes.Contains(svg, []byte(label+"</text>")) {
				t.Errorf("%s lacks the mark %q", p.SVG, label)
			}
		}
		if bytes.Contains(svg, []byte(".00</text>")) {
			t.Errorf("%s has a tick label with a zero decimal tail", p.SVG)
		}
	}
	checkImages(t, dir, ps)
}

// A flat series keeps a sensible axis: no partition ever without a leader
// gives 0..1, not -1..1.
func TestFlatZeroSeriesGetsAnAxisFromZero(t *testing.T) {
	r, _ := syntheticRun()
	for i := range r.Timeline {
		for k := range r.Timeline[i].Partitions {
			r.Timeline[i].Partitions[k].Leader = 1
		}
	}
	un := figureNamed(buildFigures(r), "unavailability")
	a := un.panels[0].y
	if a.min != 0 || !slices.Equal(tickLabels(a), []string{"0", "1"}) {
		t.Errorf("a flat zero count: axis %v..%v ticks %v, want 0..1", a.min, a.max, tickLabels(a))
	}
	if s := un.panels[0].series[0]; !s.allZero() {
		t.Errorf("the leaderless series should be all zero: %v", s.ys)
	}
}

// The same run draws the same bytes, PNG and SVG.
func TestPlotsAreDeterministic(t *testing.T) {
	r := withFinalReads(func() *Run { r, _ := syntheticRun(); return r }())
	a, b := t.TempDir(), t.TempDir()
	pa, err := WritePlots(a, r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WritePlots(b, r); err != nil {
		t.Fatal(err)
	}
	for _, p := range pa {
		for _, f := range []string{p.PNG, p.SVG} {
			x, _ := os.ReadFile(filepath.Join(a, f))
			y, _ := os.ReadFile(filepath.Join(b, f))
			if len(x) == 0 || !bytes.Equal(x, y) {
				t.Errorf("%s differs between two writes of the same run", f)
			}
		}
	}
}
