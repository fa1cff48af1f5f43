package reports

import (
	"encoding/base64"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// maxExamples is how many examples of one anomaly type the report lists.
const maxExamples = 20

// maxFaultRows caps the fault table: a nemesis can inject thousands.
const maxFaultRows = 1000

// page is what report.tmpl renders: the Run with every figure already
// formatted, so that the template only lays things out.
type page struct {
	Run          *Run
	VerdictClass string
	SimTime      string
	WallTime     string
	EventsPerSec string
	SimPerWall   string
	Availability string
	Anomalies    []anomalyView
	Faults       []faultView
	FaultsNote   string
	Lanes        laneChart
	Groups       []groupView
	Plots        []plotView
	Final        []finalRow
	Transactions *txnSummary
	Excerpt      []excerptRow
	ExcerptNote  string
	Visuals      []visualView
}

type anomalyView struct {
	Type, Verdict, Class, Because string
	Count                         int
	Examples                      []exampleView
	More                          int // examples not listed
}

type exampleView struct {
	Partition, Offset, Value, Process, Detail, Events string
	Ops                                               []opRef
}

// opRef is a history index cited by an example; Linked when the excerpt
// shows that operation, so that the link has somewhere to go.
type opRef struct {
	Index  int64
	Linked bool
}

type faultView struct {
	At, Kind, What, Nodes, Origin, Skipped string
	Undo                                   bool
}

type plotView struct {
	Title, Name string
	Src         template.URL // a data: URI built here, not taken from input
	Missing     string
}

type finalRow struct {
	Topic                        string
	Partition                    int32
	Leader                       string
	LeaderEpoch                  int32
	Replicas, ISR, ELR           string
	HW, LSO, LEO, LogStartOffset int64
	ReplicaLEO                   string
}

type visualView struct {
	Partition string
	HTML      string // rendered into srcdoc, where html/template escapes it
}

// verdictClass maps a verdict to its CSS class (and so its colour).
func verdictClass(v string) string {
	switch v {
	case "pass", "fail", "liveness", "crash":
		return v
	}
	return "unknown"
}

func newPage(r *Run, plots []Plot, dir string) *page {
	p := &page{
		Run:          r,
		VerdictClass: verdictClass(r.Verdict),
		SimTime:      fmtTime(r.SimTime),
		WallTime:     fmtTime(r.WallTime),
		EventsPerSec: "–",
		SimPerWall:   "–",
		Availability: fmt.Sprintf("%.2f%%", 100*r.Writes.Availability),
		Lanes:        newLaneChart(r),
		Groups:       groupViews(r),
		Final:        finalRows(r.Final),
		Transactions: transactionViews(r),
	}
	if w := r.WallTime.Seconds(); w > 0 {
		p.EventsPerSec = strconv.FormatFloat(float64(r.Events)/w, 'f', 0, 64)
		p.SimPerWall = strconv.FormatFloat(r.SimTime.Seconds()/w, 'f', 1, 64) + "×"
	}

	var cited []int64
	for _, a := range r.Anomalies {
		for i, e := range a.Examples {
			if i == maxExamples {
				break
			}
			cited = append(cited, e.Ops...)
		}
	}
	var shown map[int64]bool
	var left int
	p.Excerpt, shown, left = historyExcerpt(r.history(), cited)
	if left > 0 {
		p.ExcerptNote = fmt.Sprintf("%d cited operations are not shown (not in the history, or beyond the first %d rows).", left, maxExcerptRows)
	}
	p.Anomalies = anomalyViews(r.Anomalies, shown)

	for i, f := range r.Faults {
		if i == maxFaultRows {
			p.FaultsNote = fmt.Sprintf("Showing the first %d of %d faults.", maxFaultRows, len(r.Faults))
			break
		}
		p.Faults = append(p.Faults, faultView{
			At: fmtTime(f.At), Kind: f.Kind, What: f.What, Nodes: strings.Join(f.Nodes, ", "),
			Origin: f.Origin, Undo: f.Undo, Skipped: f.Skipped,
		})
	}
	for _, pl := range plots {
		p.Plots = append(p.Plots, embedPlot(dir, pl))
	}
	for _, v := range r.Linearizability {
		if len(v.HTML) > 0 {
			p.Visuals = append(p.Visuals, visualView{Partition: v.Partition, HTML: string(v.HTML)})
		}
	}
	return p
}

func anomalyViews(as []Anomaly, shown map[int64]bool) []anomalyView {
	var out []anomalyView
	for _, a := range as {
		v := anomalyView{Type: a.Type, Verdict: a.Verdict, Because: a.Because, Count: a.Count, Class: "permitted"}
		if a.Verdict == "violation" {
			v.Class = "violation"
		}
		for i, e := range a.Examples {
			if i == maxExamples {
				v.More = len(a.Examples) - maxExamples
				break
			}
			ev := exampleView{Partition: e.Partition, Value: e.Value, Process: e.Process, Detail: e.Detail}
			if e.Offset >= 0 {
				ev.Offset = strconv.FormatInt(e.Offset, 10)
			}
			for _, idx := range e.Ops {
				ev.Ops = append(ev.Ops, opRef{Index: idx, Linked: shown[idx]})
			}
			var evs []string
			for _, n := range e.Events {
				evs = append(evs, strconv.FormatUint(n, 10))
			}
			ev.Events = strings.Join(evs, ", ")
			v.Examples = append(v.Examples, ev)
		}
		out = append(out, v)
	}
	return out
}

// embedPlot inlines a plot as a data: URI, the SVG when it can be read
// (sharp at any zoom) and the PNG otherwise, so that the page stays one
// self-contained file. An <img> keeps each SVG's ids to itself.
func embedPlot(dir string, pl Plot) plotView {
	v := plotView{Title: pl.Title, Name: pl.Name}
	if pl.SVG != "" {
		if b, err := os.ReadFile(filepath.Join(dir, pl.SVG)); err == nil && len(b) > 0 {
			v.Src = template.URL("data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString(b))
			return v
		}
	}
	if pl.PNG != "" {
		if b, err := os.ReadFile(filepath.Join(dir, pl.PNG)); err == nil && len(b) > 0 {
			v.Src = template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(b))
			return v
		}
	}
	v.Missing = fmt.Sprintf("%s: neither %q nor %q could be read", pl.Name, pl.SVG, pl.PNG)
	return v
}

func finalRows(final []PartitionState) []finalRow {
	var out []finalRow
	for _, p := range sortedStates(final) {
		out = append(out, finalRow{
			Topic: p.Topic, Partition: p.Partition, Leader: leaderName(p.Leader), LeaderEpoch: p.LeaderEpoch,
			Replicas: joinIDs(p.Replicas), ISR: joinIDs(p.ISR), ELR: joinIDs(p.ELR),
			HW: p.HW, LSO: p.LastStable(), LEO: p.LEO, LogStartOffset: p.LogStartOffset, ReplicaLEO: replicaLEOs(p),
		})
	}
	return out
}

// replicaLEOs lists each replica's log end offset in replica order, "down"
// for a replica that is not running: how far behind the leader each is.
func replicaLEOs(p PartitionState) string {
	if len(p.ReplicaLEO) == 0 {
		return ""
	}
	var parts []string
	for _, id := range p.Replicas {
		leo, ok := p.ReplicaLEO[id]
		switch {
		case !ok:
			continue
		case leo < 0:
			parts = append(parts, fmt.Sprintf("%d:down", id))
		default:
			parts = append(parts, fmt.Sprintf("%d:%d", id, leo))
		}
	}
	return strings.Join(parts, " ")
}
