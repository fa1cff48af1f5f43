package broker

import (
	"math"
	"slices"
	"time"

	"kafkasim/model/metadata"
)

// A partition leader's replication decisions, as functions of its state
// alone (Kafka's Partition.maybeIncrementLeaderHW, maybeExpandIsr with
// isFollowerInSync, getOutOfSyncReplicas, and Replica's fetch state): the
// replica manager gathers a leaderState, asks, and acts on the answer, so
// that the rules can be tested without a world.

// leaderState is what a leader's decisions read: its log's ends, its ISR
// and what it knows of each follower, the brokers' registrations and the
// time.
type leaderState struct {
	leo        int64 // the leader's log end
	hw         int64
	epochStart int64 // the first offset of the current leader epoch
	// syncing are the first offsets of the leader's appends whose fsyncs
	// are still running, oldest first (see partition.syncing).
	syncing []int64
	isr     []int32     // committed
	pending *pendingISR // the ISR change in flight, or nil
	// minISR is the effective min.insync.replicas (bounded by the
	// replication factor).
	minISR    int
	followers []*followerState
	// brokers are the registered brokers, by id (the metadata image's).
	brokers map[int32]*metadata.Broker
	now     time.Duration
	lagMax  time.Duration // replica.lag.time.max.ms
	// strictMinISR is KIP-966's rule (off under no-strict-min-isr);
	// joinBelowEpochStart lets a follower short of the epoch start join
	// the ISR (isr-join-at-stale-hw).
	strictMinISR        bool
	joinBelowEpochStart bool
}

// maximalISR is the ISR counting a pending expansion (a pending shrink does
// not count until committed).
func maximalISR(isr []int32, pending *pendingISR) []int32 {
	if pending == nil {
		return isr
	}
	out := slices.Clone(isr)
	for _, r := range pending.isr {
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out
}

// caughtUp: the follower's log end equals the leader's, or it was caught up
// within replica.lag.time.max.ms (Kafka's ReplicaState.isCaughtUp).
func (s *leaderState) caughtUp(f *followerState) bool {
	return f.leo == s.leo || s.now-f.caughtUpTime() <= s.lagMax
}

// never is the time of a catch-up or fetch that has not happened: Kafka's
// Replica.resetReplicaState sets them to 0, the start of its epoch-based
// clock, so long ago that a follower that never caught up is not caught up;
// the simulation's clock starts at 0, so 0 would be "just now" in the first
// replica.lag.time.max.ms of a run.
const never = time.Duration(math.MinInt64 / 4)

// brokerEpochUnknown is a follower's broker epoch before its first fetch
// from this leader (Kafka's Replica.resetReplicaState sets it to None); -1
// is a fetch that carried none.
const brokerEpochUnknown = -2

// eligible: the follower may join the ISR: registered, unfenced, not
// shutting down, and (KIP-903) fetching with its current broker epoch, or
// with none (Partition.isBrokerEpochIsrEligible); a follower that has not
// fetched from this leader yet is not.
func (s *leaderState) eligible(f *followerState) bool {
	b, ok := s.brokers[f.id]
	return ok && b.Active() && f.epoch() != brokerEpochUnknown && (f.epoch() == -1 || f.epoch() == b.Epoch)
}

// highWatermark is where the leader's high watermark may move: the
// smallest log end among the leader, the (maximal) ISR and any caught-up
// eligible replica, and no further than the oldest append still syncing;
// moved is false when it would not advance (it never goes back), and
// always while the ISR is smaller than min ISR (KIP-966's strict rule,
// which is what makes ELR members safe to elect).
func (s *leaderState) highWatermark() (hw int64, moved bool) {
	if len(s.isr) < s.minISR && s.strictMinISR {
		return s.hw, false
	}
	hw = s.leo
	if len(s.syncing) > 0 {
		hw = min(hw, s.syncing[0])
	}
	maximal := maximalISR(s.isr, s.pending)
	for _, f := range s.followers {
		if f.leo < hw && (slices.Contains(maximal, f.id) || (s.caughtUp(f) && s.eligible(f))) {
			hw = f.leo
		}
	}
	if hw <= s.hw {
		return s.hw, false
	}
	return hw, true
}

// mayJoinISR: the leader proposes adding a follower that has caught up to
// the high watermark and to the start of the current leader epoch
// (KAFKA-7128: a follower short of the epoch start could be elected without
// data committed before it), unless another ISR change is in flight.
func (s *leaderState) mayJoinISR(f *followerState) bool {
	if s.pending != nil || slices.Contains(s.isr, f.id) || !s.eligible(f) {
		return false
	}
	if f.leo < s.hw {
		return false
	}
	return f.leo >= s.epochStart || s.joinBelowEpochStart
}

// shrunkISR is the ISR without the followers that have not caught up within
// replica.lag.time.max.ms (self, the leader, stays); shrink is false when
// none is out of sync or another ISR change is in flight.
func (s *leaderState) shrunkISR(self int32) (keep []int32, shrink bool) {
	if s.pending != nil {
		return nil, false
	}
	for _, r := range s.isr {
		f := followerOf(s.followers, r)
		if r == self || (f != nil && s.caughtUp(f)) {
			keep = append(keep, r)
		}
	}
	return keep, len(keep) < len(s.isr)
}

func followerOf(followers []*followerState, id int32) *followerState {
	for _, f := range followers {
		if f.id == id {
			return f
		}
	}
	return nil
}

// fetched is a follower's state after a fetch from fetchOffset, answered
// when the leader's log ended at leaderEnd (Kafka's
// Replica.updateFetchStateOrThrow): a fetch from the leader's end makes it
// caught up now; one from at least the leader's end at its previous fetch,
// as of that fetch. brokerEpoch is -1 when the fetch did not carry one (Kafka
// stores it so: Replica.updateFetchStateOrThrow).
func (f followerState) fetched(fetchOffset, leaderEnd, brokerEpoch int64, now time.Duration) followerState {
	switch {
	case fetchOffset >= leaderEnd:
		f.lastCaughtUp = max(f.lastCaughtUp, now)
	case fetchOffset >= f.lastFetchLeaderLEO:
		f.lastCaughtUp = max(f.lastCaughtUp, f.lastFetchTime)
	}
	f.leo = fetchOffset
	f.lastFetchLeaderLEO = max(leaderEnd, f.lastFetchLeaderLEO)
	f.lastFetchTime = now
	f.brokerEpoch = brokerEpoch
	return f
}

// startsLeaderEpoch says whether becoming leader in epoch starts a new
// leader epoch (a broker that led in an older epoch, or did not lead) and
// where it starts: at the leader's log end, recorded in the epoch cache
// before any write of the epoch (Kafka's leaderEpochStartOffsetOpt).
func startsLeaderEpoch(wasLeader bool, knownEpoch, epoch int32, leo int64) (starts bool, startOffset int64) {
	if wasLeader && epoch <= knownEpoch {
		return false, -1
	}
	return true, leo
}

// newFollowerStates are a new leader's views of its followers: positions
// unknown until they fetch; ISR members count as caught up now, so that they
// get replica.lag.time.max.ms to fetch before they can be shrunk away.
func newFollowerStates(replicas, isr []int32, self int32, now time.Duration) []*followerState {
	var out []*followerState
	for _, r := range replicas {
		if r == self {
			continue
		}
		f := &followerState{id: r, leo: -1, lastFetchLeaderLEO: -1, brokerEpoch: brokerEpochUnknown,
			lastCaughtUp: never, lastFetchTime: never}
		if slices.Contains(isr, r) {
			f.lastCaughtUp = now
		}
		out = append(out, f)
	}
	return out
}
