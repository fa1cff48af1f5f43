package broker

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"kafkasim/model/proto"
	"kafkasim/model/storage"
	"kafkasim/sim"
)

// The broker's side of its lifecycle (Kafka's BrokerLifecycleManager):
// register, heartbeat, catch up with the metadata log, get unfenced; on a
// clean shutdown, move leadership away through the controller, then record
// the broker epoch in the clean-shutdown file so that the next registration
// is known to follow a clean stop (KIP-966).

// State is the broker's lifecycle state.
type State uint8

// Lifecycle states.
const (
	StateRegistering State = iota
	StateStarting          // registered, catching up with the metadata log
	StateRecovery          // caught up, ready to be unfenced
	StateRunning
	StatePendingControlledShutdown
	StateShuttingDown
)

var stateNames = [...]string{"registering", "starting", "recovery", "running", "pending-controlled-shutdown", "shutting-down"}

// String names the state.
func (s State) String() string { return stateNames[s] }

const cleanShutdownFile = "meta/clean-shutdown"

type cleanShutdown struct {
	BrokerEpoch int64 `json:"brokerEpoch"`
}

type lifecycleTimer struct {
	kind uint8 // 0: send the next request, 1: a request timed out
	seq  uint64
}

type exitToken struct{}

type lifecycle struct {
	n             *Node
	state         State
	epoch         int64
	incarnation   uint64
	previousEpoch int64
	controller    sim.NodeID // the active controller, as last heard
	fenced        bool

	nextCorrelation uint64
	inflight        uint64 // correlation id of the request in flight, 0 if none
	timerSeq        uint64
}

// State is the broker's lifecycle state (god view).
func (n *Node) State() State { return n.life.state }

// BrokerEpoch is the epoch of the broker's current registration, or -1.
func (n *Node) BrokerEpoch() int64 { return n.life.epoch }

// Fenced reports whether the controller last said this broker is fenced.
func (n *Node) Fenced() bool { return n.life.fenced }

func (l *lifecycle) start(n *Node) {
	// Correlation ids start apart per incarnation (proto.CorrelationBase):
	// Kafka's BrokerLifecycleManager sends through its own
	// NodeToControllerChannelManager, whose connections die with the
	// process, so the answer to a registration the previous process sent
	// (committed, at the broker epoch of that registration, after this
	// process began) never reaches this one. Taking it for our own answer
	// would leave us heartbeating at a stale broker epoch for ever.
	*l = lifecycle{n: n, epoch: -1, previousEpoch: -1, controller: sim.NoNode, fenced: true,
		incarnation: n.env.Rand().Uint64(), nextCorrelation: proto.CorrelationBase(n.env.Incarnation())}
	disk := n.env.Disk()
	payload, err := storage.ReadCheckpoint(disk, cleanShutdownFile)
	switch {
	case err == nil:
		var cs cleanShutdown
		if json.Unmarshal(payload, &cs) == nil {
			l.previousEpoch = cs.BrokerEpoch
		}
		// The marker describes the last stop only: a crash from here on must
		// not look clean.
		if err := disk.Remove(cleanShutdownFile); err == nil {
			l.n.gate.Fsync(cleanShutdownFile)
		}
	case !errors.Is(err, sim.ErrNotExist):
		n.env.Note("broker", "clean-shutdown file unreadable: "+err.Error())
	}
	l.send()
}

func (l *lifecycle) target() sim.NodeID {
	if l.controller != sim.NoNode {
		return l.controller
	}
	if leader := l.n.raft.Leader(); leader != sim.NoNode {
		return leader
	}
	return sim.NoNode
}

// send sends the request the state calls for, if none is in flight.
func (l *lifecycle) send() {
	n := l.n
	if l.inflight != 0 || l.state == StateShuttingDown {
		return
	}
	to := l.target()
	if to == sim.NoNode {
		l.schedule(100*n.cfg.StartingHeartbeatInterval, 0) // wait to learn the active controller
		return
	}
	l.nextCorrelation++
	l.inflight = l.nextCorrelation
	if l.state == StateRegistering {
		n.gate.Send(to, &proto.BrokerRegistrationRequest{CorrelationID: l.inflight, BrokerID: n.cfg.BrokerID,
			IncarnationID: l.incarnation, Rack: n.cfg.Rack, PreviousBrokerEpoch: l.previousEpoch})
	} else {
		// A heartbeat reports the metadata the broker has applied, not
		// what its disk holds: it does not wait behind pending fsyncs.
		n.env.Send(to, &proto.BrokerHeartbeatRequest{CorrelationID: l.inflight, BrokerID: n.cfg.BrokerID,
			BrokerEpoch: l.epoch, CurrentMetadataOffset: n.image.Offset - 1,
			WantFence: l.state == StateStarting, WantShutDown: l.state == StatePendingControlledShutdown})
	}
	l.schedule(n.cfg.ControllerRequestTimeout, 1)
}

func (l *lifecycle) schedule(d time.Duration, kind uint8) {
	l.timerSeq++
	l.n.env.After(d, lifecycleTimer{kind: kind, seq: l.timerSeq})
}

func (l *lifecycle) fire(t sim.Timer) {
	switch t := t.(type) {
	case lifecycleTimer:
		if t.seq != l.timerSeq {
			return
		}
		if t.kind == 1 {
			l.inflight = 0
			l.controller = sim.NoNode // ask the quorum again who is active
		}
		l.send()
	}
}

// next schedules the next request for the state.
func (l *lifecycle) next() {
	n := l.n
	switch l.state {
	case StateRegistering, StateStarting, StateRecovery:
		l.schedule(n.cfg.StartingHeartbeatInterval, 0)
	case StatePendingControlledShutdown:
		l.schedule(50*n.cfg.StartingHeartbeatInterval/10, 0)
	default:
		l.schedule(n.cfg.HeartbeatInterval, 0)
	}
}

func (l *lifecycle) deliver(from sim.NodeID, m sim.Message) {
	switch m := m.(type) {
	case *proto.BrokerRegistrationResponse:
		if m.CorrelationID != l.inflight {
			return
		}
		l.inflight = 0
		if l.redirected(m.Error, m.ControllerHint) {
			return
		}
		if m.Error != proto.None {
			l.n.env.Note("broker", "registration failed: "+m.Error.String())
			l.schedule(l.n.cfg.HeartbeatInterval, 0)
			return
		}
		l.epoch = m.BrokerEpoch
		l.state = StateStarting
		l.controller = from
		l.n.env.Note("broker", fmt.Sprintf("registered with broker epoch %d", l.epoch))
		l.send()
	case *proto.BrokerHeartbeatResponse:
		if m.CorrelationID != l.inflight {
			return
		}
		l.inflight = 0
		if l.redirected(m.Error, m.ControllerHint) {
			return
		}
		if m.Error != proto.None {
			// STALE_BROKER_EPOCH and the like: Kafka only logs and retries.
			l.next()
			return
		}
		l.controller = from
		if m.IsFenced != l.fenced {
			l.fenced = m.IsFenced
			l.n.env.Note("broker", fmt.Sprintf("fenced=%v", m.IsFenced))
		}
		switch l.state {
		case StateStarting:
			if m.IsCaughtUp {
				// Caught up with the metadata log: replicas take up the
				// current image (recovering their logs), then we may be
				// unfenced.
				l.n.rm.setCaughtUp()
				l.state = StateRecovery
			}
		case StateRecovery:
			if !m.IsFenced {
				l.state = StateRunning
			}
		case StatePendingControlledShutdown:
			if m.ShouldShutDown {
				l.finishShutdown()
				return
			}
		}
		if l.state == StateRecovery {
			l.send()
			return
		}
		l.next()
	case *sim.Disconnected:
		if m.Peer == l.controller && l.inflight != 0 {
			l.inflight = 0
			l.controller = sim.NoNode
			l.schedule(l.n.cfg.StartingHeartbeatInterval, 0)
		}
	}
}

// redirected handles NOT_CONTROLLER; it reports whether the response was one.
func (l *lifecycle) redirected(err proto.ErrorCode, hint sim.NodeID) bool {
	if err != proto.NotController {
		return false
	}
	l.controller = hint
	l.schedule(l.n.cfg.StartingHeartbeatInterval, 0)
	return true
}

func (l *lifecycle) stop() {
	if l.state == StateRegistering || l.epoch < 0 {
		l.n.env.Exit()
		return
	}
	l.state = StatePendingControlledShutdown
	l.n.env.Note("broker", "controlled shutdown requested")
	if l.inflight == 0 {
		l.send()
	}
}

// finishShutdown records the epoch in the clean-shutdown file, durably, and exits.
func (l *lifecycle) finishShutdown() {
	n := l.n
	l.state = StateShuttingDown
	n.rm.shutdown() // flush logs, write checkpoints: all before the marker
	payload, _ := json.Marshal(cleanShutdown{BrokerEpoch: l.epoch})
	if err := storage.WriteCheckpoint(n.gate, cleanShutdownFile, payload, exitToken{}); err != nil {
		n.env.Exit() // no marker: the next start counts as unclean, which is the truth
	}
}
