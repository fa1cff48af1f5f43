package sim

// The network's fault model.
//
// Kafka runs over TCP, so by default a link between two nodes behaves like one
// TCP connection: messages arrive in the order they were sent, exactly once,
// after a latency drawn uniformly from NetworkOptions.Latency for each message
// (plus any extra latency a fault added to the link). The draws come from a
// stream of the link's own, named after its two ends, so traffic on one link
// never changes the latencies of another.
//
// What goes wrong, and how it looks to the nodes:
//   - Partition: a cut link drops every message sent on it, and every message
//     still in flight on it when it is due. Nobody is told; the sender's
//     request times out, as it would behind a real partition. Cuts are
//     directed (one-way partitions exist) and counted, so overlapping
//     partitions heal independently.
//   - Disconnect: the connection between two nodes is reset. Messages in flight
//     both ways are dropped, and each end receives a Disconnected notice listing
//     the messages it had sent that were lost, so a client fails its in-flight
//     requests at once, as Kafka's NetworkClient does on a disconnect.
//   - Process crash: the crashed node's kernel resets its connections; each peer
//     with an open connection is told (Disconnected) once the reset crosses the
//     link, and loses what it had in flight to the crashed node.
//   - Power loss: nothing is sent; each peer's end of a connection stays,
//     stale. What the peer sends on it is lost while the machine is down, and
//     kept; the first TCP retransmission (Linux's backoff: 200 ms doubling to
//     120 s, 15 of them) that reaches the rebooted machine draws a reset, and
//     the peer is told (Disconnected, listing what it kept). A peer that had
//     nothing unacknowledged learns at its first send after the reboot. A
//     machine that stays down past the last retransmission tells nobody:
//     peers time out (network_stale.go).
//   - Slow links and latency spikes: extra latency on chosen links (or all),
//     added and later removed by a fault.
//   - Stall: messages of chosen names that chosen nodes send are held in the
//     sender until the stall heals, then sent (FoundationDB-style stalls of
//     chosen requests: a handler thread blocked, a request queue not
//     drained). Other traffic on the same links goes on past them, as on
//     Kafka's separate connections per purpose (the AlterPartition channel
//     is not the heartbeat's). A held message dies with its sender's
//     process or with its connection (a reset lists it as unsent, as one in
//     flight), and is dropped if its destination restarted meanwhile. A
//     stall of stuck connections holds only the connections its targets
//     have open when it begins (stuck TCP flows): a connection opened later
//     passes, and what a stuck one holds outlives its sender's own close
//     (TCP sends what was written before the FIN, and Kafka serves a
//     request read off a closing channel): it arrives when the stall ends.
//   - Loss, duplication, reordering: per-message probabilities, off by default
//     because TCP never shows them; they exist for robustness testing. A
//     reordered message skips the FIFO rule; a duplicate is delivered twice
//     with independent latencies.
//
// Bandwidth (NetworkOptions.BandwidthBytesPerSecond; zero: unlimited, bytes
// cost no time). Each direction of each link is one FIFO pipe of that rate,
// like a NIC's transmit queue feeding one TCP connection: a message occupies
// its link direction for WireBytes/bandwidth, starting when the messages sent
// before it on that direction have left, and then takes the link's latency
// to arrive. A message's size is its WireBytes (Sized) or, for control
// messages that do not say, DefaultMessageBytes. The queue is one "busy
// until" time per link direction, fixed when a message is sent: nothing is
// allocated per message. How it meets the faults:
//   - A message dropped at send (a cut link, loss) occupies nothing; one
//     dropped on arrival (cut meanwhile, a down destination) had occupied its
//     link: its bytes left the sender.
//   - A disconnect or a crash empties the queues of both directions: what
//     was queued is lost with the connection (listed as unsent) and the next
//     connection starts idle. A power loss forgets them the same way.
//   - A stalled message occupies nothing while held; released, it queues
//     behind what was sent meanwhile.
//   - A duplicate is a second copy on the wire and occupies the link again; a
//     reordered message occupies the link in turn but may arrive before
//     earlier ones.
//   - Slow links add to the latency after transmission, not to its time.
// Not modelled: TCP slow start, windows and retransmission, a NIC shared by
// a node's links (each link direction has the whole bandwidth), switches.
// Messages between a node and itself cost nothing.
//
// A message to a node that is down, or that restarted since the message was
// sent (the connection was to the dead process), is dropped on arrival; if
// the machine is up (the process was killed or exited), its kernel refuses
// the connection and the sender is told (Disconnected); on a connection that
// outlived a power loss, see above. A message to a paused node waits in its
// kernel's buffer until it resumes.

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sort"
	"time"
)

// NetworkOptions configure the network. Probabilities are per message.
type NetworkOptions struct {
	Latency              Range
	LossProbability      float64
	DuplicateProbability float64
	ReorderProbability   float64
	// BandwidthBytesPerSecond is each link direction's rate; zero is
	// unlimited (bytes cost no time on the wire).
	BandwidthBytesPerSecond int64
}

// DefaultNetworkOptions is a LAN: 1–5 ms per message, nothing lost.
func DefaultNetworkOptions() NetworkOptions {
	return NetworkOptions{Latency: Range{Min: time.Millisecond, Max: 5 * time.Millisecond}}
}

// Validate reports an option out of range.
func (o NetworkOptions) Validate() error {
	if o.Latency.Min < 0 || o.Latency.Max < o.Latency.Min {
		return fmt.Errorf("network latency %v..%v: want 0 <= min <= max", o.Latency.Min, o.Latency.Max)
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"loss", o.LossProbability}, {"duplicate", o.DuplicateProbability}, {"reorder", o.ReorderProbability}} {
		if p.v < 0 || p.v > 1 {
			return fmt.Errorf("network %s probability %v: want 0..1", p.name, p.v)
		}
	}
	if o.BandwidthBytesPerSecond < 0 {
		return fmt.Errorf("network bandwidth %d bytes/s: must not be negative", o.BandwidthBytesPerSecond)
	}
	return nil
}

// Message is what nodes send each other. MessageName names it in traces (the
// Kafka API it models: "Produce", "Fetch", "Vote").
type Message interface {
	MessageName() string
}

// Sized is a message that knows its size on the wire, in bytes (its
// request or response header and body, as Kafka's protocol encodes it,
// approximately). With a bandwidth set, a message's size is what it costs on
// its link; one that is not Sized costs DefaultMessageBytes.
type Sized interface {
	WireBytes() int
}

// DefaultMessageBytes is the size of a message that does not say (a control
// message: a heartbeat, a vote, a metadata request): about a Kafka request
// header (size, api key and version, correlation id, client id) and a few
// fields.
const DefaultMessageBytes = 64

// wireBytes is m's size on the wire.
func wireBytes(m Message) int {
	if s, ok := m.(Sized); ok {
		return max(s.WireBytes(), 0)
	}
	return DefaultMessageBytes
}

// TransmitTime is how long n bytes occupy a device of rate bytesPerSecond
// (zero: unlimited, no time), rounded up to the nanosecond so that every
// byte costs time. Exact in integers: 125 bytes at 125 MB/s is 1µs.
func TransmitTime(n int64, bytesPerSecond int64) time.Duration {
	if bytesPerSecond <= 0 || n <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(n), uint64(time.Second))
	if hi >= uint64(bytesPerSecond) {
		return time.Duration(math.MaxInt64) // would overflow: forever
	}
	q, r := bits.Div64(hi, lo, uint64(bytesPerSecond))
	if r != 0 {
		q++
	}
	if q > math.MaxInt64 {
		return time.Duration(math.MaxInt64)
	}
	return time.Duration(q)
}

// Disconnected tells a node that its connection to Peer was reset. Unsent holds
// the messages it had sent to Peer that were lost with the connection, in the
// order it sent them.
type Disconnected struct {
	Peer   NodeID
	Unsent []Message
}

// MessageName implements Message.
func (*Disconnected) MessageName() string { return "Disconnected" }

// CutID names a set of cut links so that a partition heals as one.
type CutID uint32

// NetworkStats counts what happened to messages.
type NetworkStats struct {
	Sent, Delivered                        uint64
	DroppedCut, DroppedLoss, DroppedDown   uint64
	DroppedDisconnect, Duplicated, Reorder uint64
	// Stalled counts the messages a stall held (each once, however long).
	Stalled uint64
}

type link struct {
	rng          rand.PCG
	lastAt       time.Duration // FIFO: nothing sent later arrives earlier
	busyUntil    time.Duration // bandwidth: when the last queued message has left
	extraLatency time.Duration
	cuts         int32
	gen          uint32 // bumped by a reset; older messages are dropped
	open         bool   // a message was sent since the last reset
	seeded       bool
	// lost marks a connection whose destination machine lost power while
	// it was open (the loss's number): its sender's kernel still holds it
	// (network_stale.go).
	lost uint32
}

type network struct {
	w     *World
	opts  NetworkOptions
	n     int // links is n×n
	links []link
	cuts  map[CutID][][2]NodeID
	next  CutID
	stats NetworkStats
	// stalls in force, oldest first; nextStall numbers them.
	stalls    []*stall
	nextStall int
	// stale: the connections marked stale, in the order they were marked;
	// losses numbers the power losses.
	stale  []*staleConn
	losses uint32
}

// A stall holds the messages under names that nodes of from send.
type stall struct {
	id    int
	from  []NodeID
	names []string
	held  []heldMessage
	// stuck: only the connections in conns are held (StuckConnections).
	stuck bool
	conns []stuckConn
}

// stuckConn is a connection a stall of stuck connections holds: from→to in
// link generation gen.
type stuckConn struct {
	from, to NodeID
	gen      uint32
}

// heldMessage is a message a stall holds, with what it was sent under: the
// link's generation and both ends' incarnations.
type heldMessage struct {
	from, to       NodeID
	m              Message
	gen            uint32
	fromInc, toInc uint32
	// closed: its sender closed the connection (a stuck connection's
	// graceful close): sent on at the release all the same.
	closed bool
}

func (net *network) grow(nodes int) {
	if nodes <= net.n {
		return
	}
	size := max(nodes, 2*net.n)
	links := make([]link, size*size)
	for from := 0; from < net.n; from++ {
		copy(links[from*size:from*size+net.n], net.links[from*net.n:(from+1)*net.n])
	}
	net.links, net.n = links, size
}

func (net *network) link(from, to NodeID) *link {
	l := &net.links[int(from)*net.n+int(to)]
	if !l.seeded {
		l.rng = net.w.seed.PCG("link/" + net.w.nodes[from].name + ">" + net.w.nodes[to].name)
		l.seeded = true
	}
	return l
}

func (net *network) send(from, to NodeID, m Message) {
	w := net.w
	if int(to) < 0 || int(to) >= len(w.nodes) {
		panic(fmt.Sprintf("sim: %s sent %s to unknown node %d", w.nodes[from].name, m.MessageName(), to))
	}
	net.stats.Sent++
	if from == to {
		scheduled(m)
		w.sched.schedule(&Event{At: w.sched.now, Kind: EventDeliver, Node: to, From: from,
			Incarnation: w.nodes[to].incarnation, Payload: m})
		return
	}
	if back := net.link(to, from); back.lost != 0 {
		// The rebooted machine connects to its peer: the pair's one
		// connection is now the new process's, and the peer's stale one
		// ends unheard (see network_stale.go).
		net.unmark(to, from)
	}
	l := net.link(from, to)
	l.open = true
	if len(net.stalls) > 0 && net.hold(from, to, l, m) {
		return
	}
	net.transmit(from, to, l, m)
}

// transmit puts a message on a link: dropped if the link is cut or loses it,
// else scheduled (and maybe duplicated).
func (net *network) transmit(from, to NodeID, l *link, m Message) {
	if l.lost != 0 && net.sendStale(from, to, m) {
		return
	}
	if l.cuts > 0 {
		net.stats.DroppedCut++
		return
	}
	if chance(&l.rng, net.opts.LossProbability) {
		net.stats.DroppedLoss++
		return
	}
	net.schedule(from, to, l, m, chance(&l.rng, net.opts.ReorderProbability))
	if chance(&l.rng, net.opts.DuplicateProbability) {
		net.stats.Duplicated++
		net.schedule(from, to, l, m, true)
	}
}

func (net *network) schedule(from, to NodeID, l *link, m Message, reorder bool) {
	w := net.w
	start := w.sched.now
	if bw := net.opts.BandwidthBytesPerSecond; bw > 0 {
		start = max(start, l.busyUntil) + TransmitTime(int64(wireBytes(m)), bw)
		l.busyUntil = start
	}
	at := start + uniformDuration(&l.rng, net.opts.Latency.Min, net.opts.Latency.Max) + l.extraLatency
	if reorder {
		net.stats.Reorder++
	} else {
		at = max(at, l.lastAt)
		l.lastAt = at
	}
	scheduled(m)
	w.sched.schedule(&Event{At: at, Kind: EventDeliver, Node: to, From: from,
		Incarnation: w.nodes[to].incarnation, Gen: l.gen, Payload: m})
}

// arrives reports whether a message event may reach its destination's
// kernel: its connection was not reset and its link is not cut.
func (net *network) arrives(e *Event) bool {
	if e.From == e.Node || e.Held {
		return true
	}
	l := net.link(e.From, e.Node)
	if l.gen != e.Gen {
		net.stats.DroppedDisconnect++
		return false
	}
	if l.cuts > 0 {
		net.stats.DroppedCut++
		return false
	}
	if l.lost != 0 {
		net.staleArrived(e)
		return false
	}
	return true
}

// cutPairs cuts, as one cut, every link from a node of pair[0] to a node of
// pair[1], for each pair.
func (net *network) cutPairs(pairs [][2][]NodeID) CutID {
	net.next++
	id := net.next
	var links [][2]NodeID
	for _, p := range pairs {
		for _, f := range p[0] {
			for _, t := range p[1] {
				if f != t {
					net.link(f, t).cuts++
					links = append(links, [2]NodeID{f, t})
				}
			}
		}
	}
	if net.cuts == nil {
		net.cuts = make(map[CutID][][2]NodeID)
	}
	net.cuts[id] = links
	return id
}

func (net *network) heal(id CutID) bool {
	pairs, ok := net.cuts[id]
	if !ok {
		return false
	}
	for _, p := range pairs {
		net.link(p[0], p[1]).cuts--
	}
	delete(net.cuts, id)
	return true
}

// activeCuts lists the cuts in force, in the order they were made.
func (net *network) activeCuts() []CutID {
	ids := make([]CutID, 0, len(net.cuts))
	for id := range net.cuts { // kafkasim:orderless: sorted below
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// addLatency adds extra (which may be negative, to undo) to every link from a
// node of froms to a node of tos.
func (net *network) addLatency(froms, tos []NodeID, extra time.Duration) {
	for _, f := range froms {
		for _, t := range tos {
			if f != t {
				l := net.link(f, t)
				l.extraLatency = max(l.extraLatency+extra, 0)
			}
		}
	}
}

// stall starts holding what the nodes of from send under names; stuck:
// only on the connections they have open now.
func (net *network) stall(from []NodeID, names []string, stuck bool) int {
	net.nextStall++
	s := &stall{id: net.nextStall, from: slices.Clone(from), names: slices.Clone(names), stuck: stuck}
	if stuck {
		for _, f := range from {
			for to := 0; to < net.n && to < len(net.w.nodes); to++ {
				if l := &net.links[int(f)*net.n+to]; NodeID(to) != f && l.open {
					s.conns = append(s.conns, stuckConn{from: f, to: NodeID(to), gen: l.gen})
				}
			}
		}
	}
	net.stalls = append(net.stalls, s)
	return net.nextStall
}

// hold keeps m in the first stall in force that matches it.
func (net *network) hold(from, to NodeID, l *link, m Message) bool {
	name := m.MessageName()
	for _, s := range net.stalls {
		if s.stuck && !slices.Contains(s.conns, stuckConn{from: from, to: to, gen: l.gen}) {
			continue
		}
		if slices.Contains(s.from, from) && stallMatches(s.names, name) {
			w := net.w
			s.held = append(s.held, heldMessage{from: from, to: to, m: m, gen: l.gen,
				fromInc: w.nodes[from].incarnation, toInc: w.nodes[to].incarnation})
			net.stats.Stalled++
			return true
		}
	}
	return false
}

// stallMatches reports whether a message name is one of names, or one of
// them with a qualifier: "Fetch" matches "Fetch(replica)".
func stallMatches(names []string, name string) bool {
	for _, n := range names {
		if name == n || (len(name) > len(n) && name[len(n)] == '(' && name[:len(n)] == n) {
			return true
		}
	}
	return false
}

// release ends a stall: what it held is sent now, in the order it was sent,
// unless its sender's process or its connection died meanwhile, or its
// destination restarted (a stall still in force may take it over).
func (net *network) release(id int) (sent, dropped int) {
	i := slices.IndexFunc(net.stalls, func(s *stall) bool { return s.id == id })
	if i < 0 {
		return 0, 0
	}
	s := net.stalls[i]
	net.stalls = slices.Delete(net.stalls, i, i+1)
	w := net.w
	for _, h := range s.held {
		src := w.nodes[h.from]
		l := net.link(h.from, h.to)
		switch {
		case src.incarnation != h.fromInc || src.state == Down || (l.gen != h.gen && !h.closed):
			net.stats.DroppedDisconnect++
			dropped++
		case w.nodes[h.to].incarnation != h.toInc:
			net.stats.DroppedDown++
			dropped++
		case !h.closed && net.hold(h.from, h.to, l, h.m):
			net.stats.Stalled-- // held on by another stall, not newly
		default:
			net.transmit(h.from, h.to, l, h.m)
			sent++
		}
	}
	return sent, dropped
}

// releaseAll ends every stall in force, oldest first (the heal before the
// liveness phase), and returns how many held messages it sent on.
func (net *network) releaseAll() int {
	n := 0
	for len(net.stalls) > 0 {
		sent, _ := net.release(net.stalls[0].id)
		n += sent
	}
	return n
}

// dropHeld takes the messages stalls hold on a→b's current connection out
// of them, in stall order.
func (net *network) dropHeld(a, b NodeID, gen uint32) []Message {
	var out []Message
	for _, s := range net.stalls {
		s.held = slices.DeleteFunc(s.held, func(h heldMessage) bool {
			if h.from == a && h.to == b && h.gen == gen && !h.closed {
				out = append(out, h.m)
				return true
			}
			return false
		})
	}
	net.stats.DroppedDisconnect += uint64(len(out))
	return out
}

// dropInFlight collects the messages in flight on a→b and cancels them, in
// the order they were sent, then those stalls hold on the connection.
func (net *network) dropInFlight(a, b NodeID) []Message {
	type pending struct {
		seq uint64
		m   Message
	}
	var found []pending
	l := net.link(a, b)
	net.w.sched.forEachPending(func(id EventID, e *Event) {
		if e.Kind == EventDeliver && e.From == a && e.Node == b && e.Gen == l.gen && !e.Held {
			found = append(found, pending{seq: e.Seq, m: e.Payload.(Message)})
			net.w.sched.Cancel(id)
		}
	})
	sort.Slice(found, func(i, j int) bool { return found[i].seq < found[j].seq })
	out := make([]Message, len(found))
	for i, p := range found {
		out[i] = p.m
	}
	net.stats.DroppedDisconnect += uint64(len(found))
	if len(net.stalls) > 0 {
		out = append(out, net.dropHeld(a, b, l.gen)...)
	}
	return out
}

// reset drops the connection between a and b. Each end is told at delay
// after now (zero: a local reset), unless told is false for that end.
func (net *network) reset(a, b NodeID, tellA, tellB bool, delayToA, delayToB time.Duration) {
	w := net.w
	ab, ba := net.link(a, b), net.link(b, a)
	// A stale connection's end that lost power knows nothing of it: only
	// its sender is told, and what it kept is lost with it.
	staleAB, staleBA := ab.lost != 0, ba.lost != 0
	keptA, keptB := net.take(a, b), net.take(b, a)
	if !ab.open && !ba.open && !staleAB && !staleBA {
		return
	}
	tellA, tellB = tellA && !staleBA, tellB && !staleAB
	unsentA := append(keptA, net.dropInFlight(a, b)...)
	unsentB := append(keptB, net.dropInFlight(b, a)...)
	ab.gen++
	ba.gen++
	ab.open, ba.open = false, false
	if net.opts.BandwidthBytesPerSecond > 0 {
		// What was queued went with the connection, and the next one's FIFO
		// owes nothing to it. (Without a bandwidth lastAt stays: arrivals
		// after a reset were always ordered after the dropped ones, and
		// existing runs keep their traces.)
		ab.busyUntil, ba.busyUntil = 0, 0
		ab.lastAt, ba.lastAt = 0, 0
	}
	if tellA {
		w.sched.schedule(&Event{At: w.sched.now + delayToA, Kind: EventNotify, Node: a, From: b,
			Incarnation: w.nodes[a].incarnation, Payload: &Disconnected{Peer: b, Unsent: unsentA}})
	}
	if tellB {
		w.sched.schedule(&Event{At: w.sched.now + delayToB, Kind: EventNotify, Node: b, From: a,
			Incarnation: w.nodes[b].incarnation, Payload: &Disconnected{Peer: a, Unsent: unsentB}})
	}
}

// close is a reset initiated by a: b is told after the link's latency,
// unless the link is cut (then b finds out when its next send fails).
func (net *network) close(a, b NodeID) {
	ab := net.link(a, b)
	for _, s := range net.stalls {
		if !s.stuck {
			continue
		}
		for i := range s.held {
			if h := &s.held[i]; h.from == a && h.to == b && h.gen == ab.gen {
				h.closed = true // written before the FIN: it still goes
			}
		}
	}
	delay := uniformDuration(&ab.rng, net.opts.Latency.Min, net.opts.Latency.Max) + ab.extraLatency
	net.reset(a, b, false, ab.cuts == 0, 0, delay)
}

// refused answers a message that reached a machine whose process is gone:
// its kernel resets the connection, and the sender learns it lost m once the
// reset crosses back.
func (net *network) refused(e *Event) {
	w := net.w
	back := net.link(e.Node, e.From)
	if back.cuts > 0 {
		return
	}
	delay := uniformDuration(&back.rng, net.opts.Latency.Min, net.opts.Latency.Max) + back.extraLatency
	w.sched.schedule(&Event{At: w.sched.now + delay, Kind: EventNotify, Node: e.From, From: e.Node,
		Incarnation: w.nodes[e.From].incarnation, Payload: &Disconnected{Peer: e.Node, Unsent: []Message{e.Payload.(Message)}}})
}

// crashed resets every open connection of a node whose process died while its
// kernel lived: each peer learns of it once the reset crosses the link, unless
// the link is cut.
func (net *network) crashed(x NodeID) {
	for i := range net.w.nodes {
		y := NodeID(i)
		if y == x {
			continue
		}
		xy, yx := net.link(x, y), net.link(y, x)
		if xy.lost != 0 {
			// x's connection to y's machine from before y's power loss:
			// it dies with x, and no process of y ever had it.
			net.unmark(x, y)
			continue
		}
		if yx.lost != 0 {
			// y's connection to x's machine from before its power loss:
			// no process of x had it, and its kernel resets it when y's
			// data comes (network_stale.go).
			continue
		}
		if !xy.open && !yx.open {
			continue
		}
		delay := uniformDuration(&xy.rng, net.opts.Latency.Min, net.opts.Latency.Max) + xy.extraLatency
		delay = max(delay, xy.lastAt-net.w.sched.now) // after the data already on the wire
		net.reset(x, y, false, xy.cuts == 0, 0, delay)
	}
}

// forget drops the connections of a node that lost power: nothing is sent, but
// the connections are gone. Each peer's end of one stays, marked stale: what
// it sends is lost until the machine is back and answers with a reset
// (network_stale.go).
func (net *network) forget(x NodeID) {
	net.losses++
	for i := range net.w.nodes {
		y := NodeID(i)
		if y != x {
			xy, yx := net.link(x, y), net.link(y, x)
			if xy.lost != 0 {
				// Stale since y lost power: y's process never had it.
				net.unmark(x, y)
			} else if (xy.open || yx.open) && net.w.nodes[y].state != Down {
				net.markStale(y, x, net.losses)
			}
			xy.open, yx.open = false, false
			if net.opts.BandwidthBytesPerSecond > 0 {
				xy.busyUntil, yx.busyUntil = 0, 0
				xy.lastAt, yx.lastAt = 0, 0
			}
		}
	}
}
