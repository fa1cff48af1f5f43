package sim

// What a node's author must know of the world: Node (the three calls a
// node receives), Env (what it may ask for), NodeDisk (its disk, in
// disk.go) and Message (network.go). In short:
//   - a node is a state machine: it reacts to Start, Deliver and Fire and
//     never blocks, spawns, reads the OS clock or does I/O; a crash throws
//     its value away, and a restart builds a new one that knows only what
//     its disk holds;
//   - time is the node's own clock (Env.Now, which a fault may skew);
//     timers are Env.After and come back through Fire;
//   - messages go out with Env.Send and arrive through Deliver, in send
//     order per pair of nodes (unless reordering is switched on), or not
//     at all (a Disconnected notice tells of a reset connection; a
//     partition tells nothing);
//   - the disk's writes are seen at once but are durable only when an
//     fsync's *FsyncDone comes back through Fire;
//   - every random draw comes from Env.Rand.
// Everything else this package offers nodes (Reusable messages, the
// disk's DiskMemo and OwnedWriter, DetailAppender payloads) is an optional
// performance hook: a node that ignores it behaves identically (hooks.go).

import (
	"math/rand/v2"
	"time"
)

// NodeID identifies a node of a world: its index, in the order nodes were added.
type NodeID int32

// NoNode is the id of no node.
const NoNode NodeID = -1

// Timer is whatever a node asks to be handed back when a timer fires.
type Timer any

// TimerID cancels a timer.
type TimerID = EventID

// Node is a controller, broker or client: a deterministic state machine. It
// reacts to a delivered message or a fired timer, changes its state and asks
// its Env for effects. It never does I/O itself, and a crash throws the value
// away: a restarted node is a new value that knows only what its disk holds.
type Node interface {
	// Start boots the node; everything it knows comes from env.Disk().
	Start(env Env)
	// Deliver hands the node a message from another node (or a Disconnected
	// notice from its own kernel).
	Deliver(from NodeID, m Message)
	// Fire hands back a timer the node set, or a FsyncDone.
	Fire(t Timer)
}

// Stopper is implemented by nodes that shut down cleanly: Stop asks the node
// to finish (a Kafka broker's controlled shutdown) and call Env.Exit. A node
// that does not implement it exits at once. One that does not exit within the
// world's shutdown grace is killed.
type Stopper interface {
	Stop()
}

// Env is everything a node may ask of the world.
type Env interface {
	// ID is the node's id; Name its name ("broker-1").
	ID() NodeID
	Name() string
	// Now is the node's local clock (offset and drift applied).
	Now() time.Duration
	// Send queues m for delivery to another node. It may be delayed, dropped
	// by a partition or lost with a connection; the sender is not told,
	// except through a Disconnected notice.
	Send(to NodeID, m Message)
	// After fires t after d of the node's local time, unless cancelled or
	// the node crashes first.
	After(d time.Duration, t Timer) TimerID
	// Cancel stops a timer; cancelling one that fired is a no-op.
	Cancel(id TimerID)
	// Disk is the node's disk: NodeDisk's operations, and the optional
	// interfaces a type assertion may find.
	Disk() NodeDisk
	// Rand is the node's own random stream.
	Rand() *rand.Rand
	// Exit ends a clean shutdown: the process stops, the page cache stays.
	Exit()
	// Note records a happening (an election, an ISR change) in the trace.
	Note(kind, detail string)
	// Lookup finds a node by name.
	Lookup(name string) (NodeID, bool)
	// Incarnation counts this process's boots (1 for the first): a client
	// that restarts can keep the values it writes unique.
	Incarnation() uint32
	// WorldTime is the simulation's virtual time, for history records only:
	// behaviour must use Now, the node's own clock.
	WorldTime() time.Duration
	// CloseConnection closes this node's connection to a peer (as a Kafka
	// broker does after an acks=0 produce fails): what is in flight either
	// way is lost, and the peer learns of it once the close crosses the
	// link.
	CloseConnection(peer NodeID)
	// Connection names this node's current connection with a peer. It
	// changes whenever that connection is reset (a close by either end, a
	// crash, a partition that resets it) and when the peer restarts, so a
	// node can tell a request it read on an earlier connection from one
	// read on the current one.
	Connection(peer NodeID) uint64
}
