package reader

import (
	"maps"
	"slices"
	"strconv"
	"time"

	"kafkasim/model/proto"
	"kafkasim/sim"
)

// A reader configured with a group is a member of a classic consumer group
// (Kafka 4's ClassicKafkaConsumer with its ConsumerCoordinator): it finds
// the group's coordinator, joins, owns what the leader's assignor gives it,
// heartbeats, and hands what it polls to an application that processes the
// records one by one and commits offsets. Its parts:
//   - coordinator.go: AbstractCoordinator — discovery, JoinGroup/SyncGroup,
//     the heartbeat thread, the poll timer, LeaveGroup;
//   - rebalance.go: ConsumerCoordinator's onJoinPrepare / onJoinComplete
//     (eager and cooperative revocation) and the leader's assignment;
//   - commit.go: OffsetCommit (commitSync, commitAsync) and OffsetFetch
//     (positions from committed offsets);
//   - app.go: the application — the poll loop's group step and the
//     per-record processing, with the commit modes.

// CommitMode is when the application commits offsets.
type CommitMode string

const (
	// CommitBeforeProcessing commits the offsets after the polled records
	// before processing them (at-most-once).
	CommitBeforeProcessing CommitMode = "before-processing"
	// CommitAfterProcessing processes the polled records, then commits
	// (at-least-once).
	CommitAfterProcessing CommitMode = "after-processing"
	// CommitAuto is Kafka's enable.auto.commit=true: the consumer commits
	// every auto.commit.interval.ms at a poll, and before a revocation.
	CommitAuto CommitMode = "auto"
)

// GroupAssignor is a partition assignor the group's leader runs (Kafka's
// ConsumerPartitionAssignor).
type GroupAssignor interface {
	// Name is the JoinGroup protocol name ("range", "cooperative-sticky").
	Name() string
	// Cooperative reports whether the assignor supports the COOPERATIVE
	// rebalance protocol. A cooperative assignor must itself leave out a
	// partition that moves between members while its owner still holds it
	// (CooperativeStickyAssignor does): the owner revokes it first.
	Cooperative() bool
	// Assign assigns the partitions of the subscribed topics (counts per
	// topic, from the leader's metadata) to the members.
	Assign(partitionsPerTopic map[string]int32, members []proto.JoinGroupMember) map[string][]proto.TopicPartition
}

// GroupProtocol is group.protocol: how the member takes part in its group.
type GroupProtocol string

const (
	// ProtocolClassic is the classic protocol: JoinGroup, SyncGroup,
	// Heartbeat, the leader's client-side assignment (Kafka's default).
	ProtocolClassic GroupProtocol = "classic"
	// ProtocolConsumer is KIP-848's consumer protocol: ConsumerGroupHeartbeat,
	// with the assignment computed by the coordinator (consumerproto.go).
	ProtocolConsumer GroupProtocol = "consumer"
)

// GroupConfig is a group member's configuration: the consumer configs of
// group management (Kafka's ConsumerConfig, defaults in DefaultGroupConfig)
// and the application's.
type GroupConfig struct {
	// GroupID is group.id.
	GroupID string
	// GroupInstanceID is group.instance.id: "" is a dynamic member.
	GroupInstanceID string
	// Protocol is group.protocol ("": classic).
	Protocol GroupProtocol
	// ServerAssignor is group.remote.assignor, the assignor a consumer
	// protocol member asks the coordinator for ("": the broker's default).
	ServerAssignor string
	// ClientID is client.id, the prefix of the member id the coordinator
	// gives a classic member (clientId-UUID).
	ClientID string
	// SessionTimeout is session.timeout.ms (45 s) and HeartbeatInterval
	// heartbeat.interval.ms (3 s): classic only (the consumer protocol's
	// are the broker's group.consumer.* settings).
	SessionTimeout    time.Duration
	HeartbeatInterval time.Duration
	// MaxPollInterval is max.poll.interval.ms (5 minutes), also the
	// rebalance timeout sent in JoinGroup (or ConsumerGroupHeartbeat).
	MaxPollInterval time.Duration
	// Assignors is partition.assignment.strategy, best first (classic
	// only).
	Assignors []GroupAssignor
	// Commit is the application's commit mode.
	Commit CommitMode
	// AutoCommitInterval is auto.commit.interval.ms (5 s).
	AutoCommitInterval time.Duration
	// Processing is the time the application spends on each record.
	Processing sim.Range
	// Workers is the size of the application's pool of workers (pool.go;
	// 0 or 1: the poll loop processes each batch itself, record by
	// record). A partition's committed offset covers its contiguous
	// completed prefix.
	Workers int
	// CommitHighestFinished is an application bug (a kafkasim extension,
	// for teaching): with workers, commit the offset after the highest
	// finished record of each partition instead of its contiguous completed
	// prefix, so a crash skips the records below it still in processing.
	CommitHighestFinished bool
	// SideEffects makes processing a record write its effect to the
	// external store node Store (sideeffect.go).
	SideEffects SideEffects
	Store       sim.NodeID
	// RetryBackoff is retry.backoff.ms (100 ms); RequestTimeout
	// request.timeout.ms (30 s); DefaultAPITimeout default.api.timeout.ms
	// (60 s), commitSync's budget. The application's writes to the store
	// take the same: an attempt's timeout, the backoff between attempts,
	// and the time after which a record's processing gives up.
	RetryBackoff, RequestTimeout, DefaultAPITimeout time.Duration
	// RetryBackoffMax is retry.backoff.max.ms (1 s): the consumer
	// protocol's heartbeat backoff grows up to it.
	RetryBackoffMax time.Duration
	// Audit sees what the god view's group invariants check (nil: none).
	Audit GroupAuditor
	// Processor is the stream processor the member runs for
	// (processor.go; nil: none). It takes over the commits of
	// CommitAfterProcessing.
	Processor Processor
}

// GroupAuditor sees a member's ownership change as the member process
// lives it (model/audit's groups.go): the assignment its assign callback
// applied (every partition it owns then), partitions it revokes or loses,
// a position it resets, a position it moves back to where the log was
// truncated under it (KIP-320).
type GroupAuditor interface {
	PartitionsAssigned(node sim.NodeID, group, memberID string, generation int32, classic bool, owned []proto.TopicPartition)
	PartitionsRevoked(node sim.NodeID, group string, tps []proto.TopicPartition)
	PositionReset(node sim.NodeID, group string, tp proto.TopicPartition)
	PositionTruncated(node sim.NodeID, group string, tp proto.TopicPartition)
}

// consumerProtocol reports whether the member runs KIP-848's protocol.
func (c *GroupConfig) consumerProtocol() bool { return c.Protocol == ProtocolConsumer }

// DefaultGroupConfig has Kafka 4's consumer defaults (no assignors: the
// caller gives them), committing automatically.
func DefaultGroupConfig(groupID string) GroupConfig {
	return GroupConfig{GroupID: groupID, SessionTimeout: 45 * time.Second, HeartbeatInterval: 3 * time.Second,
		MaxPollInterval: 5 * time.Minute, Commit: CommitAuto, AutoCommitInterval: 5 * time.Second,
		Processing: sim.Range{Min: time.Millisecond, Max: 5 * time.Millisecond}, RetryBackoff: 100 * time.Millisecond,
		RequestTimeout: 30 * time.Second, DefaultAPITimeout: 60 * time.Second, RetryBackoffMax: time.Second}
}

// cooperativeProtocol reports whether a member with these assignors runs
// the COOPERATIVE rebalance protocol: only when every assignor supports it
// (ConsumerCoordinator's constructor takes the protocols common to all), so
// Kafka's default [range, cooperative-sticky] runs EAGER.
func cooperativeProtocol(assignors []GroupAssignor) bool {
	if len(assignors) == 0 {
		return false
	}
	for _, a := range assignors {
		if !a.Cooperative() {
			return false
		}
	}
	return true
}

// memberState is AbstractCoordinator.MemberState.
type memberState uint8

const (
	unjoined            memberState = iota // not part of a group
	preparingRebalance                     // JoinGroup sent, no answer yet
	completingRebalance                    // joined, SyncGroup not answered yet
	stable                                 // synced, heartbeating
)

// hasNotJoinedGroup is MemberState.hasNotJoinedGroup: no heartbeats then.
func (s memberState) hasNotJoinedGroup() bool { return s == unjoined || s == preparingRebalance }

// gtimerKind is a group member's timer.
type gtimerKind uint8

const (
	gHeartbeat   gtimerKind = iota // the heartbeat thread wakes
	gFindRetry                     // FindCoordinator again after retry.backoff.ms
	gWake                          // wake a waiting poll (a join may be retried)
	gProcessed                     // the application finished a record
	gCommitRetry                   // commitSync tries again after retry.backoff.ms
)

// gtimer is a group member's timer; token tells a stale one (a timer
// re-armed since, or of a commit that ended) from the current one.
type gtimer struct {
	kind  gtimerKind
	token uint64
}

// String is how the trace shows the timer.
func (t gtimer) String() string {
	return "reader.gtimer {kind:" + strconv.Itoa(int(t.kind)) + " token:" + strconv.FormatUint(t.token, 10) + "}"
}

// leaderInfo is a partition's leader as the metadata has it.
type leaderInfo struct{ leader, epoch int32 }

// groupState is the member's view of its group (AbstractCoordinator's and
// ConsumerCoordinator's fields).
type groupState struct {
	cfg         *GroupConfig
	cooperative bool

	// The coordinator: known once FindCoordinator answered.
	coordinator      sim.NodeID
	coordinatorKnown bool
	findCorr         uint64 // FindCoordinator in flight
	findRetryAt      time.Duration

	state            memberState
	generation       int32 // proto.NoGeneration when none
	memberID         string
	protocol         string
	rejoinNeeded     bool
	needsJoinPrepare bool
	rejoinReason     string
	joinCorr         uint64 // JoinGroup in flight
	syncCorr         uint64 // SyncGroup in flight
	joinRetryAt      time.Duration
	// synced is the assignment SyncGroup returned, applied at the next poll
	// (onJoinComplete runs in the application's thread).
	synced *syncedAssignment
	// The leader watches the partition counts it assigned from (Kafka's
	// assignmentSnapshot): a change calls for a rebalance.
	isLeader           bool
	assignmentSnapshot map[string]int32
	// skippedAssignment: the leader returned to a stable group as a
	// static member and kept its assignment (KIP-814), whose partition
	// counts may be older than its snapshot.
	skippedAssignment bool

	// From the metadata: partition counts and leaders of the member's topics.
	partitionCounts map[string]int32
	leaders         map[partKey]leaderInfo

	// The heartbeat thread (Kafka's Heartbeat timers).
	hbEnabled bool
	// exitOnLeave: the member is closing, and ends once its LeaveGroup is
	// answered.
	exitOnLeave    bool
	hbToken        uint64
	hbCorr         uint64 // Heartbeat in flight
	nextHeartbeat  time.Duration
	lastHbReceived time.Duration
	lastPoll       time.Duration

	// The generation and member id the owned partitions were assigned in.
	ownedGeneration int32
	ownedMemberID   string

	// fetchingCommitted is the OffsetFetch in flight (0: none), with its
	// partitions; fetchCommittedAt when one may be sent again.
	fetchingCommitted uint64
	fetchCommittedAt  time.Duration

	// commits in flight: sync ones one at a time; async ones by corr.
	commitToken    uint64
	syncCommit     *commitCall
	nextAutoCommit time.Duration
	// firstAutoCommit is when the first auto-commit after the member's
	// last assignment is due (the member's clock): Kafka's onJoinComplete
	// restarts the auto-commit timer, so a member assigned its partitions
	// less than auto.commit.interval.ms ago has not had one yet.
	firstAutoCommit time.Duration
	// commitsOpen are the commits invoked and not yet completed in the
	// history, in invocation order: they complete in that order (commit.go,
	// completeCommitsInOrder).
	commitsOpen []*commitCall

	// processed is, per owned partition, the position after the last record
	// the application finished (what its commits commit).
	processed map[partKey]fetchPosition

	// blocked is set while the poll's group step waits on a commit made by
	// a rebalance callback; the commit's end polls again.
	blocked bool
	// fatal is the error that ended the member (FENCED_INSTANCE_ID, a
	// fatal JoinGroup error): it consumes no more.
	fatal string
	// fenced is what a classic member knew when FENCED_INSTANCE_ID ended
	// it (nil: it was not), for the god view's judgement of it
	// (ClassicFenced).
	fenced *Fenced
	// joinedAt is when the member last got a JoinGroup answer, and with
	// it its generation and member id; joinedFrom the coordinator that
	// gave it.
	joinedAt   time.Duration
	joinedFrom sim.NodeID

	// consumer is a consumer-protocol member's driver (nil: classic).
	consumer *consumerMember

	app application
}

// syncedAssignment is SyncGroup's answer waiting for the next poll.
type syncedAssignment struct {
	generation int32
	memberID   string
	partitions []proto.TopicPartition
}

func newGroupState(cfg *GroupConfig) *groupState {
	return &groupState{cfg: cfg, cooperative: cooperativeProtocol(cfg.Assignors), coordinator: sim.NoNode, joinedFrom: sim.NoNode,
		generation: proto.NoGeneration, rejoinNeeded: true, needsJoinPrepare: true,
		partitionCounts: map[string]int32{}, leaders: map[partKey]leaderInfo{},
		ownedGeneration: proto.NoGeneration, processed: map[partKey]fetchPosition{}}
}

// Group returns the member's group id, generation and member id, and
// whether it is a group member at all.
func (r *Reader) Group() (groupID string, generation int32, memberID string, ok bool) {
	if r.group == nil {
		return "", proto.NoGeneration, "", false
	}
	return r.group.cfg.GroupID, r.group.generation, r.group.memberID, true
}

// SkippedAssignmentSnapshot returns, for a classic group's leader that
// kept the group's assignment on a static rejoin (KIP-814), the partition
// count of each subscribed topic it watches for a change (Kafka's
// assignmentSnapshot, taken at that rejoin); ok is false otherwise.
func (r *Reader) SkippedAssignmentSnapshot() (counts map[string]int32, ok bool) {
	g := r.group
	if g == nil || !g.isLeader || !g.skippedAssignment {
		return nil, false
	}
	return maps.Clone(g.assignmentSnapshot), true
}

// Owned returns the partitions the member owns, "topic-partition", in order.
func (r *Reader) Owned() []string {
	out := make([]string, 0, len(r.subs.parts))
	for _, p := range r.subs.parts {
		out = append(out, p.key.String())
	}
	return out
}

// Fatal returns the error that ended a group member, "" while it runs.
func (r *Reader) Fatal() string {
	if r.group == nil {
		return ""
	}
	return r.group.fatal
}

// FirstAutoCommitDue reports, for a running member that auto-commits and
// has not had its first auto-commit since its partitions were last
// assigned, how long until it is due: ConsumerCoordinator.onJoinComplete
// (and a consumer-protocol member's assignment) restarts the auto-commit
// timer (nextAutoCommitTimer.updateAndReset(autoCommitIntervalMs)), so a
// member that has just joined commits nothing for auto.commit.interval.ms.
// ok is false for every other member.
func (r *Reader) FirstAutoCommitDue() (time.Duration, bool) {
	g := r.group
	if g == nil || g.cfg.Commit != CommitAuto || g.fatal != "" || len(r.subs.parts) == 0 {
		return 0, false
	}
	due := g.firstAutoCommit - r.env.Now()
	if g.nextAutoCommit != g.firstAutoCommit || due <= 0 {
		return 0, false
	}
	return due, true
}

// Stable reports whether the member is in a generation it synced and owns
// its assignment (no rebalance pending).
func (r *Reader) Stable() bool {
	g := r.group
	if g != nil && g.consumer != nil {
		return r.consumerStable()
	}
	return g != nil && g.state == stable && !g.rejoinNeeded && g.synced == nil
}

// tpStrings names partitions "topic-partition", sorted.
func tpStrings(tps []proto.TopicPartition) []string {
	out := make([]string, 0, len(tps))
	for _, tp := range tps {
		out = append(out, partKey{tp.Topic, tp.Partition}.String())
	}
	slices.Sort(out)
	return out
}

// sortTPs sorts partitions by topic, then partition.
func sortTPs(tps []proto.TopicPartition) {
	slices.SortFunc(tps, func(a, b proto.TopicPartition) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		return int(a.Partition - b.Partition)
	})
}

// assignmentChange is what a new assignment changes of the owned
// partitions (ConsumerCoordinator.onJoinComplete): added are assigned and
// not owned, revoked owned and not assigned; both sorted.
func assignmentChange(owned, assigned []proto.TopicPartition) (added, revoked []proto.TopicPartition) {
	for _, tp := range assigned {
		if !slices.Contains(owned, tp) && !slices.Contains(added, tp) {
			added = append(added, tp)
		}
	}
	for _, tp := range owned {
		if !slices.Contains(assigned, tp) && !slices.Contains(revoked, tp) {
			revoked = append(revoked, tp)
		}
	}
	sortTPs(added)
	sortTPs(revoked)
	return added, revoked
}
