package reports

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Each fault is marked from when it struck to what ended it: its own undo
// record, else a later fault that ends its kind on its nodes, else the
// heal of the fault phase; an admin operation is an instant, a skipped
// fault a mark of its own, and the liveness heal a phase boundary.
func TestFaultRowsPairFaultsWithTheirEnds(t *testing.T) {
	faults := []Fault{
		{At: sec(5), Kind: "pause", What: "pause random-broker for 3s", Origin: "nemesis/0", Nodes: []string{"broker-2"}},
		{At: sec(6), Kind: "pause", What: "pause random-broker for 4s", Origin: "nemesis/0", Nodes: []string{"broker-3"}},
		{At: sec(8), Kind: "pause", What: "pause random-broker for 3s", Origin: "nemesis/0", Nodes: []string{"broker-2"}, Undo: true},
		{At: sec(10), Kind: "pause", What: "pause random-broker for 4s", Origin: "nemesis/0", Nodes: []string{"broker-3"}, Undo: true},
		{At: sec(15), Kind: "kill", What: "kill leader(orders-0) for 5s", Origin: "schedule", Nodes: []string{"broker-1"}},
		{At: sec(20), Kind: "kill", What: "kill leader(orders-0) for 5s", Origin: "schedule", Nodes: []string{"broker-1"}, Undo: true},
		{At: sec(21), Kind: "custom", What: "custom add-partitions orders to 6", Origin: "schedule"},
		{At: sec(25), Kind: "kill", What: "kill broker-9", Origin: "schedule", Skipped: "no node matched"},
		{At: sec(30), Kind: "kill", What: "kill broker-3", Origin: "schedule", Nodes: []string{"broker-3"}},
		{At: sec(40), Kind: "restart", What: "restart broker-3", Origin: "schedule", Nodes: []string{"broker-3"}},
		{At: sec(50), Kind: "partition", What: "partition [broker-3] | [rest]", Origin: "schedule"},
		{At: sec(55), Kind: "crash", What: "crash random-broker for 8s", Origin: "nemesis/1", Nodes: []string{"broker-1"}},
		{At: sec(60), Kind: "heal", What: "heal all", Origin: "heal"},
		{At: sec(63), Kind: "crash", What: "crash random-broker for 8s", Origin: "nemesis/1", Nodes: []string{"broker-1"}, Undo: true},
	}
	m := newRunMarks(&Run{Faults: faults}, sec(70), 0)
	got := map[string][]span{}
	var kinds []string
	for _, r := range m.rows {
		if r.kind != "" {
			kinds = append(kinds, r.kind)
		}
		k := kinds[len(kinds)-1]
		got[k] = append(got[k], r.spans...)
	}
	if strings.Join(kinds, " ") != "pause kill custom restart partition crash" {
		t.Fatalf("rows by kind %v", kinds)
	}
	type want struct {
		from, to float64
		label    string
		undone   bool
		skipped  bool
	}
	check := func(kind string, ws ...want) {
		t.Helper()
		ss := got[kind]
		if len(ss) != len(ws) {
			t.Fatalf("%s: %d spans %+v, want %d", kind, len(ss), ss, len(ws))
		}
		for i, w := range ws {
			s := ss[i]
			if s.from != sec(w.from) || s.to != sec(w.to) || s.label != w.label || s.undone != w.undone || s.skipped != w.skipped {
				t.Errorf("%s[%d] = %+v, want %+v", kind, i, s, w)
			}
		}
	}
	// The overlapping pauses take two rows of one kind.
	check("pause", want{5, 8, "broker-2", true, false}, want{6, 10, "broker-3", true, false})
	check("kill", want{15, 20, "broker-1", true, false}, want{25, 25, "skipped", false, true}, want{30, 40, "broker-3", true, false})
	check("custom", want{21, 21, "add-partitions orders to 6", false, false})
	check("restart", want{40, 40, "broker-3", false, false})
	// A cut without an end of its own lasts until the liveness heal.
	check("partition", want{50, 60, "broker-3 | rest", true, false})
	// The liveness heal ends every fault: a crash's own restart, due after
	// it, does not draw it longer.
	check("crash", want{55, 60, "broker-1", true, false})
	if len(m.bounds) != 1 || m.bounds[0].at != sec(60) {
		t.Errorf("bounds %+v: the liveness heal ends the fault phase", m.bounds)
	}
	if len(m.phases) != 1 || m.phases[0].label != phaseFaults || m.phases[0].to != sec(60) {
		t.Errorf("phases %+v", m.phases)
	}
}

// The report's times read as a person reads them: the timeline's
// tooltips, the fault table and the history excerpt.
func TestReportTimesAreReadable(t *testing.T) {
	r, cites := syntheticRun()
	odd := 1352796714 * time.Nanosecond // 1.3527967140000001 s as a float
	r.Faults = append([]Fault{{At: odd, Kind: "pause", What: "pause c-0 for 2s", Origin: "schedule", Nodes: []string{"c-0"}}}, r.Faults...)
	for i := range r.Timeline {
		r.Timeline[i].At += odd - time.Second // every sample at an odd time
	}
	hostileAck := cites["hostile"][0]
	r.Ops[hostileAck].Time = int64(odd)
	page := renderReport(t, r)
	if m := regexp.MustCompile(`[0-9]+\.[0-9]{4,}`).FindString(page); m != "" {
		t.Errorf("report.html shows a time as %q", m)
	}
	for _, want := range []string{
		"<td class=\"num\">1.353s</td><td>pause</td>",              // the fault table
		"<title>1.353s pause c-0 for 2s (c-0) until",               // the timeline's fault row
		"(10.353s–11.353s)</title>",                                // a lane's segment
		"<td class=\"num\">1.353s</td><td class=\"mono\">p-1</td>", // the excerpt
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
}

// A long nemesis run can strike with every kind of fault: the strip keeps
// to maxMarkRows rows, one per kind, the rarest kinds sharing the last.
func TestFaultRowsStayFew(t *testing.T) {
	kinds := []string{"crash", "kill", "pause", "partition", "isolate", "slow-network", "stall", "clock", "disk", "disconnect"}
	var faults []Fault
	for i := 0; i < 200; i++ {
		k := kinds[i%len(kinds)]
		faults = append(faults, Fault{At: sec(float64(i) / 2), Kind: k, What: k + " broker-1 for 3s", Origin: "nemesis/0", Nodes: []string{"broker-1"}})
	}
	m := newRunMarks(&Run{Faults: faults}, sec(120), 0)
	if len(m.rows) != maxMarkRows {
		t.Fatalf("%d rows, want %d", len(m.rows), maxMarkRows)
	}
	n := 0
	for i, r := range m.rows {
		n += len(r.spans)
		want := kinds[i]
		if i == maxMarkRows-1 {
			want = "other"
		}
		if r.kind != want {
			t.Errorf("row %d is %q, want %q", i, r.kind, want)
		}
		for j := 1; j < len(r.spans); j++ {
			if r.spans[j].from < r.spans[j-1].from {
				t.Errorf("row %s out of time order", r.kind)
			}
		}
	}
	if n != len(faults) {
		t.Errorf("%d faults marked of %d", n, len(faults))
	}
}
