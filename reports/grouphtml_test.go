package reports

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"kafkasim/history"
)

// groupRun is groupHistory as a run, with sends and commits after it so
// that the group lag has something to draw.
func groupRun() *Run {
	ops := groupHistory()
	b := opsBuilder{ops: ops}
	for o := 0; o < 5; o++ {
		b.add(ms(12100+10*o), "p-0", history.Invoke, history.FSend, sendValue(fmt.Sprint("p-0:x", o)))
		b.add(ms(12105+10*o), "p-0", history.OK, history.FSend, ackValue(fmt.Sprint("p-0:x", o), 0, int64(o)))
	}
	b.add(ms(12500), "c-0", history.Invoke, history.FCommit, commitValue("billing", map[string]int64{"orders-0": 3}))
	b.add(ms(12600), "c-0", history.OK, history.FCommit, commitValue("billing", map[string]int64{"orders-0": 3}))
	return &Run{Scenario: "groups", Seed: 1, Verdict: "pass", SimTime: 13 * time.Second, Ops: b.ops,
		Faults: []Fault{{At: ms(5000), Kind: "crash", What: "crash c-1", Origin: "schedule", Nodes: []string{"c-1"}},
			{At: ms(8000), Kind: "restart", What: "restart c-1", Origin: "schedule", Nodes: []string{"c-1"}, Undo: true}}}
}

// The report shows each group: its table, and its lanes with every
// tenure and every time without owner.
func TestReportShowsConsumerGroups(t *testing.T) {
	page := renderReport(t, groupRun())
	checkWellFormed(t, page)
	for _, want := range []string{
		`<a href="#groups">consumer groups</a>`,
		`<h3 id="group-billing">Group <span class="mono">billing</span></h3>`,
		`<h3 id="group-ledger">Group <span class="mono">ledger</span></h3>`,
		`<tr><td>rebalances (generations assigned)</td><td class="num">3</td></tr>`,
		`<tr><td>commits acknowledged</td><td class="num">2</td></tr>`,
		`<tr><td>records reprocessed</td><td class="num">2</td></tr>`,
		`<tr><td class="mono">orders-1</td><td class="num">3</td><td class="num">2</td><td class="num">1.5s</td><td class="num">1s</td></tr>`,
		// ledger's orders-1: half a second, then none from 11 s to the
		// history's end at 12.6 s.
		`<td class="num">2.1s <span class="bad">(none at the end)</span></td><td class="num">1.6s</td>`,
		`orders-1 had no owner for 1s, until generation 2 assigned it`,
		`orders-1 owned by c-1 (member c-1-b), generation 3, still owned at the end`,
		`rebalance: generation 2 first assigned at 6s`,
		`id="plot-group-lag"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	// One lane segment per tenure and per gap of billing's three
	// partitions and ledger's two, each with its tooltip.
	if n := strings.Count(page, " owned by "); n != 9+4 {
		t.Errorf("%d tenures drawn, want 13", n)
	}
	if n := strings.Count(page, " had no owner "); n != 6+2 {
		t.Errorf("%d gaps drawn, want 8", n)
	}
}

// A run without consumer groups has no groups section and no group lag.
func TestReportWithoutGroups(t *testing.T) {
	r, _ := syntheticRun()
	page := renderReport(t, r)
	if strings.Contains(page, `id="groups"`) || strings.Contains(page, "plot-group-lag") {
		t.Fatal("a run without groups shows a groups section or a group lag plot")
	}
	for _, f := range buildFigures(groupRun()) {
		if f.name == "group-lag" {
			if len(f.panels) != 1 || len(f.panels[0].series) != 2 || f.panels[0].series[0].name != "billing" {
				t.Fatalf("group-lag: %+v", f.panels)
			}
			ys := f.panels[0].series[0].ys
			if last := ys[len(ys)-1]; last != 2 { // log end 5, committed 3
				t.Fatalf("billing's lag at the end: %v", ys)
			}
			return
		}
	}
	t.Fatal("no group-lag figure for a run with groups")
}
