package membership

import (
	"slices"
	"time"

	"kafkasim/model/proto"
)

// requestState is AbstractHeartbeatRequestManager.HeartbeatRequestState
// with its RequestState: the heartbeat timer (the interval the coordinator
// gives), the request in flight, and the exponential backoff after a
// failure.
type requestState struct {
	interval      time.Duration
	timerDeadline time.Duration // the heartbeat timer expires then
	inflight      bool
	attempts      int           // failures since the last success
	backoffUntil  time.Duration // no request before then (but an urgent one)
}

// canSend: the interval passed, nothing in flight, the backoff over.
func (s *requestState) canSend(now time.Duration) bool {
	return now >= s.timerDeadline && !s.inflight && now >= s.backoffUntil
}

// timeToNext is timeToNextHeartbeatMs.
func (s *requestState) timeToNext(now time.Duration) time.Duration {
	if now >= s.timerDeadline {
		return max(0, s.backoffUntil-now)
	}
	return s.timerDeadline - now
}

func (s *requestState) resetTimer(now time.Duration) { s.timerDeadline = now + s.interval }

// updateInterval is updateHeartbeatIntervalMs: a new interval restarts
// the timer.
func (s *requestState) updateInterval(now, interval time.Duration) {
	if interval == s.interval {
		return
	}
	s.interval = interval
	s.timerDeadline = now + interval
}

// backoff is ExponentialBackoff.backoff(attempts) with retry.backoff.ms,
// multiplier 2, retry.backoff.max.ms and ±20% jitter (Kafka's client
// jitter; the heartbeat manager passes it max.poll.interval.ms instead, a
// slip not modelled).
func (m *Manager) backoff(attempts int) time.Duration {
	d := float64(m.cfg.RetryBackoff)
	for range min(attempts, 62) {
		d *= 2
		if d >= float64(m.cfg.RetryBackoffMax) {
			break
		}
	}
	d *= 0.8 + 0.4*m.rand.Float64()
	return min(time.Duration(d), m.cfg.RetryBackoffMax)
}

func (m *Manager) onSuccessfulAttempt(now time.Duration) {
	m.hb.inflight, m.hb.attempts = false, 0
	m.hb.backoffUntil = now + m.backoff(0)
}

// onFailedAttempt: the heartbeat timer is reset to fire at once, after
// the backoff (or at once for errors that reset the request state).
func (m *Manager) onFailedAttempt(now time.Duration) {
	m.hb.inflight = false
	m.hb.attempts++
	m.hb.backoffUntil = now + m.backoff(m.hb.attempts)
	m.hb.timerDeadline = now
}

// resetRequestState is RequestState.reset: no backoff, nothing in flight.
func (m *Manager) resetRequestState() {
	m.hb.inflight, m.hb.attempts, m.hb.backoffUntil = false, 0, 0
}

// sentFields is HeartbeatState.SentFields: what the last requests sent,
// so that a heartbeat leaves out what did not change. Reset after every
// error or failure: the next request is full.
type sentFields struct {
	rebalanceTimeout time.Duration // -1: not sent
	topics           []string
	topicsSent       bool
	serverAssignor   string
	local            localAssignment
	localSent        bool
}

func (f *sentFields) reset() { *f = sentFields{rebalanceTimeout: -1} }

// buildRequest is HeartbeatState.buildRequestData: group, member id, epoch
// and instance id always; the rest when joining or when it changed since
// it was last sent. Owned partitions are the reconciled assignment, sent
// again whenever it (or its local epoch) changed: that is the
// acknowledgement of a reconciliation.
func (m *Manager) buildRequest() *proto.ConsumerGroupHeartbeatRequest {
	req := &proto.ConsumerGroupHeartbeatRequest{GroupID: m.cfg.GroupID, MemberID: m.memberID,
		MemberEpoch: m.epoch, InstanceID: m.cfg.InstanceID, RebalanceTimeout: -1}
	all := m.state == Joining
	if all {
		req.RackID = m.cfg.RackID
	}
	if all || m.sent.rebalanceTimeout != m.cfg.RebalanceTimeout {
		req.RebalanceTimeout = m.cfg.RebalanceTimeout
		m.sent.rebalanceTimeout = m.cfg.RebalanceTimeout
	}
	if all || !m.sent.topicsSent || !slices.Equal(m.sent.topics, m.subscription) {
		req.SubscribedTopicNames = append([]string{}, m.subscription...)
		m.sent.topics, m.sent.topicsSent = slices.Clone(m.subscription), true
	}
	if m.cfg.ServerAssignor != "" && (all || m.sent.serverAssignor != m.cfg.ServerAssignor) {
		req.ServerAssignor = m.cfg.ServerAssignor
		m.sent.serverAssignor = m.cfg.ServerAssignor
	}
	if all || !m.sent.localSent || !m.sent.local.equal(m.current) {
		req.OwnedPartitions = append([]proto.TopicPartition{}, m.current.partitions...)
		req.OwnedSent = true
		m.sent.local, m.sent.localSent = m.current, true
	}
	return req
}

// outstanding is a heartbeat sent and not answered; ignore marks the leave
// sent on an expired poll timer, whose answer Kafka only logs.
type outstanding struct {
	req    *proto.ConsumerGroupHeartbeatRequest
	ignore bool
}

// Heartbeat is AbstractHeartbeatRequestManager.poll: the heartbeat to send
// now (nil: none), and how long until Heartbeat should be called again
// (Never: not before another input). Call it after every input and when
// that wait runs out. coordinatorKnown is false while the caller looks for
// the group coordinator: nothing is sent, and a member that was to leave
// gives up its leave heartbeat (onHeartbeatRequestSkipped). The caller
// sets the request's correlation id and sends it to the coordinator.
//
// The poll timer is checked here too: when max.poll.interval.ms passed
// since the last Poll, the member sends a leave heartbeat (whose answer is
// ignored), goes STALE and loses its partitions.
func (m *Manager) Heartbeat(now time.Duration, coordinatorKnown bool) (*proto.ConsumerGroupHeartbeatRequest, time.Duration) {
	now = m.monotonic(now)
	if !coordinatorKnown || m.state.skipsHeartbeat() {
		if m.state == Leaving {
			m.transitionTo(Unsubscribed)
			m.leaveInProgress = false
		}
		return nil, Never
	}
	if now >= m.pollDeadline && !m.state.leavingGroup() {
		m.transitionToSendingLeaveGroup(true)
		req := m.makeRequest(now, true)
		m.resetRequestState()
		m.sent.reset()
		return req, m.wait(now)
	}
	heartbeatNow := m.state == Leaving || (m.state.heartbeatsNow() && !m.hb.inflight)
	if !m.hb.canSend(now) && !heartbeatNow {
		return nil, m.wait(now)
	}
	req := m.makeRequest(now, false)
	// Sending an acknowledgement may reveal a newer assignment to reconcile.
	m.maybeReconcile()
	return req, m.wait(now)
}

func (m *Manager) makeRequest(now time.Duration, ignore bool) *proto.ConsumerGroupHeartbeatRequest {
	req := m.buildRequest()
	m.hb.inflight = true
	m.onHeartbeatRequestGenerated()
	m.hb.resetTimer(now)
	m.outstanding = append(m.outstanding, outstanding{req: req, ignore: ignore})
	return req
}

// wait is how long until Heartbeat has something to do: the next
// heartbeat (unless one is in flight: its answer comes first) or the poll
// timer's expiry.
func (m *Manager) wait(now time.Duration) time.Duration {
	if m.state.skipsHeartbeat() {
		return Never
	}
	w := Never
	switch {
	case m.state == Leaving || (m.state.heartbeatsNow() && !m.hb.inflight):
		w = 0
	case !m.hb.inflight:
		w = m.hb.timeToNext(now)
	}
	if !m.state.leavingGroup() {
		if p := max(0, m.pollDeadline-now); w == Never || p < w {
			w = p
		}
	}
	if w > 0 && w < time.Millisecond {
		// Kafka's timers count whole milliseconds (Timer.remainingMs, and
		// the network thread's poll timeout in ConsumerNetworkThread.runOnce):
		// a wait not yet over is at least 1 ms. It matters when the clock
		// was set back: the member's time stands at the latest it saw
		// (Timer.update), so the remaining wait does not shrink until the
		// clock catches up, and a wait of a few nanoseconds would re-arm
		// itself a billion times a second (fuzz seed 54977: b-1's clock set
		// back 7.5 s, 1 ns short of its heartbeat).
		w = time.Millisecond
	}
	return w
}

// Outcome tells the caller what a response or failure asks of it.
type Outcome struct {
	// Rediscover: find the group coordinator again (FindCoordinator)
	// before the next heartbeat.
	Rediscover bool
}

func (m *Manager) takeOutstanding(req *proto.ConsumerGroupHeartbeatRequest) (outstanding, bool) {
	for i, o := range m.outstanding {
		if o.req == req {
			m.outstanding = slices.Delete(m.outstanding, i, i+1)
			return o, true
		}
	}
	return outstanding{}, false
}

// OnResponse handles the response to req, a request Heartbeat returned.
// A response to a request the manager does not wait for (already failed,
// or unknown) is ignored.
func (m *Manager) OnResponse(now time.Duration, req *proto.ConsumerGroupHeartbeatRequest, resp *proto.ConsumerGroupHeartbeatResponse) Outcome {
	o, ok := m.takeOutstanding(req)
	if !ok || o.ignore {
		return Outcome{}
	}
	if resp.Error == proto.None {
		m.hb.updateInterval(now, resp.HeartbeatInterval)
		m.onSuccessfulAttempt(now)
		m.onHeartbeatSuccess(resp)
		m.maybeReconcile()
		return Outcome{}
	}
	return m.onErrorResponse(now, resp)
}

// onErrorResponse is AbstractHeartbeatRequestManager.onErrorResponse with
// ConsumerHeartbeatRequestManager.handleSpecificError.
func (m *Manager) onErrorResponse(now time.Duration, resp *proto.ConsumerGroupHeartbeatResponse) Outcome {
	var out Outcome
	m.sent.reset()
	m.onFailedAttempt(now)
	switch resp.Error {
	case proto.NotCoordinator, proto.CoordinatorNotAvailable:
		// Rediscover, then heartbeat at once (no backoff).
		out.Rediscover = true
		m.resetRequestState()
	case proto.CoordinatorLoadInProgress:
		// Retry after the backoff.
	case proto.FencedMemberEpoch, proto.UnknownMemberID:
		m.transitionToFenced()
		// Rejoin as soon as the partitions are released.
		m.resetRequestState()
	default:
		// INVALID_REQUEST, GROUP_MAX_SIZE_REACHED, UNSUPPORTED_ASSIGNOR,
		// UNRELEASED_INSTANCE_ID, FENCED_INSTANCE_ID, and any error the
		// client does not know (GROUP_ID_NOT_FOUND included) are fatal.
		m.transitionToFatal(resp.Error, resp.ErrorMessage)
	}
	m.onHeartbeatFailure()
	return out
}

// OnFailure handles req failing without a response (request timeout,
// disconnection): retried after the backoff, with a full request; the
// caller looks for the coordinator again. The caller must not deliver a
// response to req afterwards.
func (m *Manager) OnFailure(now time.Duration, req *proto.ConsumerGroupHeartbeatRequest) Outcome {
	o, ok := m.takeOutstanding(req)
	if !ok || o.ignore {
		return Outcome{}
	}
	m.onFailedAttempt(now)
	m.sent.reset()
	m.onHeartbeatFailure()
	return Outcome{Rediscover: true}
}

// onHeartbeatFailure: a leave heartbeat is sent once; whatever its answer,
// the leave is over.
func (m *Manager) onHeartbeatFailure() {
	if m.state == Unsubscribed {
		m.leaveInProgress = false
	}
}
