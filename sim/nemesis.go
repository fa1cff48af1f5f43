package sim

// The nemesis: random faults at rates, drawn from the seed.
//
// Each rule injects one kind of fault again and again. Its first fault fires
// a gap drawn from Every after the fault phase starts; each fault lasts a
// duration drawn from Down, and the next fault of the rule starts a fresh
// gap from Every after this one started: `every: 10s, down: 3s` fires at
// 10 s, 20 s, 30 s, each fault undone 3 s after it began. A rule never
// stacks its own faults: when a drawn gap is shorter than the fault it
// follows, the next fault starts as that one ends. Targets are drawn when a
// fault fires. Each rule draws from its own stream, so that removing one rule
// does not change when the others fire.
//
// Swarm testing (as in TigerBeetle's VOPR and FoundationDB): with Swarm on,
// the seed also decides which rules are on at all and how often each fires, so
// that across seeds some runs hammer one fault kind and others never see it.
// A single fixed mix of faults hides bugs that need one fault to be frequent
// and another to be absent.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// PartitionShape says how a nemesis partition splits the nodes.
type PartitionShape string

// Partition shapes.
const (
	// ShapeIsolateOne cuts one node off from every other node.
	ShapeIsolateOne PartitionShape = "isolate-one"
	// ShapeHalves splits the candidates into two random halves.
	ShapeHalves PartitionShape = "halves"
	// ShapeOneWay stops one node's messages to every other node; it still
	// receives theirs.
	ShapeOneWay PartitionShape = "one-way"
	// ShapeRack cuts one rack off from every other node.
	ShapeRack PartitionShape = "rack"
)

// PartitionShapes lists every shape.
var PartitionShapes = []PartitionShape{ShapeIsolateOne, ShapeHalves, ShapeOneWay, ShapeRack}

// Meaning says what a shape does, for messages and docs. Each draws from
// the rule's candidates (among, every node by default) when it fires.
func (s PartitionShape) Meaning() string {
	switch s {
	case ShapeIsolateOne:
		return "one node cut off from every other"
	case ShapeHalves:
		return "the nodes split into two random groups"
	case ShapeOneWay:
		return "one node's messages to the others dropped, theirs still reaching it"
	case ShapeRack:
		return "one rack's nodes cut off from every other node"
	}
	return ""
}

// NemesisRule injects one kind of fault at a rate.
type NemesisRule struct {
	// Fault is the template: its Kind and Target (usually random-broker),
	// or its disk fault. For partitions, Shape draws the groups instead.
	Fault Fault
	Shape PartitionShape
	// Among selects the nodes a partition shape chooses from; "all" when empty.
	Among string
	// Every is the time from one fault's start to the next one's, and from
	// the start of the fault phase to the first fault. It is never shorter
	// than the fault it follows: the next fault waits for this one to end.
	Every Range
	// Down is how long each fault lasts before it is undone.
	Down Range
	// Latency, when a range, is the latency each slow-network fault draws
	// (Fault.Latency otherwise).
	Latency Range
}

// NemesisOptions configure the nemesis of a world.
type NemesisOptions struct {
	Rules []NemesisRule
	// Swarm draws, per seed, which rules are on and a rate multiplier for each.
	Swarm bool
	// Intensity multiplies every rule's rate (gaps are divided by it, the
	// faults' durations are not, and a rule's faults still do not overlap);
	// zero means one. Sweeps use it as their fault-intensity axis.
	Intensity float64
	// Start and Stop bound the window in which faults are injected; Stop zero
	// means until StopFaults or HealAll.
	Start, Stop time.Duration
}

// NemesisPlan is what the nemesis drew for this seed: printed with the run so
// that a failure's fault mix is visible.
type NemesisPlan struct {
	Rules []PlannedRule
}

// PlannedRule is one rule as drawn.
type PlannedRule struct {
	Rule    NemesisRule
	Enabled bool
	// RateFactor multiplies the rule's rate (swarm draw times intensity).
	RateFactor float64
}

// String lists the plan, one rule a line.
func (p NemesisPlan) String() string {
	var b strings.Builder
	for i, r := range p.Rules {
		state := "off"
		if r.Enabled {
			state = fmt.Sprintf("on, rate x%.2f", r.RateFactor)
		}
		fmt.Fprintf(&b, "nemesis[%d] %s: %s\n", i, r.Rule.describe(), state)
	}
	return b.String()
}

func (r NemesisRule) describe() string {
	if r.Fault.Kind == FaultPartition && r.Shape != "" {
		return fmt.Sprintf("partition %s every %v..%v for %v..%v", r.Shape, r.Every.Min, r.Every.Max, r.Down.Min, r.Down.Max)
	}
	return fmt.Sprintf("%s every %v..%v for %v..%v", r.Fault, r.Every.Min, r.Every.Max, r.Down.Min, r.Down.Max)
}

// Validate checks a rule's form.
func (r NemesisRule) Validate() error {
	if r.Every.Min <= 0 || r.Every.Max < r.Every.Min {
		return fmt.Errorf("nemesis %s: every %v..%v: want 0 < min <= max", r.Fault.Kind, r.Every.Min, r.Every.Max)
	}
	if r.Down.Min < 0 || r.Down.Max < r.Down.Min {
		return fmt.Errorf("nemesis %s: duration %v..%v: want 0 <= min <= max", r.Fault.Kind, r.Down.Min, r.Down.Max)
	}
	f := r.Fault
	if f.Kind == FaultPartition && r.Shape != "" {
		known := false
		for _, s := range PartitionShapes {
			known = known || s == r.Shape
		}
		if !known {
			return fmt.Errorf("nemesis partition: unknown shape %q", r.Shape)
		}
		f.Groups = [][]string{{"a"}, {"b"}} // drawn at fire time
	}
	return f.Validate()
}

type nemesisState struct {
	plan    NemesisPlan
	opts    NemesisOptions
	streams []*rand.Rand
	off     bool
}

func (n *nemesisState) stop() { n.off = true }

// StartNemesis plans the nemesis for this seed and schedules each enabled
// rule's first fault. It returns the plan.
func (w *World) StartNemesis(opts NemesisOptions) (NemesisPlan, error) {
	for _, r := range opts.Rules {
		if err := r.Validate(); err != nil {
			return NemesisPlan{}, err
		}
	}
	if opts.Intensity < 0 || math.IsNaN(opts.Intensity) || math.IsInf(opts.Intensity, 0) {
		return NemesisPlan{}, fmt.Errorf("nemesis intensity %v: must be a finite non-negative number", opts.Intensity)
	}
	intensity := opts.Intensity
	if intensity == 0 {
		intensity = 1
	}
	n := &w.faults.nemesis
	n.opts = opts
	n.plan = NemesisPlan{Rules: make([]PlannedRule, len(opts.Rules))}
	swarm := w.seed.Stream("nemesis/swarm")
	anyOn := false
	for i, r := range opts.Rules {
		p := PlannedRule{Rule: r, Enabled: true, RateFactor: intensity}
		if opts.Swarm {
			p.Enabled = swarm.IntN(2) == 0
			p.RateFactor *= math.Exp2(4*swarm.Float64() - 2) // a quarter to four times as often
		}
		anyOn = anyOn || p.Enabled
		n.plan.Rules[i] = p
	}
	if opts.Swarm && !anyOn && len(opts.Rules) > 0 {
		n.plan.Rules[swarm.IntN(len(opts.Rules))].Enabled = true
	}
	n.streams = make([]*rand.Rand, len(opts.Rules))
	for i, p := range n.plan.Rules {
		n.streams[i] = w.seed.Stream(fmt.Sprintf("nemesis/%d/%s", i, p.Rule.Fault.Kind))
		if p.Enabled {
			start := max(opts.Start, w.sched.now)
			w.scheduleNemesis(i, start, start)
		}
	}
	return n.plan, nil
}

// scheduleNemesis schedules a rule's next fault a gap drawn from Every after
// from, and not before notBefore (the end of the fault it follows).
func (w *World) scheduleNemesis(rule int, from, notBefore time.Duration) {
	n := &w.faults.nemesis
	p := n.plan.Rules[rule]
	gap := time.Duration(float64(p.Rule.Every.Draw(n.streams[rule])) / p.RateFactor)
	w.sched.Schedule(Event{At: max(from+max(gap, time.Millisecond), notBefore), Kind: EventNemesis, Node: NoNode, From: NoNode,
		Arg: uint64(rule)})
}

func (fs *faultState) nemesisFire(e *Event) {
	w := fs.w
	n := &fs.nemesis
	if n.off || fs.stopped || (n.opts.Stop > 0 && w.sched.now >= n.opts.Stop) {
		return
	}
	rule := int(e.Arg)
	p := n.plan.Rules[rule]
	rng := n.streams[rule]
	f := p.Rule.Fault
	f.For = p.Rule.Down.Draw(rng)
	if p.Rule.Latency.Max > p.Rule.Latency.Min {
		f.Latency = p.Rule.Latency.Draw(rng)
	}
	origin := fmt.Sprintf("nemesis/%d", rule)
	if f.Kind == FaultPartition && p.Rule.Shape != "" {
		groups, oneWay, err := fs.drawShape(p.Rule, rng)
		if err != nil {
			fs.logRecord(FaultRecord{At: w.sched.now, Fault: f, Origin: origin, Skipped: err.Error()})
			w.scheduleNemesis(rule, w.sched.now, w.sched.now)
			return
		}
		f.Groups, f.OneWay = groups, oneWay
	}
	fs.apply(f, origin, rng)
	// The next fault of this rule starts a gap after this one started, and
	// not before this one ends: one rule never stacks its own faults. Its
	// undo, scheduled first, runs first when both fall on one instant.
	w.scheduleNemesis(rule, w.sched.now, w.sched.now+f.For)
}

// drawShape draws a partition's groups, as node names, from the rule's stream.
func (fs *faultState) drawShape(r NemesisRule, rng *rand.Rand) ([][]string, bool, error) {
	w := fs.w
	among := r.Among
	if among == "" {
		among = "all"
	}
	ids, err := w.Resolve(among, rng, nil)
	if err != nil {
		return nil, false, err
	}
	if len(ids) < 2 {
		return nil, false, fmt.Errorf("partition %s: %s has fewer than two nodes", r.Shape, among)
	}
	names := fs.names(ids)
	switch r.Shape {
	case ShapeIsolateOne:
		return [][]string{{names[rng.IntN(len(names))]}, {"rest"}}, false, nil
	case ShapeOneWay:
		return [][]string{{names[rng.IntN(len(names))]}, {"rest"}}, true, nil
	case ShapeHalves:
		rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		half := 1 + rng.IntN(len(names)-1)
		return [][]string{names[:half], names[half:]}, false, nil
	case ShapeRack:
		var racks []string
		seen := map[string]bool{}
		for _, id := range ids {
			if rack := w.nodes[id].spec.Rack; rack != "" && !seen[rack] {
				seen[rack] = true
				racks = append(racks, rack)
			}
		}
		if len(racks) == 0 {
			return nil, false, fmt.Errorf("partition rack: no node of %s has a rack", among)
		}
		return [][]string{{"rack(" + racks[rng.IntN(len(racks))] + ")"}, {"rest"}}, false, nil
	}
	return nil, false, fmt.Errorf("unknown partition shape %q", r.Shape)
}
