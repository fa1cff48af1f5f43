package raft

import (
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// Deliver handles a raft message; it reports whether the message was one.
func (r *Raft) Deliver(from sim.NodeID, m sim.Message) bool {
	switch m := m.(type) {
	case *VoteRequest:
		r.handleVote(from, m)
	case *VoteResponse:
		r.handleVoteResponse(from, m)
	case *BeginQuorumEpochRequest:
		r.handleBeginQuorumEpoch(from, m)
	case *EndQuorumEpochRequest:
		r.handleEndQuorumEpoch(from, m)
	case *BeginQuorumEpochResponse:
		r.handleCommonResponse(m.Error, m.LeaderID, m.LeaderEpoch)
	case *EndQuorumEpochResponse:
		r.handleCommonResponse(m.Error, m.LeaderID, m.LeaderEpoch)
	case *FetchRequest:
		r.handleFetch(from, m)
	case *FetchResponse:
		r.handleFetchResponse(from, m)
	case *sim.Disconnected:
		if r.fetchInFlight && m.Peer == r.fetchTarget {
			r.fetchFailed()
		}
		return false // the node may track its own connections too
	default:
		return false
	}
	return true
}

// Fire handles a raft timer; it reports whether the timer was one.
func (r *Raft) Fire(t sim.Timer) bool {
	rt, ok := t.(Timer)
	if !ok {
		return false
	}
	if rt.gen != r.gen {
		return true // a timer of a role this replica has left
	}
	switch rt.kind {
	case timerElection:
		r.electionTimeout()
	case timerFetchRequest:
		if r.fetchInFlight {
			r.fetchFailed()
		}
	case timerFetchRetry:
		r.fetch()
	case timerVoteRetry:
		if r.role == Prospective || r.role == Candidate {
			r.requestVotes()
		}
	case timerCheckQuorum, timerBeginQuorum, timerParkedFetch:
		if r.ls != nil {
			r.ls.fire(rt)
		}
	}
	return true
}

func (r *Raft) electionTimeout() {
	switch r.role {
	case Unattached, Follower:
		if r.observer {
			// An observer that hears nothing from its leader looks for the
			// leader again through the voters.
			r.becomeUnattachedObserver()
			return
		}
		if !r.stopping {
			r.becomeProspective()
		}
	case Prospective:
		r.loseNomination()
	case Candidate:
		// Kafka 4.1+ (KAFKA-18345): a candidate that did not win waits out its
		// whole election timeout, then tries a pre-vote again.
		r.becomeProspective()
	case Resigned:
		if !r.stopping {
			r.becomeUnattached(r.epoch+1, sim.NoNode)
			r.becomeProspective()
		}
	}
}

// logUpToDate compares a candidate's log with ours: epoch first, then offset.
func (r *Raft) logUpToDate(lastEpoch int32, lastOffset int64) bool {
	mine, myEnd := r.log.LastEpoch(), r.log.EndOffset()
	return lastEpoch > mine || (lastEpoch == mine && lastOffset >= myEnd)
}

func (r *Raft) handleVote(from sim.NodeID, m *VoteRequest) {
	reply := func(err proto.ErrorCode, granted bool) {
		r.send(from, &VoteResponse{Error: err, LeaderID: r.leader, LeaderEpoch: r.epoch, Granted: granted, PreVote: m.PreVote})
	}
	if r.observer {
		reply(proto.InvalidRequest, false)
		return
	}
	if m.LastOffset < 0 || m.LastOffsetEpoch < 0 || (m.PreVote && m.LastOffsetEpoch > m.Epoch) || (!m.PreVote && m.LastOffsetEpoch >= m.Epoch) {
		reply(proto.InvalidRequest, false)
		return
	}
	if m.Epoch < r.epoch {
		reply(proto.FencedLeaderEpoch, false)
		return
	}
	if m.Epoch > r.epoch {
		// A higher epoch, even in a pre-vote, moves this voter to it.
		r.becomeUnattached(m.Epoch, sim.NoNode)
	}
	upToDate := r.logUpToDate(m.LastOffsetEpoch, m.LastOffset)
	granted := false
	switch r.role {
	case Unattached, Prospective:
		switch {
		case m.PreVote:
			granted = upToDate
		case r.votedFor != sim.NoNode:
			granted = r.votedFor == m.CandidateID
		case r.leader != sim.NoNode:
			granted = false
		default:
			granted = upToDate
		}
	case Follower:
		granted = m.PreVote && !r.hasFetchedFromLeader && upToDate
	case Candidate:
		granted = m.PreVote && upToDate
	case Leader, Resigned:
		granted = false
	}
	if granted && !m.PreVote && r.votedFor == sim.NoNode {
		r.votedFor = m.CandidateID
		r.persist() // the vote is durable before the answer leaves
		r.resetElectionTimer(r.randomElectionTimeout())
	}
	reply(proto.None, granted)
}

func (r *Raft) handleVoteResponse(from sim.NodeID, m *VoteResponse) {
	if r.handleCommonResponse(m.Error, m.LeaderID, m.LeaderEpoch) {
		return
	}
	if m.Error != proto.None || m.LeaderEpoch != r.epoch || r.votes == nil {
		return
	}
	if (r.role == Prospective) != m.PreVote || (r.role != Prospective && r.role != Candidate) {
		return
	}
	if _, seen := r.votes[from]; seen {
		return
	}
	r.votes[from] = m.Granted
	r.tally()
}

// handleCommonResponse applies what any response says about epochs and
// leaders. It reports whether the response is stale or moved this replica to
// another epoch, in which case the caller stops.
func (r *Raft) handleCommonResponse(err proto.ErrorCode, leader sim.NodeID, epoch int32) bool {
	if epoch < r.epoch || err == proto.UnknownLeaderEpoch {
		return true
	}
	if epoch > r.epoch {
		r.learn(epoch, leader)
		return true
	}
	if leader != sim.NoNode && leader != r.leader && leader != r.id && r.role != Leader {
		r.learn(epoch, leader)
		return true
	}
	return false
}

// learn moves to a newer epoch, or to a newly learned leader of this epoch.
func (r *Raft) learn(epoch int32, leader sim.NodeID) {
	if leader != sim.NoNode && leader != r.id {
		if r.role == Leader && epoch == r.epoch {
			return // two leaders in one epoch: the audit reports it
		}
		r.becomeFollower(epoch, leader)
		return
	}
	if epoch > r.epoch {
		if r.observer {
			r.epoch = epoch
			r.becomeUnattachedObserver()
			return
		}
		r.becomeUnattached(epoch, sim.NoNode)
	}
}

func (r *Raft) handleBeginQuorumEpoch(from sim.NodeID, m *BeginQuorumEpochRequest) {
	if m.Epoch < r.epoch {
		r.send(from, &BeginQuorumEpochResponse{Error: proto.FencedLeaderEpoch, LeaderID: r.leader, LeaderEpoch: r.epoch})
		return
	}
	if m.Epoch > r.epoch || r.leader != m.LeaderID {
		r.learn(m.Epoch, m.LeaderID)
	}
	r.send(from, &BeginQuorumEpochResponse{Error: proto.None, LeaderID: r.leader, LeaderEpoch: r.epoch})
}

func (r *Raft) handleEndQuorumEpoch(from sim.NodeID, m *EndQuorumEpochRequest) {
	if m.Epoch < r.epoch {
		r.send(from, &EndQuorumEpochResponse{Error: proto.FencedLeaderEpoch, LeaderID: r.leader, LeaderEpoch: r.epoch})
		return
	}
	if m.Epoch > r.epoch || (r.leader != m.LeaderID && m.LeaderID != r.id) {
		r.learn(m.Epoch, m.LeaderID)
	}
	if r.role == Follower && r.leader == m.LeaderID && !r.observer {
		// The resigned leader's preferred successors try first: the first at
		// once, the others after a backoff that grows with their position.
		pos := -1
		for i, s := range m.PreferredSuccessors {
			if s == r.id {
				pos = i
			}
		}
		backoff := r.cfg.ElectionBackoffMax
		if pos == 0 {
			backoff = 0
		} else if pos > 0 {
			n := len(m.PreferredSuccessors)
			backoff = min(r.cfg.ElectionBackoffMax, (r.cfg.ElectionBackoffMax>>(n-1))<<(pos-1))
		}
		r.resetElectionTimer(backoff)
	}
	r.send(from, &EndQuorumEpochResponse{Error: proto.None, LeaderID: r.leader, LeaderEpoch: r.epoch})
}
