package membership

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"kafkasim/model/proto"
)

// Config is the member's consumer configuration.
type Config struct {
	GroupID string
	// InstanceID is group.instance.id; "": a dynamic member.
	InstanceID string
	// RackID is client.rack, sent when joining.
	RackID string
	// ServerAssignor is group.remote.assignor; "": the broker's default.
	ServerAssignor string
	// RebalanceTimeout is max.poll.interval.ms: the member sends it as its
	// rebalance timeout, and it bounds the time between two polls.
	RebalanceTimeout time.Duration
	// RetryBackoff and RetryBackoffMax are retry.backoff.ms and
	// retry.backoff.max.ms: a failed heartbeat is retried after
	// RetryBackoff·2^failures (±20% jitter), at most RetryBackoffMax.
	RetryBackoff    time.Duration
	RetryBackoffMax time.Duration
}

// DefaultConfig is Kafka's consumer defaults for a dynamic member.
func DefaultConfig(groupID string) Config {
	return Config{GroupID: groupID, RebalanceTimeout: 5 * time.Minute,
		RetryBackoff: 100 * time.Millisecond, RetryBackoffMax: time.Second}
}

// Never is a wait with nothing to wake up for.
const Never time.Duration = -1

// ActionKind is what the application is asked to do.
type ActionKind int8

const (
	// RevokePartitions: stop fetching the partitions, commit their
	// positions (auto-commit, or the application's commit on revoke), run
	// onPartitionsRevoked, then report the action done.
	RevokePartitions ActionKind = iota
	// AssignPartitions: take the new assignment (Assignment; Partitions are
	// the ones added), initialize the added partitions' positions, run
	// onPartitionsAssigned, then report the action done.
	AssignPartitions
	// LosePartitions: drop the partitions without committing (the member
	// was fenced, failed, or left on an expired poll timer), run
	// onPartitionsLost, then report the action done.
	LosePartitions
	// FatalError: the member failed for good (Error, Message); nothing to
	// report back.
	FatalError
)

func (k ActionKind) String() string {
	return [...]string{"revoke", "assign", "lose", "fatal"}[k]
}

// Action is a request to the application. The application carries out
// the actions in the order they come, and reports each one but FatalError
// done with ActionDone(Seq).
type Action struct {
	Seq  uint64
	Kind ActionKind
	// Partitions are the partitions to revoke or lose, or the ones an
	// assignment adds.
	Partitions []proto.TopicPartition
	// Assignment is the whole assignment an AssignPartitions installs.
	Assignment []proto.TopicPartition
	Error      proto.ErrorCode
	Message    string
}

// purpose is what a callback belongs to, and so what its completion
// continues with (the CompletableFuture chains of AbstractMembershipManager).
type purpose int8

const (
	reconcileRevoke purpose = iota // revokeAndAssign, first half
	reconcileAssign                // revokeAndAssign, second half
	leaveRelease                   // leaveGroup's signalMemberLeavingGroup
	fencedRelease                  // transitionToFenced's onPartitionsLost
	staleRelease                   // transitionToStale's onPartitionsLost
	fatalRelease                   // transitionToFatal's onPartitionsLost
)

// pending is an action issued and not yet done. A hidden one has nothing
// for the application to do (Kafka completes a callback on no partitions at
// once); it still waits for the actions before it, so that what follows
// happens in Kafka's order.
type pending struct {
	Action
	purpose purpose
	hidden  bool
}

// Manager is the membership manager of one consumer-protocol member
// (ConsumerMembershipManager with its ConsumerHeartbeatRequestManager).
type Manager struct {
	cfg      Config
	rand     *rand.Rand
	memberID string
	epoch    int32
	state    MemberState

	subscription        []string // sorted
	subscriptionUpdated bool

	// current is the assignment last reconciled (what heartbeats report
	// owning); target the one last received.
	current, target localAssignment
	// reconciling is reconciliationInProgress; rejoined is
	// rejoinedWhileReconciliationInProgress; reconcileTo the assignment the
	// reconciliation in progress installs, added what it adds.
	reconciling bool
	rejoined    bool
	reconcileTo localAssignment
	added       []proto.TopicPartition

	// owned is what the application owns, as of the actions it reported
	// done; queue the actions issued and not done yet, in order; out the
	// actions not handed to the caller yet.
	owned   []proto.TopicPartition
	queue   []pending
	out     []Action
	nextSeq uint64

	leaveInProgress bool
	pollDeadline    time.Duration
	// clock is the latest local time the member saw: its timers never go
	// back when the machine's clock is set back (Kafka's Timer.update
	// ignores an earlier time), so a poll timer that expired stays expired
	// and the next poll brings a stale member back.
	clock            time.Duration
	pollTimerExpired bool // isPollTimerExpired
	staleReleased    bool // the stale member's onPartitionsLost completed
	staleRejoin      bool // a poll asked the stale member to rejoin

	fatalError   proto.ErrorCode
	fatalMessage string

	hb          requestState
	sent        sentFields
	outstanding []outstanding
}

// NewManager is a member not in the group (UNSUBSCRIBED) whose poll timer
// starts now. r is the node's random stream: the member id is drawn from
// it (KIP-1082: the consumer makes up its member id at startup and keeps it
// for its whole life), and so is the backoff jitter.
func NewManager(cfg Config, r *rand.Rand, now time.Duration) *Manager {
	m := &Manager{cfg: cfg, rand: r, memberID: newMemberID(r), state: Unsubscribed,
		current: noAssignment, target: noAssignment, pollDeadline: now + cfg.RebalanceTimeout}
	m.sent.reset()
	return m
}

// newMemberID is Uuid.randomUuid().toString(): 16 random bytes in unpadded
// URL-safe base64, drawn again should the text start with '-' (Kafka
// avoids ids that look like command-line flags) or the bytes be zero.
func newMemberID(r *rand.Rand) string {
	for {
		var b [16]byte
		binary.BigEndian.PutUint64(b[:8], r.Uint64())
		binary.BigEndian.PutUint64(b[8:], r.Uint64())
		s := base64.RawURLEncoding.EncodeToString(b[:])
		if b != [16]byte{} && !strings.HasPrefix(s, "-") {
			return s
		}
	}
}

// transitionTo is AbstractMembershipManager.transitionTo; an invalid
// transition is a bug here as it is in Kafka (IllegalStateException).
func (m *Manager) transitionTo(next MemberState) {
	if !validTransition(m.state, next) {
		panic(fmt.Sprintf("membership: member %s: invalid state transition from %v to %v", m.memberID, m.state, next))
	}
	m.state = next
}

// Subscribe is KafkaConsumer.subscribe(topics): the member joins at the
// next poll (onSubscriptionUpdated, onConsumerPoll); a member in the group
// sends the new subscription with its next heartbeat. An empty list is
// unsubscribe, as in Kafka.
func (m *Manager) Subscribe(topics []string) {
	if len(topics) == 0 {
		m.Unsubscribe()
		return
	}
	m.subscription = normalizeTopics(topics)
	m.subscriptionUpdated = true
}

// Unsubscribe is KafkaConsumer.unsubscribe, and close with the default
// group membership operation (leaveGroup): the application releases its
// partitions (onPartitionsRevoked while in the group, onPartitionsLost
// otherwise), then the member sends its leave heartbeat, epoch -1 or, for
// a static member, -2 (the coordinator keeps its assignment for the
// session timeout, for the instance to come back). A member out of the
// group just forgets its subscription: a fenced one becomes UNSUBSCRIBED,
// a stale one stays STALE and will not rejoin.
func (m *Manager) Unsubscribe() {
	if m.state.notInGroup() {
		if m.state == Fenced {
			m.clearAssignment()
			m.transitionTo(Unsubscribed)
		}
		m.subscription, m.subscriptionUpdated = nil, false
		// A rejoin a poll asked of a stale member still releasing its
		// partitions is dropped. In Kafka that release runs inside the
		// very poll (the application thread runs the queued
		// onPartitionsLost there, and its completion reaches the
		// background thread right after the PollEvent), so the member
		// rejoins before an unsubscribe is processed, which then leaves.
		// Here the application may unsubscribe first; dropping the rejoin
		// ends the member out of the group just the same, rather than in
		// it with no subscription.
		m.staleRejoin = false
		return
	}
	if m.state.leavingGroup() {
		return
	}
	m.transitionTo(PrepareLeaving)
	m.leaveInProgress = true
	kind := LosePartitions
	if m.epoch > 0 {
		kind = RevokePartitions
	}
	m.issue(kind, m.projectedOwned(), nil, leaveRelease)
}

// Poll is the application's call to poll(): onConsumerPoll joins a member
// whose subscription was updated while unsubscribed, and resetPollTimer
// restarts max.poll.interval.ms, bringing back a member that went stale.
// A consumer with no subscription does none of it: AsyncKafkaConsumer.poll
// throws IllegalStateException ("not subscribed to any topics") before it
// sends the PollEvent, so an application that unsubscribed cannot bring
// its stale member back, nor join, until it subscribes again.
func (m *Manager) Poll(now time.Duration) {
	now = m.monotonic(now)
	if len(m.subscription) == 0 {
		return
	}
	if m.subscriptionUpdated {
		m.subscriptionUpdated = false
		if m.state == Unsubscribed {
			m.transitionToJoining()
		}
	}
	if now >= m.pollDeadline {
		m.maybeRejoinStaleMember()
	}
	m.pollDeadline = now + m.cfg.RebalanceTimeout
	m.maybeReconcile()
}

// Actions hands over the actions issued since the last call, in order.
func (m *Manager) Actions() []Action {
	out := m.out
	m.out = nil
	return out
}

// ActionDone reports the application finished the action seq, which must
// be the oldest not reported yet.
func (m *Manager) ActionDone(seq uint64) error {
	if len(m.queue) == 0 || m.queue[0].hidden || m.queue[0].Seq != seq {
		return fmt.Errorf("membership: member %s: action %d reported done out of order", m.memberID, seq)
	}
	m.completeHead()
	for len(m.queue) > 0 && m.queue[0].hidden {
		m.completeHead()
	}
	m.maybeReconcile()
	return nil
}

// issue asks the application to act, or, with no partitions to give up,
// queues a hidden step that completes once the actions before it have.
func (m *Manager) issue(kind ActionKind, parts, assignment []proto.TopicPartition, p purpose) {
	m.nextSeq++
	a := pending{Action: Action{Seq: m.nextSeq, Kind: kind, Partitions: normalize(parts), Assignment: normalize(assignment)}, purpose: p}
	a.hidden = kind != AssignPartitions && len(a.Partitions) == 0
	m.queue = append(m.queue, a)
	if !a.hidden {
		m.out = append(m.out, a.Action)
	}
	if len(m.queue) == 1 && a.hidden {
		m.completeHead()
	}
}

// projectedOwned is what the application owns once it has carried out
// every action issued: what a new revocation or loss must cover (Kafka
// reads subscriptions.assignedPartitions()).
func (m *Manager) projectedOwned() []proto.TopicPartition {
	owned := m.owned
	for _, a := range m.queue {
		owned = a.applyTo(owned)
	}
	return owned
}

func (a *pending) applyTo(owned []proto.TopicPartition) []proto.TopicPartition {
	if a.Kind == AssignPartitions {
		return a.Assignment
	}
	return minus(owned, a.Partitions)
}

// completeHead runs the continuation of the oldest action.
func (m *Manager) completeHead() {
	a := m.queue[0]
	m.queue = m.queue[1:]
	m.owned = a.applyTo(m.owned)
	switch a.purpose {
	case reconcileRevoke:
		if !m.maybeAbortReconciliation() {
			m.issue(AssignPartitions, m.added, m.reconcileTo.partitions, reconcileAssign)
		}
	case reconcileAssign:
		if m.reconciling && !m.maybeAbortReconciliation() {
			m.current = m.reconcileTo
			m.transitionTo(Acknowledging)
			m.markReconciliationCompleted()
		}
	case leaveRelease:
		// clearAssignmentAndLeaveGroup.
		m.subscription = nil
		m.clearAssignment()
		m.transitionToSendingLeaveGroup(false)
	case fencedRelease:
		m.clearAssignment()
		if m.state == Fenced {
			m.transitionToJoining()
		}
	case staleRelease:
		m.clearAssignment()
		m.staleReleased = true
		if m.staleRejoin && m.state == Stale {
			m.transitionToJoining()
		}
	case fatalRelease:
		m.clearAssignment()
	}
}

// clearAssignment forgets the reconciled and received assignments (the
// application's partitions went with the action that preceded).
func (m *Manager) clearAssignment() {
	m.current, m.target = noAssignment, noAssignment
}

func (m *Manager) markReconciliationCompleted() { m.reconciling, m.rejoined = false, false }

// maybeAbortReconciliation: a reconciliation stops when the member left
// RECONCILING (fenced, failing, leaving) or rejoined meanwhile.
func (m *Manager) maybeAbortReconciliation() bool {
	abort := m.state != Reconciling || m.rejoined
	if abort {
		m.markReconciliationCompleted()
	}
	return abort
}

// maybeReconcile starts reconciling the received assignment: revoke what
// the member owns outside it, then assign it, then acknowledge. One
// reconciliation at a time: an assignment received meanwhile waits for the
// next round (Kafka's "handled in the next reconciliation loop").
func (m *Manager) maybeReconcile() {
	if m.state != Reconciling || m.current.equal(m.target) || m.reconciling {
		return
	}
	resolved := m.target
	if !m.current.isNone() && slices.Equal(resolved.partitions, m.current.partitions) {
		// Back to the partitions it owns: acknowledge without callbacks.
		m.current = resolved
		m.transitionTo(Acknowledging)
		return
	}
	m.reconciling, m.rejoined, m.reconcileTo = true, false, resolved
	owned := m.projectedOwned()
	m.added = minus(resolved.partitions, owned)
	if revoked := minus(owned, resolved.partitions); len(revoked) > 0 {
		m.issue(RevokePartitions, revoked, nil, reconcileRevoke)
		return
	}
	m.issue(AssignPartitions, m.added, resolved.partitions, reconcileAssign)
}

// processAssignmentReceived takes in an assignment from the coordinator.
func (m *Manager) processAssignmentReceived(assignment []proto.TopicPartition) {
	if t, changed := m.target.updateWith(assignment); changed {
		m.target = t
	}
	if !m.current.equal(m.target) {
		m.transitionTo(Reconciling)
	} else if m.state == Reconciling || m.state == Joining {
		m.transitionTo(Stable)
	}
}

// transitionToJoining: the next heartbeat joins with epoch 0 and the same
// member id.
func (m *Manager) transitionToJoining() {
	if m.state == Fatal {
		return
	}
	if m.reconciling {
		m.rejoined = true
	}
	m.epoch = 0
	m.transitionTo(Joining)
	m.target = noAssignment
}

// transitionToFenced handles FENCED_MEMBER_EPOCH and UNKNOWN_MEMBER_ID:
// the member loses its partitions, then rejoins at epoch 0. A member
// already leaving just stops. Kafka would throw on a fence reaching a
// FENCED, STALE or FATAL member (only a late response can bring one);
// here it is ignored.
func (m *Manager) transitionToFenced() {
	switch m.state {
	case PrepareLeaving:
		m.transitionToSendingLeaveGroup(false)
		m.transitionTo(Unsubscribed)
		m.leaveInProgress = false
		return
	case Leaving:
		m.transitionTo(Unsubscribed)
		m.leaveInProgress = false
		return
	case Unsubscribed, Fenced, Stale, Fatal:
		return
	}
	m.transitionTo(Fenced)
	m.epoch = 0
	m.issue(LosePartitions, m.projectedOwned(), nil, fencedRelease)
}

// transitionToFatal handles an unrecoverable error: the application is
// told, and loses its partitions unless the member was leaving anyway.
func (m *Manager) transitionToFatal(code proto.ErrorCode, msg string) {
	prev := m.state
	if prev == Fatal {
		return
	}
	if prev == Fenced || prev == Stale {
		// Kafka's table has no such transition (a late response); a fatal
		// error still ends the member.
		m.state = Fatal
	} else {
		m.transitionTo(Fatal)
	}
	m.fatalError, m.fatalMessage = code, msg
	m.nextSeq++
	m.out = append(m.out, Action{Seq: m.nextSeq, Kind: FatalError, Error: code, Message: msg})
	if prev == Unsubscribed || prev == Leaving || prev == PrepareLeaving {
		m.leaveInProgress = false
		return
	}
	m.issue(LosePartitions, m.projectedOwned(), nil, fatalRelease)
}

// leaveGroupEpoch: -2 for a static member (it will be back within the
// session timeout), -1 for a dynamic one.
func (m *Manager) leaveGroupEpoch() int32 {
	if m.cfg.InstanceID != "" {
		return proto.LeaveGroupStaticMemberEpoch
	}
	return proto.LeaveGroupMemberEpoch
}

// transitionToSendingLeaveGroup sets the leave epoch and moves to LEAVING
// for the next heartbeat to leave; on an expired poll timer the member
// will stay STALE after it.
func (m *Manager) transitionToSendingLeaveGroup(dueToExpiredPollTimer bool) {
	if m.state == Fatal || m.state == Unsubscribed {
		return
	}
	if dueToExpiredPollTimer {
		m.pollTimerExpired = true
		m.transitionTo(PrepareLeaving)
	}
	m.epoch = m.leaveGroupEpoch()
	m.current = noAssignment
	m.transitionTo(Leaving)
}

// transitionToStale: the member left on an expired poll timer; it loses
// its partitions and waits for the application's next poll.
func (m *Manager) transitionToStale() {
	m.transitionTo(Stale)
	m.staleReleased, m.staleRejoin = false, false
	m.issue(LosePartitions, m.projectedOwned(), nil, staleRelease)
}

// maybeRejoinStaleMember: a poll after the timer expired brings a stale
// member back once it has released its partitions.
func (m *Manager) maybeRejoinStaleMember() {
	m.pollTimerExpired = false
	if m.state != Stale {
		return
	}
	m.staleRejoin = true
	if m.staleReleased && len(m.subscription) > 0 {
		m.transitionToJoining()
	}
}

// onHeartbeatRequestGenerated leaves the states that end with the sending
// of a heartbeat: ACKNOWLEDGING (to STABLE, or RECONCILING if a newer
// assignment came meanwhile) and LEAVING.
func (m *Manager) onHeartbeatRequestGenerated() {
	switch m.state {
	case Acknowledging:
		if m.current.equal(m.target) {
			m.transitionTo(Stable)
		} else {
			m.transitionTo(Reconciling)
		}
	case Leaving:
		if m.pollTimerExpired {
			m.transitionToStale()
		} else {
			m.transitionTo(Unsubscribed)
		}
	}
}

// onHeartbeatSuccess is ConsumerMembershipManager.onHeartbeatSuccess.
func (m *Manager) onHeartbeatSuccess(resp *proto.ConsumerGroupHeartbeatResponse) {
	switch {
	case m.state == Leaving:
		return
	case m.state == Unsubscribed && resp.MemberEpoch < 0 && m.leaveInProgress:
		m.leaveInProgress = false
		return
	case m.state.notInGroup():
		return
	case resp.MemberEpoch < 0:
		m.leaveInProgress = false
		return
	}
	m.epoch = resp.MemberEpoch
	if resp.HasAssignment && m.state.canHandleNewAssignment() {
		m.processAssignmentReceived(resp.Assignment)
	}
}

// normalizeTopics sorts and deduplicates a subscription.
func normalizeTopics(topics []string) []string {
	if len(topics) == 0 {
		return nil
	}
	out := slices.Clone(topics)
	slices.Sort(out)
	return slices.Compact(out)
}

// monotonic is now, or the latest time the member saw if the clock went
// back since (Timer.update: max of the cached and the given time).
func (m *Manager) monotonic(now time.Duration) time.Duration {
	m.clock = max(m.clock, now)
	return m.clock
}
