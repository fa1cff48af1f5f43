package sim

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// ProcessState is a node's process state.
type ProcessState uint8

const (
	// Down: not running (never started, crashed or shut down).
	Down ProcessState = iota
	// Running: handling events.
	Running
	// Paused: stopped (SIGSTOP); its timers and messages wait.
	Paused
)

var processStateNames = [...]string{"down", "running", "paused"}

// String names the state.
func (s ProcessState) String() string { return processStateNames[s] }

// NodeSpec describes a node to add to a world.
type NodeSpec struct {
	Name string // unique: "broker-1", "controller-2", "p-0"
	// Role groups nodes for selectors ("controller", "broker", "producer",
	// "consumer"): random-broker picks among the nodes whose Role is "broker".
	Role string
	Rack string // power-loss and partition selectors act on racks
	// New constructs a fresh node: at first boot and at every restart.
	New func() Node
	// Disk overrides the world's disk options for this node.
	Disk *DiskOptions
}

// Options configure a world.
type Options struct {
	Seed    Seed
	Network NetworkOptions
	Disk    DiskOptions
	Limits  Limits
	// Trace receives a record of every executed event, fault and note; nil
	// keeps only the trace hash.
	Trace TraceSink
	// ShutdownGrace bounds a clean shutdown; zero means 30 s.
	ShutdownGrace time.Duration
	// HooksOff is for tests: the world runs as if no node, payload or sink
	// implemented the optional performance hooks (hooks.go). Nodes get a
	// disk without them, no message is handed back for reuse, and every
	// trace detail comes as a string. The run must be the same.
	HooksOff bool
}

// DefaultOptions returns options with the default network and disk.
func DefaultOptions(seed Seed) Options {
	return Options{Seed: seed, Network: DefaultNetworkOptions(), Disk: DefaultDiskOptions()}
}

// ProcessStats counts a node's lifecycle.
type ProcessStats struct {
	Boots, Crashes, PowerLosses, Shutdowns, Pauses uint64
}

type nodeSlot struct {
	id          NodeID
	spec        NodeSpec
	name        string
	node        Node
	state       ProcessState
	incarnation uint32
	env         *nodeEnv
	clock       Clock
	disk        *Disk
	nodeDisk    NodeDisk // disk, or disk without its hooks (Options.HooksOff)
	rng         *rand.Rand
	held        []Held
	stopping    bool
	// machineDown: the node lost power; until it boots nothing answers for
	// it, not even a kernel refusing connections.
	machineDown bool
	// restartOnExit boots the node again as soon as a clean shutdown in
	// progress ends (a shutdown fault whose duration ended first).
	restartOnExit bool
	stats         ProcessStats
}

// World is one deterministic simulation run: nodes, network, disks, faults.
type World struct {
	opts   Options
	seed   Seed
	sched  *Scheduler
	nodes  []*nodeSlot
	byName map[string]NodeID
	net    network
	faults faultState
	trace  TraceSink
	// detailSink is trace when it takes details as bytes; detail is the
	// buffer they are appended into, reused from event to event.
	detailSink DetailSink
	detail     []byte
	names      nameHashes
	after      func()
	onStop     func(id NodeID, how string)
}

// NewWorld creates an empty world at virtual time zero.
func NewWorld(opts Options) *World {
	if opts.ShutdownGrace == 0 {
		opts.ShutdownGrace = 30 * time.Second
	}
	w := &World{opts: opts, seed: opts.Seed, byName: map[string]NodeID{}, trace: opts.Trace}
	if !opts.HooksOff {
		w.detailSink, _ = opts.Trace.(DetailSink)
	}
	w.sched = NewScheduler(w, opts.Limits)
	w.net = network{w: w, opts: opts.Network}
	w.faults.init(w)
	return w
}

// Validate checks the options a world was built with.
func (o Options) Validate() error {
	if err := o.Network.Validate(); err != nil {
		return err
	}
	return o.Disk.Validate()
}

// AddNode adds a node, down until Start boots it. It panics on a duplicate or
// empty name: node sets come from validated configuration.
func (w *World) AddNode(spec NodeSpec) NodeID {
	if spec.Name == "" || spec.New == nil {
		panic("sim: a node needs a name and a constructor")
	}
	if _, dup := w.byName[spec.Name]; dup {
		panic(fmt.Sprintf("sim: duplicate node name %q", spec.Name))
	}
	id := NodeID(len(w.nodes))
	diskOpts := w.opts.Disk
	if spec.Disk != nil {
		diskOpts = *spec.Disk
	}
	slot := &nodeSlot{id: id, spec: spec, name: spec.Name, rng: w.seed.Stream("node/" + spec.Name)}
	slot.disk = newDisk(w, id, diskOpts, w.seed.Stream("disk/"+spec.Name))
	slot.nodeDisk = slot.disk
	if w.opts.HooksOff {
		slot.nodeDisk = WithoutDiskHooks(slot.disk)
	}
	w.nodes = append(w.nodes, slot)
	w.byName[spec.Name] = id
	w.net.grow(len(w.nodes))
	return id
}

// Start boots every node that is down, in the order they were added, at the
// current virtual time.
func (w *World) Start() {
	for _, s := range w.nodes {
		if s.state == Down {
			w.sched.schedule(&Event{At: w.sched.now, Kind: EventStart, Node: s.id, Incarnation: s.incarnation})
		}
	}
}

// RunUntil runs events up to virtual time t.
func (w *World) RunUntil(t time.Duration) RunResult { return w.sched.RunUntil(t) }

// RunFor runs events for d of virtual time from now.
func (w *World) RunFor(d time.Duration) RunResult { return w.sched.RunUntil(w.sched.now + d) }

// Now is the current virtual time.
func (w *World) Now() time.Duration { return w.sched.now }

// Steps is the number of events executed.
func (w *World) Steps() uint64 { return w.sched.steps }

// TraceHash is the hash of every event executed so far.
func (w *World) TraceHash() uint64 { return w.sched.TraceHash() }

// Halt stops the current run after the event being handled (an invariant broke).
func (w *World) Halt(detail string) { w.sched.Halt(detail) }

// Seed is the run's seed.
func (w *World) Seed() Seed { return w.seed }

// At runs f at virtual time t, as an event of its own. Tests and the scenario
// runner use it for phases and checks; f may act on the world.
func (w *World) At(t time.Duration, f func()) EventID {
	return w.sched.schedule(&Event{At: max(t, w.sched.now), Kind: EventCall, Node: NoNode, From: NoNode, Payload: f})
}

// Cancel cancels an event returned by At.
func (w *World) Cancel(id EventID) { w.sched.Cancel(id) }

// Nodes lists every node id in order.
func (w *World) Nodes() []NodeID {
	ids := make([]NodeID, len(w.nodes))
	for i := range ids {
		ids[i] = NodeID(i)
	}
	return ids
}

// Name is a node's name.
func (w *World) Name(id NodeID) string {
	if id < 0 || int(id) >= len(w.nodes) {
		return fmt.Sprintf("node(%d)", id)
	}
	return w.nodes[id].name
}

// Lookup finds a node by name.
func (w *World) Lookup(name string) (NodeID, bool) {
	id, ok := w.byName[name]
	return id, ok
}

// Spec is the spec a node was added with.
func (w *World) Spec(id NodeID) NodeSpec { return w.nodes[id].spec }

// Node is the running (or paused) node value, or nil while it is down. It is
// for god-view checks: read its state, never drive it.
func (w *World) Node(id NodeID) Node { return w.nodes[id].node }

// State is a node's process state.
func (w *World) State(id NodeID) ProcessState { return w.nodes[id].state }

// Incarnation counts a node's boots.
func (w *World) Incarnation(id NodeID) uint32 { return w.nodes[id].incarnation }

// Disk is a node's disk.
func (w *World) Disk(id NodeID) *Disk { return w.nodes[id].disk }

// Clock is a node's clock.
func (w *World) Clock(id NodeID) *Clock { return &w.nodes[id].clock }

// ProcessStats returns a node's lifecycle counters.
func (w *World) ProcessStats(id NodeID) ProcessStats { return w.nodes[id].stats }

// NetworkStats returns the network's counters.
func (w *World) NetworkStats() NetworkStats { return w.net.stats }

// Tracing reports whether trace records are being kept.
func (w *World) Tracing() bool { return w.trace != nil }

// Note records a happening of the world's owner (a phase change) in the trace.
func (w *World) Note(kind, detail string) { w.note(NoNode, kind, detail) }

func (w *World) note(node NodeID, kind, detail string) {
	w.sched.FoldString(kind)
	w.sched.FoldString(detail)
	if w.trace != nil {
		w.trace.Record(TraceRecord{Step: w.sched.steps, At: w.sched.now, Kind: kind, Node: w.nameOrEmpty(node), Detail: detail})
	}
}

func (w *World) nameOrEmpty(id NodeID) string {
	if id < 0 || int(id) >= len(w.nodes) {
		return ""
	}
	return w.nodes[id].name
}

// SetAfterEvent installs f to run after every event: a god-view adversary in
// a test that reacts to the model's state (isolate a leader the moment it
// appends), or a per-event check. f may inject faults; it must not drive
// nodes directly.
func (w *World) SetAfterEvent(f func()) { w.after = f }

// SetOnStop sets a function called whenever a node's process stops (it
// crashed, was killed, lost power or exited), at the simulated time it
// stops, with how it stopped: the dead process cannot say so itself.
func (w *World) SetOnStop(f func(id NodeID, how string)) { w.onStop = f }

// HandleEvent executes one event; the scheduler calls it.
func (w *World) HandleEvent(e *Event) {
	w.handle(e)
	if w.after != nil {
		w.after()
	}
}

func (w *World) handle(e *Event) {
	switch e.Kind {
	case EventStart:
		s := w.nodes[e.Node]
		if s.state == Down && s.incarnation == e.Incarnation {
			w.boot(s)
		}
	case EventTimer:
		if s := w.live(e); s != nil {
			w.record(e, "")
			s.node.Fire(e.Payload)
		}
	case EventDeliver:
		if !w.net.arrives(e) {
			return
		}
		fallthrough
	case EventNotify:
		if e.Kind == EventNotify && e.Arg != 0 && !e.Held && !w.net.resetLands(e) {
			return // a stale connection's reset, for a connection that has ended
		}
		m := e.Payload.(Message)
		if s := w.live(e); s != nil {
			w.net.stats.Delivered++
			w.sched.Fold(w.names.hash(m.MessageName()))
			w.record(e, "")
			s.node.Deliver(e.From, m)
			if e.Kind == EventDeliver && !w.opts.HooksOff {
				delivered(m)
			}
		}
	case EventFsync:
		s := w.nodes[e.Node]
		if s.incarnation != e.Incarnation {
			return
		}
		done := e.Payload.(*FsyncDone)
		if !e.Held {
			s.disk.fsyncDone(e.Arg, done.File)
			if done.Dir {
				s.disk.dirSyncDone(e.Arg, done.File)
			}
		}
		if s := w.live(e); s != nil {
			w.record(e, "fsync "+done.File)
			s.node.Fire(done)
		}
	case EventWriteback:
		w.nodes[e.Node].disk.writeback()
	case EventFault:
		w.faults.fire(e)
	case EventNemesis:
		w.faults.nemesisFire(e)
	case EventCall:
		e.Payload.(func())()
	case EventRetransmit:
		if detail, ok := w.net.retransmit(e); ok {
			w.record(e, detail)
		}
	case EventForceStop:
		s := w.nodes[e.Node]
		if s.incarnation == e.Incarnation && s.stopping && s.state != Down {
			w.note(s.id, "shutdown", "grace expired: killed")
			w.kill(s, stopKill)
		}
	}
}

// live returns the slot an event may act on now: the node is running the
// incarnation the event was meant for. An event for a paused node waits.
func (w *World) live(e *Event) *nodeSlot {
	s := w.nodes[e.Node]
	if s.incarnation != e.Incarnation || s.state == Down {
		if e.Kind == EventDeliver {
			w.net.stats.DroppedDown++
			if !s.machineDown && e.From != e.Node {
				// The process is gone but its kernel is up: the connection
				// is refused (reset), and the sender hears of it.
				w.net.refused(e)
			}
		}
		return nil
	}
	if s.state == Paused {
		s.held = append(s.held, w.sched.HoldCurrent())
		return nil
	}
	return s
}

func (w *World) record(e *Event, detail string) {
	if w.trace == nil {
		return
	}
	from := ""
	if e.Kind == EventDeliver || e.Kind == EventNotify {
		from = w.nameOrEmpty(e.From)
	}
	r := TraceRecord{Step: w.sched.steps, At: e.At, Kind: e.Kind.String(), Node: w.nameOrEmpty(e.Node), From: from}
	if detail == "" {
		if a, ok := e.Payload.(DetailAppender); ok && w.detailSink != nil {
			w.detail = a.AppendDetail(w.detail[:0])
			w.detailSink.RecordDetail(r, w.detail)
			return
		}
		detail = describe(e.Payload)
	}
	r.Detail = detail
	w.trace.Record(r)
}

// DescribeEvent says what e is: its kind, its node, and its payload (the
// scheduler names the event a stalled run was looping on).
func (w *World) DescribeEvent(e *Event) string {
	d := e.Kind.String() + " of " + w.nameOrEmpty(e.Node)
	if e.Payload != nil {
		d += ": " + describe(e.Payload)
	}
	return d
}

func describe(p any) string {
	switch v := p.(type) {
	case fmt.Stringer:
		return v.String()
	case Message:
		return v.MessageName()
	default:
		return fmt.Sprintf("%T %+v", p, p)
	}
}

func (w *World) boot(s *nodeSlot) {
	s.machineDown = false
	s.incarnation++
	s.state = Running
	s.stopping = false
	s.stats.Boots++
	s.node = s.spec.New()
	s.env = &nodeEnv{w: w, s: s, incarnation: s.incarnation}
	w.note(s.id, "boot", fmt.Sprintf("incarnation %d", s.incarnation))
	s.node.Start(s.env)
	w.net.booted(s.id)
}

type stopMode uint8

const (
	stopExit      stopMode = iota // clean exit: connections closed, page cache kept
	stopKill                      // process crash: connections reset, page cache kept
	stopPowerLoss                 // machine crash: page cache lost, peers not told until it is back
)

var stopHow = [...]string{stopExit: "exited", stopKill: "killed", stopPowerLoss: "machine down"}

// kill stops a process in the given way.
func (w *World) kill(s *nodeSlot, mode stopMode) {
	if s.state == Down {
		return
	}
	for _, h := range s.held {
		w.sched.Discard(h)
	}
	s.held = nil
	s.node = nil
	s.env = nil
	s.state = Down
	s.stopping = false
	s.incarnation++ // everything scheduled for the dead process is now stale
	switch mode {
	case stopPowerLoss:
		s.machineDown = true
		s.stats.PowerLosses++
		s.disk.powerLoss()
		w.net.forget(s.id)
	case stopKill:
		s.stats.Crashes++
		w.net.crashed(s.id)
	case stopExit:
		w.net.crashed(s.id)
	}
	if w.onStop != nil {
		w.onStop(s.id, stopHow[mode])
	}
	if s.restartOnExit {
		s.restartOnExit = false
		w.sched.schedule(&Event{At: w.sched.now, Kind: EventStart, Node: s.id, Incarnation: s.incarnation})
	}
}

// RestartWhenDown boots a node that is down now, or, if it is in the middle of
// a clean shutdown, as soon as that ends. It reports whether anything will
// happen.
func (w *World) RestartWhenDown(id NodeID) bool {
	s := w.nodes[id]
	switch {
	case s.state == Down:
		w.boot(s)
		return true
	case s.stopping:
		s.restartOnExit = true
		return true
	}
	return false
}

// Crash kills a node's process. With losePageCache the whole machine goes
// down (power loss, kernel panic): unsynced writes are lost and peers are not
// told, until their retransmissions reach it rebooted (network_stale.go).
// Without it only the process dies (kill -9): the kernel keeps its page cache
// and resets its connections.
func (w *World) Crash(id NodeID, losePageCache bool) bool {
	s := w.nodes[id]
	if s.state == Down {
		return false
	}
	if losePageCache {
		w.note(id, "crash", "machine down: page cache lost")
		w.kill(s, stopPowerLoss)
	} else {
		w.note(id, "crash", "process killed: page cache kept")
		w.kill(s, stopKill)
	}
	return true
}

// Restart boots a node that is down. A node that is up is left alone.
func (w *World) Restart(id NodeID) bool {
	s := w.nodes[id]
	if s.state != Down {
		return false
	}
	w.boot(s)
	return true
}

// Shutdown asks a node to stop cleanly. The page cache survives (the machine
// stays up). A node that has not exited within the grace time is killed.
func (w *World) Shutdown(id NodeID) bool {
	s := w.nodes[id]
	if s.state != Running || s.stopping {
		return false
	}
	s.stats.Shutdowns++
	w.note(id, "shutdown", "requested")
	stopper, ok := s.node.(Stopper)
	if !ok {
		w.kill(s, stopExit)
		return true
	}
	s.stopping = true
	w.sched.schedule(&Event{At: w.sched.now + w.opts.ShutdownGrace, Kind: EventForceStop, Node: id,
		Incarnation: s.incarnation})
	stopper.Stop()
	return true
}

// Pause stops a node's process (SIGSTOP): nothing runs, its clock keeps going,
// and its timers and incoming messages wait until Resume.
func (w *World) Pause(id NodeID) bool {
	s := w.nodes[id]
	if s.state != Running {
		return false
	}
	s.state = Paused
	s.stats.Pauses++
	w.note(id, "pause", "")
	return true
}

// Resume continues a paused node: what waited is handled now, in order.
func (w *World) Resume(id NodeID) bool {
	s := w.nodes[id]
	if s.state != Paused {
		return false
	}
	s.state = Running
	w.note(id, "resume", fmt.Sprintf("%d events waited", len(s.held)))
	for _, h := range s.held {
		w.sched.Release(h, w.sched.now)
	}
	s.held = nil
	return true
}

// Partition cuts the links between nodes of different groups, both ways.
// Nodes in no group keep every link.
func (w *World) Partition(groups ...[]NodeID) CutID {
	var pairs [][2][]NodeID
	for i := range groups {
		for j := range groups {
			if i != j {
				pairs = append(pairs, [2][]NodeID{groups[i], groups[j]})
			}
		}
	}
	return w.net.cutPairs(pairs)
}

// CutOneWay cuts the links from every node of froms to every node of tos; the
// other direction keeps working.
func (w *World) CutOneWay(froms, tos []NodeID) CutID {
	return w.net.cutPairs([][2][]NodeID{{froms, tos}})
}

// Heal undoes one cut. It reports false if the cut was already healed.
func (w *World) Heal(id CutID) bool { return w.net.heal(id) }

// HealAllCuts undoes every cut.
func (w *World) HealAllCuts() {
	for _, id := range w.net.activeCuts() {
		w.net.heal(id)
	}
}

// Disconnect resets the connection between a and b: messages in flight both
// ways are lost and each end is told.
func (w *World) Disconnect(a, b NodeID) {
	w.net.reset(a, b, true, true, 0, 0)
}

// AddLatency adds extra latency to every link from froms to tos (negative
// values take it away again).
func (w *World) AddLatency(froms, tos []NodeID, extra time.Duration) {
	w.net.addLatency(froms, tos, extra)
}

// Connected reports whether from can currently send to to.
func (w *World) Connected(from, to NodeID) bool {
	return from == to || w.net.link(from, to).cuts == 0
}

type nodeEnv struct {
	w           *World
	s           *nodeSlot
	incarnation uint32
}

func (e *nodeEnv) current() bool { return e.s.incarnation == e.incarnation && e.s.state != Down }

func (e *nodeEnv) CloseConnection(peer NodeID) {
	if !e.current() || peer == e.s.id || int(peer) < 0 || int(peer) >= len(e.w.nodes) {
		return
	}
	e.w.net.close(e.s.id, peer)
}

func (e *nodeEnv) Connection(peer NodeID) uint64 {
	if peer == e.s.id || int(peer) < 0 || int(peer) >= len(e.w.nodes) {
		return 0
	}
	// A restarted peer is a new process with connections of its own, even
	// when nothing told this node the old ones died (a power loss).
	return uint64(e.w.nodes[peer].incarnation)<<32 | uint64(e.w.net.link(peer, e.s.id).gen)
}

func (e *nodeEnv) ID() NodeID         { return e.s.id }
func (e *nodeEnv) Name() string       { return e.s.name }
func (e *nodeEnv) Now() time.Duration { return e.s.clock.Now(e.w.sched.now) }
func (e *nodeEnv) Disk() NodeDisk     { return e.s.nodeDisk }
func (e *nodeEnv) Rand() *rand.Rand   { return e.s.rng }

func (e *nodeEnv) Send(to NodeID, m Message) {
	if e.current() {
		e.w.net.send(e.s.id, to, m)
	}
}

func (e *nodeEnv) After(d time.Duration, t Timer) TimerID {
	if !e.current() {
		return TimerID{}
	}
	w := e.w
	return w.sched.schedule(&Event{At: w.sched.now + e.s.clock.VirtualDelay(max(d, 0)), Kind: EventTimer,
		Node: e.s.id, From: NoNode, Incarnation: e.incarnation, Payload: t})
}

func (e *nodeEnv) Cancel(id TimerID) { e.w.sched.Cancel(id) }

func (e *nodeEnv) Exit() {
	if e.current() {
		e.w.note(e.s.id, "shutdown", "exited cleanly")
		e.w.kill(e.s, stopExit)
	}
}

func (e *nodeEnv) Note(kind, detail string) {
	if e.current() {
		e.w.note(e.s.id, kind, detail)
	}
}

func (e *nodeEnv) Lookup(name string) (NodeID, bool) { return e.w.Lookup(name) }

func (e *nodeEnv) Incarnation() uint32 { return uint32(e.s.stats.Boots) }

func (e *nodeEnv) WorldTime() time.Duration { return e.w.sched.now }
