package broker

import (
	"time"

	"kafkasim/model/metadata"
)

// FetchInFlight reports the offset the fetch in flight from leader asked
// for tp, if one is in flight and covers it.
func (n *Node) FetchInFlight(leader int32, tp metadata.TopicPartition) (int64, bool) {
	if n.rm == nil {
		return 0, false
	}
	f := n.rm.fetchers[leader]
	if f == nil || f.inflight == 0 {
		return 0, false
	}
	s, ok := f.sentFor(tp)
	return s.FetchOffset, ok
}

// TruncateReplica cuts this broker's replica of tp to offset, as a follower
// does when a fetch answer says its log diverges.
func (n *Node) TruncateReplica(tp metadata.TopicPartition, offset int64) {
	n.rm.truncate(n.rm.parts.get(tp), offset, "test")
}

// Freed counts the produces, fetch answers and follower fetches this
// broker freed for reuse.
func (n *Node) Freed() (produces, answers, fetches uint64) {
	if n.rm == nil {
		return 0, 0, 0
	}
	return n.rm.producesFreed, n.rm.answersFreed, n.rm.fetchesFreed
}

// SessionParts counts, over this leader's fetch sessions, the partitions
// on their dirty lists and the lazy ones (off them).
func (n *Node) SessionParts() (dirty, lazy int) {
	for _, s := range n.rm.sessions.sessions { // kafkasim:orderless: counting
		dirty += len(s.dirty)
		for i := range s.parts {
			if s.parts[i].lazy {
				lazy++
			}
		}
	}
	return dirty, lazy
}

// FollowerCaughtUp is when this leader last saw follower caught up on tp,
// as the ISR rules read it (through a lazy session).
func (n *Node) FollowerCaughtUp(tp metadata.TopicPartition, follower int32) (time.Duration, bool) {
	p := n.rm.parts.get(tp)
	if p == nil {
		return 0, false
	}
	f := p.follower(follower)
	if f == nil {
		return 0, false
	}
	return f.caughtUpTime(), true
}
