package raft

import (
	"fmt"

	"kafkasim/model/proto"
	"kafkasim/sim"
)

// The fetcher's side: followers and observers pull the log from the leader,
// truncate where it diverges, and learn the high watermark from it.

// fetch sends the next fetch, to the leader, or (an observer that knows no
// leader) to the next voter in turn, which will name the leader.
func (r *Raft) fetch() {
	if r.fetchInFlight {
		return
	}
	target := r.leader
	if target == sim.NoNode || target == r.id {
		if !r.observer {
			return // a voter without a leader waits for an election
		}
		target = r.cfg.Voters[r.bootstrapNext%len(r.cfg.Voters)]
		r.bootstrapNext++
	}
	r.fetchInFlight = true
	r.fetchTarget = target
	r.fetchOffset = r.log.EndOffset()
	r.send(target, &FetchRequest{ReplicaID: r.id, CurrentLeaderEpoch: r.epoch, FetchOffset: r.fetchOffset,
		LastFetchedEpoch: r.log.LastEpoch(), HighWatermark: r.hw, Observer: r.observer})
	r.fetchTimer = r.after(r.cfg.RequestTimeout+r.cfg.FetchMaxWait, timerFetchRequest, sim.NoNode)
}

func (r *Raft) fetchFailed() {
	r.fetchInFlight = false
	r.env.Cancel(r.fetchTimer)
	if r.observer && r.role == Follower {
		// Look for the leader through the voters again: it may have moved.
		r.transition(Unattached, r.epoch, sim.NoNode, func() {})
	}
	r.fetchTimer = r.after(r.cfg.RetryBackoff, timerFetchRetry, sim.NoNode)
}

func (r *Raft) handleFetchResponse(from sim.NodeID, m *FetchResponse) {
	// The echoes stand in for Kafka's correlation ids (a response the request
	// manager no longer expects is dropped). A fetch in flight was sent at this
	// replica's current epoch — every change of epoch ends it — so an answer
	// asked at another epoch is to a fetch given up on, even from the same
	// target at the same offset: an observer that timed out on its epoch-5
	// leader and went round the voters to epoch 6 must not take that leader's
	// late answer, follow epoch 5 again and truncate to its divergence (fuzz
	// seed 705884).
	if !r.fetchInFlight || from != r.fetchTarget || m.FetchOffset != r.fetchOffset || m.RequestedEpoch != r.epoch {
		return // an answer to a fetch this replica gave up on
	}
	r.fetchInFlight = false
	r.env.Cancel(r.fetchTimer)
	switch m.Error {
	case proto.None:
	case proto.NotLeaderOrFollower, proto.FencedLeaderEpoch:
		if m.LeaderEpoch > r.epoch || (m.LeaderID != sim.NoNode && m.LeaderID != r.leader && m.LeaderEpoch >= r.epoch) {
			r.learn(m.LeaderEpoch, m.LeaderID)
			if r.role == Follower || r.observer {
				r.fetch()
			}
			return
		}
		r.fetchFailed()
		return
	default:
		if m.LeaderEpoch > r.epoch && m.Error != proto.UnknownLeaderEpoch {
			// Whatever the error (INVALID_REQUEST to a log holding a later
			// epoch than it asks at), an answer from a later epoch moves
			// this replica there, as Kafka's maybeHandleCommonResponse
			// does: going round the voters at the old epoch gets the same
			// answer from each, for ever.
			r.learn(m.LeaderEpoch, m.LeaderID)
			if r.role == Follower || r.observer {
				r.fetch()
			}
			return
		}
		r.fetchFailed()
		return
	}
	if m.LeaderEpoch > r.epoch || (r.observer && r.leader != m.LeaderID) {
		r.learn(m.LeaderEpoch, m.LeaderID)
	}
	if m.LeaderEpoch != r.epoch || r.leader != from {
		r.fetchFailed()
		return
	}
	if !r.observer {
		r.hasFetchedFromLeader = true
		r.resetElectionTimer(r.cfg.FetchTimeout)
	} else {
		r.resetElectionTimer(r.cfg.FetchTimeout)
	}
	if m.Diverging != nil {
		r.truncateToDivergence(*m.Diverging)
		r.fetch()
		return
	}
	if len(m.Entries) > 0 {
		if m.Entries[0].Offset != r.log.EndOffset() {
			r.fetch() // our log moved since the request; ask again
			return
		}
		if err := r.log.Append(m.Entries...); err != nil {
			r.die("cannot append to the metadata log: " + err.Error())
			return
		}
		if !r.observer {
			// A voter's next fetch acknowledges these entries: it must not
			// leave before they are durable.
			r.gate.FsyncWith(r.log.File(), r.mark())
		}
	}
	r.advanceHighWatermark(min(m.HighWatermark, r.log.EndOffset()))
	r.fetch()
}

// truncateToDivergence cuts the log where the leader says it diverges: to the
// end of the diverging epoch in both logs, or, if this log never had that
// epoch, to the end of its largest epoch below it, and then fetches again (the
// leader answers with the next divergence, if any, until the logs agree).
func (r *Raft) truncateToDivergence(d DivergingEpoch) {
	if d.EndOffset < r.hw {
		r.fatal = fmt.Sprintf("leader says the log diverges at %d, below the high watermark %d", d.EndOffset, r.hw)
		r.env.Note("raft", "fatal: "+r.fatal)
		if r.cfg.Audit != nil {
			r.cfg.Audit.Fatal(r.id, r.fatal)
		}
	}
	var to int64
	if d.Epoch == 0 {
		to = min(d.EndOffset, r.log.EndOffset())
	} else {
		localEpoch, localEnd := r.log.EndOffsetForEpoch(d.Epoch)
		if localEpoch == d.Epoch {
			to = min(localEnd, d.EndOffset)
		} else {
			to = localEnd
		}
	}
	if to >= r.log.EndOffset() {
		return
	}
	r.env.Note("raft", fmt.Sprintf("truncate metadata log to %d (diverging epoch %d ends at %d)", to, d.Epoch, d.EndOffset))
	if r.cfg.Audit != nil {
		removed := make([]Entry, 0, r.log.EndOffset()-max(to, 0))
		for off := max(to, 0); off < r.log.EndOffset(); off++ {
			removed = append(removed, r.log.Entry(off))
		}
		r.cfg.Audit.Diverged(r.id, r.epoch, r.hw, to, removed)
	}
	r.log.TruncateTo(to)
	r.truncations++ // fsyncs issued before this no longer describe the log
	r.durableEnd = min(r.durableEnd, to)
	if r.cfg.OnTruncate != nil {
		r.cfg.OnTruncate(to)
	}
}

// advanceHighWatermark moves the high watermark forward, never back.
func (r *Raft) advanceHighWatermark(hw int64) {
	if hw <= r.hw {
		return
	}
	r.hw = hw
	if r.cfg.Audit != nil {
		r.cfg.Audit.HighWatermark(r.id, r.epoch, hw, r.log)
	}
	if r.cfg.OnCommit != nil {
		r.cfg.OnCommit(hw)
	}
}

// Durable records that the log up to end is fsynced (the node routes its gate's
// completions here).
func (r *Raft) Durable(token any) {
	if p, ok := token.(persistedState); ok {
		if r.cfg.Audit != nil {
			r.cfg.Audit.EpochPersisted(r.id, p.epoch)
		}
		return
	}
	mark, ok := token.(durableMark)
	if !ok || mark.truncations != r.truncations {
		return
	}
	end := min(mark.end, r.log.EndOffset())
	if end > r.durableEnd {
		r.durableEnd = end
		if r.ls != nil {
			r.ls.updateHighWatermark()
		}
	}
}
