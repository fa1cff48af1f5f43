package sim

// Fault injection.
//
// A fault is data (Fault): a kind, a target selector resolved when it fires,
// and parameters. Faults come from an explicit schedule (ScheduleFault) or
// from a nemesis (nemesis.go) that draws them from the seed. A fault with a
// duration (For) undoes itself when it ends: a crashed node restarts, a
// partition heals, a paused node resumes, a slow link recovers. A fault whose
// target resolves to nothing (no leader to crash right now) is logged as
// skipped, not failed: the schedule is a plan, the world is what it is.
//
// Every applied, undone or skipped fault is recorded in the fault log (for
// reports and shrinking), in the trace, and folded into the trace hash.

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"
)

// FaultKind names a kind of fault.
type FaultKind string

// Fault kinds.
const (
	// FaultCrash takes the machine down: volatile state and unsynced page
	// cache are lost, peers are not told.
	FaultCrash FaultKind = "crash"
	// FaultKill kills the process only (kill -9): the page cache survives and
	// the kernel resets its connections.
	FaultKill FaultKind = "kill"
	// FaultPowerLoss crashes every target at the same instant (a rack).
	FaultPowerLoss FaultKind = "power-loss"
	// FaultShutdown asks the targets to stop cleanly.
	FaultShutdown FaultKind = "shutdown"
	// FaultRestart boots targets that are down.
	FaultRestart FaultKind = "restart"
	// FaultPause stops the targets' processes; FaultResume continues them.
	FaultPause  FaultKind = "pause"
	FaultResume FaultKind = "resume"
	// FaultPartition cuts the links between Groups (one way with OneWay).
	FaultPartition FaultKind = "partition"
	// FaultIsolate cuts the targets off from every other node.
	FaultIsolate FaultKind = "isolate"
	// FaultHeal undoes every cut in force.
	FaultHeal FaultKind = "heal"
	// FaultDisconnect resets the connections between the target and Peer
	// (every peer when Peer is empty).
	FaultDisconnect FaultKind = "disconnect"
	// FaultSlowNetwork adds Latency to every link to and from the targets.
	FaultSlowNetwork FaultKind = "slow-network"
	// FaultStall holds the messages named in Messages that the targets send,
	// until the fault heals: a request or answer stuck in its sender (a
	// thread blocked, a queue not drained), FoundationDB-style. Other
	// traffic on the same links goes on (network.go).
	FaultStall FaultKind = "stall"
	// FaultClock jumps the targets' clocks by ClockJump and sets their drift.
	FaultClock FaultKind = "clock"
	// FaultDisk injects Disk into the targets' disks.
	FaultDisk FaultKind = "disk"
	// FaultCustom is handed to the model's CustomFaultHandler (admin
	// operations such as adding partitions).
	FaultCustom FaultKind = "custom"
)

// FaultKinds lists every kind the world knows.
var FaultKinds = []FaultKind{FaultCrash, FaultKill, FaultPowerLoss, FaultShutdown, FaultRestart,
	FaultPause, FaultResume, FaultPartition, FaultIsolate, FaultHeal, FaultDisconnect,
	FaultSlowNetwork, FaultStall, FaultClock, FaultDisk, FaultCustom}

// DiskFaultKind names a disk fault.
type DiskFaultKind string

// Disk faults.
const (
	// DiskCorrupt flips a bit of File (a random file when empty).
	DiskCorrupt DiskFaultKind = "corrupt"
	// DiskTornWrite loses power with the last unsynced write half persisted.
	DiskTornWrite DiskFaultKind = "torn-write"
	// DiskReadError makes a range of File unreadable until rewritten.
	DiskReadError DiskFaultKind = "read-error"
	// DiskFull makes writes that grow the disk fail.
	DiskFull DiskFaultKind = "full"
	// DiskSlowFsync multiplies fsync latency by SlowFactor.
	DiskSlowFsync DiskFaultKind = "slow-fsync"
	// DiskWipe replaces the disk with an empty one; the node loses power first.
	DiskWipe DiskFaultKind = "wipe"
)

// DiskFaultKinds lists every disk fault.
var DiskFaultKinds = []DiskFaultKind{DiskCorrupt, DiskTornWrite, DiskReadError, DiskFull, DiskSlowFsync, DiskWipe}

// Fault is one fault to inject. Fields that do not apply to Kind are ignored.
type Fault struct {
	Kind FaultKind
	// Target selects the nodes the fault acts on (see Resolver).
	Target string
	// Groups are the sides of a partition, each a list of selectors; "rest"
	// stands for every node not in another group.
	Groups [][]string
	// OneWay cuts only the links from Groups[0] to Groups[1].
	OneWay bool
	// Peer is the other end of a disconnect.
	Peer string
	// For is how long the fault lasts before it is undone; zero: until healed.
	For time.Duration
	// Latency is the extra latency of a slow network.
	Latency time.Duration
	// Messages are the names a stall holds: a message matches a name it
	// equals, or extends with a parenthesis ("Fetch" holds "Fetch(replica)"
	// too).
	Messages []string
	// StuckConnections makes a stall hold only what the targets send on
	// the connections they have open when it begins: stuck TCP flows (a
	// burst of loss, a retransmission backing off). A connection opened
	// later passes, and what a stuck one holds still arrives when the
	// stall ends after its sender closed it (TCP sends what was written
	// before the FIN; Kafka's socket server serves a request it reads off
	// a closing channel, Selector's closingChannels).
	StuckConnections bool
	// ClockJump and DriftPPM are a clock fault's jump and new drift.
	ClockJump time.Duration
	DriftPPM  int64
	// Disk is a disk fault's kind; File the file it hits (random when empty);
	// SlowFactor the fsync slowdown (10 when zero).
	Disk       DiskFaultKind
	File       string
	SlowFactor int64
	// Custom is a model-specific fault, for the CustomFaultHandler.
	Custom any
}

// String describes the fault in the words of a scenario file.
func (f Fault) String() string {
	var b strings.Builder
	b.WriteString(string(f.Kind))
	switch f.Kind {
	case FaultPartition:
		parts := make([]string, len(f.Groups))
		for i, g := range f.Groups {
			parts[i] = "[" + strings.Join(g, " ") + "]"
		}
		sep := " | "
		if f.OneWay {
			sep = " -/-> "
		}
		b.WriteString(" " + strings.Join(parts, sep))
	case FaultDisk:
		fmt.Fprintf(&b, " %s %s", f.Disk, f.Target)
		if f.File != "" {
			b.WriteString(" " + f.File)
		}
	case FaultCustom:
		fmt.Fprintf(&b, " %v", f.Custom)
	default:
		if f.Target != "" {
			b.WriteString(" " + f.Target)
		}
	}
	if f.Kind == FaultDisconnect && f.Peer != "" {
		b.WriteString(" from " + f.Peer)
	}
	if f.Kind == FaultStall {
		b.WriteString(" [" + strings.Join(f.Messages, " ") + "]")
		if f.StuckConnections {
			b.WriteString(" stuck-connections")
		}
	}
	if f.Latency > 0 {
		fmt.Fprintf(&b, " +%v", f.Latency)
	}
	if f.ClockJump != 0 || f.DriftPPM != 0 {
		fmt.Fprintf(&b, " jump %v drift %dppm", f.ClockJump, f.DriftPPM)
	}
	if f.For > 0 {
		fmt.Fprintf(&b, " for %v", f.For)
	}
	return b.String()
}

// Validate checks a fault's form (not its selectors, which need the world).
func (f Fault) Validate() error {
	known := false
	for _, k := range FaultKinds {
		known = known || k == f.Kind
	}
	switch {
	case !known:
		return fmt.Errorf("unknown fault kind %q", f.Kind)
	case f.For < 0:
		return fmt.Errorf("%s: negative duration %v", f.Kind, f.For)
	case f.Kind == FaultPartition && len(f.Groups) < 2:
		return fmt.Errorf("partition: want at least two groups, got %d", len(f.Groups))
	case f.Kind == FaultPartition && f.OneWay && len(f.Groups) != 2:
		return fmt.Errorf("one-way partition: want exactly two groups, got %d", len(f.Groups))
	case f.Kind == FaultSlowNetwork && f.Latency <= 0:
		return fmt.Errorf("slow-network: latency must be positive")
	case f.Kind == FaultStall && len(f.Messages) == 0:
		return fmt.Errorf("stall: needs the names of the messages to hold")
	case f.Kind != FaultStall && f.StuckConnections:
		return fmt.Errorf("%s: stuck-connections applies to stall only", f.Kind)
	case f.Kind == FaultClock && (f.DriftPPM > DriftPPMMax || f.DriftPPM < -DriftPPMMax/2):
		return fmt.Errorf("clock: drift %d ppm out of range %d..%d", f.DriftPPM, -DriftPPMMax/2, DriftPPMMax)
	case f.Kind == FaultDisk:
		ok := false
		for _, k := range DiskFaultKinds {
			ok = ok || k == f.Disk
		}
		if !ok {
			return fmt.Errorf("disk: unknown fault %q", f.Disk)
		}
		if f.SlowFactor < 0 {
			return fmt.Errorf("disk slow-fsync: factor %d must be positive", f.SlowFactor)
		}
	}
	if f.Kind != FaultPartition && f.Kind != FaultHeal && f.Kind != FaultCustom && f.Target == "" {
		return fmt.Errorf("%s: needs a target", f.Kind)
	}
	return nil
}

// Selectors lists every selector the fault names, for validation.
func (f Fault) Selectors() []string {
	var sels []string
	if f.Target != "" {
		sels = append(sels, f.Target)
	}
	if f.Peer != "" {
		sels = append(sels, f.Peer)
	}
	for _, g := range f.Groups {
		for _, s := range g {
			if s != "rest" {
				sels = append(sels, s)
			}
		}
	}
	return sels
}

// CustomFaultHandler applies model-specific faults. It returns a description
// for the fault log, or an error if the fault could not be applied now.
type CustomFaultHandler func(f Fault) (string, error)

// SetCustomFaultHandler installs the model's handler for FaultCustom.
func (w *World) SetCustomFaultHandler(h CustomFaultHandler) { w.faults.custom = h }

// FaultRecord is one entry of the fault log.
type FaultRecord struct {
	At     time.Duration
	Fault  Fault
	Origin string   // "schedule", "nemesis/<rule>", or "heal"
	Nodes  []string // the nodes it acted on
	Undo   bool     // the end of an earlier fault
	// Skipped explains why a fault did nothing (no node matched, all down).
	Skipped string
	Detail  string
}

type faultState struct {
	w        *World
	rng      *rand.Rand
	resolver Resolver
	custom   CustomFaultHandler
	log      []FaultRecord
	nemesis  nemesisState
	stopped  bool // the fault phase is over: scheduled and nemesis faults no longer fire
}

func (fs *faultState) init(w *World) {
	fs.w = w
	fs.rng = w.seed.Stream("faults")
}

type scheduledFault struct {
	fault  Fault
	origin string
	rng    *rand.Rand
}

type faultUndo struct {
	fault  Fault
	origin string
	nodes  []string
	undo   func() string
}

// ScheduleFault injects f at virtual time at. Its random choices (a
// random-broker target) come from the world's fault stream.
func (w *World) ScheduleFault(at time.Duration, f Fault) error {
	if err := f.Validate(); err != nil {
		return err
	}
	w.sched.Schedule(Event{At: max(at, w.sched.now), Kind: EventFault, Node: NoNode, From: NoNode,
		Payload: &scheduledFault{fault: f, origin: "schedule", rng: w.faults.rng}})
	return nil
}

// InjectFault applies f now.
func (w *World) InjectFault(f Fault) error {
	if err := f.Validate(); err != nil {
		return err
	}
	w.faults.apply(f, "manual", w.faults.rng)
	return nil
}

// FaultLog returns every fault applied, undone or skipped so far.
func (w *World) FaultLog() []FaultRecord { return w.faults.log }

// StopFaults ends the fault phase: scheduled faults and nemesis draws that
// have not fired yet are dropped. Undos of faults in force still happen.
func (w *World) StopFaults() { w.faults.stopped = true }

func (fs *faultState) fire(e *Event) {
	switch p := e.Payload.(type) {
	case *scheduledFault:
		if !fs.stopped {
			fs.apply(p.fault, p.origin, p.rng)
		}
	case *faultUndo:
		detail := p.undo()
		fs.logRecord(FaultRecord{At: fs.w.sched.now, Fault: p.fault, Origin: p.origin, Nodes: p.nodes, Undo: true, Detail: detail})
	}
}

func (fs *faultState) logRecord(r FaultRecord) {
	w := fs.w
	kind := "fault"
	if r.Undo {
		kind = "fault-end"
	}
	detail := r.Fault.String()
	if len(r.Nodes) > 0 {
		detail += " -> " + strings.Join(r.Nodes, ",")
	}
	if r.Skipped != "" {
		detail += " (skipped: " + r.Skipped + ")"
	}
	if r.Detail != "" {
		detail += " (" + r.Detail + ")"
	}
	fs.log = append(fs.log, r)
	w.note(NoNode, kind, detail)
}

func (fs *faultState) names(ids []NodeID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = fs.w.nodes[id].name
	}
	return out
}

// eligibleFor says which nodes a fault of kind k can act on, for random targets.
func (fs *faultState) eligibleFor(k FaultKind) func(NodeID) bool {
	w := fs.w
	switch k {
	case FaultCrash, FaultKill, FaultPowerLoss, FaultShutdown, FaultDisconnect:
		return func(id NodeID) bool { return w.nodes[id].state != Down }
	case FaultRestart:
		return func(id NodeID) bool { return w.nodes[id].state == Down }
	case FaultPause:
		return func(id NodeID) bool { return w.nodes[id].state == Running }
	case FaultResume:
		return func(id NodeID) bool { return w.nodes[id].state == Paused }
	}
	return nil
}

// resolveGroups turns partition groups into node sets; "rest" is every node
// not named by another group.
func (fs *faultState) resolveGroups(groups [][]string, rng *rand.Rand) ([][]NodeID, error) {
	w := fs.w
	out := make([][]NodeID, len(groups))
	named := make([]bool, len(w.nodes))
	rest := -1
	for i, g := range groups {
		for _, sel := range g {
			if sel == "rest" {
				rest = i
				continue
			}
			ids, err := w.Resolve(sel, rng, nil)
			if err != nil {
				return nil, err
			}
			for _, id := range ids {
				if !named[id] {
					named[id] = true
					out[i] = append(out[i], id)
				}
			}
		}
	}
	if rest >= 0 {
		for _, s := range w.nodes {
			if !named[s.id] {
				out[rest] = append(out[rest], s.id)
			}
		}
	}
	for i := range out {
		sort.Slice(out[i], func(a, b int) bool { return out[i][a] < out[i][b] })
	}
	return out, nil
}

// apply injects f now and, when it has a duration, schedules its undo.
func (fs *faultState) apply(f Fault, origin string, rng *rand.Rand) {
	w := fs.w
	rec := FaultRecord{At: w.sched.now, Fault: f, Origin: origin}
	var targets []NodeID
	if f.Target != "" && f.Kind != FaultCustom {
		ids, err := w.Resolve(f.Target, rng, fs.eligibleFor(f.Kind))
		if err != nil {
			rec.Skipped = err.Error()
			fs.logRecord(rec)
			return
		}
		if len(ids) == 0 {
			rec.Skipped = "target " + f.Target + " matches no node now"
			fs.logRecord(rec)
			return
		}
		targets = ids
		rec.Nodes = fs.names(ids)
	}
	undo, detail, skipped := fs.act(f, targets, rng)
	rec.Detail, rec.Skipped = detail, skipped
	fs.logRecord(rec)
	if undo != nil && f.For > 0 && skipped == "" {
		w.sched.Schedule(Event{At: w.sched.now + f.For, Kind: EventFault, Node: NoNode, From: NoNode,
			Payload: &faultUndo{fault: f, origin: origin, nodes: rec.Nodes, undo: undo}})
	}
}

// act performs a resolved fault. It returns the undo (for faults that have
// one), a detail for the log, and why it did nothing, if it did nothing.
func (fs *faultState) act(f Fault, targets []NodeID, rng *rand.Rand) (undo func() string, detail, skipped string) {
	w := fs.w
	restartAll := func(ids []NodeID) func() string {
		return func() string {
			return "restarted " + strings.Join(fs.names(each(ids, w.RestartWhenDown)), ",")
		}
	}
	switch f.Kind {
	case FaultCrash, FaultPowerLoss:
		done := each(targets, func(id NodeID) bool { return w.Crash(id, true) })
		if len(done) == 0 {
			return nil, "", "already down"
		}
		return restartAll(done), "", ""
	case FaultKill:
		done := each(targets, func(id NodeID) bool { return w.Crash(id, false) })
		if len(done) == 0 {
			return nil, "", "already down"
		}
		return restartAll(done), "", ""
	case FaultShutdown:
		done := each(targets, w.Shutdown)
		if len(done) == 0 {
			return nil, "", "not running"
		}
		return restartAll(done), "", ""
	case FaultRestart:
		if len(each(targets, w.Restart)) == 0 {
			return nil, "", "already up"
		}
		return nil, "", ""
	case FaultPause:
		done := each(targets, w.Pause)
		if len(done) == 0 {
			return nil, "", "not running"
		}
		return func() string { return "resumed " + strings.Join(fs.names(each(done, w.Resume)), ",") }, "", ""
	case FaultResume:
		if len(each(targets, w.Resume)) == 0 {
			return nil, "", "not paused"
		}
		return nil, "", ""
	case FaultPartition:
		groups, err := fs.resolveGroups(f.Groups, rng)
		if err != nil {
			return nil, "", err.Error()
		}
		var id CutID
		if f.OneWay {
			id = w.CutOneWay(groups[0], groups[1])
		} else {
			id = w.Partition(groups...)
		}
		parts := make([]string, len(groups))
		for i, g := range groups {
			parts[i] = strings.Join(fs.names(g), ",")
		}
		return func() string { w.Heal(id); return "healed" }, "[" + strings.Join(parts, "] [") + "]", ""
	case FaultIsolate:
		in := make([]bool, len(w.nodes))
		for _, id := range targets {
			in[id] = true
		}
		var rest []NodeID
		for _, s := range w.nodes {
			if !in[s.id] {
				rest = append(rest, s.id)
			}
		}
		id := w.Partition(targets, rest)
		return func() string { w.Heal(id); return "healed" }, "", ""
	case FaultHeal:
		n := len(w.net.cuts)
		w.HealAllCuts()
		return nil, fmt.Sprintf("%d cuts healed", n), ""
	case FaultDisconnect:
		peers := w.Nodes()
		if f.Peer != "" {
			ids, err := w.Resolve(f.Peer, rng, nil)
			if err != nil {
				return nil, "", err.Error()
			}
			peers = ids
		}
		for _, a := range targets {
			for _, b := range peers {
				if a != b {
					w.Disconnect(a, b)
				}
			}
		}
		return nil, "", ""
	case FaultSlowNetwork:
		all := w.Nodes()
		w.AddLatency(targets, all, f.Latency)
		w.AddLatency(all, targets, f.Latency)
		return func() string {
			w.AddLatency(targets, all, -f.Latency)
			w.AddLatency(all, targets, -f.Latency)
			return "latency restored"
		}, "", ""
	case FaultStall:
		id := w.net.stall(targets, f.Messages, f.StuckConnections)
		return func() string {
			sent, dropped := w.net.release(id)
			return fmt.Sprintf("%d held messages sent on, %d dropped with their connection", sent, dropped)
		}, "", ""
	case FaultClock:
		for _, id := range targets {
			c := &w.nodes[id].clock
			c.Jump(w.sched.now, f.ClockJump)
			c.SetDrift(w.sched.now, f.DriftPPM)
		}
		return func() string {
			for _, id := range targets {
				w.nodes[id].clock.Reset(w.sched.now)
			}
			return "clocks reset"
		}, "", ""
	case FaultDisk:
		return fs.actDisk(f, targets)
	case FaultCustom:
		if fs.custom == nil {
			return nil, "", "no handler for custom faults"
		}
		d, err := fs.custom(f)
		if err != nil {
			return nil, "", err.Error()
		}
		return nil, d, ""
	}
	return nil, "", "unknown fault kind"
}

func (fs *faultState) actDisk(f Fault, targets []NodeID) (undo func() string, detail, skipped string) {
	w := fs.w
	var details []string
	switch f.Disk {
	case DiskCorrupt, DiskReadError:
		for _, id := range targets {
			d := w.nodes[id].disk
			var name string
			var off int64
			var ok bool
			if f.Disk == DiskCorrupt {
				name, off, ok = d.corrupt(f.File)
			} else {
				name, off, ok = d.readError(f.File)
			}
			if ok {
				details = append(details, fmt.Sprintf("%s:%s@%d", w.nodes[id].name, name, off))
			}
		}
		if len(details) == 0 {
			return nil, "", "no file to damage"
		}
		return nil, strings.Join(details, " "), ""
	case DiskTornWrite, DiskWipe:
		var crashed []NodeID
		for _, id := range targets {
			s := w.nodes[id]
			if f.Disk == DiskTornWrite {
				if s.state == Down {
					continue
				}
				s.disk.tornArmed = true
			}
			if w.Crash(id, true) {
				crashed = append(crashed, id)
			}
			if f.Disk == DiskWipe {
				s.disk.wipe()
				details = append(details, s.name+" wiped")
			}
		}
		if f.Disk == DiskTornWrite && len(crashed) == 0 {
			return nil, "", "not running"
		}
		return func() string { return "restarted " + strings.Join(fs.names(each(crashed, w.Restart)), ",") },
			strings.Join(details, " "), ""
	case DiskFull:
		for _, id := range targets {
			w.nodes[id].disk.setFull(true)
		}
		return func() string {
			for _, id := range targets {
				w.nodes[id].disk.setFull(false)
			}
			return "space freed"
		}, "", ""
	case DiskSlowFsync:
		factor := f.SlowFactor
		if factor == 0 {
			factor = 10
		}
		for _, id := range targets {
			w.nodes[id].disk.fsyncSlowFactor = factor
		}
		return func() string {
			for _, id := range targets {
				w.nodes[id].disk.fsyncSlowFactor = 1
			}
			return "fsync speed restored"
		}, fmt.Sprintf("fsync x%d", factor), ""
	}
	return nil, "", "unknown disk fault"
}

// each applies do to every id and returns those it acted on.
func each(ids []NodeID, do func(NodeID) bool) []NodeID {
	var done []NodeID
	for _, id := range ids {
		if do(id) {
			done = append(done, id)
		}
	}
	return done
}

// HealAll ends the fault phase and puts the world back together for the
// liveness phase: no more injected faults, every cut healed, extra latency
// removed, every stall ended (what it held sent on), paused nodes resumed, down nodes restarted, clocks reset, and disk
// space and fsync speed restored. Damage already done (lost writes, corrupt
// bytes, wiped disks) stays: recovering from it is the system's job.
func (w *World) HealAll() {
	w.StopFaults()
	w.faults.nemesis.stop()
	w.HealAllCuts()
	for i := range w.net.links {
		w.net.links[i].extraLatency = 0
	}
	released := w.net.releaseAll()
	var resumed, restarted []NodeID
	for _, s := range w.nodes {
		switch s.state {
		case Paused:
			w.Resume(s.id)
			resumed = append(resumed, s.id)
		case Down:
			if s.stats.Boots > 0 {
				w.Restart(s.id)
				restarted = append(restarted, s.id)
			}
		case Running:
			if s.stopping {
				w.RestartWhenDown(s.id)
				restarted = append(restarted, s.id)
			}
		}
		s.clock.Reset(w.sched.now)
		s.disk.setFull(false)
		s.disk.fsyncSlowFactor = 1
	}
	w.faults.logRecord(FaultRecord{At: w.sched.now, Fault: Fault{Kind: FaultHeal, Target: "all"}, Origin: "heal",
		Detail: fmt.Sprintf("liveness phase: resumed %v, restarted %v%s", w.faults.names(resumed), w.faults.names(restarted), stalledSent(released))})
}

// stalledSent words what the heal's end of the stalls sent on, if anything.
func stalledSent(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d stalled messages sent on", n)
}
