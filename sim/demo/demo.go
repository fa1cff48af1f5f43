// Package demo is a toy cluster for showing the world at work before any Kafka
// exists, and for exercising it in tests: nodes that ping each other, append
// every ping they receive to a log on disk, fsync now and then, and recover
// their count from the log when they restart.
package demo

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"time"

	"kafkasim/sim"
)

// Ping is a heartbeat with a sequence number.
type Ping struct {
	Seq uint64
}

// MessageName implements sim.Message.
func (*Ping) MessageName() string { return "Ping" }

// String describes the ping in traces.
func (p *Ping) String() string { return fmt.Sprintf("Ping seq=%d", p.Seq) }

// Pong answers a Ping.
type Pong struct {
	Seq uint64
}

// MessageName implements sim.Message.
func (*Pong) MessageName() string { return "Pong" }

// String describes the pong in traces.
func (p *Pong) String() string { return fmt.Sprintf("Pong seq=%d", p.Seq) }

type tick struct{}

type fsyncToken struct{ records uint64 }

// Config is a demo node's behaviour.
type Config struct {
	Peers         []string      // names of the nodes it pings
	Interval      time.Duration // between ping rounds
	FsyncEvery    uint64        // fsync the log after this many appends (0: never)
	ShutdownFlush bool          // fsync before exiting on a clean shutdown
}

// Stats is what a node has seen, readable by god-view tests.
type Stats struct {
	Recovered    uint64 // records found valid on disk at boot
	TornAtBoot   bool   // the log ended in a partial or corrupt record
	Appended     uint64 // records appended since boot
	Synced       uint64 // records known durable (acknowledged by fsync)
	PongsSeen    uint64
	Disconnects  uint64
	LostRequests uint64 // pings reported lost with a connection
}

// Node is a demo node.
type Node struct {
	cfg   Config
	env   sim.Env
	peers []sim.NodeID
	seq   uint64
	Stats Stats
	// LastHeard is, per node id, the local time of the last Pong from it.
	LastHeard map[sim.NodeID]time.Duration
}

// New returns a constructor for nodes with cfg, for sim.NodeSpec.New.
func New(cfg Config) func() sim.Node {
	return func() sim.Node { return &Node{cfg: cfg} }
}

const (
	logFile    = "pings.log"
	recordSize = 16 // 8-byte sequence, 4-byte sender id, 4-byte CRC32
)

// Start recovers the log and starts pinging.
func (n *Node) Start(env sim.Env) {
	n.env = env
	n.LastHeard = map[sim.NodeID]time.Duration{}
	for _, name := range n.cfg.Peers {
		if id, ok := env.Lookup(name); ok && id != env.ID() {
			n.peers = append(n.peers, id)
		}
	}
	n.recover()
	env.After(n.cfg.Interval, tick{})
}

// recover keeps the valid prefix of the log and truncates what follows it,
// as a log with checksummed records does after a crash.
func (n *Node) recover() {
	disk := n.env.Disk()
	data, err := disk.ReadFile(logFile)
	if err != nil {
		return
	}
	valid := 0
	for valid+recordSize <= len(data) {
		rec := data[valid : valid+recordSize]
		if crc32.ChecksumIEEE(rec[:12]) != binary.BigEndian.Uint32(rec[12:]) {
			break
		}
		valid += recordSize
	}
	if valid < len(data) {
		n.Stats.TornAtBoot = true
		if err := disk.Truncate(logFile, int64(valid)); err != nil {
			n.env.Note("demo", "truncate failed: "+err.Error())
		}
	}
	n.Stats.Recovered = uint64(valid / recordSize)
	n.Stats.Synced = n.Stats.Recovered
	n.env.Note("recovered", fmt.Sprintf("%d records", n.Stats.Recovered))
}

// HeardFromAllSince reports whether every peer answered a ping at or after
// local time t.
func (n *Node) HeardFromAllSince(t time.Duration) bool {
	for _, p := range n.peers {
		if at, ok := n.LastHeard[p]; !ok || at < t {
			return false
		}
	}
	return true
}

// Records is the number of records in the log now.
func (n *Node) Records() uint64 { return n.Stats.Recovered + n.Stats.Appended }

// Deliver handles pings, pongs and connection notices.
func (n *Node) Deliver(from sim.NodeID, m sim.Message) {
	switch m := m.(type) {
	case *Ping:
		n.append(m.Seq, from)
		n.env.Send(from, &Pong{Seq: m.Seq})
	case *Pong:
		n.Stats.PongsSeen++
		n.LastHeard[from] = n.env.Now()
	case *sim.Disconnected:
		n.Stats.Disconnects++
		n.Stats.LostRequests += uint64(len(m.Unsent))
	}
}

func (n *Node) append(seq uint64, from sim.NodeID) {
	var rec [recordSize]byte
	binary.BigEndian.PutUint64(rec[0:], seq)
	binary.BigEndian.PutUint32(rec[8:], uint32(from))
	binary.BigEndian.PutUint32(rec[12:], crc32.ChecksumIEEE(rec[:12]))
	if _, err := n.env.Disk().Append(logFile, rec[:]); err != nil {
		n.env.Note("demo", "append failed: "+err.Error())
		return
	}
	n.Stats.Appended++
	if n.cfg.FsyncEvery > 0 && n.Stats.Appended%n.cfg.FsyncEvery == 0 {
		n.env.Disk().Fsync(logFile, fsyncToken{records: n.Records()})
	}
}

// Fire handles the ping timer and fsync completions.
func (n *Node) Fire(t sim.Timer) {
	switch t := t.(type) {
	case tick:
		n.seq++
		for _, p := range n.peers {
			n.env.Send(p, &Ping{Seq: n.seq})
		}
		n.env.After(n.cfg.Interval, tick{})
	case *sim.FsyncDone:
		if tok, ok := t.Token.(fsyncToken); ok && tok.records > n.Stats.Synced {
			n.Stats.Synced = tok.records
		}
		if _, ok := t.Token.(shutdownToken); ok {
			n.env.Exit()
		}
	}
}

type shutdownToken struct{}

// Stop shuts down cleanly: flush the log if configured, then exit.
func (n *Node) Stop() {
	if n.cfg.ShutdownFlush {
		n.env.Disk().Fsync(logFile, shutdownToken{})
		return
	}
	n.env.Exit()
}
