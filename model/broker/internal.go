package broker

import (
	"slices"
	"strconv"
	"time"

	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// The internal-topic API: what a coordinator the broker hosts (Kafka's
// group coordinator on __consumer_offsets, its transaction coordinator on
// __transaction_state) does with the partitions of its topic. It appends to
// a partition this broker leads and learns when the append is committed or
// fails; it loads its state by reading the partition when this broker
// becomes its leader, and drops it when the broker stops leading it.

// Coordinator is told when this broker starts and stops leading a
// partition of its internal topic (Kafka's onElection and onResignation,
// which BrokerMetadataPublisher calls once the replica manager has applied
// a metadata delta). Within one metadata batch the calls come after every
// partition's change, partitions in order, each partition's in the order
// they happened.
type Coordinator interface {
	// OnBecomeLeader: this broker leads tp from leaderEpoch on (it may
	// already have led it in an older epoch). The coordinator loads its
	// state with InternalTopics.Read and answers COORDINATOR_LOAD_IN_PROGRESS
	// until it has; Kafka's CoordinatorLoaderImpl reads from the log start
	// to the log end (IsolationLogEnd) and counts as committed only what
	// lies below the high watermark, which a new leader may still have to
	// raise to where the previous one had it.
	OnBecomeLeader(tp metadata.TopicPartition, leaderEpoch int32)
	// OnResign: this broker no longer leads tp; leaderEpoch is the epoch
	// it now follows in, or NoLeaderEpoch at a clean shutdown. The
	// coordinator drops its state (Kafka's unload). Its appends still
	// waiting on tp have failed with NOT_LEADER_OR_FOLLOWER just before. A
	// crash tells nothing: the coordinator goes with the process, and the
	// restarted broker builds new ones.
	OnResign(tp metadata.TopicPartition, leaderEpoch int32)
}

// HighWatermarkListener is a Coordinator that hears when the high
// watermark of a partition this broker leads advances (Kafka's
// PartitionListener.onHighWatermarkUpdated, which CoordinatorRuntime
// registers for each partition it loads): what it loaded or wrote above
// the high watermark becomes committed as it passes, whether or not the
// coordinator writes again. leaderEpoch is the epoch the broker led the
// partition in when it advanced. The news comes in an event of its own,
// after the appends that finished by then (see Append).
type HighWatermarkListener interface {
	OnHighWatermark(tp metadata.TopicPartition, leaderEpoch int32, hw int64)
}

// NoLeaderEpoch is OnResign's epoch at a clean shutdown.
const NoLeaderEpoch int32 = -1

// CoordinatorSpec is a coordinator the broker hosts: New builds it at
// every start of the broker, for the partitions of Topic. A coordinator
// that serves requests or sets timers implements RequestHandler or
// TimerHandler too.
type CoordinatorSpec struct {
	Topic string
	New   func(*InternalTopics) Coordinator
}

// InternalTopics is a coordinator's handle on the broker's replicas, and
// on its network and clock (coordinator_routing.go).
type InternalTopics struct {
	rm *replicaManager
	h  *hostedCoordinator
}

// BrokerID is the id of the broker hosting the coordinator.
func (t *InternalTopics) BrokerID() int32 { return t.rm.id() }

// AppendResult is what became of an append: the offsets the batch got (a
// duplicate's original ones; -1 when it was not appended) and NONE or the
// error.
type AppendResult struct {
	BaseOffset, LastOffset int64
	Error                  proto.ErrorCode
}

// Append appends b as the leader of tp, the way a produce does
// (appendAsLeader), and returns what the append did: an error there
// (NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS, KAFKA_STORAGE_ERROR, a
// producer-state error) means done is never called. Otherwise done is called
// once: when the high watermark passes the batch (NONE; with acks=all,
// NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR had shrunk below min ISR), when
// this broker stops leading tp first (NOT_LEADER_OR_FOLLOWER), or when timeout
// (if positive) runs out first (REQUEST_TIMED_OUT). It is called in an event
// of its own, as Kafka's high-watermark listener hands the news to the
// coordinator's event loop: whatever the coordinator does next (another
// append) comes after the broker has finished what moved the high watermark
// (a follower's fetch is parked, and the next append wakes it). Only the
// failures of a resignation are told at once, just before the resignation.
//
// acks decides the checks, as a produce's does. Kafka 4's group
// coordinator (CoordinatorPartitionWriter.append) appends with acks=1 and
// no timeout, so min.insync.replicas is not checked at the append, and its
// runtime holds the write's answer until the partition's high-watermark
// listener reports the batch passed (or fails it after its write timeout):
// below min ISR such a write waits, because the high watermark does not
// move (KIP-966). The transaction coordinator (TransactionStateManager)
// appends with acks=-1 and a timeout, as a producer does: NOT_ENOUGH_REPLICAS
// at once below min ISR. timeout stands for either: the runtime's write
// timeout, the transaction log append's.
func (t *InternalTopics) Append(tp metadata.TopicPartition, b *record.Batch, acks int16, timeout time.Duration, done func(AppendResult)) AppendResult {
	rm := t.rm
	if tp.Topic != t.h.topic {
		// Only its own topic's appends fail when the coordinator resigns
		// or the broker shuts down: another topic's could be told after.
		panic("broker: the coordinator on " + t.h.topic + " appended to " + tp.String())
	}
	if acks != proto.AcksLeader && acks != proto.AcksAll {
		return AppendResult{BaseOffset: -1, LastOffset: -1, Error: proto.InvalidRequiredAcks}
	}
	p := rm.parts.get(tp)
	base, last, err := rm.appendAsLeader(tp, p, proto.ProducePartition{Batch: b}, acks)
	res := AppendResult{BaseOffset: base, LastOffset: last, Error: err}
	if err != proto.None {
		return res
	}
	t.await(p, res, acks, timeout, done)
	return res
}

// await tells done what becomes of an append made (see Append).
func (t *InternalTopics) await(p *partition, res AppendResult, acks int16, timeout time.Duration, done func(AppendResult)) {
	rm := t.rm
	a := &pendingAppend{rm: rm, p: p, acks: acks, result: res, done: done}
	p.waiting = append(p.waiting, a)
	if timeout > 0 {
		a.timer = rm.n.env.After(timeout, appendTimeout{a: a})
	}
	a.recheck()
}

// FetchIsolation bounds a read (Kafka's FetchIsolation).
type FetchIsolation uint8

const (
	// IsolationHighWatermark reads what is committed, as a consumer does.
	IsolationHighWatermark FetchIsolation = iota
	// IsolationLogEnd reads the whole log, as a follower and Kafka's
	// coordinator loader do.
	IsolationLogEnd
)

// LogRead is a read of a partition this broker leads: its batches (the
// log's own: never to be changed), the log's ends and the leader epoch.
type LogRead struct {
	Batches                                     []*record.Batch
	LogStartOffset, HighWatermark, LogEndOffset int64
	LeaderEpoch                                 int32
	Error                                       proto.ErrorCode
}

// Read reads tp, which this broker must lead (NOT_LEADER_OR_FOLLOWER
// otherwise), as a fetch from offset from does: whole batches from the one
// holding from, below to and below isolation's bound, about maxBytes of
// them (at least one; 0: 1 MiB). from outside the log is
// OFFSET_OUT_OF_RANGE, with the log's ends and the epoch still given: a
// loader that does not know where the log starts reads from 0 and then from
// LogStartOffset.
func (t *InternalTopics) Read(tp metadata.TopicPartition, from, to int64, maxBytes int, isolation FetchIsolation) LogRead {
	rm := t.rm
	r := LogRead{LogStartOffset: -1, HighWatermark: -1, LogEndOffset: -1, LeaderEpoch: -1}
	p := rm.parts.get(tp)
	if rm.stopped || p == nil || !p.isLeader || p.log == nil {
		r.Error = proto.NotLeaderOrFollower
		return r
	}
	r.LogStartOffset, r.HighWatermark, r.LogEndOffset, r.LeaderEpoch = p.log.LogStartOffset(), p.hw, p.log.LEO(), p.leaderEpoch
	upTo := p.hw
	if isolation == IsolationLogEnd {
		upTo = p.log.LEO()
	}
	r.Batches, r.Error = readLog(p, from, min(upTo, to), maxBytes)
	return r
}

// pendingAppend is a coordinator's append waiting for the high watermark.
type pendingAppend struct {
	rm       *replicaManager
	p        *partition
	acks     int16
	result   AppendResult
	done     func(AppendResult)
	timer    sim.TimerID
	finished bool // the outcome is in result, and the coordinator will be told
}

type appendTimeout struct{ a *pendingAppend }

// appendsFinished tells the coordinators of the appends that finished.
type appendsFinished struct{}

// String is how the trace shows the timer.
func (appendsFinished) String() string { return "broker.appendsFinished" }

// String is how the trace shows the timer: the append it ends, by
// partition and offsets (fmt would print the pointer).
func (t appendTimeout) String() string {
	return "broker.appendTimeout {tp:" + t.a.p.tp.String() + " base:" + strconv.FormatInt(t.a.result.BaseOffset, 10) +
		" last:" + strconv.FormatInt(t.a.result.LastOffset, 10) + "}"
}

// waitsOn implements commitWaiter (an append waits on one partition).
func (a *pendingAppend) waitsOn(*partition) bool { return !a.finished }

// recheck implements commitWaiter.
func (a *pendingAppend) recheck() {
	if done, err := a.p.writeOutcome(a.result.LastOffset+1, a.acks); done {
		a.finish(err)
	}
}

// finish records the outcome and queues the news for the coordinator (see
// Append).
func (a *pendingAppend) finish(err proto.ErrorCode) {
	a.finished, a.result.Error = true, err
	rm := a.rm
	rm.n.env.Cancel(a.timer)
	rm.finishedAppends = append(rm.finishedAppends, a)
	if !rm.tellScheduled {
		rm.tellScheduled = true
		rm.n.env.After(0, appendsFinished{})
	}
}

// unlisted implements commitWaiter: nothing refers to a finished append
// but the news queued for its coordinator.
func (a *pendingAppend) unlisted() {}

func (a *pendingAppend) timedOut() {
	if !a.finished {
		a.finish(proto.RequestTimedOut)
		a.rm.tellAppends()
	}
}

// tellAppends tells the coordinators of the appends that finished so far,
// in the order they did, then of the high watermarks that advanced. An
// append a coordinator makes on hearing of one may finish at once (a
// partition with one replica in sync commits it as it is written): that one
// is told in an event of its own, as Append promises, not in this loop.
func (rm *replicaManager) tellAppends() {
	finished := rm.finishedAppends
	rm.finishedAppends = nil
	for _, a := range finished {
		a.done(a.result)
	}
	markers := rm.finishedMarkers
	rm.finishedMarkers = nil
	for _, w := range markers {
		w.tell()
	}
	advanced := rm.advancedHWs
	rm.advancedHWs = nil
	for _, h := range advanced {
		h.l.OnHighWatermark(h.tp, h.epoch, h.hw)
	}
}

// advancedHW is news of a high watermark for its coordinator.
type advancedHW struct {
	l     HighWatermarkListener
	tp    metadata.TopicPartition
	epoch int32
	hw    int64
}

// highWatermarkAdvanced queues the news that p's high watermark advanced
// for its coordinator, if it listens.
func (rm *replicaManager) highWatermarkAdvanced(p *partition) {
	if len(rm.coordinators) == 0 {
		return
	}
	l, ok := rm.coordinatorOf(p.tp.Topic).(HighWatermarkListener)
	if !ok {
		return
	}
	rm.advancedHWs = append(rm.advancedHWs, advancedHW{l: l, tp: p.tp, epoch: p.leaderEpoch, hw: p.hw})
	if !rm.tellScheduled {
		rm.tellScheduled = true
		rm.n.env.After(0, appendsFinished{})
	}
}

// hostedCoordinator is a coordinator, its topic, and what it serves
// besides (coordinator_routing.go): nil when it does not.
type hostedCoordinator struct {
	topic    string
	c        Coordinator
	requests RequestHandler
	timers   TimerHandler
	creating topicCreation // its CreateTopics in flight (internal_create.go)
}

// leadershipChange is news for a coordinator: this broker became leader of
// tp in epoch, or resigned it.
type leadershipChange struct {
	c      Coordinator
	tp     metadata.TopicPartition
	epoch  int32
	leader bool
}

// startCoordinators builds the coordinators, in configuration order: the
// order they are asked whether a message is theirs.
func (rm *replicaManager) startCoordinators() {
	for _, spec := range rm.cfg.Coordinators {
		h := &hostedCoordinator{topic: spec.Topic}
		h.c = spec.New(&InternalTopics{rm: rm, h: h})
		h.requests, _ = h.c.(RequestHandler)
		h.timers, _ = h.c.(TimerHandler)
		rm.coordinators = append(rm.coordinators, h)
	}
}

func (rm *replicaManager) coordinatorOf(topic string) Coordinator {
	for _, h := range rm.coordinators {
		if h.topic == topic {
			return h.c
		}
	}
	return nil
}

// leadershipChanged notes, for p's coordinator if it has one, that this
// broker became its leader in epoch or stopped leading it.
func (rm *replicaManager) leadershipChanged(p *partition, epoch int32, leader bool) {
	if len(rm.coordinators) == 0 {
		return
	}
	if c := rm.coordinatorOf(p.tp.Topic); c != nil {
		rm.leadership = append(rm.leadership, leadershipChange{c: c, tp: p.tp, epoch: epoch, leader: leader})
	}
}

// tellLeadership tells the coordinators what a metadata batch changed,
// partitions in order.
func (rm *replicaManager) tellLeadership() {
	if len(rm.leadership) == 0 {
		return
	}
	rm.tellAppends() // the appends a resignation failed, first
	changes := rm.leadership
	rm.leadership = nil
	slices.SortStableFunc(changes, func(a, b leadershipChange) int {
		switch {
		case a.tp.Less(b.tp):
			return -1
		case b.tp.Less(a.tp):
			return 1
		}
		return 0
	})
	for _, ch := range changes {
		if ch.leader {
			ch.c.OnBecomeLeader(ch.tp, ch.epoch)
		} else {
			ch.c.OnResign(ch.tp, ch.epoch)
		}
	}
}

// resignCoordinators, at a clean shutdown, fails the coordinators' waiting
// appends and tells them this broker leads nothing any more (Kafka's
// BrokerServer.shutdown shuts the coordinators down before the replica
// manager).
func (rm *replicaManager) resignCoordinators() {
	if len(rm.coordinators) == 0 {
		return
	}
	for _, tp := range rm.order {
		p := rm.parts.get(tp)
		c := rm.coordinatorOf(tp.Topic)
		if c == nil || !p.isLeader {
			continue
		}
		for _, w := range p.waiting {
			if a, ok := w.(*pendingAppend); ok && !a.finished {
				a.finish(proto.NotLeaderOrFollower)
			}
		}
		rm.dropFinished(p)
		rm.tellAppends()
		c.OnResign(tp, NoLeaderEpoch)
	}
}

// Coordinator is the coordinator this broker start hosts for topic (nil:
// none), for the simulator's god view (what a group coordinator holds).
func (n *Node) Coordinator(topic string) Coordinator {
	if n.rm == nil {
		return nil
	}
	return n.rm.coordinatorOf(topic)
}
