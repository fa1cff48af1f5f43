package sweep

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kafkasim/history"
	"kafkasim/reports"
)

// groupOps builds a history operation by operation, each at its position.
type groupOps struct{ ops []history.Op }

func (b *groupOps) add(at time.Duration, process string, t history.Type, f string, v history.Value) {
	b.ops = append(b.ops, history.Op{Index: int64(len(b.ops)), Time: int64(at), Process: process, Type: t, F: f, Value: v})
}

// both records an operation's invocation and completion at one instant,
// as a member records assign, revoke, crash and restart.
func (b *groupOps) both(at time.Duration, process, f string, v history.Value) {
	b.add(at, process, history.Invoke, f, v)
	b.add(at, process, history.OK, f, v)
}

func (b *groupOps) assign(at time.Duration, process, group string, generation int32, partitions ...string) {
	v := history.NoValue()
	x := v.X()
	x.Group, x.MemberID, x.Generation, x.Partitions = group, process+"-id", generation, append([]string{}, partitions...)
	b.both(at, process, history.FAssign, v)
}

func (b *groupOps) revoke(at time.Duration, process, group string, partitions ...string) {
	v := history.NoValue()
	x := v.X()
	x.Group, x.MemberID, x.Partitions = group, process+"-id", partitions
	b.both(at, process, history.FRevoke, v)
}

func (b *groupOps) process(at time.Duration, process, group string, partition int32, offset int64) {
	v := history.NoValue()
	v.X().Group = group
	v.Topic, v.Partition, v.Offset = "orders", partition, offset
	b.add(at, process, history.Invoke, history.FProcess, v)
	b.add(at+time.Millisecond, process, history.OK, history.FProcess, v)
}

func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// Two groups, every kind of gap:
//
// billing: c-0 owns orders-0 and c-1 orders-1 in generation 1. c-1
// crashes at 2 s; c-0 revokes orders-0 at 3 s (eager); generation 2 gives
// c-0 both at 5 s, closing gaps of 2 s and 3 s, both by the rebalance. c-0
// crashes at 6 s and, static, gets both back at 8 s in generation 2, first
// assigned before it crashed: 2 s each, closed by no rebalance. c-0
// revokes orders-1 at 9 s and nobody owns it until the history ends at
// 10 s: an open gap, in no metric. c-0 processes orders-0 0..3 and
// orders-1 0 after c-1 had processed it: one of six records again.
//
// ledger: d-0 owns orders-0 in generation 1, revokes it at 4 s and gets it
// back in generation 3 at 4.5 s: half a second, by its one rebalance.
func groupMetricsHistory() []history.Op {
	var b groupOps
	b.assign(sec(1), "c-0", "billing", 1, "orders-0")
	b.assign(sec(1), "c-1", "billing", 1, "orders-1")
	b.assign(sec(1), "d-0", "ledger", 1, "orders-0")
	b.process(sec(1.1), "c-0", "billing", 0, 0)
	b.process(sec(1.2), "c-0", "billing", 0, 1)
	b.process(sec(1.3), "c-0", "billing", 0, 2)
	b.process(sec(1.4), "c-1", "billing", 1, 0)
	b.both(sec(2), "c-1", history.FCrash, history.NoValue())
	b.revoke(sec(3), "c-0", "billing", "orders-0")
	b.revoke(sec(4), "d-0", "ledger", "orders-0")
	b.assign(sec(4.5), "d-0", "ledger", 3, "orders-0")
	b.assign(sec(5), "c-0", "billing", 2, "orders-0", "orders-1")
	b.process(sec(5.1), "c-0", "billing", 1, 0)
	b.process(sec(5.2), "c-0", "billing", 0, 3)
	b.both(sec(6), "c-0", history.FCrash, history.NoValue())
	b.both(sec(6.5), "c-0", history.FRestart, history.NoValue())
	b.assign(sec(8), "c-0", "billing", 2, "orders-0", "orders-1")
	b.revoke(sec(9), "c-0", "billing", "orders-1")
	b.add(sec(10), "p-0", history.Invoke, history.FSend, history.NoValue())
	return b.ops
}

func TestGroupMetrics(t *testing.T) {
	got := groupMetrics(reports.OpsHistory(groupMetricsHistory()))
	want := map[string]float64{
		"rebalances":                    2,                   // billing's generation 2, ledger's 3
		"unowned-seconds":               2 + 3 + 2 + 2 + 0.5, // the open second left out
		"unowned-seconds-per-rebalance": (2 + 3 + 0.5) / 2,   // the static rejoin's 4 s left out
		"max-unowned-seconds":           3,
		"reprocessed-fraction":          1.0 / 6,
	}
	if len(got) != len(GroupMetrics) {
		t.Errorf("metrics %v, want exactly %v", got, GroupMetrics)
	}
	for _, name := range GroupMetrics {
		if math.Abs(got[name]-want[name]) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, got[name], want[name])
		}
	}
}

// A history without a group operation, or whose group never rebalanced
// nor processed anything, measures zeros, never a division by zero (a NaN
// would not even be written: JSON has none).
func TestGroupMetricsZero(t *testing.T) {
	var b groupOps
	b.assign(sec(1), "c-0", "billing", 1, "orders-0")
	b.both(sec(2), "c-0", history.FCrash, history.NoValue())
	b.both(sec(3), "c-0", history.FRestart, history.NoValue())
	b.assign(sec(4), "c-0", "billing", 1, "orders-0")
	for name, ops := range map[string][]history.Op{"empty": nil, "no rebalance": b.ops} { // kafkasim:orderless: independent cases
		got := groupMetrics(reports.OpsHistory(ops))
		for _, m := range GroupMetrics {
			v, ok := got[m]
			if !ok || math.IsNaN(v) {
				t.Errorf("%s: %s = %v (present %v)", name, m, v, ok)
			}
		}
		if name == "no rebalance" && (got["rebalances"] != 0 || got["unowned-seconds"] != 2 || got["unowned-seconds-per-rebalance"] != 0) {
			t.Errorf("a static rejoin in the same generation: %v", got)
		}
	}
}

// The group member's own keys are axes, and so are the group's Kafka keys;
// each cell's scenario carries the value on every member.
func TestGroupAxes(t *testing.T) {
	dir := t.TempDir()
	base := `name: b
topics: [{ name: orders, partitions: 4, replication.factor: 1 }]
cluster: { brokers: 1 }
producers: [{ name: p, topic: orders, rate: 10/s }]
consumers:
  - { name: c, count: 2, group: billing, topics: [orders] }
  - { name: r, topics: [orders] }
`
	if err := os.WriteFile(filepath.Join(dir, "b.yaml"), []byte(base), 0o644); err != nil {
		t.Fatal(err)
	}
	load := func(axes string) (*File, error) {
		p := filepath.Join(dir, "s.yaml")
		if err := os.WriteFile(p, []byte("name: s\nbase: b.yaml\nseeds: 1\naxes:\n"+axes), 0o644); err != nil {
			t.Fatal(err)
		}
		return Load(p)
	}
	sw, err := load(`  commit: [auto, after-processing, before-processing]
  workers: [1, 4]
  workers-commit: [completed-prefix, highest-finished]
  side-effects: [plain, idempotent]
  static: [false, true]
  partition.assignment.strategy: [range, cooperative-sticky]
`)
	if err != nil {
		t.Fatal(err)
	}
	res := &Result{}
	plans := grid(sw, res)
	if len(plans) != 3*2*2*2*2*2 || len(res.Notes) != 0 {
		t.Fatalf("%d cells, notes %v", len(plans), res.Notes)
	}
	for _, p := range plans {
		v := p.cell.Values
		for _, c := range p.scenario.Consumers {
			if c.Group == "" {
				if c.Static || c.Commit != "" || c.Workers != 0 || c.SideEffects != "" {
					t.Fatalf("cell %s: the assign-mode reader took a group key: %+v", p.cell.ID, c)
				}
				continue
			}
			if c.Commit != v["commit"] || c.WorkersCommit != v["workers-commit"] || c.SideEffects != v["side-effects"] ||
				strings.TrimSpace(c.Config.Get("partition.assignment.strategy")) != v["partition.assignment.strategy"] ||
				(v["static"] == "true") != c.Static || (v["workers"] == "4") != (c.Workers == 4) {
				t.Fatalf("cell %s: member %+v", p.cell.ID, c)
			}
			wantAuto := "false"
			if v["commit"] == "auto" {
				wantAuto = "true"
			}
			if c.Config.Get("enable.auto.commit") != wantAuto {
				t.Fatalf("cell %s: enable.auto.commit %s", p.cell.ID, c.Config.Get("enable.auto.commit"))
			}
		}
	}
	sw, err = load("  group.protocol: [classic, consumer]\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range grid(sw, &Result{}) {
		c := p.scenario.Consumers[0]
		_, hasAssignor := c.Config.Values["partition.assignment.strategy"]
		if c.Config.Get("group.protocol") != p.cell.Values["group.protocol"] || hasAssignor != (p.cell.Values["group.protocol"] == "classic") {
			t.Fatalf("cell %s: %v", p.cell.ID, c.Config.Values)
		}
	}
	for _, tc := range []struct{ axes, want string }{
		{"  workers: [0]\n", "workers \"0\": want a number in 1..256"},
		{"  static: [maybe]\n", "static \"maybe\": want true or false"},
		{"  commit: [sometimes]\n", "commit \"sometimes\""},
		{"  partition.assignment.strategy: [fastest]\n", "fastest"},
	} {
		if _, err := load(tc.axes); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.axes, err, tc.want)
		}
	}
}

// A group key as an axis, or a group metric in a plot, over a base without
// a consumer group is an error at load, not a sweep of identical cells or
// a plot missing once the runs are done.
func TestGroupAxesNeedAGroup(t *testing.T) {
	dir := t.TempDir()
	base, err := os.ReadFile("../sweeps/batching-base.yaml")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "batching-base.yaml"), base, 0o644)
	for _, tc := range []struct{ body, want string }{
		{"axes:\n  static: [false, true]\n", "static applies to nothing in the base scenario (no consumer with a group)"},
		{"axes:\n  partition.assignment.strategy: [range]\n", "applies to nothing"},
		{"axes:\n  linger.ms: [0, 5]\nplots:\n  - { kind: lines, x: linger.ms, y: rebalances }\n",
			"rebalances is a consumer group's metric, and the base has no consumer with a group"},
	} {
		p := filepath.Join(dir, "s.yaml")
		os.WriteFile(p, []byte("name: s\nbase: batching-base.yaml\nseeds: 1\n"+tc.body), 0o644)
		if _, err := Load(p); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.body, err, tc.want)
		}
	}
}

// A sweep of a group measures its runs from their histories: the group
// metrics follow the other metrics in runs.csv, and a crashed dynamic
// member costs a rebalance and partition-seconds without an owner.
func TestGroupSweepRecordsGroupMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the cluster")
	}
	sw, err := Load("../sweeps/rebalance-cost.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sw.Axes = []Axis{{Name: "partition.assignment.strategy", Values: []string{"range"}}, {Name: "duration", Values: []string{"30s"}}}
	sw.Plots = nil
	out := t.TempDir()
	res, err := Run(sw, Options{Parallel: 1, Seeds: 1, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(res.Dir, "runs.csv"))
	if err != nil {
		t.Fatal(err)
	}
	head := strings.Split(strings.SplitN(string(data), "\n", 2)[0], ",")
	at := len(sw.Axes) + 3 + len(Metrics) // axes, seed, verdict, trace_hash, metrics
	if strings.Join(head[at:at+len(GroupMetrics)], ",") != strings.Join(GroupMetrics, ",") {
		t.Fatalf("runs.csv columns: %v", head)
	}
	m := res.Records[res.Cells[0].ID][0].Metrics
	if m["rebalances"] < 1 || m["unowned-seconds"] <= 0 || m["unowned-seconds-per-rebalance"] <= 0 || m["max-unowned-seconds"] <= 0 {
		t.Fatalf("a crashed dynamic member under range cost nothing: %v", m)
	}
	// A record written before the group metrics existed is run again, not
	// read as zeros; one that has them is resumed.
	rebalances, unowned := m["rebalances"], m["unowned-seconds"]
	rec := res.Records[res.Cells[0].ID][0]
	path := recordPath(res.Dir, rec.Cell, rec.Seed)
	if again, err := Run(sw, Options{Parallel: 1, Seeds: 1, Out: out}); err != nil || again.Resumed != 1 || again.Runs != 0 {
		t.Fatalf("unchanged: %d runs, %d resumed (%v)", again.Runs, again.Resumed, err)
	}
	for _, name := range GroupMetrics {
		delete(rec.Metrics, name)
	}
	if err := writeRecord(path, rec); err != nil {
		t.Fatal(err)
	}
	again, err := Run(sw, Options{Parallel: 1, Seeds: 1, Out: out})
	if err != nil || again.Resumed != 0 || again.Runs != 1 {
		t.Fatalf("a record without group metrics: %d runs, %d resumed (%v)", again.Runs, again.Resumed, err)
	}
	if got := again.Records[rec.Cell][0].Metrics; got["rebalances"] != rebalances || got["unowned-seconds"] != unowned {
		t.Fatalf("run again: %v, first %v rebalances, %v unowned-seconds", got, rebalances, unowned)
	}
}
