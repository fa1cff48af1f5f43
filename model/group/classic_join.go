package group

import (
	"encoding/base64"
	"encoding/binary"
	"time"

	"kafkasim/model/proto"
	"kafkasim/sim"
)

// JoinGroup (GroupMetadataManager.classicGroupJoin and what it calls): a
// new dynamic member is given a member id to join with (KIP-394); the join
// phase of a rebalance gathers the members, then hands every one the new
// generation, and the leader every member's subscription.

func (s *shard) joinGroup(from sim.NodeID, m *proto.JoinGroupRequest) {
	reply := func(r *proto.JoinGroupResponse) { r.CorrelationID = m.CorrelationID; s.c.send(from, r) }
	fail := func(err proto.ErrorCode) {
		reply(&proto.JoinGroupResponse{Error: err, GenerationID: -1, MemberID: m.MemberID})
	}
	if m.GroupID == "" {
		fail(proto.InvalidGroupID)
		return
	}
	if m.SessionTimeout < s.c.cfg.GroupMinSessionTimeout || m.SessionTimeout > s.c.cfg.GroupMaxSessionTimeout {
		fail(proto.InvalidSessionTimeout)
		return
	}
	if s.consumer != nil && s.consumer.HasGroup(m.GroupID) {
		// Kafka lets a classic member join a consumer group (KIP-848's
		// upgrade path); not modelled.
		fail(proto.InconsistentGroupProtocol)
		return
	}
	g, ok := s.groups[m.GroupID]
	if !ok {
		if m.MemberID != "" {
			fail(proto.UnknownMemberID)
			return
		}
		g = newClassicGroup(m.GroupID)
		s.groups[m.GroupID] = g
	}
	_, known := g.members[m.MemberID]
	if len(g.members) >= s.c.cfg.GroupMaxSize && !known && !g.pendingJoin[m.MemberID] {
		fail(proto.GroupMaxSizeReached)
		return
	}
	park := &parked{from: from, correlation: m.CorrelationID}
	if m.MemberID == "" {
		s.joinNewMember(g, m, park, fail)
	} else {
		s.joinExistingMember(g, m, park, reply, fail)
	}
	// The join phase of a rebalance that is not the group's first ends as
	// soon as every member has rejoined.
	if g.state == statePreparingRebalance && g.hasAllMembersJoined() && g.generation != 0 {
		s.completeJoin(g)
	}
}

// newMemberID is ClassicGroup.generateMemberId: the instance id or the
// client id, a dash, and a random Uuid (22 characters of base64url).
func (s *shard) newMemberID(clientID, instanceID string) string {
	var b [16]byte
	r := s.c.t.Rand()
	binary.BigEndian.PutUint64(b[:8], r.Uint64())
	binary.BigEndian.PutUint64(b[8:], r.Uint64())
	prefix := clientID
	if instanceID != "" {
		prefix = instanceID
	}
	return prefix + "-" + base64.RawURLEncoding.EncodeToString(b[:])
}

func (s *shard) joinNewMember(g *classicGroup, m *proto.JoinGroupRequest, park *parked, fail func(proto.ErrorCode)) {
	if g.state == stateDead {
		fail(proto.CoordinatorNotAvailable)
		return
	}
	if !g.supportsProtocols(m.ProtocolType, m.Protocols) {
		fail(proto.InconsistentGroupProtocol)
		return
	}
	id := s.newMemberID(m.ClientID, m.GroupInstanceID)
	if m.GroupInstanceID != "" {
		if old, ok := g.staticMembers[m.GroupInstanceID]; ok {
			s.updateStaticMember(g, m, old, id, park)
			return
		}
		s.addMember(g, m, id, park)
		return
	}
	// KIP-394: the member must come back with the id it is given; until
	// then it is pending, and expires after its session timeout.
	g.pendingJoin[id] = true
	s.schedule(heartbeatKey(g.id, id), m.SessionTimeout, func() { s.expireHeartbeat(g.id, id) })
	s.c.send(park.from, &proto.JoinGroupResponse{CorrelationID: m.CorrelationID, Error: proto.MemberIDRequired, GenerationID: -1, MemberID: id})
}

func (s *shard) joinExistingMember(g *classicGroup, m *proto.JoinGroupRequest, park *parked, reply func(*proto.JoinGroupResponse), fail func(proto.ErrorCode)) {
	switch {
	case g.state == stateDead:
		fail(proto.CoordinatorNotAvailable)
		return
	case !g.supportsProtocols(m.ProtocolType, m.Protocols):
		fail(proto.InconsistentGroupProtocol)
		return
	case g.pendingJoin[m.MemberID]:
		s.addMember(g, m, m.MemberID, park)
		return
	}
	if err := validateExistingMember(g, m.MemberID, m.GroupInstanceID); err != proto.None {
		fail(err)
		return
	}
	member := g.members[m.MemberID]
	current := func() {
		r := &proto.JoinGroupResponse{GenerationID: g.generation, ProtocolType: g.protocolType, ProtocolName: g.protocolName,
			Leader: g.leader, MemberID: member.id}
		if g.leader == member.id {
			r.Members = g.currentMembers()
		}
		reply(r)
	}
	switch g.state {
	case statePreparingRebalance:
		s.updateMemberThenRebalance(g, member, m, park)
	case stateCompletingRebalance:
		if member.matches(m.Protocols) {
			current() // it missed its JoinGroup answer
		} else {
			s.updateMemberThenRebalance(g, member, m, park)
		}
	case stateStable:
		if g.leader == member.id || !member.matches(m.Protocols) {
			// A leader's JoinGroup forces a rebalance (its way to
			// reassign on a metadata change), as does new metadata.
			s.updateMemberThenRebalance(g, member, m, park)
		} else {
			current()
		}
	default:
		fail(proto.UnknownMemberID)
	}
}

// validateExistingMember is GroupMetadataManager.validateExistingMember.
func validateExistingMember(g *classicGroup, memberID, instanceID string) proto.ErrorCode {
	if instanceID == "" {
		if _, ok := g.members[memberID]; !ok {
			return proto.UnknownMemberID
		}
		return proto.None
	}
	existing, ok := g.staticMembers[instanceID]
	if !ok {
		return proto.UnknownMemberID
	}
	if existing != memberID {
		return proto.FencedInstanceID
	}
	return proto.None
}

// addMember is addMemberThenRebalanceOrCompleteJoin.
func (s *shard) addMember(g *classicGroup, m *proto.JoinGroupRequest, id string, park *parked) {
	member := &classicMember{id: id, instanceID: m.GroupInstanceID, clientID: m.ClientID, rebalanceTimeout: m.RebalanceTimeout,
		sessionTimeout: m.SessionTimeout, protocolType: m.ProtocolType, protocols: m.Protocols, awaitingJoin: park, isNew: true}
	if g.state == statePreparingRebalance && g.previous == stateEmpty {
		g.newMemberAdded = true // the initial rebalance may wait longer
	}
	g.add(member)
	// A new member's parked JoinGroup expires after
	// classicGroupNewMemberJoinTimeoutMs, not its session timeout: it has
	// no member id to heartbeat with yet.
	s.rescheduleHeartbeat(g, member, classicGroupNewMemberJoinTimeout)
	s.maybePrepareRebalanceOrCompleteJoin(g)
}

func (s *shard) updateMemberThenRebalance(g *classicGroup, member *classicMember, m *proto.JoinGroupRequest, park *parked) {
	g.updateMember(member, m.Protocols, m.RebalanceTimeout, m.SessionTimeout, park)
	s.maybePrepareRebalanceOrCompleteJoin(g)
}

// updateStaticMember is updateStaticMemberThenRebalanceOrCompleteJoin: a
// known instance rejoining with a new member id replaces its old member
// (whose parked requests are answered FENCED_INSTANCE_ID). In a Stable
// group whose protocol would not change, it gets its old assignment back
// without a rebalance once the group's metadata with its new id is
// written.
func (s *shard) updateStaticMember(g *classicGroup, m *proto.JoinGroupRequest, oldID, newID string, park *parked) {
	currentLeader := g.leader
	member := s.replaceStaticMember(g, m.GroupInstanceID, oldID, newID)
	s.rescheduleHeartbeat(g, member, member.sessionTimeout)
	oldRebalance, oldSession, oldProtocols := member.rebalanceTimeout, member.sessionTimeout, member.protocols
	g.updateMember(member, m.Protocols, m.RebalanceTimeout, m.SessionTimeout, park)
	switch g.state {
	case stateStable:
		if g.protocolName != selectProtocol(g.allMembers()) {
			s.maybePrepareRebalanceOrCompleteJoin(g)
			return
		}
		assignment := map[string][]proto.TopicPartition{}
		for _, x := range g.allMembers() {
			assignment[x.id] = x.assignment
		}
		generation := g.generation
		s.write([]shardRecord{groupRecord(g, assignment)}, false, func(err proto.ErrorCode) {
			if err != proto.None {
				// Put the old member id back: the new one was never stored.
				g.updateMember(member, oldProtocols, oldRebalance, oldSession, nil)
				// Kafka reverts whatever the group became meanwhile: a
				// rebalance may have handed the new id out in a later
				// generation, whose member replaceStaticMember then
				// fences (FENCED_INSTANCE_ID to its parked SyncGroup).
				if _, still := g.members[newID]; still {
					old := s.replaceStaticMember(g, m.GroupInstanceID, newID, oldID)
					s.rescheduleHeartbeat(g, old, old.sessionTimeout)
					s.auditReverted(g.id, m.GroupInstanceID, newID, oldID)
				}
				if !park.answered {
					park.answered = true
					s.c.send(park.from, &proto.JoinGroupResponse{CorrelationID: park.correlation, Error: err, GenerationID: generation,
						ProtocolType: g.protocolType, ProtocolName: g.protocolName, Leader: currentLeader})
				}
				return
			}
			isLeader := g.leader == newID
			r := &proto.JoinGroupResponse{CorrelationID: park.correlation, GenerationID: g.generation, ProtocolType: g.protocolType,
				ProtocolName: g.protocolName, Leader: g.leader, MemberID: newID, SkipAssignment: isLeader}
			if isLeader {
				r.Members = g.currentMembers()
			}
			s.completeJoinFuture(g, member, r)
		})
	case stateCompletingRebalance:
		// The leader may already have the old member id: rebalance.
		s.prepareRebalance(g)
	default:
		s.maybeCompleteJoinPhase(g)
	}
}

// replaceStaticMember is ClassicGroup.replaceStaticMember.
func (s *shard) replaceStaticMember(g *classicGroup, instanceID, oldID, newID string) *classicMember {
	old := g.members[oldID]
	delete(g.members, oldID)
	s.completeJoinFuture(g, old, &proto.JoinGroupResponse{Error: proto.FencedInstanceID, GenerationID: -1, MemberID: oldID})
	s.completeSyncFuture(old, &proto.SyncGroupResponse{Error: proto.FencedInstanceID})
	s.cancel(heartbeatKey(g.id, oldID))
	nm := &classicMember{id: newID, instanceID: old.instanceID, clientID: old.clientID, rebalanceTimeout: old.rebalanceTimeout,
		sessionTimeout: old.sessionTimeout, protocolType: old.protocolType, protocols: old.protocols, assignment: old.assignment, joined: old.joined}
	g.members[newID] = nm
	if g.leader == oldID {
		g.leader = newID
	}
	g.staticMembers[instanceID] = newID
	return nm
}

// completeJoinFuture answers a member's parked JoinGroup.
func (s *shard) completeJoinFuture(g *classicGroup, m *classicMember, r *proto.JoinGroupResponse) bool {
	if m.awaitingJoin == nil {
		return false
	}
	r.CorrelationID = m.awaitingJoin.correlation
	m.awaitingJoin.answered = true
	s.c.send(m.awaitingJoin.from, r)
	m.awaitingJoin = nil
	g.numAwaitingJoin--
	return true
}

// completeSyncFuture answers a member's parked SyncGroup.
func (s *shard) completeSyncFuture(m *classicMember, r *proto.SyncGroupResponse) bool {
	if m.awaitingSync == nil {
		return false
	}
	r.CorrelationID = m.awaitingSync.correlation
	s.c.send(m.awaitingSync.from, r)
	m.awaitingSync = nil
	return true
}

func (s *shard) maybePrepareRebalanceOrCompleteJoin(g *classicGroup) {
	if g.canRebalance() {
		s.prepareRebalance(g)
		return
	}
	s.maybeCompleteJoinPhase(g)
}

func (s *shard) maybeCompleteJoinPhase(g *classicGroup) {
	if g.state == statePreparingRebalance && g.hasAllMembersJoined() && g.previous != stateEmpty {
		s.completeJoin(g)
	}
}

// prepareRebalance is GroupMetadataManager.prepareRebalance: members
// waiting for their assignment rejoin; an empty group's first join phase
// waits group.initial.rebalance.delay.ms (InitialDelayedJoin), others up
// to the rebalance timeout for every member to rejoin.
func (s *shard) prepareRebalance(g *classicGroup) {
	if g.state == stateCompletingRebalance {
		s.resetAndPropagateAssignmentWithError(g, proto.RebalanceInProgress)
	}
	s.cancel(syncKey(g.id))
	initial := g.state == stateEmpty
	if initial {
		delay := s.c.cfg.GroupInitialRebalanceDelay
		remaining := max(g.rebalanceTimeout()-delay, 0)
		s.schedule(joinKey(g.id), delay, func() { s.tryCompleteInitialRebalance(g.id, delay, remaining) })
	}
	g.transitionTo(statePreparingRebalance)
	if !initial {
		s.maybeCompleteJoinElseSchedule(g)
	}
}

func (s *shard) maybeCompleteJoinElseSchedule(g *classicGroup) {
	if g.hasAllMembersJoined() {
		s.completeJoin(g)
		return
	}
	s.schedule(joinKey(g.id), g.rebalanceTimeout(), func() { s.completeJoinByID(g.id) })
}

// tryCompleteInitialRebalance extends the initial delay while members keep
// joining, until the rebalance timeout is used up.
func (s *shard) tryCompleteInitialRebalance(groupID string, delay, remaining time.Duration) {
	g, ok := s.groups[groupID]
	if !ok {
		return
	}
	if g.newMemberAdded && remaining != 0 {
		g.newMemberAdded = false
		newDelay := min(s.c.cfg.GroupInitialRebalanceDelay, remaining)
		newRemaining := max(remaining-delay, 0)
		s.schedule(joinKey(groupID), newDelay, func() { s.tryCompleteInitialRebalance(groupID, newDelay, newRemaining) })
		return
	}
	s.completeJoin(g)
}

func (s *shard) completeJoinByID(groupID string) {
	if g, ok := s.groups[groupID]; ok {
		s.completeJoin(g)
	}
}

// completeJoin is completeClassicGroupJoin: dynamic members that did not
// rejoin are removed; the next generation starts and every member hears
// of it (the leader with the members' subscriptions), or, with no member
// left, the empty group's metadata is written.
func (s *shard) completeJoin(g *classicGroup) {
	s.cancel(joinKey(g.id))
	for _, m := range g.notYetRejoined() {
		if m.instanceID == "" {
			g.remove(m.id)
			s.cancel(heartbeatKey(g.id, m.id))
		}
	}
	if g.state == stateDead {
		return
	}
	if !g.maybeElectNewJoinedLeader() && len(g.members) > 0 {
		// Nobody rejoined: wait for the session timeouts to remove them.
		s.schedule(joinKey(g.id), g.rebalanceTimeout(), func() { s.completeJoinByID(g.id) })
		return
	}
	g.initNextGeneration()
	if g.state == stateEmpty {
		// A failed write is only logged in Kafka: there are no members.
		s.write([]shardRecord{groupRecord(g, nil)}, false, func(proto.ErrorCode) {})
		return
	}
	for _, m := range g.allMembers() {
		r := &proto.JoinGroupResponse{GenerationID: g.generation, ProtocolType: g.protocolType, ProtocolName: g.protocolName,
			Leader: g.leader, MemberID: m.id}
		if g.leader == m.id {
			r.Members = g.currentMembers()
		}
		s.completeJoinFuture(g, m, r)
		s.rescheduleHeartbeat(g, m, m.sessionTimeout)
		m.isNew = false
		g.pendingSync[m.id] = true
	}
	generation := g.generation
	s.schedule(syncKey(g.id), g.rebalanceTimeout(), func() { s.expirePendingSync(g.id, generation) })
}

// groupRecord is the group's GroupMetadata record.
func groupRecord(g *classicGroup, assignment map[string][]proto.TopicPartition) shardRecord {
	return shardRecord{Key: encodeGroupKey(g.id), Value: encodeGroupValue(g.groupValue(assignment))}
}

// Timer keys, as GroupMetadataManager's.
func heartbeatKey(group, member string) string { return "heartbeat-" + group + "-" + member }
func joinKey(group string) string              { return "join-" + group }
func syncKey(group string) string              { return "sync-" + group }
