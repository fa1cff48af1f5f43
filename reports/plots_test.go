package reports

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kafkasim/history"
)

func plotNames(ps []Plot) []string {
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	return names
}

// checkImages asserts that each plot's PNG and SVG exist, are non-empty
// and are what their extension says.
func checkImages(t *testing.T, dir string, ps []Plot) {
	t.Helper()
	for _, p := range ps {
		if p.Title == "" {
			t.Errorf("plot %s has no title", p.Name)
		}
		png, err := os.ReadFile(filepath.Join(dir, p.PNG))
		if err != nil {
			t.Fatalf("plot %s: %v", p.Name, err)
		}
		if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) || len(png) < 1000 {
			t.Errorf("plot %s: %s is not a PNG (%d bytes)", p.Name, p.PNG, len(png))
		}
		svg, err := os.ReadFile(filepath.Join(dir, p.SVG))
		if err != nil {
			t.Fatalf("plot %s: %v", p.Name, err)
		}
		if !bytes.Contains(svg, []byte("<svg")) || !bytes.Contains(svg, []byte("</svg>")) || !bytes.Contains(svg, []byte("<path")) {
			t.Errorf("plot %s: %s is not an SVG with paths (%d bytes)", p.Name, p.SVG, len(svg))
		}
	}
}

func TestWritePlotsWritesEveryPlot(t *testing.T) {
	r, _ := syntheticRun()
	dir := t.TempDir()
	ps, err := WritePlots(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	want := "throughput latency isr unavailability lag"
	if got := strings.Join(plotNames(ps), " "); got != want {
		t.Fatalf("plots = %q, want %q", got, want)
	}
	checkImages(t, dir, ps)
	for _, p := range ps {
		if p.PNG != p.Name+".png" || p.SVG != p.Name+".svg" {
			t.Errorf("plot %s: files %q, %q; want NAME.png and NAME.svg", p.Name, p.PNG, p.SVG)
		}
	}
	// The ISR plot draws one line per partition with the reference lines
	// in its legend.
	svg, _ := os.ReadFile(filepath.Join(dir, "isr.svg"))
	for _, label := range []string{"orders-0", "orders-2", "min.insync.replicas 2", "replication factor 3"} {
		if !bytes.Contains(svg, []byte(label)) {
			t.Errorf("isr.svg lacks legend entry %q", label)
		}
	}
}

func TestWritePlotsEmptyRunWritesNothing(t *testing.T) {
	for name, r := range map[string]*Run{
		"nil":   nil,
		"empty": {},
		"invokes only": {Ops: []history.Op{
			{Index: 0, Process: "p-0", Type: history.Invoke, F: history.FSend, Value: history.NoValue()},
			{Index: 1, Process: "c-0", Type: history.Invoke, F: history.FPoll, Value: history.NoValue()},
		}},
		"timeline without partitions": {Timeline: []Sample{{At: time.Second}}},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			ps, err := WritePlots(dir, r)
			if err != nil || len(ps) != 0 {
				t.Fatalf("WritePlots = %v, %v; want no plots and no error", plotNames(ps), err)
			}
			files, _ := os.ReadDir(dir)
			if len(files) != 0 {
				t.Errorf("wrote %d files for a run without data", len(files))
			}
		})
	}
}

// A run cut short has sends but no timeline: the client plots still come
// out, the god-view plots are skipped.
func TestWritePlotsWithoutTimeline(t *testing.T) {
	r, _ := syntheticRun()
	r.Timeline = nil
	dir := t.TempDir()
	ps, err := WritePlots(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(plotNames(ps), " "); got != "throughput latency unavailability" {
		t.Fatalf("plots = %q", got)
	}
	checkImages(t, dir, ps)
}

// With more partitions and readers than lines a plot can carry, the ISR and
// lag plots summarise as min/mean/max.
func TestWritePlotsManyPartitionsSummarise(t *testing.T) {
	var b opsBuilder
	var timeline []Sample
	for s := 0; s < 5; s++ {
		smp := Sample{At: time.Duration(s) * time.Second}
		for p := 0; p < 20; p++ {
			smp.Partitions = append(smp.Partitions, PartitionSample{Name: fmt.Sprintf("t-%d", p), Leader: 1, ISR: []int32{1, 2}, HW: 10})
		}
		timeline = append(timeline, smp)
	}
	for c := 0; c < 15; c++ {
		b.add(time.Second, fmt.Sprintf("c-%d", c), history.OK, history.FPoll,
			pollValue(history.Record{Topic: "t", Partition: 0, Offset: int64(c)}))
	}
	dir := t.TempDir()
	ps, err := WritePlots(dir, &Run{Timeline: timeline, Ops: b.ops})
	if err != nil {
		t.Fatal(err)
	}
	titles := map[string]string{}
	for _, p := range ps {
		titles[p.Name] = p.Title
	}
	if titles["isr"] != "ISR size across 20 partitions" || titles["lag"] != "Consumer lag across 15 readers" {
		t.Fatalf("titles = %v", titles)
	}
	svg, _ := os.ReadFile(filepath.Join(dir, "isr.svg"))
	if !bytes.Contains(svg, []byte("mean ISR size")) || bytes.Contains(svg, []byte("t-17")) {
		t.Error("isr.svg should show min/mean/max, not one line per partition")
	}
	checkImages(t, dir, ps)
}

// Degenerate inputs (one sample, one completion at time 0 with no
// invocation, negative times) still plot, without a panic or an error.
func TestWritePlotsDegenerateInputs(t *testing.T) {
	r := &Run{
		Ops: []history.Op{
			{Index: 0, Process: "p-0", Type: history.OK, F: history.FSend, Value: ackValue("v", 0, 0)},
			{Index: 1, Time: -5, Process: "c-0", Type: history.OK, F: history.FPoll, Value: pollValue(history.Record{Topic: "orders", Offset: -1})},
		},
		Timeline: []Sample{{At: 0, Partitions: []PartitionSample{{Name: "orders-0", Leader: -1, HW: -1, LEO: -1}}}},
	}
	dir := t.TempDir()
	ps, err := WritePlots(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	// No latency: the only send has no invocation to measure from.
	if got := strings.Join(plotNames(ps), " "); got != "throughput isr unavailability lag" {
		t.Fatalf("plots = %q", got)
	}
	checkImages(t, dir, ps)
}
