package reader

import (
	"time"

	"kafkasim/history"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// Offsets: commits (ConsumerCoordinator.commitOffsetsSync, with its retries
// of retriable errors within default.api.timeout.ms, and the auto-commit's
// commitOffsetsAsync, tried once) and the committed offsets newly assigned
// partitions start from (ConsumerCoordinator.fetchCommittedOffsets,
// refreshCommittedOffsets).

// commitOffset is one partition's offset to commit: the next offset to
// read, with the leader epoch of the record before it (KIP-320).
type commitOffset struct {
	key partKey
	pos fetchPosition
}

// commitCall is a commit under way: one commitSync (retried until its
// deadline) or one commitAsync (tried once).
type commitCall struct {
	token    uint64
	offsets  []commitOffset
	sync     bool
	deadline time.Duration
	// maybe is set once an attempt may have reached the coordinator and
	// been applied (no answer, or an answer that does not rule it out).
	maybe bool
	corr  uint64 // the attempt in flight, 0 if none
	value history.Value
	then  func(ok bool)
	// ended is set once the commit's outcome is known (ok, with the
	// history type t); it completes once every commit invoked before it
	// has.
	ended, ok bool
	t         history.Type
}

// commitVerdict is what an OffsetCommit error makes of the commit
// (ConsumerCoordinator.OffsetCommitResponseHandler).
type commitVerdict struct {
	// retriable: commitSync tries again (after marking the coordinator
	// dead when coordinatorMoved).
	retriable, coordinatorMoved bool
	// maybeApplied: the coordinator may have written the offsets anyway
	// (its write timed out, or it lost the partition with the write
	// pending: Kafka's coordinator answers NOT_COORDINATOR then, yet the
	// record may be replicated).
	maybeApplied bool
}

// classifyCommitError decides a commit's fate from the error of its
// answer: retriable ones are retried by commitSync; the others refuse the
// commit (CommitFailedException for ILLEGAL_GENERATION and
// UNKNOWN_MEMBER_ID, RebalanceInProgressException, FencedInstanceIdException;
// a consumer-protocol member's StaleMemberEpochException). GROUP_ID_NOT_FOUND
// is no retriable error to the client (a KafkaException), but the
// coordinator answers it from OffsetMetadataManager.validateOffsetCommit,
// before it writes anything: the commit surely did not happen, which the
// history must say (fuzz seed 37714: an auto-commit a coordinator that had
// lost the group refused was taken as one that may have been applied).
func classifyCommitError(e proto.ErrorCode) commitVerdict {
	switch e {
	case proto.NotCoordinator, proto.CoordinatorNotAvailable:
		return commitVerdict{retriable: true, coordinatorMoved: true, maybeApplied: true}
	case proto.RequestTimedOut:
		return commitVerdict{retriable: true, maybeApplied: true}
	case proto.CoordinatorLoadInProgress, proto.UnknownTopicOrPartition:
		return commitVerdict{retriable: true}
	case proto.IllegalGeneration, proto.UnknownMemberID, proto.RebalanceInProgress, proto.FencedInstanceID,
		proto.InvalidCommitOffsetSize, proto.InvalidGroupID, proto.StaleMemberEpoch, proto.GroupIDNotFound:
		return commitVerdict{}
	}
	return commitVerdict{maybeApplied: true} // unexpected: a KafkaException, outcome unknown
}

// processedOffsets is what the application processed of partitions tps,
// in order (partitions it processed nothing of are left out).
func (r *Reader) processedOffsets(tps []proto.TopicPartition) []commitOffset {
	var out []commitOffset
	for _, tp := range tps {
		k := partKey{tp.Topic, tp.Partition}
		if pos, ok := r.group.processed[k]; ok {
			out = append(out, commitOffset{key: k, pos: pos})
		}
	}
	return out
}

// startCommit records a commit's invocation and returns it.
func (r *Reader) startCommit(offsets []commitOffset, sync bool, then func(bool)) *commitCall {
	g := r.group
	g.commitToken++
	c := &commitCall{token: g.commitToken, offsets: offsets, sync: sync, then: then,
		deadline: r.env.Now() + g.cfg.DefaultAPITimeout, value: history.NoValue()}
	x := c.value.X()
	x.Group, x.Generation, x.MemberID = g.cfg.GroupID, g.generation, g.memberID
	if g.generation == proto.NoGeneration && g.ownedGeneration != proto.NoGeneration {
		// Out of the group (the commit is refused before it is sent): the
		// history names the generation the member held its partitions in,
		// as its revoke does.
		x.Generation, x.MemberID = g.ownedGeneration, g.ownedMemberID
	}
	x.Offsets = make(map[string]int64, len(offsets))
	for _, o := range offsets {
		x.Offsets[o.key.String()] = o.pos.offset
	}
	if r.rec != nil {
		r.hist.Invoke(history.FCommit, &c.value)
	}
	g.commitsOpen = append(g.commitsOpen, c)
	return c
}

// commitSync commits offsets, waiting (then runs at the end, told whether
// the commit succeeded). Nothing to commit completes at once, unrecorded,
// as in Kafka.
func (r *Reader) commitSync(offsets []commitOffset, then func(ok bool)) {
	if len(offsets) == 0 {
		then(true)
		return
	}
	c := r.startCommit(offsets, true, then)
	r.group.syncCommit = c
	r.commitAttempt(c)
}

// commitAsync is the auto-commit's commitOffsetsAsync: one attempt.
func (r *Reader) commitAsync(offsets []commitOffset) {
	if len(offsets) == 0 {
		return
	}
	r.commitAttempt(r.startCommit(offsets, false, nil))
}

// commitAttempt sends the commit, unless the member is not in a stable
// generation: Kafka's sendOffsetCommitRequest fails it at once then
// (RebalanceInProgressException during a rebalance, CommitFailedException
// outside the group, as after the poll timer expired).
func (r *Reader) commitAttempt(c *commitCall) {
	g := r.group
	switch {
	case g.state == preparingRebalance || g.state == completingRebalance:
		r.endCommit(c, false, "RebalanceInProgressException: the member is rebalancing")
		return
	case g.state != stable:
		r.endCommit(c, false, "CommitFailedException: the member is not part of an active group")
		return
	case !g.coordinatorKnown:
		r.lookupCoordinator()
		if !c.sync {
			r.endCommit(c, false, "RetriableCommitFailedException: coordinator unknown")
			return
		}
		r.env.After(g.cfg.RetryBackoff, gtimer{kind: gCommitRetry, token: c.token}) // or sooner: discovery resumes it
		return
	}
	parts := make([]proto.OffsetCommitPartition, 0, len(c.offsets))
	for _, o := range c.offsets {
		parts = append(parts, proto.OffsetCommitPartition{TopicPartition: proto.TopicPartition{Topic: o.key.topic, Partition: o.key.partition},
			CommittedOffset: o.pos.offset, CommittedLeaderEpoch: o.pos.offsetEpoch})
	}
	c.corr = r.sendGroup(g.coordinator, groupCall{api: apiOffsetCommit, commit: c}, g.cfg.RequestTimeout, func(corr uint64) sim.Message {
		return &proto.OffsetCommitRequest{CorrelationID: corr, GroupID: g.cfg.GroupID, GenerationIDOrMemberEpoch: g.generation,
			MemberID: g.memberID, GroupInstanceID: g.cfg.GroupInstanceID, Partitions: parts}
	})
}

// endCommit settles the commit — ok, fail when it surely did not happen,
// info when it may have — and completes it, in the history and by its
// continuation, once the commits invoked before it have completed.
func (r *Reader) endCommit(c *commitCall, ok bool, why string) {
	g := r.group
	c.corr = 0
	if g.syncCommit == c {
		g.syncCommit = nil
	}
	c.ended, c.ok, c.t = true, ok, history.OK
	if !ok {
		c.t = history.Fail
		if c.maybe {
			c.t = history.Info
		}
		c.value.Error = why
	}
	if !ok && !c.sync && classifyRetriable(why) {
		// ConsumerCoordinator.autoCommitOffsetsAsync: a retriable failure
		// retries after the backoff, not the whole interval.
		g.nextAutoCommit = r.env.Now() + g.cfg.RetryBackoff
	}
	r.completeCommitsInOrder()
}

// completeCommitsInOrder completes the settled commits at the head of those
// open, in invocation order. Kafka's client never completes a commit before
// one invoked earlier: a connection's answers complete its requests in the
// order they were sent (NetworkClient.handleCompletedReceives takes
// InFlightRequests.completeNext, and a reset fails them oldest first), so
// ConsumerCoordinator's completedOffsetCommits queue runs the callbacks in
// the order of the commits (KafkaConsumer.commitAsync: "corresponding commit
// callbacks are also invoked in the same order"), and commitSync returns
// only after the async commits before it completed. The simulated network
// can answer a later commit while an earlier one's request is lost behind a
// partition (TCP would hold the later one back), so the member holds the
// later completion until the earlier one ends (by its answer or its
// timeout). The history relies on it: a commit's completion is paired with
// its process's oldest open commit (docs/history.md).
func (r *Reader) completeCommitsInOrder() {
	g := r.group
	for len(g.commitsOpen) > 0 && g.commitsOpen[0].ended {
		c := g.commitsOpen[0]
		g.commitsOpen[0] = nil
		g.commitsOpen = g.commitsOpen[1:]
		if r.rec != nil {
			r.hist.Complete(c.t, history.FCommit, &c.value)
		}
		if c.then != nil {
			c.then(c.ok)
		}
	}
}

// classifyRetriable tells an auto-commit failure worth an early retry.
func classifyRetriable(why string) bool {
	return len(why) >= len("Retriable") && why[:len("Retriable")] == "Retriable"
}

func (r *Reader) handleOffsetCommit(m *proto.OffsetCommitResponse) {
	call, ok := r.takeGroupCall(m.CorrelationID)
	if !ok || call.commit == nil || call.commit.corr != m.CorrelationID {
		return
	}
	c := call.commit
	c.corr = 0
	err := proto.None
	for _, p := range m.Partitions {
		if p.Error != proto.None {
			err = p.Error
			break
		}
	}
	if err == proto.None {
		r.endCommit(c, true, "")
		return
	}
	v := classifyCommitError(err)
	if v.maybeApplied {
		c.maybe = true
	}
	if v.coordinatorMoved {
		r.markCoordinatorUnknown("OffsetCommit: " + err.String())
	}
	if v.retriable {
		if !c.sync {
			r.endCommit(c, false, "RetriableCommitFailedException: "+err.String())
			return
		}
		r.retrySyncCommitLater(c, err.String())
		return
	}
	switch {
	case r.group.consumer != nil:
		// A consumer-protocol member's membership changes only by its
		// heartbeats (CommitRequestManager fails the commit and no more).
	case err == proto.UnknownMemberID || err == proto.IllegalGeneration:
		if r.generationUnchanged(call) {
			r.resetStateAndRejoin("OffsetCommit: "+err.String(), err == proto.UnknownMemberID)
		}
	case err == proto.RebalanceInProgress:
		r.requestRejoin("OffsetCommit: REBALANCE_IN_PROGRESS")
	case err == proto.FencedInstanceID:
		r.failFenced("OffsetCommit")
	}
	r.endCommit(c, false, err.String())
}

// commitAttemptFailed handles an attempt that got no answer: it may have
// been applied.
func (r *Reader) commitAttemptFailed(corr uint64, c *commitCall) {
	if c == nil || c.corr != corr {
		return
	}
	c.corr = 0
	c.maybe = true
	if !c.sync {
		r.endCommit(c, false, "RetriableCommitFailedException: no answer")
		return
	}
	r.retrySyncCommitLater(c, "no answer")
}

// retrySyncCommitLater retries a commitSync after retry.backoff.ms, or ends
// it when that would pass its deadline (Kafka's TimeoutException).
func (r *Reader) retrySyncCommitLater(c *commitCall, why string) {
	g := r.group
	if r.env.Now()+g.cfg.RetryBackoff >= c.deadline {
		r.endCommit(c, false, "TimeoutException: "+why)
		return
	}
	r.env.After(g.cfg.RetryBackoff, gtimer{kind: gCommitRetry, token: c.token})
}

// retrySyncCommit is a commitSync's retry timer.
func (r *Reader) retrySyncCommit(token uint64) {
	c := r.group.syncCommit
	if c == nil || c.token != token || c.corr != 0 {
		return
	}
	if r.env.Now() >= c.deadline {
		r.endCommit(c, false, "TimeoutException: coordinator unknown")
		return
	}
	r.commitAttempt(c)
}

// resumeSyncCommit sends a commitSync waiting for the coordinator.
func (r *Reader) resumeSyncCommit() {
	if c := r.group.syncCommit; c != nil && c.corr == 0 {
		r.retrySyncCommit(c.token)
	}
}

// fetchCommittedIfNeeded asks the coordinator for the committed offsets of
// the partitions awaiting them (ConsumerCoordinator.
// initWithCommittedOffsetsIfNeeded), one OffsetFetch at a time; with
// read_committed it asks for stable offsets only (KIP-447).
func (r *Reader) fetchCommittedIfNeeded() {
	g := r.group
	if g.fetchingCommitted != 0 || r.env.Now() < g.fetchCommittedAt {
		return
	}
	var parts []proto.TopicPartition
	for _, p := range r.subs.parts {
		if p.initializing {
			parts = append(parts, proto.TopicPartition{Topic: p.key.topic, Partition: p.key.partition})
		}
	}
	if len(parts) == 0 {
		return
	}
	if !g.coordinatorKnown {
		r.lookupCoordinator()
		return
	}
	if r.rec != nil {
		v := history.NoValue()
		v.X().Group, v.X().Partitions = g.cfg.GroupID, tpStrings(parts)
		r.hist.Invoke(history.FFetchCommitted, &v)
	}
	// A consumer-protocol member in the group sends its member id and
	// epoch (OffsetFetch v9); the classic member sends neither. Both ask
	// for stable offsets whatever their isolation level
	// (ConsumerCoordinator.sendOffsetFetchRequest,
	// CommitRequestManager.OffsetFetchRequestState.toUnsentRequest:
	// requireStable is always true), so the coordinator answers from its
	// latest state once the log written before is committed, never from a
	// committed view that a new leader's high watermark holds back.
	memberID, epoch := "", proto.NoGeneration
	if g.consumer != nil && g.generation > 0 {
		memberID, epoch = g.memberID, g.generation
	}
	g.fetchingCommitted = r.sendGroup(g.coordinator, groupCall{api: apiOffsetFetch, parts: parts}, g.cfg.RequestTimeout, func(corr uint64) sim.Message {
		return &proto.OffsetFetchRequest{CorrelationID: corr, GroupID: g.cfg.GroupID, MemberID: memberID, MemberEpoch: epoch,
			Partitions: parts, RequireStable: true}
	})
}

// offsetFetchFailed ends an OffsetFetch that failed: a read, so it surely
// changed nothing; the partitions ask again after the backoff.
func (r *Reader) offsetFetchFailed(corr uint64, why string) {
	g := r.group
	if corr != g.fetchingCommitted {
		return
	}
	g.fetchingCommitted = 0
	g.fetchCommittedAt = r.env.Now() + g.cfg.RetryBackoff
	if r.rec != nil {
		v := history.NoValue()
		v.X().Group = g.cfg.GroupID
		v.Error = why
		r.hist.Complete(history.Fail, history.FFetchCommitted, &v)
	}
	r.env.After(g.cfg.RetryBackoff, gtimer{kind: gWake})
}

// handleOffsetFetch is ConsumerCoordinator.OffsetFetchResponseHandler with
// refreshCommittedOffsets: each partition still awaiting its offset starts
// at the committed one, validated against its leader epoch when it has one
// (KIP-320), or, with nothing committed, is reset by auto.offset.reset
// (positions.go).
func (r *Reader) handleOffsetFetch(m *proto.OffsetFetchResponse) {
	g := r.group
	if _, ok := r.takeGroupCall(m.CorrelationID); !ok || m.CorrelationID != g.fetchingCommitted {
		return
	}
	if m.Error != proto.None {
		if m.Error == proto.NotCoordinator || m.Error == proto.CoordinatorNotAvailable {
			r.markCoordinatorUnknown("OffsetFetch: " + m.Error.String())
		}
		r.offsetFetchFailed(m.CorrelationID, m.Error.String())
		return
	}
	for _, p := range m.Partitions {
		if p.Error == proto.UnstableOffsetCommit {
			r.offsetFetchFailed(m.CorrelationID, p.Error.String())
			return
		}
	}
	g.fetchingCommitted = 0
	offsets := map[string]int64{}
	for _, fp := range m.Partitions {
		if fp.Error != proto.None {
			continue // reset by auto.offset.reset below, as Kafka leaves it out
		}
		k := partKey{fp.Topic, fp.Partition}
		offsets[k.String()] = fp.CommittedOffset
		p := r.subs.assignedState(k)
		if p == nil || !p.initializing {
			continue
		}
		p.initializing = false
		if fp.CommittedOffset >= 0 {
			p.seek(fetchPosition{offset: fp.CommittedOffset, offsetEpoch: fp.CommittedLeaderEpoch}, sourceCommitted)
			p.buf = nil
			if p.offsetEpoch >= 0 && !r.cfg.NoEpochValidation {
				p.validating, p.validateAfter = true, 0
			}
		}
	}
	for _, p := range r.subs.parts {
		p.initializing = p.initializing && !answered(m, p.key)
	}
	if r.rec != nil {
		v := history.NoValue()
		v.X().Group, v.X().Offsets = g.cfg.GroupID, offsets
		r.hist.Complete(history.OK, history.FFetchCommitted, &v)
	}
	r.validate()
	r.resetPositions()
	r.fetchMissing()
}

// answered reports whether an OffsetFetch answer names partition k.
func answered(m *proto.OffsetFetchResponse, k partKey) bool {
	for _, fp := range m.Partitions {
		if fp.Topic == k.topic && fp.Partition == k.partition {
			return true
		}
	}
	return false
}
