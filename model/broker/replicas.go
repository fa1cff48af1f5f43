package broker

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"

	"kafkasim/internal/spare"
	"kafkasim/model/metadata"
	"kafkasim/model/partlog"
	"kafkasim/model/proto"
	"kafkasim/model/record"
	"kafkasim/model/storage"
	"kafkasim/sim"
)

// The replica manager: the partitions this broker hosts, as leader or
// follower, driven by committed metadata (Kafka 4.x brokers follow metadata
// deltas; there are no LeaderAndIsr requests).

// DataAuditor sees what the data plane's god-view invariants check.
type DataAuditor interface {
	// ReplicaHW: a replica's high watermark is now hw (leader or follower).
	ReplicaHW(broker int32, tp metadata.TopicPartition, leaderEpoch int32, leader bool, hw int64, log *partlog.Log)
	// ReplicaTruncated: a replica removed batches from its log.
	ReplicaTruncated(broker int32, tp metadata.TopicPartition, to int64, removed []*record.Batch, why string)
	// ReplicaRecovered: a replica's log came back from disk at a restart.
	ReplicaRecovered(broker int32, tp metadata.TopicPartition, log *partlog.Log, rec partlog.Recovery)
	// AckedAll: a leader of leaderEpoch acknowledged an acks=all write up to
	// lastOffset with isr as its ISR.
	AckedAll(broker int32, tp metadata.TopicPartition, leaderEpoch int32, lastOffset int64, isr []int32, minISR int)
	// ISRProposed: a leader asks to add member, whose log ends at memberLEO.
	ISRProposed(leader int32, tp metadata.TopicPartition, member int32, memberLEO int64)
	// ISRJoined: a replica joined a partition's ISR (the leader learned it).
	ISRJoined(leader int32, tp metadata.TopicPartition, leaderEpoch int32, member int32)
	// PartitionLeader: a broker leads tp in leaderEpoch; unclean when it was
	// elected without the committed data (leaderRecoveryState RECOVERING).
	PartitionLeader(broker int32, tp metadata.TopicPartition, leaderEpoch int32, log *partlog.Log, unclean bool)
	// OutOfOrderSequence: a leader answered OUT_OF_ORDER_SEQUENCE_NUMBER to
	// batch b.
	OutOfOrderSequence(broker int32, tp metadata.TopicPartition, b *record.Batch)
	// MistakenDuplicate: a leader answered b as a duplicate of the
	// different batch it holds at [base, last] (same producer id, epoch
	// and sequences).
	MistakenDuplicate(broker int32, tp metadata.TopicPartition, b *record.Batch, base, last int64)
	// UnknownProducer: a leader whose producer state knows nothing of b's
	// producer is about to append b at offset base; its log starts at
	// logStart, and its producer state was rebuilt from rebuiltFrom.
	UnknownProducer(broker int32, tp metadata.TopicPartition, b *record.Batch, base, logStart, rebuiltFrom int64)
	// KnownProducer: a leader whose producer state knows b's producer is
	// about to append b as new (in sequence); its log starts at logStart,
	// and its producer state was rebuilt from rebuiltFrom.
	KnownProducer(broker int32, tp metadata.TopicPartition, b *record.Batch, logStart, rebuiltFrom int64)
}

type followerState struct {
	id                 int32
	leo                int64 // -1: unknown
	lastCaughtUp       time.Duration
	lastFetchLeaderLEO int64
	lastFetchTime      time.Duration
	brokerEpoch        int64
	// lazy: the follower's partition is quiet in this fetch session and
	// off its dirty list (fetchSession.dirty), at index lazyIdx of its
	// parts: each fetch of the session moves lastCaughtUp and
	// lastFetchTime to its time and brokerEpoch to its epoch, kept by the
	// session instead (caughtUpTime, epoch read through it; settle writes
	// them back).
	lazy    *fetchSession
	lazyIdx int32
}

// caughtUpTime is lastCaughtUp, through the session while lazy.
func (f *followerState) caughtUpTime() time.Duration {
	if f.lazy != nil {
		at, _ := f.lazy.lazyState(f.lazyIdx)
		return at
	}
	return f.lastCaughtUp
}

// epoch is brokerEpoch, through the session while lazy.
func (f *followerState) epoch() int64 {
	if f.lazy != nil {
		_, e := f.lazy.lazyState(f.lazyIdx)
		return e
	}
	return f.brokerEpoch
}

// settle writes back what the lazy session kept and ends the laziness.
func (f *followerState) settle() {
	if s := f.lazy; s != nil {
		at, e := s.lazyState(f.lazyIdx)
		f.lastCaughtUp, f.lastFetchTime, f.brokerEpoch = at, at, e
		f.lazy = nil
	}
}

type pendingISR struct {
	isr    []int32
	epochs []int64
	seq    uint64
}

type partition struct {
	rm  *replicaManager
	tp  metadata.TopicPartition
	log *partlog.Log
	// waiting are the writes waiting for the high watermark to pass them
	// (acks=all produces, coordinators' appends), oldest first.
	waiting []commitWaiter

	leader         int32
	leaderEpoch    int32
	partitionEpoch int32
	replicas       []int32
	isr            []int32 // committed
	pending        *pendingISR
	minISR         int
	known          bool // has had a registration applied

	isLeader   bool
	hw         int64
	epochStart int64
	followers  []*followerState
	// syncing are the first offsets of this replica's appends whose fsyncs
	// (the flush policy's, a roll's) are still running, oldest first. Kafka's
	// UnifiedLog.append flushes holding the log's lock, and the high
	// watermark moves only under that lock (maybeIncrementHighWatermark):
	// no high watermark passes a batch before the append that wrote it,
	// flush included, has returned, whatever moves the high watermark
	// meanwhile (another append's completion, a follower's fetch, an ISR
	// change, becoming leader).
	syncing []int64

	// follower side
	failed bool // stop fetching until new metadata (FENCED_LEADER_EPOCH)

	// ver counts the changes a fetch's answer depends on (touch).
	ver uint64
	// quietIn are the fetch sessions holding p lazily (off their dirty
	// lists), each with p's index in its parts: touch puts p back on their
	// lists.
	quietIn []quietRef
}

// quietRef is a fetch session holding a partition lazily, and where: the
// index holds while the partition is lazy (a session reshaping its parts
// wakes every partition first).
type quietRef struct {
	s  *fetchSession
	at int32
}

// touch notes that something a fetch of p reads changed: its log (told by
// partlog.Log.OnChange), its leadership, ISR, high watermark or followers.
// A leader's fetch sessions answer a partition whose version did not move
// since it was quiet without reading it (fetchQuiet); a follower's fetcher
// works out again what to ask for it (fetcher.dirty).
func (p *partition) touch() {
	p.ver++
	for len(p.quietIn) > 0 {
		q := p.quietIn[len(p.quietIn)-1]
		q.s.wake(p, q.at)
	}
	if p.isLeader || p.leader < 0 {
		return
	}
	if f := p.rm.fetchers[p.leader]; f != nil {
		f.touched(p.tp)
	}
}

func (p *partition) effectiveMinISR() int { return min(p.minISR, len(p.replicas)) }

func (p *partition) follower(id int32) *followerState { return followerOf(p.followers, id) }

// maximalISR is the ISR counting a pending expansion.
func (p *partition) maximalISR() []int32 { return maximalISR(p.isr, p.pending) }

// leaderState is what this replica's decisions as leader read (see isr.go).
func (p *partition) leaderState() leaderState {
	rm := p.rm
	return leaderState{leo: p.log.LEO(), hw: p.hw, epochStart: p.epochStart, syncing: p.syncing,
		isr: p.isr, pending: p.pending, minISR: p.effectiveMinISR(), followers: p.followers,
		brokers: rm.image().Brokers, now: rm.now(), lagMax: rm.cfg.ReplicaLagTimeMax,
		strictMinISR: !rm.cfg.Bugs.NoStrictMinISR, joinBelowEpochStart: rm.cfg.Bugs.ISRJoinAtStaleHW}
}

type tickKind uint8

const (
	tickISRShrink tickKind = iota
	tickHWCheckpoint
	tickOffsetCheckpoint
	tickFlush
	tickRetention
)

type rmTick struct{ kind tickKind }

type replicaManager struct {
	n *Node
	// gate orders the data plane's answers after the log flushes before them:
	// with log.flush.interval.messages 1 a write is acknowledged (and a
	// follower's fetch acknowledges it) only once fsynced, as Kafka's
	// synchronous flush in the append path does.
	gate      *storage.Gate
	cfg       DataConfig
	parts     partitionTable
	order     []metadata.TopicPartition // sorted keys of parts
	ready     bool                      // metadata caught up: replicas follow it
	stopped   bool                      // the final step of a clean shutdown has begun: see shutdown
	dirFailed bool                      // a write to the log directory failed: the broker halts
	hwCkpt    map[string]int64
	startCkpt map[string]int64
	fetchers  map[int32]*fetcher
	// fetcherAt is the fetcher of each leader's node, unless two leaders
	// share a node (nodeShared): a fetch answer finds its fetcher by the
	// node it came from instead of a pass over every fetcher.
	fetcherAt  map[sim.NodeID]*fetcher
	nodeShared bool
	parked     []*parkedFetch
	// metaAnswered is the last topic a clients' metadata answer listed
	// (handleMetadata).
	metaAnswered metadataAnswered
	// sessions are the followers' incremental fetch sessions with this
	// broker as leader (fetchsession.go).
	sessions fetchSessionCache

	// recoveryCkpt is the recovery-point-offset-checkpoint read at start;
	// cleanStart: the clean-shutdown marker was on disk then (the logs load
	// without recovery). Both are for opening logs (partlog.Checkpoints).
	recoveryCkpt map[string]int64
	cleanStart   bool

	// conns: the peers' connections, each muted while a request of it is
	// served (connections.go); one map per channel (proto.ChannelOf: a
	// stream processor holds two connections to each broker, its
	// consumer's and its producer's), indexed by the peer: looked up on
	// every request and answer, and node ids are small and dense.
	conns [2]connTable
	// spareProduces are finished produces whose answers were delivered,
	// for new ones to reuse (see pendingProduce.TakeBack).
	spareProduces spare.List[pendingProduce]
	producesFreed uint64 // produces freed for reuse (tests read it)
	// spareAnswers are fetch answers delivered (or never sent), for new
	// ones to reuse (see fetchAnswer.TakeBack).
	spareAnswers spare.List[fetchAnswer]
	answersFreed uint64
	fetchesFreed uint64 // follower fetches freed for reuse (tests read it)
	alter        alterManager
	nextPID      int64
	correlator   uint64

	// coordinators are the coordinators this broker hosts (see
	// internal.go); leadership is the news for them from the metadata
	// batch being applied; finishedAppends their appends that finished,
	// not yet told (tellScheduled: an appendsFinished timer will).
	coordinators    []*hostedCoordinator
	leadership      []leadershipChange
	finishedAppends []*pendingAppend
	tellScheduled   bool
	// advancedHWs are the high watermarks of coordinators' partitions that
	// advanced, not yet told (with the appends).
	advancedHWs []advancedHW
	// createCorrelation numbers the coordinators' CreateTopics requests.
	createCorrelation uint64
	// finishedMarkers are the WriteTxnMarkers requests whose markers are
	// all decided, to answer with the appends (txnmarkers.go).
	finishedMarkers []*pendingMarkers
	// txnVerify is the AddPartitionsToTxnManager (txnverify.go).
	txnVerify txnVerifier
}

func newReplicaManager(n *Node) *replicaManager {
	rm := &replicaManager{n: n, cfg: n.cfg.Data, gate: storage.NewGate(n.env), parts: newPartitionTable(), fetchers: map[int32]*fetcher{}}
	rm.alter.rm = rm
	// A restarted broker's requests are numbered apart from its previous
	// process's (proto.CorrelationBase): an answer to an AlterPartition, a
	// fetch or a CreateTopics the dead process sent never matches a
	// request of this one, as on Kafka's per-connection correlation.
	base := proto.CorrelationBase(n.env.Incarnation())
	rm.alter.corr, rm.correlator, rm.createCorrelation = base, base, base
	rm.txnVerify.init(rm)
	rm.hwCkpt = readOffsetCheckpoint(n.env.Disk(), hwCheckpointFile)
	rm.startCkpt = readOffsetCheckpoint(n.env.Disk(), logStartCheckpointFile)
	rm.recoveryCkpt = readOffsetCheckpoint(n.env.Disk(), recoveryCheckpointFile)
	rm.cleanStart = n.env.Disk().Exists(cleanShutdownFile)
	env := n.env
	env.After(rm.cfg.ReplicaLagTimeMax/2, rmTick{tickISRShrink})
	env.After(rm.cfg.HWCheckpointInterval, rmTick{tickHWCheckpoint})
	env.After(rm.cfg.OffsetCheckpointInterval, rmTick{tickOffsetCheckpoint})
	env.After(rm.cfg.RetentionCheckInterval, rmTick{tickRetention})
	if rm.cfg.FlushInterval > 0 {
		env.After(rm.cfg.FlushInterval, rmTick{tickFlush})
	}
	rm.startCoordinators()
	return rm
}

func (rm *replicaManager) id() int32              { return rm.n.cfg.BrokerID }
func (rm *replicaManager) now() time.Duration     { return rm.n.env.Now() }
func (rm *replicaManager) image() *metadata.Image { return rm.n.image }
func (rm *replicaManager) note(kind, format string, args ...any) {
	rm.n.env.Note(kind, fmt.Sprintf(format, args...))
}

func (rm *replicaManager) audit() DataAuditor { return rm.cfg.Audit }

// Partition returns a hosted partition's state (god view).
func (n *Node) Partition(tp metadata.TopicPartition) *PartitionView {
	// Small enough to inline, so that a caller that only reads the view
	// keeps it on its stack: the timeline's samples and the runner's
	// convergence checks look at every partition, an allocation each.
	if p := n.viewed(tp); p != nil {
		return &PartitionView{p: p}
	}
	return nil
}

// viewed is the hosted replica of tp with a log, or nil.
func (n *Node) viewed(tp metadata.TopicPartition) *partition {
	if n.rm == nil {
		return nil
	}
	p := n.rm.parts.get(tp)
	if p == nil || p.log == nil {
		return nil
	}
	return p
}

// PartitionLog returns a hosted partition's log (god view), or nil: what
// the audit asks for after every acknowledgement, without Partition's view.
func (n *Node) PartitionLog(tp metadata.TopicPartition) *partlog.Log {
	if n.rm == nil {
		return nil
	}
	if p := n.rm.parts.get(tp); p != nil {
		return p.log
	}
	return nil
}

// PartitionView is a read-only look at a replica.
type PartitionView struct{ p *partition }

// Log is the replica's log.
func (v *PartitionView) Log() *partlog.Log { return v.p.log }

// HighWatermark is the replica's high watermark.
func (v *PartitionView) HighWatermark() int64 { return v.p.hw }

// IsLeader reports whether this replica leads.
func (v *PartitionView) IsLeader() bool { return v.p.isLeader }

// LeaderEpoch is the epoch the replica knows.
func (v *PartitionView) LeaderEpoch() int32 { return v.p.leaderEpoch }

// ISR is the committed ISR the leader knows (followers: the metadata's).
func (v *PartitionView) ISR() []int32 { return v.p.isr }

// setCaughtUp is called once the broker's metadata has caught up with the
// controller: from then on replicas follow metadata, starting from the whole
// image (Kafka publishes the first image as one delta).
func (rm *replicaManager) setCaughtUp() {
	if rm.ready {
		return
	}
	rm.ready = true
	for _, p := range rm.image().Partitions() {
		rm.apply(p)
	}
	rm.deleteStrayLogs()
	rm.tellLeadership()
}

// metadataApplied reacts to one committed metadata batch.
func (rm *replicaManager) metadataApplied(batch metadata.Batch) {
	if !rm.ready || rm.stopped {
		return // not caught up yet, or the metadata publishers are closed
	}
	im := rm.image()
	for _, r := range batch {
		switch {
		case r.Partition != nil:
			rm.apply(im.Partition(metadata.TopicPartition{Topic: r.Partition.Topic, Partition: r.Partition.Partition}))
		case r.PartitionChange != nil:
			rm.apply(im.Partition(metadata.TopicPartition{Topic: r.PartitionChange.Topic, Partition: r.PartitionChange.Partition}))
		case r.Config != nil:
			rm.configChanged(r.Config)
		case r.ClearElr != nil:
			rm.elrCleared(r.ClearElr.Topic)
		}
	}
	rm.tellLeadership()
}

// apply brings a hosted partition in line with its registration.
func (rm *replicaManager) apply(reg *metadata.Partition) {
	if reg == nil {
		return
	}
	if !slices.Contains(reg.Replicas, rm.id()) {
		if p := rm.parts.get(reg.TopicPartition); p != nil {
			rm.deleteReplica(p, reg) // reassigned away
		}
		return
	}
	p := rm.parts.get(reg.TopicPartition)
	if p == nil {
		tp := reg.TopicPartition
		tp.Topic = rm.parts.intern(tp.Topic)
		p = &partition{rm: rm, tp: tp, leader: metadata.NoLeader, leaderEpoch: -1, partitionEpoch: -1}
		rm.parts.put(reg.TopicPartition, p)
		i := sort.Search(len(rm.order), func(i int) bool { return !rm.order[i].Less(reg.TopicPartition) })
		rm.order = slices.Insert(rm.order, i, reg.TopicPartition)
	}
	if p.known && reg.PartitionEpoch < p.partitionEpoch {
		return // stale
	}
	if p.log == nil {
		rm.openLog(p)
	}
	t := rm.image().Topics[reg.Topic]
	p.minISR = rm.image().MinISRAt(t, rm.id())
	p.replicas = slices.Clone(reg.Replicas)
	newEpoch := !p.known || reg.LeaderEpoch > p.leaderEpoch
	p.known = true
	if reg.PartitionEpoch != p.partitionEpoch {
		p.pending = nil // the state moved on: an in-flight change is moot
	}
	p.partitionEpoch = reg.PartitionEpoch
	p.touch()
	switch {
	case reg.Leader == rm.id() && (newEpoch || !p.isLeader):
		rm.makeLeader(p, reg)
	case reg.Leader == rm.id():
		// A reassignment may add replicas within the epoch: they become
		// followers to track (Partition.updateAssignmentAndIsr).
		p.followers = syncFollowerStates(p.followers, p.replicas, rm.id())
		p.touch()
		// The leader may learn a change it asked for from the metadata
		// log before (or instead of) the AlterPartition answer.
		p.leaderLearnsISR(reg.ISR)
		p.maybeIncrementHW()
	case newEpoch || p.isLeader || p.leader != reg.Leader:
		rm.makeFollower(p, reg)
	default:
		p.isr = slices.Clone(reg.ISR)
		p.touch()
		if rm.stopsFetching(reg) {
			rm.stopFetching(p)
		}
	}
}

// stopsFetching: during a controlled shutdown a follower stops fetching a
// partition that has no leader or whose ISR it has left (Kafka's
// ReplicaManager.applyLocalFollowersDelta with isInControlledShutdown). The
// controller takes a broker that asked to shut down out of every ISR, so it
// soon fetches nothing: what it would copy now is not needed by anyone, and
// would still be arriving when the logs are flushed for the last time.
func (rm *replicaManager) stopsFetching(reg *metadata.Partition) bool {
	st := rm.n.life.state
	return (st == StatePendingControlledShutdown || st == StateShuttingDown) &&
		(reg.Leader == metadata.NoLeader || !slices.Contains(reg.ISR, rm.id()))
}

func (rm *replicaManager) openLog(p *partition) {
	name := p.tp.String()
	dir := dataDir + "/" + name
	cfg := rm.logConfig(p.tp.Topic)
	log, rec := partlog.Open(rm.n.env.Disk(), rm.gate, dir, cfg, partlog.Checkpoints{
		LogStart: rm.startCkpt[name], RecoveryPoint: rm.recoveryCkpt[name], Clean: rm.cleanStart})
	p.log = log
	p.hw = min(rm.hwCkpt[name], log.LEO())
	log.OnChange(p.touch)
	p.touch()
	if rec.TruncatedBytes > 0 || rec.DeletedSegments > 0 {
		rm.note("log-recovery", "%s: cut %d bytes and %d segments at offset %d (%s)", p.tp, rec.TruncatedBytes, rec.DeletedSegments, rec.TruncatedAt, rec.CorruptionReason)
	}
	if a := rm.audit(); a != nil {
		a.ReplicaRecovered(rm.id(), p.tp, log, rec)
	}
	if rm.cfg.Bugs.HWTruncation && p.hw < log.LEO() {
		// Before KIP-101 a restarted replica cut its log to its high
		// watermark, trusting what it had checkpointed.
		rm.truncate(p, p.hw, "restart: truncate to high watermark (hw-truncation)")
	}
}

// logConfig merges the topic's configs over the broker's defaults.
func (rm *replicaManager) logConfig(topic string) partlog.Config {
	cfg := rm.cfg.Log
	cfg.NoLeaderEpochs = rm.cfg.Bugs.HWTruncation
	cfg.UntrackedProducers = rm.cfg.Bugs.ProducerStateNotReplicated
	t := rm.image().Topics[topic]
	if t == nil {
		return cfg
	}
	for k, v := range t.Configs { // kafkasim:orderless: each key sets its own field
		n, err := strconv.ParseInt(v, 10, 64)
		switch k {
		case "cleanup.policy":
			cfg.Compact = v == "compact" || v == "compact,delete"
		case "segment.bytes":
			if err == nil {
				cfg.SegmentBytes = n
			}
		case "retention.ms":
			if err == nil {
				cfg.RetentionTime = time.Duration(n) * time.Millisecond
			}
		case "retention.bytes":
			if err == nil {
				cfg.RetentionBytes = n
			}
		case "flush.messages":
			if err == nil {
				cfg.FlushIntervalMessages = n
			}
		}
	}
	if cfg.FlushIntervalMessages <= 0 {
		cfg.FlushIntervalMessages = math.MaxInt64
	}
	return cfg
}

func (rm *replicaManager) truncate(p *partition, to int64, why string) {
	if to >= p.log.LEO() {
		p.log.TruncateTo(to) // still trims epoch entries past the end
		return
	}
	removed := p.log.Batches(to)
	p.log.TruncateTo(to)
	p.hw = min(p.hw, p.log.LEO())
	p.touch()
	rm.note("truncate", "%s to %d: %s", p.tp, p.log.LEO(), why)
	if a := rm.audit(); a != nil {
		a.ReplicaTruncated(rm.id(), p.tp, to, removed, why)
	}
}

// makeLeader: this broker leads p from now on. A new epoch starts at the log
// end (recorded in the epoch cache before any write of the epoch); followers'
// positions are unknown until they fetch; the high watermark stays what this
// replica knew as a follower until every ISR member has fetched.
func (rm *replicaManager) makeLeader(p *partition, reg *metadata.Partition) {
	rm.stopFetching(p)
	newEpoch, epochStart := startsLeaderEpoch(p.isLeader, p.leaderEpoch, reg.LeaderEpoch, p.log.LEO())
	p.isLeader = true
	p.leader = rm.id()
	p.leaderEpoch = reg.LeaderEpoch
	p.isr = slices.Clone(reg.ISR)
	p.pending = nil
	p.failed = false
	if newEpoch {
		p.epochStart = epochStart
		p.log.AssignEpoch(p.leaderEpoch)
		p.followers = newFollowerStates(p.replicas, p.isr, rm.id(), rm.now())
	}
	p.touch()
	if newEpoch {
		rm.note("partition-leader", "%s leader epoch %d, start offset %d, isr %v", p.tp, p.leaderEpoch, p.epochStart, p.isr)
		if a := rm.audit(); a != nil {
			a.PartitionLeader(rm.id(), p.tp, p.leaderEpoch, p.log, reg.ElectedUncleanly)
		}
		rm.leadershipChanged(p, p.leaderEpoch, true)
	}
	// A partition still RECOVERING from an unclean election (KIP-704) needs
	// nothing of its leader now: as Kafka's Partition.makeLeader, the leader
	// takes its state as RECOVERED at once and says so with the next ISR
	// change it asks for (alterManager.submit); the metadata says
	// RECOVERING until a follower joins.
	p.maybeIncrementHW()
}

// makeFollower: p is led elsewhere (or nowhere). Its log is not truncated
// (KIP-101): divergence is found by fetching.
func (rm *replicaManager) makeFollower(p *partition, reg *metadata.Partition) {
	wasLeader := p.isLeader
	p.isLeader = false
	p.leader = reg.Leader
	p.leaderEpoch = reg.LeaderEpoch
	p.isr = slices.Clone(reg.ISR)
	p.pending = nil
	p.followers = nil
	p.failed = false
	p.touch()
	if wasLeader {
		rm.completeWaiting(p) // they fail: this replica no longer leads
		rm.wakeParked(p.tp)
		rm.leadershipChanged(p, p.leaderEpoch, false)
	}
	p.hw = min(p.hw, p.log.LEO())
	p.touch()
	if rm.cfg.Bugs.HWTruncation && p.hw < p.log.LEO() {
		rm.truncate(p, p.hw, "become follower: truncate to high watermark (hw-truncation)")
	}
	rm.stopFetching(p)
	if reg.Leader != metadata.NoLeader && !rm.stopsFetching(reg) {
		rm.startFetching(p, reg.Leader)
	}
}

// maybeIncrementHW advances the leader's high watermark as far as its
// followers and its own syncing appends allow (leaderState.highWatermark),
// and completes the writes and wakes the fetches waiting for it.
func (p *partition) maybeIncrementHW() bool {
	if !p.isLeader || p.log.LEO() <= p.hw {
		// At the log end already: highWatermark can only say it stays
		// (it never passes the log end), and gathering the leader's
		// state for each follower's fetch showed in profiles.
		return false
	}
	rm := p.rm
	s := p.leaderState()
	hw, moved := s.highWatermark()
	if !moved {
		return false
	}
	p.hw = hw
	p.touch()
	p.log.OnHighWatermarkUpdated(hw)
	if a := rm.audit(); a != nil {
		a.ReplicaHW(rm.id(), p.tp, p.leaderEpoch, true, p.hw, p.log)
	}
	rm.completeWaiting(p)
	rm.wakeParked(p.tp)
	rm.highWatermarkAdvanced(p)
	return true
}

// appendedFrom notes that an append to p's log wrote from offset base on.
// If it issued fsyncs (before is the gate's count before it), the append
// returns, and then runs, only once they complete, and until then no high
// watermark of p passes base; otherwise then runs at once.
func (p *partition) appendedFrom(base int64, before uint64, then func()) {
	if p.rm.gate.Issued() == before {
		if then != nil {
			then()
		}
		return
	}
	p.syncing = append(p.syncing, base)
	p.rm.gate.Then(func() {
		// The gate completes fsyncs in the order they were issued: the
		// oldest append still syncing is this one.
		p.syncing = p.syncing[1:]
		if then != nil {
			then()
		} else if p.isLeader {
			// A follower's append still syncing when this replica became
			// leader held the high watermark back: it may move now, and
			// nothing else may come to move it (the producers' requests
			// wait for it on their muted connections).
			p.maybeIncrementHW()
		}
	})
}

// setFollowerHW is a follower's high watermark: the leader's, bounded by its
// own log end. It can go down (a new leader may know a lower one).
func (p *partition) setFollowerHW(leaderHW int64) {
	hw := min(leaderHW, p.log.LEO())
	if hw == p.hw {
		return
	}
	p.hw = hw
	p.log.OnHighWatermarkUpdated(hw)
	if a := p.rm.audit(); a != nil {
		a.ReplicaHW(p.rm.id(), p.tp, p.leaderEpoch, false, p.hw, p.log)
	}
}

// updateFollowerFetchState records a follower's fetch (Kafka's
// Replica.updateFetchStateOrThrow), then maybe expands the ISR and advances
// the high watermark.
func (p *partition) updateFollowerFetchState(f *followerState, fetchOffset, leaderEnd int64, brokerEpoch int64) {
	f.settle()
	*f = f.fetched(fetchOffset, leaderEnd, brokerEpoch, p.rm.now())
	p.maybeExpandISR(f)
	p.maybeIncrementHW()
}

// maybeExpandISR proposes adding a follower that has caught up
// (leaderState.mayJoinISR).
func (p *partition) maybeExpandISR(f *followerState) {
	if p.pending != nil || slices.Contains(p.isr, f.id) {
		// What mayJoinISR answers first, without gathering the leader's
		// state: nearly every fetch is a member's.
		return
	}
	if s := p.leaderState(); !s.mayJoinISR(f) {
		return
	}
	if a := p.rm.audit(); a != nil {
		a.ISRProposed(p.rm.id(), p.tp, f.id, f.leo)
	}
	p.rm.alter.submit(p, append(slices.Clone(p.isr), f.id))
}

// shrinkISRs removes followers that have not caught up within
// replica.lag.time.max.ms (checked every half of it).
func (rm *replicaManager) shrinkISRs() {
	for _, tp := range rm.order {
		p := rm.parts.get(tp)
		if !p.isLeader {
			continue
		}
		s := p.leaderState()
		if keep, shrink := s.shrunkISR(rm.id()); shrink {
			rm.note("isr-shrink", "%s isr %v -> %v", p.tp, p.isr, keep)
			rm.alter.submit(p, keep)
		}
	}
}

// leaderLearnsISR sets the ISR a leader learned was committed, telling the
// audit of each replica that joined.
func (p *partition) leaderLearnsISR(isr []int32) {
	for _, r := range isr {
		if !slices.Contains(p.isr, r) {
			if a := p.rm.audit(); a != nil {
				a.ISRJoined(p.rm.id(), p.tp, p.leaderEpoch, r)
			}
		}
	}
	p.isr = slices.Clone(isr)
	p.touch()
}

// committedISRChanged is the AlterPartition answer for p: the new ISR is
// committed.
func (p *partition) committedISRChanged(isr []int32, partitionEpoch int32) {
	rm := p.rm
	p.leaderLearnsISR(isr)
	p.partitionEpoch = partitionEpoch
	p.pending = nil
	p.touch()
	p.maybeIncrementHW()
	rm.completeWaiting(p)
}
