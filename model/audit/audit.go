// Package audit checks the god-view invariants of the model while a run goes:
// properties no node can see alone but the simulator can, checked at every
// change of the state they concern (which is every event that changes it),
// in the style of Kafka's own RaftEventSimulationTest.
//
// Control plane:
//   - single-leader-per-epoch: at most one KRaft leader per epoch;
//   - epoch-monotonic: the epoch a voter persists never goes back, across
//     restarts;
//   - metadata-hw-monotonic: a replica's high watermark never goes back
//     within one incarnation;
//   - replicas-agree-below-hw: an entry below any replica's high watermark is
//     the same entry on every replica whose high watermark passed it;
//   - committed-entry-kept: no replica truncates a committed entry that it
//     knew was committed (below its own high watermark) or that the leader
//     it follows must hold (one of an epoch at or after the commit's: Raft's
//     leader completeness). A replica still following a deposed leader of
//     an earlier epoch may drop an entry committed since, and fetch it again
//     from the new leader: Raft permits that;
//   - raft-fatal: no replica meets a state Kafka treats as fatal (a
//     divergence below its high watermark);
//   - single-leader-per-partition-epoch: one partition leader per leader
//     epoch, across every node's committed metadata;
//   - fenced-broker-leads-nothing: committed metadata never makes a fenced
//     broker a partition leader;
//   - isr-elr-disjoint and leader-in-isr: the shape of every partition.
package audit

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"kafkasim/godview"
	"kafkasim/model/metadata"
	"kafkasim/model/partlog"
	"kafkasim/model/raft"
	"kafkasim/sim"
)

// Invariant names, as reported in summary.json.
const (
	SingleLeaderPerEpoch          = "single-leader-per-epoch"
	EpochMonotonic                = "epoch-monotonic"
	MetadataHWMonotonic           = "metadata-hw-monotonic"
	ReplicasAgreeBelowHW          = "replicas-agree-below-hw"
	CommittedEntryKept            = "committed-entry-kept"
	RaftFatal                     = "raft-fatal"
	SingleLeaderPerPartitionEpoch = "single-leader-per-partition-epoch"
	FencedBrokerLeadsNothing      = "fenced-broker-leads-nothing"
	ISRELRDisjoint                = "isr-elr-disjoint"
	LeaderInISR                   = "leader-in-isr"
)

// ControlPlaneInvariants lists the invariants this package checks.
var ControlPlaneInvariants = []string{SingleLeaderPerEpoch, EpochMonotonic, MetadataHWMonotonic, ReplicasAgreeBelowHW,
	CommittedEntryKept, RaftFatal, SingleLeaderPerPartitionEpoch, FencedBrokerLeadsNothing, ISRELRDisjoint, LeaderInISR}

// Violation is one broken invariant, with where and when.
type Violation struct {
	Invariant string
	At        time.Duration
	Step      uint64
	Node      string
	Detail    string
}

func (v Violation) String() string {
	return fmt.Sprintf("%s at %v (event %d) on %s: %s", v.Invariant, v.At, v.Step, v.Node, v.Detail)
}

// ViolationsMax bounds how many violations are kept (the rest are counted).
const ViolationsMax = 1000

type epochLeader struct {
	epoch int32
	tp    metadata.TopicPartition
}

// Audit collects violations. One audit watches one world.
type Audit struct {
	w          *sim.World
	violations []Violation
	counts     map[string]int
	// HaltOnViolation stops the run at the first violation (fuzzing wants the
	// earliest failing event; teaching runs want the whole story).
	HaltOnViolation bool

	raftLeaders map[int32]sim.NodeID
	fencedIDs   []int32 // BatchApplied's buffer
	epochs      map[sim.NodeID]int32
	hws         map[sim.NodeID]hwMark
	committed   []raft.Entry
	// commitEpochs: for each committed entry, the epoch of the replica whose
	// high watermark passed it first (the leader that committed it).
	commitEpochs []int32
	partLeaders  map[epochLeader]int32

	replicas  func(broker int32, tp metadata.TopicPartition) *partlog.Log
	parts     map[string]*topicAudit // by topic (part)
	lastTopic *topicAudit
	// facts: what the audit saw happen that Kafka permits to cost data or
	// order (losses, batches a leader's producer state forgot, entries an
	// unclean election resurrected...), in order (facts.go).
	facts []godview.Fact
	// configsSeen: the ConfigRecords already noted as facts.
	configsSeen map[configKey]bool
	// groups: the consumer groups' state (groups.go); nil when the cluster
	// has none.
	groups *groupsAudit
	// txn: the transactions' invariants (txn.go); nil when the cluster
	// runs no transaction coordinator.
	txn *txnAudit
}

type hwMark struct {
	incarnation uint32
	hw          int64
}

// New returns an audit of w.
func New(w *sim.World) *Audit {
	return &Audit{w: w, counts: map[string]int{}, raftLeaders: map[int32]sim.NodeID{}, epochs: map[sim.NodeID]int32{},
		hws: map[sim.NodeID]hwMark{}, partLeaders: map[epochLeader]int32{}}
}

func (a *Audit) report(invariant string, node sim.NodeID, format string, args ...any) {
	a.counts[invariant]++
	if len(a.violations) < ViolationsMax {
		name := ""
		if node != sim.NoNode {
			name = a.w.Name(node)
		}
		v := Violation{Invariant: invariant, At: a.w.Now(), Step: a.w.Steps(), Node: name, Detail: fmt.Sprintf(format, args...)}
		a.violations = append(a.violations, v)
		a.w.Note("violation", v.Invariant+": "+v.Detail)
	}
	if a.HaltOnViolation {
		a.w.Halt(invariant)
	}
}

// Violations returns every violation kept, in the order they happened.
func (a *Audit) Violations() []Violation { return a.violations }

// Count returns how many times an invariant broke.
func (a *Audit) Count(invariant string) int { return a.counts[invariant] }

// Total is the number of violations of every invariant.
func (a *Audit) Total() int {
	t := 0
	for _, c := range a.counts { // kafkasim:orderless: a sum
		t += c
	}
	return t
}

// Broken lists the invariants that broke, sorted.
func (a *Audit) Broken() []string {
	var names []string
	for k := range a.counts { // kafkasim:orderless: sorted below
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// raft.Auditor

// EpochPersisted checks that the epoch a voter persists never goes back, even
// across restarts. (Its in-memory epoch may run ahead of the disk; nothing
// leaves the node before the disk catches up, so a crash in between is
// invisible, as in Kafka, which fsyncs before it changes state.)
func (a *Audit) EpochPersisted(node sim.NodeID, epoch int32) {
	if prev, ok := a.epochs[node]; ok && epoch < prev {
		a.report(EpochMonotonic, node, "epoch went from %d back to %d", prev, epoch)
	}
	a.epochs[node] = epoch
}

// BecameLeader checks that no two replicas lead one epoch.
func (a *Audit) BecameLeader(node sim.NodeID, epoch int32) {
	if prev, ok := a.raftLeaders[epoch]; ok && prev != node {
		a.report(SingleLeaderPerEpoch, node, "%s also led KRaft epoch %d", a.w.Name(prev), epoch)
		return
	}
	a.raftLeaders[epoch] = node
}

// HighWatermark checks monotonicity and records or compares committed entries.
func (a *Audit) HighWatermark(node sim.NodeID, epoch int32, hw int64, log *raft.Log) {
	inc := a.w.Incarnation(node)
	prev, ok := a.hws[node]
	from := int64(0)
	if ok && prev.incarnation == inc {
		if hw < prev.hw {
			a.report(MetadataHWMonotonic, node, "high watermark went from %d back to %d", prev.hw, hw)
		}
		from = prev.hw
		hw = max(hw, prev.hw)
	}
	a.hws[node] = hwMark{incarnation: inc, hw: hw}
	for off := from; off < hw && off < log.EndOffset(); off++ {
		e := log.Entry(off)
		if off < int64(len(a.committed)) {
			if c := a.committed[off]; !c.Same(e) {
				a.report(ReplicasAgreeBelowHW, node, "entry %d below the high watermark is (epoch %d) here but (epoch %d) where it was committed first",
					off, e.Epoch, c.Epoch)
			}
			continue
		}
		if off == int64(len(a.committed)) {
			a.committed = append(a.committed, e)
			a.commitEpochs = append(a.commitEpochs, epoch)
		}
	}
}

// Diverged checks that a replica repairing its log keeps every committed
// entry it must hold: one below its own high watermark (it knew it was
// committed), or one committed in an epoch not after the one it is in (the
// leader it follows was elected after the commit and holds the entry).
func (a *Audit) Diverged(node sim.NodeID, epoch int32, hw, to int64, removed []raft.Entry) {
	for i, e := range removed {
		off := to + int64(i)
		if off >= int64(len(a.committed)) || !a.committed[off].Same(e) {
			continue
		}
		if off < hw || epoch >= a.commitEpochs[off] {
			a.report(CommittedEntryKept, node, "truncated committed metadata entry %d (epoch %d, committed in epoch %d) in epoch %d",
				off, e.Epoch, a.commitEpochs[off], epoch)
			return
		}
	}
}

// Fatal reports a state Kafka would halt on.
func (a *Audit) Fatal(node sim.NodeID, what string) { a.report(RaftFatal, node, "%s", what) }

// metadata.ImageObserver

// PartitionChanged checks one partition's new registration.
func (a *Audit) PartitionChanged(im *metadata.Image, p *metadata.Partition) {
	// The image's node is looked up by name only for a report: every
	// image of a big cluster's 33 sees each of 3,000 partitions created.
	node := func() sim.NodeID { id, _ := a.w.Lookup(im.Owner); return id }
	key := epochLeader{epoch: p.LeaderEpoch, tp: p.TopicPartition}
	if prev, ok := a.partLeaders[key]; ok && prev != p.Leader {
		a.report(SingleLeaderPerPartitionEpoch, node(), "%s leader epoch %d has leader %d here and %d elsewhere",
			p.TopicPartition, p.LeaderEpoch, p.Leader, prev)
	} else if !ok {
		a.partLeaders[key] = p.Leader
	}
	for _, r := range p.ELR {
		if slices.Contains(p.ISR, r) {
			a.report(ISRELRDisjoint, node(), "%s has %d in both ISR %v and ELR %v", p.TopicPartition, r, p.ISR, p.ELR)
			break
		}
	}
	if p.Leader != metadata.NoLeader && !slices.Contains(p.ISR, p.Leader) {
		a.report(LeaderInISR, node(), "%s leader %d is not in ISR %v", p.TopicPartition, p.Leader, p.ISR)
	}
}

// BatchApplied checks that, after a whole batch, no fenced broker leads.
func (a *Audit) BatchApplied(im *metadata.Image, offset int64) {
	// The fenced brokers, a handful at most: each partition's leader is
	// compared with them, not looked up in the image's brokers (every
	// image checks every partition after every batch while a broker is
	// fenced, which on a big cluster showed in profiles).
	fenced := a.fencedIDs[:0]
	for id, b := range im.Brokers { // kafkasim:orderless: a set, only tested for membership
		if b.Fenced {
			fenced = append(fenced, id)
		}
	}
	a.fencedIDs = fenced
	if len(fenced) == 0 {
		return
	}
	for _, name := range im.TopicNames() { // Partitions' order, without its copy
		for _, p := range im.Topics[name].Partitions {
			if p.Leader == metadata.NoLeader || !slices.Contains(fenced, p.Leader) {
				continue
			}
			node, _ := a.w.Lookup(im.Owner)
			a.report(FencedBrokerLeadsNothing, node, "after metadata offset %d, fenced broker %d leads %s", offset, p.Leader, p.TopicPartition)
			return
		}
	}
}
