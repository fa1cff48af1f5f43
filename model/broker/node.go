// Package broker is a Kafka broker: an observer of the metadata quorum that
// registers with the active controller, keeps its session alive with
// heartbeats, and (as the data plane grows) hosts partition replicas.
package broker

import (
	"time"

	"kafkasim/model/metadata"
	"kafkasim/model/raft"
	"kafkasim/model/storage"
	"kafkasim/sim"
)

// Config configures a broker.
type Config struct {
	BrokerID int32
	Rack     string
	// Raft is the observer's configuration: the voters to fetch from.
	Raft raft.Config
	// HeartbeatInterval is broker.heartbeat.interval.ms (2000 ms).
	HeartbeatInterval time.Duration
	// StartingHeartbeatInterval is how often a broker that is catching up
	// heartbeats (Kafka: 10 ms).
	StartingHeartbeatInterval time.Duration
	// ControllerRequestTimeout bounds a registration or heartbeat in flight.
	ControllerRequestTimeout time.Duration
	// Audit sees every committed image change.
	Audit metadata.ImageObserver
}

// DefaultConfig has Kafka's defaults.
func DefaultConfig(id int32, voters []sim.NodeID) Config {
	return Config{
		BrokerID:                  id,
		Raft:                      raft.DefaultConfig(voters),
		HeartbeatInterval:         2 * time.Second,
		StartingHeartbeatInterval: 10 * time.Millisecond,
		ControllerRequestTimeout:  2 * time.Second,
	}
}

// Node is one broker.
type Node struct {
	cfg   Config
	env   sim.Env
	gate  *storage.Gate
	raft  *raft.Raft
	image *metadata.Image
	life  lifecycle
}

// New returns a constructor for brokers with cfg.
func New(cfg Config) func() sim.Node {
	return func() sim.Node { return &Node{cfg: cfg} }
}

// Start boots the broker: metadata log recovery, then registration.
func (n *Node) Start(env sim.Env) {
	n.env = env
	n.gate = storage.NewGate(env)
	n.image = metadata.NewImage(env.Name(), n.cfg.Audit)
	rc := n.cfg.Raft
	rc.OnCommit = n.onCommit
	rc.OnTruncate = n.onTruncate
	rc.OnRoleChange = func() {}
	n.raft = raft.New(env, n.gate, rc)
	n.gate.OnDurable = n.onDurable
	n.raft.Start()
	n.life.start(n)
}

// ID is the broker id.
func (n *Node) ID() int32 { return n.cfg.BrokerID }

// Image is the broker's committed metadata (god view).
func (n *Node) Image() *metadata.Image { return n.image }

// Raft is the broker's observer replica of the metadata log (god view).
func (n *Node) Raft() *raft.Raft { return n.raft }

// Deliver routes metadata fetches to the observer and controller answers to
// the lifecycle.
func (n *Node) Deliver(from sim.NodeID, m sim.Message) {
	if n.raft.Deliver(from, m) {
		return
	}
	n.life.deliver(from, m)
}

// Fire routes timers.
func (n *Node) Fire(t sim.Timer) {
	if n.gate.Fire(t) || n.raft.Fire(t) {
		return
	}
	n.life.fire(t)
}

func (n *Node) onDurable(token any) {
	if _, ok := token.(exitToken); ok {
		n.env.Exit() // the clean-shutdown file is on disk
		return
	}
	n.raft.Durable(token)
}

// Stop starts a controlled shutdown.
func (n *Node) Stop() { n.life.stop() }

// onCommit applies committed metadata.
func (n *Node) onCommit(hw int64) {
	log := n.raft.Log()
	for n.image.Offset < hw && n.image.Offset < log.EndOffset() {
		e := log.Entry(n.image.Offset)
		if e.Control {
			n.image.Skip(e.Offset)
			continue
		}
		batch, err := metadata.DecodeBatch(e.Data)
		if err == nil {
			err = n.image.Apply(e.Offset, batch)
		}
		if err != nil {
			n.env.Note("broker", "fatal: metadata: "+err.Error())
			n.image.Skip(e.Offset)
		}
	}
}

// onTruncate rebuilds the image if committed metadata was truncated (only a
// bug in the quorum can cause it; the audit reports it).
func (n *Node) onTruncate(to int64) {
	if n.image.Offset <= to {
		return
	}
	n.image = metadata.NewImage(n.env.Name(), nil)
	log := n.raft.Log()
	for off := int64(0); off < to; off++ {
		e := log.Entry(off)
		if e.Control {
			n.image.Skip(off)
			continue
		}
		if batch, err := metadata.DecodeBatch(e.Data); err == nil && n.image.Apply(off, batch) == nil {
			continue
		}
		n.image.Skip(off)
	}
	n.image.Observer = n.cfg.Audit
}
