package sim

import (
	"fmt"
	"time"
)

// probeMsg is a test message: who sent it and its number in the sender's
// sequence to that destination.
type probeMsg struct {
	From NodeID
	N    int
	// Bytes is its size on the wire; zero: DefaultMessageBytes.
	Bytes int
}

func (*probeMsg) MessageName() string { return "Probe" }

// WireBytes implements Sized.
func (m *probeMsg) WireBytes() int {
	if m.Bytes == 0 {
		return DefaultMessageBytes
	}
	return m.Bytes
}

// namedMsg is a test message under any name (a stall picks messages by
// name).
type namedMsg struct {
	Name string
	N    int
}

func (m *namedMsg) MessageName() string { return m.Name }

type delivery struct {
	from NodeID
	n    int
	at   time.Duration
}

// probe is a test node that records what it receives and fires.
type probe struct {
	env        Env
	deliveries []delivery
	notices    []*Disconnected
	noticedAt  []time.Duration
	named      []string // "<name>#<n>@<time>" of each namedMsg received
	fired      []Timer
	firedAt    []time.Duration
	next       map[NodeID]int
}

func (p *probe) Start(env Env) { p.env = env; p.next = map[NodeID]int{} }
func (p *probe) Deliver(from NodeID, m Message) {
	switch m := m.(type) {
	case *probeMsg:
		p.deliveries = append(p.deliveries, delivery{from: from, n: m.N, at: p.env.Now()})
	case *Disconnected:
		p.notices = append(p.notices, m)
		p.noticedAt = append(p.noticedAt, p.env.Now())
	case *namedMsg:
		p.named = append(p.named, fmt.Sprintf("%s#%d@%v", m.Name, m.N, p.env.Now()))
	}
}
func (p *probe) Fire(t Timer) {
	p.fired = append(p.fired, t)
	p.firedAt = append(p.firedAt, p.env.Now())
}

// send sends the next numbered probe message to to.
func (p *probe) send(to NodeID) {
	n := p.next[to]
	p.next[to] = n + 1
	p.env.Send(to, &probeMsg{From: p.env.ID(), N: n})
}

// sendBytes sends the next numbered probe message, of size bytes, to to.
func (p *probe) sendBytes(to NodeID, bytes int) {
	n := p.next[to]
	p.next[to] = n + 1
	p.env.Send(to, &probeMsg{From: p.env.ID(), N: n, Bytes: bytes})
}

// probeWorld builds a world of n probe nodes named node-0.. in racks r0, r1.
func probeWorld(seed uint64, n int, net NetworkOptions) (*World, []*probe) {
	opts := DefaultOptions(Seed(seed))
	opts.Network = net
	w := NewWorld(opts)
	probes := make([]*probe, n)
	for i := range n {
		i := i
		w.AddNode(NodeSpec{Name: fmt.Sprintf("node-%d", i), Role: "probe", Rack: fmt.Sprintf("r%d", i%2),
			New: func() Node { probes[i] = &probe{}; return probes[i] }})
	}
	w.Start()
	w.RunUntil(0)
	return w, probes
}
