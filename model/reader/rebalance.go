package reader

import (
	"maps"
	"slices"

	"kafkasim/history"
	"kafkasim/model/proto"
)

// A rebalance as the member's ConsumerCoordinator lives it: onJoinPrepare
// before a join (eager: everything owned is revoked; a member that lost its
// generation gives everything up as lost), the leader's assignment
// (onLeaderElected), and onJoinComplete after the sync (cooperative:
// partitions no longer assigned are revoked, and another rebalance follows
// so that their new owners get them). Both run in the application's poll,
// as Kafka's do; the application's rebalance listener commits what it
// processed of the partitions it gives up.

// ownedTPs is the partitions the member owns, in order.
func (r *Reader) ownedTPs() []proto.TopicPartition {
	out := make([]proto.TopicPartition, 0, len(r.subs.parts))
	for _, p := range r.subs.parts {
		out = append(out, proto.TopicPartition{Topic: p.key.topic, Partition: p.key.partition})
	}
	return out
}

// onJoinPrepare is ConsumerCoordinator.onJoinPrepare. It reports whether it
// is done; when a commit of the rebalance listener is under way it is not,
// and the commit's end finishes it and polls again.
func (r *Reader) onJoinPrepare() bool {
	g := r.group
	owned := r.ownedTPs()
	lost := g.generation == proto.NoGeneration || g.memberID == ""
	var giving []proto.TopicPartition
	if lost || !g.cooperative {
		// Lost (the generation was reset) or eager: give up everything.
		// Cooperative members keep what they own: their subscription
		// does not change here.
		giving = owned
	}
	done := func() {
		g.needsJoinPrepare, g.isLeader, g.assignmentSnapshot, g.skippedAssignment = false, false, nil, false
	}
	if len(giving) == 0 {
		done()
		return true
	}
	if lost && g.cfg.Processor != nil {
		// Streams' onPartitionsLost (TaskManager.handleLostAll) closes
		// the tasks dirty, aborting an exactly-once transaction, rather
		// than committing under the generation the member lost.
		r.loseToProcessor(giving, func() {
			r.revoke(giving)
			done()
		})
		return false
	}
	r.commitOnRevoke(giving, func() {
		r.revoke(giving)
		done()
	})
	return false
}

// commitOnRevoke is the application's onPartitionsRevoked (and
// onPartitionsLost, which by default calls it): once its workers are done
// with the partitions given up (quiesce, pool.go), it commits,
// synchronously, what it processed of them — with auto-commit, the
// consumer's own commit before a revocation. then runs once the commit
// ended, whatever its outcome (Kafka's callback catches the commit's
// exception); the poll it blocked starts again after.
func (r *Reader) commitOnRevoke(tps []proto.TopicPartition, then func()) {
	g := r.group
	g.blocked = true
	r.quiesce(tps, func(commit bool) {
		if g.cfg.Processor != nil {
			r.processorCommit(true, func() {
				then()
				g.blocked = false
				r.env.After(0, rtimer{kind: timerPoll})
			})
			return
		}
		var offsets []commitOffset
		if commit {
			offsets = r.processedOffsets(tps)
		}
		r.commitSync(offsets, func(bool) {
			then()
			g.blocked = false
			r.env.After(0, rtimer{kind: timerPoll})
		})
	})
}

// loseToProcessor is a stream processor's onPartitionsLost: once the batch
// polled is processed (quiesce), the processor closes its tasks dirty — an
// exactly-once one aborts its open transaction (Streams'
// StreamsRebalanceListener.onPartitionsLost, TaskManager.handleLostAll) —
// then runs; the poll waits for it, as for a revocation's commit, and
// starts again after.
func (r *Reader) loseToProcessor(tps []proto.TopicPartition, then func()) {
	g := r.group
	g.blocked = true
	r.quiesce(tps, func(bool) {
		g.cfg.Processor.Lost(func() {
			then()
			g.blocked = false
			r.env.After(0, rtimer{kind: timerPoll})
		})
	})
}

// revoke takes partitions away: the history's revoke, with the generation
// and member id they were assigned in, then the fetch state and what was
// buffered for them go (Kafka's fetch buffer drops them).
func (r *Reader) revoke(tps []proto.TopicPartition) {
	g := r.group
	if len(tps) == 0 {
		return
	}
	r.unassign(tps)
	if a := g.cfg.Audit; a != nil {
		a.PartitionsRevoked(r.env.ID(), g.cfg.GroupID, tps)
	}
}

// unassign is revoke without the audit: the history's revoke, then the
// fetch state and what was buffered go.
func (r *Reader) unassign(tps []proto.TopicPartition) {
	g := r.group
	if r.rec != nil {
		v := history.NoValue()
		x := v.X()
		x.Group, x.Partitions, x.Generation, x.MemberID = g.cfg.GroupID, tpStrings(tps), g.ownedGeneration, g.ownedMemberID
		r.hist.Invoke(history.FRevoke, &v)
		r.hist.Complete(history.OK, history.FRevoke, &v)
	}
	for _, tp := range tps {
		k := partKey{tp.Topic, tp.Partition}
		r.subs.unassign(k)
		delete(g.processed, k)
	}
}

// onJoinComplete is ConsumerCoordinator.onJoinComplete: it applies the
// assignment SyncGroup returned. It reports whether it is done (a
// cooperative revocation's commit may be under way).
func (r *Reader) onJoinComplete() bool {
	g := r.group
	s := g.synced
	g.synced = nil
	if s.generation != g.generation || s.memberID != g.memberID || g.state != stable {
		// The heartbeat thread reset the generation since the sync.
		r.resetStateAndRejoin("the generation was reset before the assignment was applied", true)
		return true
	}
	added, revoked := assignmentChange(r.ownedTPs(), s.partitions)
	finish := func() {
		r.addPartitions(added)
		g.ownedGeneration, g.ownedMemberID = s.generation, s.memberID
		g.needsJoinPrepare = true // the next join prepares again
		g.nextAutoCommit = r.env.Now() + g.cfg.AutoCommitInterval
		g.firstAutoCommit = g.nextAutoCommit
		r.recordAssign()
	}
	if len(revoked) == 0 {
		finish()
		return true
	}
	// Cooperative (an eager member owns nothing by now): revoke what is
	// no longer assigned, then rebalance again so that it can be given
	// to its new owner.
	r.commitOnRevoke(revoked, func() {
		r.revoke(revoked)
		g.rejoinReason, g.rejoinNeeded = "need to revoke partitions and re-join", true
		finish()
	})
	return false
}

// addPartitions assigns partitions the member did not own: with their
// leader from the metadata, awaiting their committed offset (Kafka's
// INITIALIZING fetch state).
func (r *Reader) addPartitions(tps []proto.TopicPartition) {
	g := r.group
	for _, tp := range tps {
		k := partKey{tp.Topic, tp.Partition}
		if r.subs.assignedState(k) != nil {
			continue
		}
		p := r.subs.assign(k)
		p.initializing = true
		if li, ok := g.leaders[k]; ok {
			p.updateLeader(li.leader, li.epoch, false)
		}
	}
}

// recordAssign records the assignment applied: every partition owned, in
// the history and to the god view's audit.
func (r *Reader) recordAssign() {
	g := r.group
	if a := g.cfg.Audit; a != nil {
		a.PartitionsAssigned(r.env.ID(), g.cfg.GroupID, g.ownedMemberID, g.ownedGeneration, !g.cfg.consumerProtocol(), r.ownedTPs())
	}
	r.recordAssignHistory()
}

// recordAssignHistory is recordAssign's history operation alone.
func (r *Reader) recordAssignHistory() {
	g := r.group
	if r.rec == nil {
		return
	}
	v := history.NoValue()
	x := v.X()
	x.Group, x.Partitions, x.Generation, x.MemberID = g.cfg.GroupID, tpStrings(r.ownedTPs()), g.ownedGeneration, g.ownedMemberID
	if x.Partitions == nil {
		x.Partitions = []string{}
	}
	r.hist.Invoke(history.FAssign, &v)
	r.hist.Complete(history.OK, history.FAssign, &v)
}

// onLeaderElected is ConsumerCoordinator.onLeaderElected: the leader runs
// the chosen assignor over every member's subscription, with the partition
// counts its metadata has, and remembers the counts (a change calls for
// another rebalance). A static leader that rejoins a stable group is told
// to skip the assignment (KIP-814). It returns an error for a protocol the
// member has no assignor for.
func (r *Reader) onLeaderElected(m *proto.JoinGroupResponse) ([]proto.MemberAssignment, string) {
	g := r.group
	if m.SkipAssignment {
		// The returning static leader (KIP-814) keeps the group's
		// assignment but is still its leader: it watches the partition
		// counts from now on, as ConsumerCoordinator.onLeaderElected sets
		// isLeader and assignmentSnapshot = metadataSnapshot before it
		// returns no assignment. The snapshot is the metadata of now, not
		// the one the kept assignment was made from: partitions added
		// while the leader was away call for no rebalance (Kafka's too).
		g.isLeader, g.assignmentSnapshot, g.skippedAssignment = true, r.subscribedCounts(m.Members), true
		return nil, ""
	}
	var assignor GroupAssignor
	for _, a := range g.cfg.Assignors {
		if a.Name() == m.ProtocolName {
			assignor = a
		}
	}
	if assignor == nil {
		return nil, "coordinator selected invalid assignment protocol: " + m.ProtocolName
	}
	members := slices.Clone(m.Members)
	slices.SortFunc(members, func(a, b proto.JoinGroupMember) int {
		switch {
		case a.MemberID < b.MemberID:
			return -1
		case a.MemberID > b.MemberID:
			return 1
		}
		return 0
	})
	counts := r.subscribedCounts(members)
	g.isLeader, g.assignmentSnapshot, g.skippedAssignment = true, maps.Clone(counts), false
	assigned := assignor.Assign(counts, members)
	out := make([]proto.MemberAssignment, 0, len(members))
	for _, mem := range members {
		parts := slices.Clone(assigned[mem.MemberID])
		sortTPs(parts)
		out = append(out, proto.MemberAssignment{MemberID: mem.MemberID, Partitions: parts})
	}
	return out, ""
}

// subscribedCounts is the partition count the metadata has of each topic
// the members subscribe to.
func (r *Reader) subscribedCounts(members []proto.JoinGroupMember) map[string]int32 {
	counts := map[string]int32{}
	for _, mem := range members {
		for _, t := range mem.Subscription.Topics {
			if n, ok := r.group.partitionCounts[t]; ok {
				counts[t] = n
			}
		}
	}
	return counts
}

// learnTopic takes a topic's partitions from the metadata: their count and
// leaders, for the leader's assignment and for partitions assigned later.
func (r *Reader) learnTopic(t proto.MetadataTopic) {
	g := r.group
	g.partitionCounts[t.Name] = int32(len(t.Partitions))
	for _, mp := range t.Partitions {
		k := partKey{t.Name, mp.Partition}
		if li, ok := g.leaders[k]; !ok || mp.LeaderEpoch >= li.epoch {
			g.leaders[k] = leaderInfo{leader: mp.Leader, epoch: mp.LeaderEpoch}
		}
	}
}

// checkAssignmentSnapshot is the leader's half of ConsumerCoordinator.
// rejoinNeededOrPending: partition counts that changed since it assigned
// call for a rebalance.
func (r *Reader) checkAssignmentSnapshot() {
	g := r.group
	if !g.isLeader || g.assignmentSnapshot == nil || g.rejoinNeeded {
		return
	}
	for _, t := range r.cfg.Topics {
		if g.assignmentSnapshot[t] != g.partitionCounts[t] {
			r.requestRejoin("cached metadata has changed")
			return
		}
	}
}
