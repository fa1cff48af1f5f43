package reader

import (
	"slices"
	"strconv"
	"time"

	"kafkasim/model/proto"
	"kafkasim/sim"
)

// The group membership of a classic member, after Kafka 4's
// AbstractCoordinator: coordinator discovery (FindCoordinator), JoinGroup
// and SyncGroup, the heartbeat thread with the poll timer, and LeaveGroup.
// Kafka runs the heartbeat on a thread of its own, which keeps the session
// alive while the application processes; here it is a timer of the member's
// (gHeartbeat) that fires whatever the application is doing. A paused
// process fires no timer, as a paused JVM runs no thread.

// groupAPI is which group request a call in flight is.
type groupAPI uint8

const (
	apiFindCoordinator groupAPI = iota
	apiJoinGroup
	apiSyncGroup
	apiHeartbeat
	apiLeaveGroup
	apiOffsetCommit
	apiOffsetFetch
	apiConsumerGroupHeartbeat
)

// groupCall is a group request in flight: what it is and the generation
// it was sent in (CoordinatorResponseHandler.sentGeneration), so that an
// answer to a generation the member left is not taken for the current one.
type groupCall struct {
	api        groupAPI
	generation int32
	memberID   string
	commit     *commitCall
	parts      []proto.TopicPartition // OffsetFetch: the partitions asked
	// hb is a ConsumerGroupHeartbeat's request, which its answer is fed
	// back with (consumerproto.go).
	hb *proto.ConsumerGroupHeartbeatRequest
	// to is the broker node the request went to.
	to sim.NodeID
}

// sendGroup sends a group request, keeps it with the reader's requests in
// flight, and arms its timeout (request.timeout.ms; a JoinGroup waits for
// the rebalance, as Kafka's sendJoinGroupRequest allows).
func (r *Reader) sendGroup(to sim.NodeID, call groupCall, timeout time.Duration, build func(corr uint64) sim.Message) uint64 {
	call.generation, call.memberID, call.to = r.group.generation, r.group.memberID, to
	r.corr++
	corr := r.corr
	r.requests.Add(corr, request{kind: requestGroup, call: &call})
	r.env.Send(to, build(corr))
	r.env.After(timeout, rtimer{kind: timerRequest, corr: corr})
	return corr
}

// takeGroupCall removes the group request corr from those in flight: an
// answer to one no longer held (timed out, or dropped with a coordinator
// marked dead) is ignored.
func (r *Reader) takeGroupCall(corr uint64) (*groupCall, bool) {
	req, ok := r.requests.Get(corr)
	if !ok || req.kind != requestGroup {
		return nil, false
	}
	r.requests.Remove(corr)
	return req.call, true
}

// generationUnchanged is CoordinatorResponseHandler.generationUnchanged.
func (r *Reader) generationUnchanged(c *groupCall) bool {
	return c.generation == r.group.generation && c.memberID == r.group.memberID
}

// lookupCoordinator sends FindCoordinator to a broker, one at a time
// (AbstractCoordinator.lookupCoordinator; Kafka picks the least loaded
// node, the reader goes round the brokers it knows).
func (r *Reader) lookupCoordinator() {
	g := r.group
	if g.coordinatorKnown || g.findCorr != 0 || r.env.Now() < g.findRetryAt || len(r.cfg.Brokers) == 0 {
		return
	}
	target := r.cfg.Brokers[r.sent()%len(r.cfg.Brokers)]
	if ids := r.brokerIDs(); len(ids) > 0 {
		target = r.brokers[ids[r.sent()%len(ids)]]
	}
	g.findCorr = r.sendGroup(target, groupCall{api: apiFindCoordinator}, g.cfg.RequestTimeout, func(corr uint64) sim.Message {
		return &proto.FindCoordinatorRequest{CorrelationID: corr, KeyType: proto.CoordinatorKeyGroup, Key: g.cfg.GroupID}
	})
}

func (r *Reader) handleFindCoordinator(m *proto.FindCoordinatorResponse) {
	g := r.group
	if _, ok := r.takeGroupCall(m.CorrelationID); !ok || m.CorrelationID != g.findCorr {
		return
	}
	g.findCorr = 0
	if m.Error != proto.None || m.Node == sim.NoNode {
		r.findCoordinatorFailed()
		return
	}
	g.coordinator, g.coordinatorKnown = m.Node, true
	g.lastHbReceived = r.env.Now() // Heartbeat.resetSessionTimeout
	r.env.Note("reader", r.cfg.Name+" discovered group coordinator "+strconv.Itoa(int(m.NodeID)))
	r.resumeSyncCommit()
	if g.consumer != nil {
		r.consumerHeartbeat()
	}
	r.wakePoll()
}

// findCoordinatorFailed retries discovery after retry.backoff.ms.
func (r *Reader) findCoordinatorFailed() {
	g := r.group
	g.findRetryAt = r.env.Now() + g.cfg.RetryBackoff
	r.env.After(g.cfg.RetryBackoff, gtimer{kind: gFindRetry})
}

// markCoordinatorUnknown forgets the coordinator (AbstractCoordinator.
// markCoordinatorUnknown). Kafka then disconnects from it, which fails every
// request in flight to it; so does the reader, and ignores their late
// answers. It keeps its other connections to that broker (Kafka's
// coordinator connection is a separate one).
func (r *Reader) markCoordinatorUnknown(why string) {
	g := r.group
	if !g.coordinatorKnown {
		return
	}
	g.coordinatorKnown = false
	r.env.Note("reader", r.cfg.Name+" group coordinator unknown: "+why)
	var dropped []uint64
	for corr, req := range r.requests.All() {
		if req.kind == requestGroup && req.call.api != apiFindCoordinator {
			dropped = append(dropped, corr)
		}
	}
	for _, corr := range dropped {
		if c, ok := r.takeGroupCall(corr); ok {
			r.groupCallFailed(corr, c)
		}
	}
	r.lookupCoordinator()
}

// groupRequestTimedOut handles a group request that got no answer within
// its timeout: Kafka's network client then disconnects the node, which
// marks the coordinator dead.
func (r *Reader) groupRequestTimedOut(corr uint64, c *groupCall) {
	if c.api == apiFindCoordinator {
		r.groupCallFailed(corr, c)
		return
	}
	r.groupCallFailed(corr, c)
	r.markCoordinatorUnknown("request timed out")
}

// groupDisconnected handles a reset connection: one to the coordinator
// marks it dead (CoordinatorResponseHandler.onFailure). A FindCoordinator
// in flight on it fails at once, as every request in flight on a
// connection Kafka's NetworkClient loses does (processDisconnection
// completes it disconnected, and the lookup's future raises the retriable
// DisconnectException): AbstractCoordinator.ensureCoordinatorReady backs
// off retry.backoff.ms and looks again, at another broker. One sent to a
// killed broker (its machine refuses the connection) is not waited for
// for request.timeout.ms: that left a member without a coordinator, and
// out of its group, for 30s (fuzz seed 26763).
func (r *Reader) groupDisconnected(peer sim.NodeID) {
	g := r.group
	if corr := g.findCorr; corr != 0 {
		if req, ok := r.requests.Get(corr); ok && req.kind == requestGroup && req.call.to == peer {
			if c, ok := r.takeGroupCall(corr); ok {
				r.groupCallFailed(corr, c)
			}
		}
	}
	if g.coordinatorKnown && peer == g.coordinator {
		r.markCoordinatorUnknown("disconnected")
	}
}

// groupCallFailed handles a group request that failed without an answer
// (a timeout or a disconnect): it may or may not have reached the
// coordinator.
func (r *Reader) groupCallFailed(corr uint64, c *groupCall) {
	g := r.group
	switch c.api {
	case apiFindCoordinator:
		if corr == g.findCorr {
			g.findCorr = 0
			r.findCoordinatorFailed()
		}
	case apiJoinGroup:
		if corr == g.joinCorr {
			g.joinCorr = 0
			r.requestRejoin("JoinGroup failed")
			r.retryJoinAfterBackoff()
		}
	case apiSyncGroup:
		if corr == g.syncCorr {
			g.syncCorr = 0
			r.requestRejoin("SyncGroup failed")
			r.retryJoinAfterBackoff()
		}
	case apiHeartbeat:
		if corr == g.hbCorr {
			g.hbCorr = 0
			r.failHeartbeat()
		}
	case apiOffsetCommit:
		r.commitAttemptFailed(corr, c.commit)
	case apiOffsetFetch:
		r.offsetFetchFailed(corr, "request failed without an answer")
	case apiConsumerGroupHeartbeat:
		r.consumerHeartbeatFailed(c)
	}
}

// requestRejoin is AbstractCoordinator.requestRejoin: the next poll joins.
func (r *Reader) requestRejoin(reason string) {
	g := r.group
	g.rejoinReason, g.rejoinNeeded = reason, true
	r.wakePoll()
}

// resetStateAndRejoin is AbstractCoordinator.resetStateAndRejoin: the
// member leaves its generation (and, when told, its member id); the next
// poll gives its partitions up as lost and joins again.
func (r *Reader) resetStateAndRejoin(reason string, resetMemberID bool) {
	g := r.group
	g.state = unjoined
	g.generation, g.protocol = proto.NoGeneration, ""
	if resetMemberID {
		g.memberID = ""
	}
	g.needsJoinPrepare = true
	r.requestRejoin(reason)
}

// retryJoinAfterBackoff lets the next join go after retry.backoff.ms.
func (r *Reader) retryJoinAfterBackoff() {
	g := r.group
	g.joinRetryAt = r.env.Now() + g.cfg.RetryBackoff
	r.env.After(g.cfg.RetryBackoff, gtimer{kind: gWake})
}

// fail ends the member: Kafka raises these errors to the application,
// which stops consuming.
func (r *Reader) fail(why string) {
	g := r.group
	if g.fatal != "" {
		return
	}
	g.fatal = why
	g.hbEnabled = false
	r.env.Note("reader", r.cfg.Name+" fatal group error: "+why)
}

// joinProtocols is the member's JoinGroup protocols: one per assignor, best
// first, each with the subscription (ConsumerCoordinator.metadata).
func (r *Reader) joinProtocols() []proto.JoinGroupProtocol {
	g := r.group
	topics := slices.Clone(r.cfg.Topics)
	slices.Sort(topics)
	sub := proto.ConsumerSubscription{Topics: topics, OwnedPartitions: r.ownedTPs(), Generation: g.generation}
	out := make([]proto.JoinGroupProtocol, 0, len(g.cfg.Assignors))
	for _, a := range g.cfg.Assignors {
		out = append(out, proto.JoinGroupProtocol{Name: a.Name(), Subscription: sub})
	}
	return out
}

// sendJoinGroup is AbstractCoordinator.initiateJoinGroup.
func (r *Reader) sendJoinGroup() {
	g := r.group
	g.state = preparingRebalance
	timeout := max(g.cfg.RequestTimeout, g.cfg.MaxPollInterval+5*time.Second) // JOIN_GROUP_TIMEOUT_LAPSE
	protocols := r.joinProtocols()
	g.joinCorr = r.sendGroup(g.coordinator, groupCall{api: apiJoinGroup}, timeout, func(corr uint64) sim.Message {
		return &proto.JoinGroupRequest{CorrelationID: corr, GroupID: g.cfg.GroupID, ClientID: g.cfg.ClientID, SessionTimeout: g.cfg.SessionTimeout,
			RebalanceTimeout: g.cfg.MaxPollInterval, MemberID: g.memberID, GroupInstanceID: g.cfg.GroupInstanceID,
			ProtocolType: "consumer", Protocols: protocols, Reason: g.rejoinReason}
	})
}

// handleJoinGroup is AbstractCoordinator.JoinGroupResponseHandler, with
// joinGroupIfNeeded's handling of its failures.
func (r *Reader) handleJoinGroup(m *proto.JoinGroupResponse) {
	g := r.group
	c, ok := r.takeGroupCall(m.CorrelationID)
	if !ok || m.CorrelationID != g.joinCorr {
		return
	}
	g.joinCorr = 0
	switch m.Error {
	case proto.None:
		if g.state != preparingRebalance {
			// Left the group since the join went (UnjoinedGroupException).
			r.requestRejoin("the member left the group while joining")
			return
		}
		g.state = completingRebalance
		g.generation, g.memberID, g.protocol = m.GenerationID, m.MemberID, m.ProtocolName
		g.joinedAt, g.joinedFrom = r.env.WorldTime(), g.coordinator
		r.enableHeartbeat()
		var assignments []proto.MemberAssignment
		if m.Leader == m.MemberID {
			var err string
			if assignments, err = r.onLeaderElected(m); err != "" {
				r.fail(err)
				return
			}
		}
		r.sendSyncGroup(assignments)
	case proto.CoordinatorLoadInProgress:
		r.requestRejoin("coordinator loading")
		r.retryJoinAfterBackoff()
	case proto.UnknownMemberID:
		if r.generationUnchanged(c) {
			r.resetStateAndRejoin("UNKNOWN_MEMBER_ID from JoinGroup", true)
		}
		r.requestRejoin("UNKNOWN_MEMBER_ID from JoinGroup")
	case proto.CoordinatorNotAvailable, proto.NotCoordinator:
		r.markCoordinatorUnknown("JoinGroup: " + m.Error.String())
		r.requestRejoin("coordinator moved")
		r.retryJoinAfterBackoff()
	case proto.FencedInstanceID:
		// JoinGroupResponseHandler: "we would not expect the instance id
		// gets fenced", so fatal whatever the generation.
		r.failFenced("JoinGroup")
	case proto.InconsistentGroupProtocol, proto.InvalidSessionTimeout, proto.InvalidGroupID,
		proto.GroupMaxSizeReached:
		r.fail("JoinGroup: " + m.Error.String())
	case proto.MemberIDRequired:
		// KIP-394: join again with the member id the coordinator gave.
		g.generation, g.memberID = proto.NoGeneration, m.MemberID
		r.requestRejoin("need to re-join with the given member-id")
	case proto.RebalanceInProgress, proto.IllegalGeneration:
		r.requestRejoin("JoinGroup: " + m.Error.String())
	default:
		r.requestRejoin("JoinGroup: " + m.Error.String())
		r.retryJoinAfterBackoff()
	}
}

// sendSyncGroup sends the leader's assignment (a follower's is empty).
func (r *Reader) sendSyncGroup(assignments []proto.MemberAssignment) {
	g := r.group
	g.syncCorr = r.sendGroup(g.coordinator, groupCall{api: apiSyncGroup}, g.cfg.RequestTimeout, func(corr uint64) sim.Message {
		return &proto.SyncGroupRequest{CorrelationID: corr, GroupID: g.cfg.GroupID, GenerationID: g.generation,
			MemberID: g.memberID, GroupInstanceID: g.cfg.GroupInstanceID, ProtocolType: "consumer",
			ProtocolName: g.protocol, Assignments: assignments}
	})
}

// handleSyncGroup is AbstractCoordinator.SyncGroupResponseHandler: the
// assignment waits for the application's next poll (onJoinComplete).
func (r *Reader) handleSyncGroup(m *proto.SyncGroupResponse) {
	g := r.group
	c, ok := r.takeGroupCall(m.CorrelationID)
	if !ok || m.CorrelationID != g.syncCorr {
		return
	}
	g.syncCorr = 0
	switch m.Error {
	case proto.None:
		if g.generation == proto.NoGeneration || g.state != completingRebalance || !r.generationUnchanged(c) {
			r.requestRejoin("generation reset before the SyncGroup answer")
			return
		}
		g.state, g.rejoinNeeded, g.rejoinReason = stable, false, ""
		parts := slices.Clone(m.Partitions)
		sortTPs(parts)
		g.synced = &syncedAssignment{generation: g.generation, memberID: g.memberID, partitions: parts}
		r.wakePoll()
	case proto.RebalanceInProgress:
		r.requestRejoin("SyncGroup: REBALANCE_IN_PROGRESS")
	case proto.FencedInstanceID:
		r.failFenced("SyncGroup")
	case proto.UnknownMemberID, proto.IllegalGeneration:
		if r.generationUnchanged(c) {
			r.resetStateAndRejoin("SyncGroup: "+m.Error.String(), m.Error == proto.UnknownMemberID)
		}
		r.requestRejoin("SyncGroup: " + m.Error.String())
	case proto.CoordinatorNotAvailable, proto.NotCoordinator:
		r.markCoordinatorUnknown("SyncGroup: " + m.Error.String())
		r.requestRejoin("coordinator moved")
		r.retryJoinAfterBackoff()
	default:
		r.requestRejoin("SyncGroup: " + m.Error.String())
		r.retryJoinAfterBackoff()
	}
}

// enableHeartbeat is HeartbeatThread.enable: the session, poll and
// heartbeat timers start over.
func (r *Reader) enableHeartbeat() {
	g := r.group
	now := r.env.Now()
	g.hbEnabled = true
	g.lastHbReceived, g.lastPoll = now, now
	g.nextHeartbeat = now + g.cfg.HeartbeatInterval
	r.armHeartbeat()
}

// armHeartbeat sets the heartbeat thread's next wake: the next heartbeat,
// or the poll timer's or the session's end, whichever comes first.
func (r *Reader) armHeartbeat() {
	g := r.group
	now := r.env.Now()
	wake := min(g.nextHeartbeat, g.lastPoll+g.cfg.MaxPollInterval, g.lastHbReceived+g.cfg.SessionTimeout)
	if wake <= now {
		wake = now + g.cfg.RetryBackoff
	}
	g.hbToken++
	r.env.After(wake-now, gtimer{kind: gHeartbeat, token: g.hbToken})
}

// heartbeatTick is one turn of HeartbeatThread.run.
func (r *Reader) heartbeatTick() {
	g := r.group
	if !g.hbEnabled || g.fatal != "" {
		return
	}
	if g.state.hasNotJoinedGroup() {
		g.hbEnabled = false
		return
	}
	now := r.env.Now()
	if r.polling {
		// The application is inside poll, whose loop keeps the poll
		// timer fresh (ConsumerCoordinator.poll: pollHeartbeat).
		g.lastPoll = now
	}
	switch {
	case !g.coordinatorKnown:
		r.lookupCoordinator()
		g.nextHeartbeat = max(g.nextHeartbeat, now+g.cfg.RetryBackoff)
	case now-g.lastHbReceived >= g.cfg.SessionTimeout:
		r.markCoordinatorUnknown("session timed out without receiving a heartbeat response")
		g.nextHeartbeat = max(g.nextHeartbeat, now+g.cfg.RetryBackoff)
	case now-g.lastPoll >= g.cfg.MaxPollInterval:
		r.env.Note("reader", r.cfg.Name+" consumer poll timeout has expired")
		r.maybeLeaveGroup("consumer poll timeout has expired.")
		return
	case now >= g.nextHeartbeat && g.hbCorr == 0:
		g.nextHeartbeat = now + g.cfg.HeartbeatInterval
		g.hbCorr = r.sendGroup(g.coordinator, groupCall{api: apiHeartbeat}, g.cfg.RequestTimeout, func(corr uint64) sim.Message {
			return &proto.HeartbeatRequest{CorrelationID: corr, GroupID: g.cfg.GroupID, GenerationID: g.generation,
				MemberID: g.memberID, GroupInstanceID: g.cfg.GroupInstanceID}
		})
	}
	if g.hbEnabled {
		r.armHeartbeat()
	}
}

// failHeartbeat is Heartbeat.failHeartbeat: try again after the backoff.
func (r *Reader) failHeartbeat() {
	g := r.group
	g.nextHeartbeat = r.env.Now() + g.cfg.RetryBackoff
	if g.hbEnabled {
		r.armHeartbeat()
	}
}

// handleHeartbeat is AbstractCoordinator.HeartbeatResponseHandler with the
// heartbeat thread's listener.
func (r *Reader) handleHeartbeat(m *proto.HeartbeatResponse) {
	g := r.group
	c, ok := r.takeGroupCall(m.CorrelationID)
	if !ok || m.CorrelationID != g.hbCorr {
		return
	}
	g.hbCorr = 0
	switch m.Error {
	case proto.None:
		g.lastHbReceived = r.env.Now()
	case proto.CoordinatorNotAvailable, proto.NotCoordinator:
		r.markCoordinatorUnknown("Heartbeat: " + m.Error.String())
		r.failHeartbeat()
	case proto.RebalanceInProgress:
		// The member keeps heartbeating through the rebalance, so that
		// the coordinator keeps it until the rebalance timeout.
		g.lastHbReceived = r.env.Now()
		if g.state == stable {
			r.requestRejoin("group is already rebalancing")
		}
	case proto.IllegalGeneration, proto.UnknownMemberID, proto.FencedInstanceID:
		if !r.generationUnchanged(c) {
			return // an answer for a generation the member already left
		}
		if m.Error == proto.FencedInstanceID {
			r.failFenced("Heartbeat")
			return
		}
		r.resetStateAndRejoin("Heartbeat: "+m.Error.String(), m.Error != proto.IllegalGeneration)
	default:
		r.failHeartbeat()
	}
}

// maybeLeaveGroup is AbstractCoordinator.maybeLeaveGroup: a dynamic member
// in a generation sends LeaveGroup (once, not retried); a static member
// never does — the coordinator expires it when its session times out.
// Either way the member drops its generation and member id and joins again
// at its next poll.
func (r *Reader) maybeLeaveGroup(reason string) (sent bool) {
	g := r.group
	if g.cfg.GroupInstanceID == "" && g.coordinatorKnown && g.state != unjoined && g.memberID != "" {
		sent = true
		memberID := g.memberID
		r.sendGroup(g.coordinator, groupCall{api: apiLeaveGroup}, g.cfg.RequestTimeout, func(corr uint64) sim.Message {
			return &proto.LeaveGroupRequest{CorrelationID: corr, GroupID: g.cfg.GroupID,
				Members: []proto.LeaveGroupMember{{MemberID: memberID, Reason: reason}}}
		})
	}
	r.resetStateAndRejoin(reason, true)
	g.hbEnabled = false
	return sent
}

func (r *Reader) handleLeaveGroup(m *proto.LeaveGroupResponse) {
	if _, ok := r.takeGroupCall(m.CorrelationID); ok && r.group.exitOnLeave { // best effort: the outcome changes nothing
		r.env.Exit()
	}
}

// deliverGroup hands a group answer to its handler.
func (r *Reader) deliverGroup(m sim.Message) {
	switch m := m.(type) {
	case *proto.FindCoordinatorResponse:
		r.handleFindCoordinator(m)
	case *proto.JoinGroupResponse:
		r.handleJoinGroup(m)
	case *proto.SyncGroupResponse:
		r.handleSyncGroup(m)
	case *proto.HeartbeatResponse:
		r.handleHeartbeat(m)
	case *proto.LeaveGroupResponse:
		r.handleLeaveGroup(m)
	case *proto.OffsetCommitResponse:
		r.handleOffsetCommit(m)
	case *proto.OffsetFetchResponse:
		r.handleOffsetFetch(m)
	case *proto.ConsumerGroupHeartbeatResponse:
		r.handleConsumerGroupHeartbeat(m)
	}
}

// fireGroup handles a group timer.
func (r *Reader) fireGroup(t gtimer) {
	g := r.group
	if g == nil {
		return
	}
	switch t.kind {
	case gHeartbeat:
		if t.token == g.hbToken {
			r.heartbeatTick()
		}
	case gFindRetry:
		if !g.coordinatorKnown {
			r.lookupCoordinator()
		}
	case gWake:
		r.wakePoll()
	case gProcessed:
		r.recordProcessed(t.token)
	case gCommitRetry:
		r.retrySyncCommit(t.token)
	case gConsumerHeartbeat:
		r.consumerHeartbeatDue(t.token)
	}
}
