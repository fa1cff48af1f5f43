// Package controller is a KRaft controller: a voter of the metadata quorum
// and, while it leads, the active controller that registers brokers, fences
// those whose heartbeats stop, elects partition leaders and applies ISR
// changes. Every decision is a batch of metadata records appended to the
// log; a request is answered only once its batch is committed.
package controller

import (
	"fmt"
	"time"

	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/model/raft"
	"kafkasim/model/storage"
	"kafkasim/sim"
)

// Config configures a controller.
type Config struct {
	Raft raft.Config
	// ELREnabled is eligible.leader.replicas.enable.
	ELREnabled bool
	// UncleanLeaderElection is the broker default of
	// unclean.leader.election.enable for topics that do not set it.
	UncleanLeaderElection bool
	// MinInsyncReplicas is the broker default of min.insync.replicas.
	MinInsyncReplicas int
	// DefaultReplicationFactor is default.replication.factor.
	DefaultReplicationFactor int
	// SessionTimeout is broker.session.timeout.ms (9000 ms).
	SessionTimeout time.Duration
	// FenceCheckInterval is how often stale brokers are looked for; at most
	// one is fenced each time, as Kafka's controller does.
	FenceCheckInterval time.Duration
	// MaxIdleInterval is metadata.max.idle.interval.ms (500 ms): the active
	// controller appends a NoOpRecord this often (KIP-835), so that the
	// metadata log and its high watermark keep moving while nothing else
	// is written; 0 writes none.
	MaxIdleInterval time.Duration
	// LeaderImbalanceCheckInterval is leader.imbalance.check.interval.seconds
	// when auto.leader.rebalance.enable is true: how long after a partition
	// is seen led by another replica than its preferred one the controller
	// moves leadership back (QuorumController's
	// maybeBalancePartitionLeaders); 0 is auto.leader.rebalance.enable=false.
	LeaderImbalanceCheckInterval time.Duration
	// BugStaleAlterPartition switches on the bug zoo's
	// stale-alter-partition: AlterPartition is not checked against the
	// broker epochs of the new ISR members (KIP-903).
	BugStaleAlterPartition bool
	// Audit sees every committed image change.
	Audit metadata.ImageObserver
}

// DefaultConfig has Kafka 4.2's defaults.
func DefaultConfig(voters []sim.NodeID) Config {
	return Config{
		Raft:                     raft.DefaultConfig(voters),
		ELREnabled:               true,
		MinInsyncReplicas:        1,
		DefaultReplicationFactor: 1,
		SessionTimeout:           9 * time.Second,
		FenceCheckInterval:       250 * time.Millisecond,
		MaxIdleInterval:          500 * time.Millisecond,
	}
}

type fenceTick struct{ gen uint64 }
type noOpTick struct{ gen uint64 }
type exitTimer struct{}

type pendingReply struct {
	offset int64
	to     sim.NodeID
	m      sim.Message
}

// session is what the active controller keeps in memory about a broker's
// heartbeats (Kafka's BrokerHeartbeatManager).
type session struct {
	lastContact    time.Duration
	metadataOffset int64
	// shutdownOffset is the offset of the batch that put the broker in
	// controlled shutdown: it may stop once every active broker applied it.
	shutdownOffset int64
}

// Node is one controller.
type Node struct {
	cfg  Config
	env  sim.Env
	gate *storage.Gate
	raft *raft.Raft

	// committed is the metadata up to the high watermark; every controller
	// keeps it. draft is the active controller's view including its own
	// uncommitted batches: decisions are made on it.
	committed *metadata.Image
	draft     *metadata.Image
	pending   []pendingReply
	sessions  map[int32]*session
	leaderGen uint64
	// balance is whether a leader-balancing pass is scheduled, and how soon
	// the next one will be (QuorumController's imbalancedScheduled).
	balance imbalanceSchedule
	// activeSince is when this controller last became active: the phase of
	// its periodic unclean elections. uncleanScheduled: a pass is armed.
	activeSince      time.Duration
	uncleanScheduled bool
}

// New returns a constructor for controllers with cfg.
func New(cfg Config) func() sim.Node {
	return func() sim.Node { return &Node{cfg: cfg} }
}

// MetaPropertiesFile marks a formatted metadata log directory
// (kafka-storage format). A controller whose disk lost it (a replaced disk)
// refuses to start: a voter that forgot its votes and log would break the
// quorum's safety, and in a static quorum nothing else stops it.
const MetaPropertiesFile = "__cluster_metadata-0/meta.properties"

// Start recovers the quorum state and log; the committed image is rebuilt as
// the high watermark is learned again.
func (n *Node) Start(env sim.Env) {
	n.env = env
	n.gate = storage.NewGate(env)
	if !env.Disk().Exists(MetaPropertiesFile) {
		env.Note("controller", "fatal: metadata log directory is not formatted (meta.properties missing): refusing to start")
		n.raft = raft.New(env, n.gate, n.cfg.Raft)
		env.Exit()
		return
	}
	n.committed = metadata.NewImage(env.Name(), n.cfg.Audit)
	rc := n.cfg.Raft
	rc.OnCommit = n.onCommit
	rc.OnTruncate = n.onTruncate
	rc.OnRoleChange = n.onRoleChange
	n.raft = raft.New(env, n.gate, rc)
	n.gate.OnDurable = n.raft.Durable
	n.raft.Start()
}

// Raft is the controller's replica of the metadata log (god view).
func (n *Node) Raft() *raft.Raft { return n.raft }

// Image is the controller's committed metadata (god view).
func (n *Node) Image() *metadata.Image { return n.committed }

// Active reports whether this controller is the active controller.
func (n *Node) Active() bool { return n.raft != nil && n.raft.IsLeader() && n.draft != nil }

// Deliver routes raft traffic to the replica and controller APIs to the
// active controller.
func (n *Node) Deliver(from sim.NodeID, m sim.Message) {
	if n.raft.Deliver(from, m) {
		return
	}
	r, ok := m.(proto.ControllerRequest)
	if !ok || n.notActive(from, r.NotController) {
		return
	}
	switch m := m.(type) {
	case *proto.BrokerRegistrationRequest:
		n.handleRegistration(from, m)
	case *proto.BrokerHeartbeatRequest:
		n.handleHeartbeat(from, m)
	case *proto.AlterPartitionRequest:
		n.handleAlterPartition(from, m)
	case *proto.CreateTopicsRequest:
		n.handleCreateTopics(from, m)
	case *proto.CreatePartitionsRequest:
		n.handleCreatePartitions(from, m)
	case *proto.ElectLeadersRequest:
		n.handleElectLeaders(from, m)
	case *proto.IncrementalAlterConfigsRequest:
		n.handleIncrementalAlterConfigs(from, m)
	case *proto.AlterPartitionReassignmentsRequest:
		n.handleAlterPartitionReassignments(from, m)
	case *proto.AllocateProducerIdsRequest:
		n.handleAllocateProducerIds(from, m)
	default:
		return
	}
	// Every request the active controller handles is a write event in
	// Kafka, after which it looks for imbalanced leaders.
	n.afterWrite()
}

// afterWrite arms the passes a write may have made useful: leader balancing
// and unclean elections.
func (n *Node) afterWrite() {
	n.maybeScheduleBalance()
	n.maybeScheduleUnclean()
}

// notActive answers a request with NOT_CONTROLLER unless this controller is
// active; it reports whether it did.
func (n *Node) notActive(from sim.NodeID, answer func(hint sim.NodeID) sim.Message) bool {
	if n.Active() {
		return false
	}
	hint := n.raft.Leader()
	if hint == n.env.ID() {
		hint = sim.NoNode
	}
	n.gate.Send(from, answer(hint))
	return true
}

// Fire routes fsync completions, raft timers and the controller's own timers.
func (n *Node) Fire(t sim.Timer) {
	if n.gate.Fire(t) || n.raft.Fire(t) {
		return
	}
	switch t := t.(type) {
	case fenceTick:
		if t.gen == n.leaderGen && n.Active() {
			n.fenceOneStaleBroker()
			n.env.After(n.cfg.FenceCheckInterval, fenceTick{gen: n.leaderGen})
			n.afterWrite()
		}
	case noOpTick:
		if t.gen == n.leaderGen && n.Active() {
			n.writeNoOp()
			n.afterWrite()
		}
	case balanceTick:
		if t.gen == n.leaderGen && n.Active() {
			n.runBalance()
			n.afterWrite()
		}
	case uncleanTick:
		if t.gen == n.leaderGen && n.Active() {
			n.runUnclean()
			n.afterWrite()
		}
	case exitTimer:
		n.env.Exit()
	}
}

// Stop shuts the controller down cleanly: resign, tell the voters, exit.
func (n *Node) Stop() {
	n.raft.Resign()
	n.env.After(100*time.Millisecond, exitTimer{})
}

// onCommit applies newly committed batches to the committed image and
// answers the requests they decided.
func (n *Node) onCommit(hw int64) {
	log := n.raft.Log()
	for n.committed.Offset < hw && n.committed.Offset < log.EndOffset() {
		off := n.committed.Offset
		if err := applyEntry(n.committed, log.Entry(off)); err != nil {
			n.env.Note("controller", "fatal: "+err.Error())
			n.committed.Skip(off)
		}
	}
	for len(n.pending) > 0 && n.pending[0].offset < hw {
		p := n.pending[0]
		n.pending = n.pending[1:]
		n.gate.Send(p.to, p.m)
	}
}

func applyEntry(im *metadata.Image, e raft.Entry) error {
	if e.Control {
		im.Skip(e.Offset)
		return nil
	}
	batch, err := metadata.DecodeEntry(e)
	if err != nil {
		return fmt.Errorf("entry %d: %w", e.Offset, err)
	}
	return im.Apply(e.Offset, batch)
}

// onTruncate: a correct quorum never truncates committed entries; if it
// does (a bug switched on), the committed image is rebuilt from what is left,
// and the audit has already reported the loss.
func (n *Node) onTruncate(to int64) {
	if n.committed.Offset <= to {
		return
	}
	n.committed = metadata.NewImage(n.env.Name(), n.cfg.Audit)
	n.committed.Observer = nil // replaying history, not new changes
	log := n.raft.Log()
	for off := int64(0); off < to; off++ {
		if err := applyEntry(n.committed, log.Entry(off)); err != nil {
			n.committed.Skip(off)
		}
	}
	n.committed.Observer = n.cfg.Audit
}

// onRoleChange starts or ends the active controller's duties.
func (n *Node) onRoleChange() {
	active := n.raft.IsLeader()
	switch {
	case active && n.draft == nil:
		n.becomeActive()
	case !active && n.draft != nil:
		n.resign()
	}
}

func (n *Node) becomeActive() {
	n.leaderGen++
	n.draft = n.committed.Clone()
	log := n.raft.Log()
	for off := n.draft.Offset; off < log.EndOffset(); off++ {
		if err := applyEntry(n.draft, log.Entry(off)); err != nil {
			n.env.Note("controller", "fatal: "+err.Error())
			n.draft.Skip(off)
		}
	}
	// Every registered broker gets a full session from now: the new active
	// controller has heard nothing yet.
	n.sessions = map[int32]*session{}
	now := n.env.Now()
	for _, id := range n.draft.BrokerIDs() {
		n.sessions[id] = &session{lastContact: now, metadataOffset: -1}
	}
	n.env.Note("controller", fmt.Sprintf("active controller (epoch %d)", n.raft.Epoch()))
	n.env.After(n.cfg.FenceCheckInterval, fenceTick{gen: n.leaderGen})
	if n.cfg.MaxIdleInterval > 0 {
		n.env.After(n.cfg.MaxIdleInterval, noOpTick{gen: n.leaderGen})
	}
	n.balance = balanceDeferred
	n.activeSince = n.env.Now()
	n.uncleanScheduled = false
	n.afterWrite()
}

// writeNoOp appends a NoOpRecord and schedules the next one, as Kafka's
// QuorumController does with its periodic writeNoOpRecord task: every
// metadata.max.idle.interval.ms while active, whatever else was written.
// Nobody waits for its commit; a controller that cannot append (it is
// stepping down) writes nothing.
func (n *Node) writeNoOp() {
	n.propose(metadata.Batch{{NoOp: &metadata.NoOpRecord{}}})
	n.env.After(n.cfg.MaxIdleInterval, noOpTick{gen: n.leaderGen})
}

func (n *Node) resign() {
	n.leaderGen++
	n.draft = nil
	n.sessions = nil
	n.balance = balanceDeferred // cancelMaybeBalancePartitionLeaders
	n.uncleanScheduled = false
	hint := n.raft.Leader()
	for _, p := range n.pending {
		n.gate.Send(p.to, notControllerLike(p.m, hint))
	}
	n.pending = nil
	n.env.Note("controller", "no longer active")
}

// notControllerLike turns a reply that will never be sent into the
// NOT_CONTROLLER answer a client retries on.
func notControllerLike(m sim.Message, hint sim.NodeID) sim.Message {
	switch m := m.(type) {
	case *proto.BrokerRegistrationResponse:
		return &proto.BrokerRegistrationResponse{CorrelationID: m.CorrelationID, Error: proto.NotController, ControllerHint: hint}
	case *proto.BrokerHeartbeatResponse:
		return &proto.BrokerHeartbeatResponse{CorrelationID: m.CorrelationID, Error: proto.NotController, ControllerHint: hint}
	case *proto.AlterPartitionResponse:
		return &proto.AlterPartitionResponse{CorrelationID: m.CorrelationID, Error: proto.NotController, ControllerHint: hint}
	case *proto.CreateTopicsResponse:
		return &proto.CreateTopicsResponse{CorrelationID: m.CorrelationID, Error: proto.NotController, ControllerHint: hint}
	case *proto.CreatePartitionsResponse:
		return &proto.CreatePartitionsResponse{CorrelationID: m.CorrelationID, Error: proto.NotController, ControllerHint: hint}
	case *proto.ElectLeadersResponse:
		return &proto.ElectLeadersResponse{CorrelationID: m.CorrelationID, Error: proto.NotController, ControllerHint: hint}
	case *proto.IncrementalAlterConfigsResponse:
		return &proto.IncrementalAlterConfigsResponse{CorrelationID: m.CorrelationID, Error: proto.NotController, ControllerHint: hint}
	case *proto.AlterPartitionReassignmentsResponse:
		return &proto.AlterPartitionReassignmentsResponse{CorrelationID: m.CorrelationID, Error: proto.NotController, ControllerHint: hint}
	case *proto.AllocateProducerIdsResponse:
		return &proto.AllocateProducerIdsResponse{CorrelationID: m.CorrelationID, Error: proto.NotController, ControllerHint: hint}
	}
	return m
}

// propose appends a batch and applies it to the draft. It returns the
// batch's offset, or false if this controller could not append (it is no
// longer leader).
func (n *Node) propose(batch metadata.Batch) (int64, bool) {
	off, ok := n.raft.Propose(batch.Encode())
	if !ok {
		return 0, false
	}
	if err := n.draft.Apply(off, batch); err != nil {
		panic(fmt.Sprintf("controller: own batch does not apply: %v", err))
	}
	return off, true
}

// decide writes batch (if it holds anything) and answers the request once
// what the answer describes is committed. fill completes the answer from the
// draft after the batch. It reports false if nothing could be written.
func (n *Node) decide(batch metadata.Batch, to sim.NodeID, reply sim.Message, fill func()) bool {
	if len(batch) > 0 {
		off, ok := n.propose(batch)
		if !ok {
			return false
		}
		if fill != nil {
			fill()
		}
		if reply != nil {
			n.pending = append(n.pending, pendingReply{offset: off, to: to, m: reply})
		}
		return true
	}
	if fill != nil {
		fill()
	}
	if reply != nil {
		n.replyAfterDraft(to, reply)
	}
	return true
}

// replyAfterDraft answers a request that wrote nothing: once everything the
// draft already holds is committed, so that the answer never describes
// uncommitted state.
func (n *Node) replyAfterDraft(to sim.NodeID, reply sim.Message) {
	if n.raft.HighWatermark() >= n.draft.Offset {
		n.gate.Send(to, reply)
		return
	}
	n.pending = append(n.pending, pendingReply{offset: n.draft.Offset - 1, to: to, m: reply})
}

// nextOffset is where the next proposed batch will land.
func (n *Node) nextOffset() int64 { return n.raft.Log().EndOffset() }
