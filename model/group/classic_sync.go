package group

import (
	"time"

	"kafkasim/model/proto"
	"kafkasim/sim"
)

// SyncGroup, Heartbeat, LeaveGroup and session expiry of classic groups
// (GroupMetadataManager.classicGroupSync, classicGroupHeartbeat,
// classicGroupLeave, expireClassicGroupMemberHeartbeat), and a classic
// group's load and unload.

func (s *shard) syncGroup(from sim.NodeID, m *proto.SyncGroupRequest) {
	reply := func(err proto.ErrorCode) {
		s.c.send(from, &proto.SyncGroupResponse{CorrelationID: m.CorrelationID, Error: err})
	}
	g, ok := s.groups[m.GroupID]
	if !ok {
		reply(proto.UnknownMemberID)
		return
	}
	if err := validateSyncGroup(g, m); err != proto.None {
		reply(err)
		return
	}
	switch g.state {
	case statePreparingRebalance:
		reply(proto.RebalanceInProgress)
	case stateCompletingRebalance:
		member := g.members[m.MemberID]
		member.awaitingSync = &parked{from: from, correlation: m.CorrelationID}
		delete(g.pendingSync, m.MemberID)
		if g.leader != m.MemberID {
			return // a follower waits for the leader's assignment
		}
		assignment := map[string][]proto.TopicPartition{}
		for _, a := range m.Assignments {
			assignment[a.MemberID] = a.Partitions
		}
		generation := g.generation
		// The assignment is stored before anyone hears of it.
		s.write([]shardRecord{groupRecord(g, assignment)}, false, func(err proto.ErrorCode) {
			if g.state != stateCompletingRebalance || g.generation != generation || s.groups[g.id] != g {
				return // the group moved on meanwhile
			}
			if err != proto.None {
				s.resetAndPropagateAssignmentWithError(g, err)
				s.maybePrepareRebalanceOrCompleteJoin(g)
				return
			}
			for _, x := range g.allMembers() {
				x.assignment = assignment[x.id]
			}
			s.propagateAssignment(g, proto.None)
			g.transitionTo(stateStable)
		})
	case stateStable:
		delete(g.pendingSync, m.MemberID)
		s.c.send(from, &proto.SyncGroupResponse{CorrelationID: m.CorrelationID, ProtocolType: g.protocolType,
			ProtocolName: g.protocolName, Partitions: g.members[m.MemberID].assignment})
	default:
		reply(proto.UnknownMemberID)
	}
}

// validateSyncGroup is GroupMetadataManager.validateSyncGroup.
func validateSyncGroup(g *classicGroup, m *proto.SyncGroupRequest) proto.ErrorCode {
	if g.state == stateDead {
		return proto.CoordinatorNotAvailable
	}
	if err := validateExistingMember(g, m.MemberID, m.GroupInstanceID); err != proto.None {
		return err
	}
	if m.GenerationID != g.generation {
		return proto.IllegalGeneration
	}
	if (m.ProtocolType != "" && m.ProtocolType != g.protocolType) || (m.ProtocolName != "" && m.ProtocolName != g.protocolName) {
		return proto.InconsistentGroupProtocol
	}
	return proto.None
}

// resetAndPropagateAssignmentWithError answers the parked SyncGroups with
// err and clears the assignment.
func (s *shard) resetAndPropagateAssignmentWithError(g *classicGroup, err proto.ErrorCode) {
	for _, m := range g.allMembers() {
		m.assignment = nil
	}
	s.propagateAssignment(g, err)
}

// propagateAssignment answers the parked SyncGroups; each member answered
// gets a new session timer (an expiry while it waited was ignored).
func (s *shard) propagateAssignment(g *classicGroup, err proto.ErrorCode) {
	for _, m := range g.allMembers() {
		r := &proto.SyncGroupResponse{Error: err, Partitions: m.assignment}
		if err == proto.None {
			r.ProtocolType, r.ProtocolName = g.protocolType, g.protocolName
		}
		if s.completeSyncFuture(m, r) {
			s.rescheduleHeartbeat(g, m, m.sessionTimeout)
		}
	}
}

// expirePendingSync removes the members that did not send SyncGroup
// within the rebalance timeout, and rebalances.
func (s *shard) expirePendingSync(groupID string, generation int32) {
	g, ok := s.groups[groupID]
	if !ok || g.generation != generation || (g.state != stateCompletingRebalance && g.state != stateStable) || len(g.pendingSync) == 0 {
		return
	}
	for _, m := range g.allMembers() {
		if g.pendingSync[m.id] {
			g.remove(m.id)
			s.cancel(heartbeatKey(g.id, m.id))
		}
	}
	s.prepareRebalance(g)
}

func (s *shard) heartbeat(from sim.NodeID, m *proto.HeartbeatRequest) {
	err := proto.None
	g, ok := s.groups[m.GroupID]
	switch {
	case !ok:
		err = proto.UnknownMemberID
	case g.state == stateDead:
		err = proto.CoordinatorNotAvailable
	default:
		if err = g.validateMember(m.MemberID, m.GroupInstanceID); err == proto.None && m.GenerationID != g.generation {
			err = proto.IllegalGeneration
		}
	}
	if err == proto.None {
		switch g.state {
		case stateEmpty:
			err = proto.UnknownMemberID
		case statePreparingRebalance:
			s.rescheduleHeartbeat(g, g.members[m.MemberID], g.members[m.MemberID].sessionTimeout)
			err = proto.RebalanceInProgress
		default:
			// A member may heartbeat from its JoinGroup answer on, before
			// its SyncGroup's.
			s.rescheduleHeartbeat(g, g.members[m.MemberID], g.members[m.MemberID].sessionTimeout)
		}
	}
	// A write operation with no records: answered once the writes before
	// it are committed.
	s.write(nil, false, func(werr proto.ErrorCode) {
		if werr != proto.None {
			err = werr
		}
		s.c.send(from, &proto.HeartbeatResponse{CorrelationID: m.CorrelationID, Error: err})
	})
}

// rescheduleHeartbeat (re)starts a member's session timer.
func (s *shard) rescheduleHeartbeat(g *classicGroup, m *classicMember, d time.Duration) {
	groupID, memberID := g.id, m.id
	s.schedule(heartbeatKey(groupID, memberID), d, func() { s.expireHeartbeat(groupID, memberID) })
}

// expireHeartbeat is expireClassicGroupMemberHeartbeat: a pending member
// is dropped; a member not waiting on a rebalance is removed and the group
// rebalances.
func (s *shard) expireHeartbeat(groupID, memberID string) {
	g, ok := s.groups[groupID]
	if !ok || g.state == stateDead {
		return
	}
	if g.pendingJoin[memberID] {
		g.remove(memberID)
		s.maybeCompleteJoinPhase(g)
		return
	}
	m, ok := g.members[memberID]
	if !ok || (!m.isNew && (m.awaitingJoin != nil || m.awaitingSync != nil)) {
		return
	}
	s.removeMemberAndUpdateGroup(g, m)
}

// removeMemberAndUpdateGroup is removeMemberAndUpdateClassicGroup.
func (s *shard) removeMemberAndUpdateGroup(g *classicGroup, m *classicMember) {
	s.completeJoinFuture(g, m, &proto.JoinGroupResponse{Error: proto.UnknownMemberID, GenerationID: -1})
	g.remove(m.id)
	switch {
	case g.state == stateStable || g.state == stateCompletingRebalance:
		s.maybePrepareRebalanceOrCompleteJoin(g)
	case g.state == statePreparingRebalance && g.hasAllMembersJoined():
		s.completeJoin(g)
	}
}

func (s *shard) leaveGroup(from sim.NodeID, m *proto.LeaveGroupRequest) {
	g, ok := s.groups[m.GroupID]
	if !ok {
		s.c.send(from, &proto.LeaveGroupResponse{CorrelationID: m.CorrelationID, Error: proto.UnknownMemberID})
		return
	}
	if g.state == stateDead {
		s.c.send(from, &proto.LeaveGroupResponse{CorrelationID: m.CorrelationID, Error: proto.CoordinatorNotAvailable})
		return
	}
	resp := &proto.LeaveGroupResponse{CorrelationID: m.CorrelationID}
	left := 0
	for _, lm := range m.Members {
		r := proto.LeaveGroupMemberResponse{MemberID: lm.MemberID, GroupInstanceID: lm.GroupInstanceID}
		switch {
		case lm.MemberID == "":
			// An administrative removal by instance id.
			if id, ok := g.staticMembers[lm.GroupInstanceID]; ok && lm.GroupInstanceID != "" {
				s.removeCurrentMember(g, id)
			} else {
				r.Error = proto.UnknownMemberID
			}
		case g.pendingJoin[lm.MemberID]:
			g.remove(lm.MemberID)
			s.cancel(heartbeatKey(g.id, lm.MemberID))
		default:
			if r.Error = g.validateMember(lm.MemberID, lm.GroupInstanceID); r.Error == proto.None {
				s.removeCurrentMember(g, lm.MemberID)
			}
		}
		if r.Error == proto.None {
			left++
		}
		resp.Members = append(resp.Members, r)
	}
	if left > 0 {
		switch g.state {
		case stateStable, stateCompletingRebalance:
			s.maybePrepareRebalanceOrCompleteJoin(g)
		case statePreparingRebalance:
			s.maybeCompleteJoinPhase(g)
		}
	}
	s.write(nil, false, func(err proto.ErrorCode) {
		if err != proto.None {
			resp = &proto.LeaveGroupResponse{CorrelationID: m.CorrelationID, Error: err}
		}
		s.c.send(from, resp)
	})
}

// removeCurrentMember is removeCurrentMemberFromClassicGroup.
func (s *shard) removeCurrentMember(g *classicGroup, id string) {
	m := g.members[id]
	s.cancel(heartbeatKey(g.id, id))
	s.completeJoinFuture(g, m, &proto.JoinGroupResponse{Error: proto.UnknownMemberID, GenerationID: -1})
	g.remove(id)
}

// replayGroupMetadata is GroupMetadataManager.replay for a GroupMetadata
// record: the group as its last stored generation left it, Empty or
// Stable; a tombstone deletes it. Kafka's operations do not replay the
// classic records they write (their CoordinatorResult says so): this runs
// at load only.
func (s *shard) replayGroupMetadata(d decodedRecord) {
	if d.Tombstone {
		delete(s.groups, d.Group)
		return
	}
	v := d.GroupVal
	g := newClassicGroup(d.Group)
	g.generation, g.protocolType, g.protocolName, g.leader = v.Generation, v.ProtocolType, v.Protocol, v.Leader
	if len(v.Members) > 0 {
		g.state = stateStable
	}
	for _, mv := range v.Members {
		m := &classicMember{id: mv.MemberID, instanceID: mv.GroupInstanceID, clientID: mv.ClientID, rebalanceTimeout: mv.RebalanceTimeout,
			sessionTimeout: mv.SessionTimeout, protocolType: v.ProtocolType, assignment: mv.Assignment,
			protocols: []proto.JoinGroupProtocol{{Name: v.Protocol, Subscription: mv.Subscription}}}
		if m.rebalanceTimeout < 0 {
			m.rebalanceTimeout = m.sessionTimeout
		}
		g.add(m)
	}
	g.leader = v.Leader
	s.groups[d.Group] = g
}

// unloadClassicGroup is onUnloaded for a classic group: it is Dead, and
// its parked requests are answered NOT_COORDINATOR.
func (s *shard) unloadClassicGroup(g *classicGroup) {
	prev := g.state
	g.transitionTo(stateDead)
	for _, m := range g.allMembers() {
		switch prev {
		case statePreparingRebalance:
			s.completeJoinFuture(g, m, &proto.JoinGroupResponse{Error: proto.NotCoordinator, GenerationID: -1, MemberID: m.id})
		case stateCompletingRebalance, stateStable:
			s.completeSyncFuture(m, &proto.SyncGroupResponse{Error: proto.NotCoordinator})
		}
	}
}
