package scenarios

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"kafkasim/model/cluster"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// faultKinds are the keys that name a scheduled fault, with the sim kind
// each maps to ("add-partitions", "elect-leaders", "alter-config" and
// "reassign" are admin operations, custom faults).
var faultKinds = map[string]sim.FaultKind{
	"crash":          sim.FaultCrash,
	"kill":           sim.FaultKill,
	"shutdown":       sim.FaultShutdown,
	"restart":        sim.FaultRestart,
	"pause":          sim.FaultPause,
	"resume":         sim.FaultResume,
	"partition":      sim.FaultPartition,
	"isolate":        sim.FaultIsolate,
	"heal":           sim.FaultHeal,
	"disconnect":     sim.FaultDisconnect,
	"slow-network":   sim.FaultSlowNetwork,
	"stall":          sim.FaultStall,
	"clock":          sim.FaultClock,
	"power-loss":     sim.FaultPowerLoss,
	"disk":           sim.FaultDisk,
	"add-partitions": sim.FaultCustom,
	"elect-leaders":  sim.FaultCustom,
	"alter-config":   sim.FaultCustom,
	"reassign":       sim.FaultCustom,
}

// faultKindOrder lists them for messages (and docs/scenarios.md), roughly
// from the most to the least common.
var faultKindOrder = []string{"crash", "kill", "shutdown", "restart", "pause", "resume", "partition", "isolate", "heal",
	"disconnect", "slow-network", "stall", "clock", "power-loss", "disk", "add-partitions", "elect-leaders",
	"alter-config", "reassign"}

// undoKey is the key that sets how long a fault of each kind lasts.
var undoKey = map[string]string{
	"crash": "restart-after", "kill": "restart-after", "shutdown": "restart-after", "power-loss": "restart-after",
	"pause": "resume-after", "partition": "heal-after", "isolate": "heal-after", "slow-network": "heal-after",
	"stall": "heal-after", "clock": "heal-after", "disk": "heal-after",
}

var faultParams = []string{"at", "after-elections", "restart-after", "resume-after", "heal-after", "one-way", "peer", "latency", "messages", "stuck-connections", "offset", "drift-ppm"}

func (r *reader) faults(f field, s *Scenario) {
	items := r.list(f)
	if len(items) > FaultsMax {
		r.fail(f.value, f.path, "%d faults is more than %d", len(items), FaultsMax)
		return
	}
	known := append(append([]string(nil), faultKindOrder...), faultParams...)
	for i, item := range items {
		if item == nil {
			continue
		}
		path := index(f.path, i)
		fields := r.fields(item, path, known)
		byName := map[string]field{}
		var kinds []field
		for _, g := range fields {
			byName[g.name] = g
			if _, ok := faultKinds[g.name]; ok {
				kinds = append(kinds, g)
			}
		}
		if len(fields) == 0 && deref(item).Kind == yaml.MappingNode {
			r.fail(item, path, "an empty fault")
			continue
		}
		if deref(item).Kind != yaml.MappingNode {
			continue
		}
		if len(kinds) != 1 {
			names := make([]string, len(kinds))
			for j, k := range kinds {
				names[j] = k.name
			}
			if len(kinds) == 0 {
				r.fail(item, path, "which fault? want one of %s", strings.Join(faultKindOrder, ", "))
			} else {
				r.fail(kinds[1].key, path, "one fault per entry, got %s", strings.Join(names, " and "))
			}
			continue
		}
		kind := kinds[0]
		// A wrong time does not stop the rest of the entry being checked.
		var when time.Duration
		if at, ok := byName["at"]; !ok {
			r.fail(item, path+".at", "missing: when the fault fires, e.g. at: 10s")
		} else if v, ok := r.duration(at, 0, PhaseMax); ok {
			when = v
			if when > s.Duration && !r.failedAt("duration") {
				r.fail(at.value, at.path, "%v is after the fault phase ends (duration %v); faults stop and everything heals then", when, s.Duration)
			}
		}
		elections := 0
		if g, ok := byName["after-elections"]; ok {
			if n, ok := r.int(g, 1, ElectionsMax); ok {
				elections = int(n)
			}
		}
		// Parameters that do not apply to the kind are errors, not silence.
		var forDur time.Duration
		for _, g := range fields {
			switch g.name {
			case "restart-after", "resume-after", "heal-after":
				want := undoKey[kind.name]
				if want == "" {
					r.fail(g.key, g.path, "%s does not end by itself: it has no %s", kind.name, g.name)
					continue
				}
				if g.name != want {
					r.fail(g.key, g.path, "a %s ends with %s, not %s", kind.name, want, g.name)
					continue
				}
				if v, ok := r.duration(g, 0, PhaseMax); ok {
					forDur = v
				}
			case "one-way":
				if kind.name != "partition" {
					r.fail(g.key, g.path, "one-way applies to partition only")
				}
			case "peer":
				if kind.name != "disconnect" {
					r.fail(g.key, g.path, "peer applies to disconnect only")
				}
			case "latency":
				if kind.name != "slow-network" {
					r.fail(g.key, g.path, "latency applies to slow-network only")
				}
			case "messages", "stuck-connections":
				if kind.name != "stall" {
					r.fail(g.key, g.path, "%s applies to stall only", g.name)
				}
			case "offset", "drift-ppm":
				if kind.name != "clock" {
					r.fail(g.key, g.path, "%s applies to clock only", g.name)
				}
			}
		}
		before := r.failures
		fts := r.fault(kind, byName, s)
		if kind.name == "add-partitions" && r.failures > before {
			r.grownDoubtful = true
		}
		if len(s.Faults)+len(fts) > FaultsMax {
			r.fail(kind.key, kind.path, "its targets make %d faults in all, more than %d", len(s.Faults)+len(fts), FaultsMax)
			break
		}
		for _, ft := range fts {
			ft.For = forDur
			if g, ok := byName["heal-after"]; ok && ft.Kind == sim.FaultDisk && !diskFaultEnds(ft.Disk) {
				r.fail(g.key, g.path, "a disk %s fault does not end, so it takes no heal-after: the damage stays until the bytes are rewritten", ft.Disk)
				break
			}
			if err := ft.Validate(); err != nil {
				r.fail(kind.value, kind.path, "%v", err)
				continue
			}
			s.Faults = append(s.Faults, ScheduledFault{At: when, Fault: ft, AfterElections: elections,
				Line: kind.key.Line, Column: kind.key.Column, Path: kind.path, Key: kind.name})
		}
	}
	r.checkNamedPartitions(s)
	sort.SliceStable(s.Faults, func(i, j int) bool { return s.Faults[i].At < s.Faults[j].At })
}

// fault builds the sim faults of one entry (a list of targets gives one each,
// all at the same instant).
func (r *reader) fault(kind field, params map[string]field, s *Scenario) []sim.Fault {
	base := sim.Fault{Kind: faultKinds[kind.name]}
	switch kind.name {
	case "partition":
		groups := r.groups(kind)
		if groups == nil {
			return nil
		}
		base.Groups = groups
		if g, ok := params["one-way"]; ok {
			if v, ok := r.bool(g); ok {
				base.OneWay = v
			}
		}
		return []sim.Fault{base}
	case "heal":
		return []sim.Fault{base}
	case "isolate":
		targets := r.strings(kind)
		if len(targets) > 1 {
			base.Kind = sim.FaultPartition
			base.Groups = [][]string{targets, {"rest"}}
			return []sim.Fault{base}
		}
	case "disk":
		return r.diskFault(kind, base)
	case "add-partitions":
		return r.addPartitions(kind, base, s)
	case "elect-leaders":
		return r.electLeaders(kind, base, s)
	case "alter-config":
		return r.alterConfig(kind, base, s)
	case "reassign":
		return r.reassign(kind, base, s)
	case "slow-network":
		g, ok := params["latency"]
		if !ok {
			r.fail(kind.key, kind.path, "slow-network needs latency: the delay added to every message to and from the target")
			return nil
		}
		if v, ok := r.duration(g, time.Microsecond, time.Hour); ok {
			base.Latency = v
		}
	case "stall":
		g, ok := params["messages"]
		if !ok {
			r.fail(kind.key, kind.path, "stall needs messages: the requests or answers the target holds, e.g. [AlterPartition]")
			return nil
		}
		before := r.failures
		names := r.strings(g)
		if r.failures > before {
			return nil // not a list of names: said once
		}
		for i, name := range names {
			if !cluster.KnownMessageName(name) {
				r.fail(g.value, index(g.path, i), "unknown message %q: want one of %s", name, strings.Join(cluster.MessageNames, ", "))
				return nil
			}
		}
		if len(names) == 0 {
			r.fail(nodeOr(g.value, g.key), g.path, "stall needs at least one message name")
			return nil
		}
		base.Messages = names
		if g, ok := params["stuck-connections"]; ok {
			if v, ok := r.bool(g); ok {
				base.StuckConnections = v
			}
		}
	case "clock":
		if g, ok := params["offset"]; ok {
			if v, ok := r.signedDuration(g, PhaseMax); ok {
				base.ClockJump = v
			}
		}
		if g, ok := params["drift-ppm"]; ok {
			if n, ok := r.int(g, -sim.DriftPPMMax/2, sim.DriftPPMMax); ok {
				base.DriftPPM = n
			}
		}
	case "disconnect":
		if g, ok := params["peer"]; ok {
			base.Peer = r.str(g)
		}
	}
	var out []sim.Fault
	for _, t := range r.strings(kind) {
		f := base
		f.Target = strings.TrimSpace(t)
		out = append(out, f)
	}
	if len(out) == 0 {
		r.fail(nodeOr(kind.value, kind.key), kind.path, "which node? %s", targetForms)
	}
	return out
}

// targetForms says every way a fault may name its targets.
var targetForms = "a target is one of " + strings.Join(withGroupCoordinator(cluster.TargetForms()), ", ")

// GroupCoordinatorForm is the selector naming the broker that coordinates
// a consumer group: the leader of the group's partition of
// __consumer_offsets, resolved when the fault fires. A fault keeps it as
// written in its targets (sim.Fault's Target, Groups, Peer, a nemesis
// rule's Among), as it keeps leader(T-P).
const GroupCoordinatorForm = "group-coordinator(GROUP)"

// ParseGroupCoordinator returns the group a group-coordinator(GROUP)
// selector names.
func ParseGroupCoordinator(selector string) (group string, ok bool) {
	return sim.ParseCall(selector, "group-coordinator")
}

// withGroupCoordinator adds the group coordinator's selector to the
// model's forms, after leader(T-P), unless the model lists it already.
func withGroupCoordinator(forms []string) []string {
	if contains(forms, GroupCoordinatorForm) {
		return forms
	}
	out := make([]string, 0, len(forms)+1)
	added := false
	for _, f := range forms {
		out = append(out, f)
		if strings.HasPrefix(f, "leader(") && !added {
			out, added = append(out, GroupCoordinatorForm), true
		}
	}
	if !added {
		out = append(out, GroupCoordinatorForm)
	}
	return out
}

// groupCoordinatorTarget checks a group-coordinator(GROUP) selector: the
// group must be one a consumer entry names. matched is false for a
// selector of another form.
func groupCoordinatorTarget(selector string, s *Scenario) (matched bool, err error) {
	group, ok := ParseGroupCoordinator(selector)
	if !ok {
		return false, nil
	}
	groups := s.Groups()
	switch {
	case contains(groups, group):
		return true, nil
	case len(groups) == 0:
		return true, fmt.Errorf("%s: no consumer joins group %q (the scenario has no consumer group)", selector, group)
	}
	return true, fmt.Errorf("%s: no consumer joins group %q (groups: %s)", selector, group, strings.Join(groups, ", "))
}

func (r *reader) signedDuration(f field, hi time.Duration) (time.Duration, bool) {
	s, ok := r.scalar(f)
	if !ok {
		return 0, false
	}
	neg := strings.HasPrefix(strings.TrimSpace(s), "-")
	d, err := parseDuration(strings.TrimPrefix(strings.TrimSpace(s), "-"))
	if err != nil {
		r.fail(f.value, f.path, "%v", err)
		return 0, false
	}
	if d > hi {
		r.fail(f.value, f.path, "%v is out of range: want at most %v either way", d, hi)
		return 0, false
	}
	if neg {
		d = -d
	}
	return d, true
}

// groups reads a partition's sides: [[broker-1], [rest]].
func (r *reader) groups(f field) [][]string {
	if v := f.value; v != nil && v.Kind != yaml.SequenceNode && !(v.Kind == yaml.ScalarNode && v.Tag == "!!null") {
		r.list(f) // one error, "want a list", not a second about its length
		return nil
	}
	items := r.list(f)
	if len(items) < 2 {
		r.fail(nodeOr(f.value, f.key), f.path, "want at least two groups, e.g. [[broker-1], [rest]]")
		return nil
	}
	var out [][]string
	seen := map[string]int{}
	for i, it := range items {
		if it == nil {
			return nil
		}
		g := r.strings(field{value: it, key: it, path: index(f.path, i)})
		if len(g) == 0 {
			r.fail(it, index(f.path, i), "an empty group")
			return nil
		}
		for _, sel := range g {
			if j, dup := seen[sel]; dup && j != i {
				// A node on both sides of a cut is cut from itself.
				r.fail(it, index(f.path, i), "%s is in group %d too: a node is on one side of a partition", sel, j)
				return nil
			}
			seen[sel] = i
		}
		out = append(out, g)
	}
	return out
}

// diskFaultEnds reports whether a disk fault lasts until it is undone: a
// full disk and a slow fsync until healed, a torn write and a wipe (which
// take the machine down) until it restarts. A bit flip and a bad range are
// damage that stays.
func diskFaultEnds(k sim.DiskFaultKind) bool {
	return k != sim.DiskCorrupt && k != sim.DiskReadError
}

// nemesisEnds reports whether a nemesis rule's faults last until they are
// undone. A disconnect, and a disk corrupt or read-error, do not: they take
// no duration, and none is drawn for them, so that nothing holds the rule's
// next fault back.
func nemesisEnds(kind string, disk sim.DiskFaultKind) bool {
	return undoKey[kind] != "" && (kind != "disk" || diskFaultEnds(disk))
}

var diskKinds = func() []string {
	out := make([]string, len(sim.DiskFaultKinds))
	for i, k := range sim.DiskFaultKinds {
		out[i] = string(k)
	}
	return out
}()

func (r *reader) diskFault(f field, base sim.Fault) []sim.Fault {
	var targets []string
	for _, g := range r.fields(f.value, f.path, []string{"target", "fault", "file", "factor"}) {
		switch g.name {
		case "target":
			targets = r.strings(g)
		case "fault":
			k := r.str(g)
			if !contains(diskKinds, k) {
				r.fail(g.value, g.path, "want one of %s, got %q", strings.Join(diskKinds, ", "), k)
				return nil
			}
			base.Disk = sim.DiskFaultKind(k)
		case "file":
			base.File = r.str(g)
		case "factor":
			if n, ok := r.int(g, 1, 1_000_000); ok {
				base.SlowFactor = n
			}
		}
	}
	if base.Disk == "" {
		r.fail(nodeOr(f.value, f.key), f.path+".fault", "missing: one of %s", strings.Join(diskKinds, ", "))
		return nil
	}
	if len(targets) == 0 {
		r.fail(nodeOr(f.value, f.key), f.path+".target", "missing: the node whose disk fails")
		return nil
	}
	var out []sim.Fault
	for _, t := range targets {
		ft := base
		ft.Target = t
		out = append(out, ft)
	}
	return out
}

func (r *reader) addPartitions(f field, base sim.Fault, s *Scenario) []sim.Fault {
	var op cluster.AddPartitions
	var countNode *yaml.Node
	for _, g := range r.fields(f.value, f.path, []string{"topic", "count"}) {
		switch g.name {
		case "topic":
			op.Topic = r.str(g)
			if op.Topic != "" && r.topicNamed(s, op.Topic) == nil && !r.topicNamesDoubtful {
				r.fail(g.value, g.path, "no topic %q in topics", op.Topic)
				return nil
			}
		case "count":
			countNode = g.value
			if n, ok := r.int(g, 1, PartitionsMax); ok {
				op.Count = int(n)
			} else {
				return nil
			}
		}
	}
	switch {
	case op.Topic == "" && len(s.Topics) == 1:
		op.Topic = s.Topics[0].Name
	case op.Topic == "":
		r.fail(nodeOr(f.value, f.key), f.path+".topic", "missing: which topic grows")
		return nil
	}
	if op.Count == 0 {
		r.fail(nodeOr(f.value, f.key), f.path+".count", "missing: the new total number of partitions")
		return nil
	}
	if t := r.topicNamed(s, op.Topic); t != nil && op.Count <= t.Partitions {
		r.fail(countNode, f.path+".count", "topic %s already has %d partitions: count is the new total and must be larger", op.Topic, t.Partitions)
		return nil
	}
	base.Custom = op
	return []sim.Fault{base}
}

// electLeaders reads an elect-leaders fault: { topic, partition, type }, or
// { type } alone for every partition of every topic (ElectLeaders with null
// topicPartitions). type is required, as kafka-leader-election.sh's
// --election-type is; a topic needs a partition, as its --topic needs
// --partition (a scenario with one topic may give the partition alone).
func (r *reader) electLeaders(f field, base sim.Fault, s *Scenario) []sim.Fault {
	op := cluster.ElectLeaders{Partition: -1}
	var typeSet bool
	var topicField, partitionField *field
	before := r.failures
	for _, g := range r.fields(f.value, f.path, []string{"topic", "partition", "type"}) {
		switch g.name {
		case "topic":
			op.Topic = r.str(g)
			if op.Topic != "" && r.topicNamed(s, op.Topic) == nil && !r.topicNamesDoubtful {
				r.fail(g.value, g.path, "no topic %q in topics", op.Topic)
			}
			topicField = &g
		case "partition":
			if n, ok := r.int(g, 0, PartitionsMax-1); ok {
				op.Partition = int32(n)
			}
			partitionField = &g
		case "type":
			switch v := r.str(g); v {
			case "preferred":
				op.Type, typeSet = proto.ElectionPreferred, true
			case "unclean":
				op.Type, typeSet = proto.ElectionUnclean, true
			case "":
			default:
				r.fail(g.value, g.path, "unknown election type %q: want preferred or unclean", v)
			}
		}
	}
	if r.failures > before {
		return nil
	}
	if !typeSet {
		r.fail(nodeOr(f.value, f.key), f.path+".type", "missing: preferred (move leadership to the first replica of the assignment) or unclean (elect a leader for a partition that has none, even outside the ISR)")
		return nil
	}
	switch {
	case topicField != nil && partitionField == nil:
		r.fail(topicField.key, f.path+".partition", "missing: which partition of %s (or give neither topic nor partition for every partition)", op.Topic)
		return nil
	case topicField == nil && partitionField != nil && len(s.Topics) == 1:
		op.Topic = s.Topics[0].Name
	case topicField == nil && partitionField != nil:
		r.fail(partitionField.key, f.path+".topic", "missing: which topic partition %d is of", op.Partition)
		return nil
	}
	if op.Topic != "" {
		r.namedPartitions = append(r.namedPartitions, namedPartition{topic: op.Topic, partition: op.Partition, node: partitionField.value, path: partitionField.path})
	} else {
		op.Partition = 0
	}
	base.Custom = op
	return []sim.Fault{base}
}

// namedPartition is a partition an admin fault names (elect-leaders,
// reassign), to check once every fault is read: an add-partitions fault
// anywhere in the list may create it.
type namedPartition struct {
	topic     string
	partition int32
	node      *yaml.Node
	path      string
}

func (r *reader) checkNamedPartitions(s *Scenario) {
	for _, e := range r.namedPartitions {
		t := r.topicNamed(s, e.topic)
		if t == nil {
			continue
		}
		count := max(t.Partitions, len(t.Assignment))
		for _, f := range s.Faults {
			if op, ok := f.Fault.Custom.(cluster.AddPartitions); ok && op.Topic == e.topic {
				count = max(count, op.Count)
			}
		}
		if int(e.partition) >= count && !r.grownDoubtful {
			r.fail(e.node, e.path, "topic %s has %d partitions (0..%d), so no partition %d", e.topic, count, count-1, e.partition)
		}
	}
}

var nemesisKeys = []string{"fault", "target", "every", "down", "restart-after", "resume-after", "heal-after",
	"shape", "among", "latency", "disk", "file", "factor", "offset", "drift-ppm"}

var nemesisKinds = []string{"crash", "kill", "shutdown", "pause", "partition", "isolate", "disconnect", "slow-network",
	"clock", "power-loss", "disk"}

func (r *reader) nemesis(f field, s *Scenario) {
	items := r.list(f)
	if len(items) > NemesisRulesMax {
		r.fail(f.value, f.path, "%d nemesis rules is more than %d", len(items), NemesisRulesMax)
		return
	}
	for i, item := range items {
		if item == nil {
			continue
		}
		path := index(f.path, i)
		fields := r.fields(item, path, nemesisKeys)
		if deref(item).Kind != yaml.MappingNode {
			continue
		}
		by := map[string]field{}
		for _, g := range fields {
			by[g.name] = g
		}
		kf, ok := by["fault"]
		if !ok {
			r.fail(item, path+".fault", "missing: one of %s", strings.Join(nemesisKinds, ", "))
			continue
		}
		kind := r.str(kf)
		if !contains(nemesisKinds, kind) {
			r.fail(kf.value, kf.path, "want one of %s, got %q", strings.Join(nemesisKinds, ", "), kind)
			continue
		}
		rule := sim.NemesisRule{Fault: sim.Fault{Kind: faultKinds[kind]}}
		ef, ok := by["every"]
		if !ok {
			r.fail(item, path+".every", "missing: the time from one fault's start to the next one's, e.g. every: 5s..20s")
			continue
		}
		rule.Every, ok = r.rangeOf(ef, PhaseMax)
		if !ok {
			continue
		}
		if rule.Every.Min <= 0 {
			r.fail(ef.value, ef.path, "the time between faults must be positive")
			continue
		}
		var downSet, latencySet bool
		errsBefore := r.failures
		for _, g := range fields {
			switch g.name {
			case "down", "restart-after", "resume-after", "heal-after":
				if downSet {
					r.fail(g.key, g.path, "the fault's duration is given twice")
					continue
				}
				if want := undoKey[kind]; want == "" {
					r.fail(g.key, g.path, "a %s does not end by itself: it has no %s", kind, g.name)
					continue
				} else if g.name != "down" && g.name != want {
					r.fail(g.key, g.path, "a %s ends with %s (or down), not %s", kind, want, g.name)
					continue
				}
				downSet = true
				if v, ok := r.rangeOf(g, PhaseMax); ok {
					rule.Down = v
				}
			case "target":
				if kind == "partition" {
					r.fail(g.key, g.path, "a partition rule draws its groups by shape from among: target does not apply (name the nodes in among)")
					continue
				}
				rule.Fault.Target = r.str(g)
			case "shape":
				if kind != "partition" {
					r.fail(g.key, g.path, "shape applies to partition only")
					continue
				}
				shape := r.str(g)
				known := make([]string, len(sim.PartitionShapes))
				meanings := make([]string, len(sim.PartitionShapes))
				for j, sh := range sim.PartitionShapes {
					known[j] = string(sh)
					meanings[j] = fmt.Sprintf("%s (%s)", sh, sh.Meaning())
				}
				if !contains(known, shape) {
					r.fail(g.value, g.path, "want one of %s; got %q", strings.Join(meanings, ", "), shape)
					continue
				}
				rule.Shape = sim.PartitionShape(shape)
			case "among":
				rule.Among = r.str(g)
			case "latency":
				latencySet = true
				if v, ok := r.rangeOf(g, time.Hour); ok {
					if v.Min < time.Microsecond {
						r.fail(g.value, g.path, "%v: a slow network adds at least 1us", v.Min)
						continue
					}
					// One latency, or a range each fault draws from.
					rule.Fault.Latency = v.Min
					if v.Max > v.Min {
						rule.Latency = v
					}
				}
			case "disk":
				k := r.str(g)
				if !contains(diskKinds, k) {
					r.fail(g.value, g.path, "want one of %s, got %q", strings.Join(diskKinds, ", "), k)
					continue
				}
				rule.Fault.Disk = sim.DiskFaultKind(k)
			case "file":
				rule.Fault.File = r.str(g)
			case "factor":
				if v, ok := r.int(g, 1, 1_000_000); ok {
					rule.Fault.SlowFactor = v
				}
			case "offset":
				if v, ok := r.signedDuration(g, PhaseMax); ok {
					rule.Fault.ClockJump = v
				}
			case "drift-ppm":
				if v, ok := r.int(g, -sim.DriftPPMMax/2, sim.DriftPPMMax); ok {
					rule.Fault.DriftPPM = v
				}
			}
		}
		if kind == "partition" && rule.Shape == "" {
			rule.Shape = sim.ShapeIsolateOne
		}
		if kind == "isolate" {
			// An isolation is a partition of one node from the rest.
			rule.Fault.Kind = sim.FaultPartition
			rule.Shape = sim.ShapeIsolateOne
			if rule.Among == "" {
				rule.Among = rule.Fault.Target
			}
			rule.Fault.Target = ""
		}
		if kind == "disk" && rule.Fault.Disk == "" {
			r.fail(item, path+".disk", "missing: which disk fault (%s)", strings.Join(diskKinds, ", "))
			continue
		}
		if kind == "disk" && downSet && !diskFaultEnds(rule.Fault.Disk) {
			for _, g := range fields {
				if g.name == "down" || g.name == "heal-after" {
					r.fail(g.key, g.path, "a disk %s fault does not end, so it takes no %s: the damage stays until the bytes are rewritten", rule.Fault.Disk, g.name)
				}
			}
			continue
		}
		if kind == "slow-network" && !latencySet {
			r.fail(item, path+".latency", "missing: the delay a slow network adds")
			continue
		}
		if rule.Fault.Kind != sim.FaultPartition && rule.Fault.Target == "" {
			rule.Fault.Target = "random-broker"
		}
		if !downSet && nemesisEnds(kind, rule.Fault.Disk) {
			rule.Down = sim.Range{Min: time.Second, Max: 10 * time.Second}
		}
		if r.failures > errsBefore {
			continue // the rule is already wrong where it says so
		}
		if err := rule.Validate(); err != nil {
			r.fail(kf.value, path, "%v", err)
			continue
		}
		s.Nemesis = append(s.Nemesis, NemesisRule{Rule: rule, Line: kf.key.Line, Column: kf.key.Column, Path: path, Key: kind})
	}
}
