package reader

import (
	"slices"
	"strconv"
	"time"

	"kafkasim/model/proto"
	"kafkasim/model/record"
)

// The partitions a reader reads, and where it stands in each (Kafka's
// SubscriptionState). An assign-mode reader is assigned every partition of
// its topics as the metadata lists them (metadata.go); the metadata also
// moves each partition's leader, which is where position validation starts.

type partKey struct {
	topic     string
	partition int32
}

func (k partKey) String() string { return k.topic + "-" + strconv.Itoa(int(k.partition)) }

// fetchPosition is where the reader reads a partition next (Kafka's
// FetchPosition): an offset, and the leader epoch of the record before it,
// which KIP-320 validates after a leader change.
type fetchPosition struct {
	offset      int64 // -1: unknown, needs a reset
	offsetEpoch int32 // epoch of the last record consumed (-1: none)
}

// partitionState is the reader's state of one assigned partition (Kafka's
// TopicPartitionState).
type partitionState struct {
	key partKey
	buf []*record.Batch // fetched, not yet returned
	// aborted is the aborted transactions the fetch answer that filled buf
	// listed, by first offset, not yet reached; abortedPids the producers
	// whose aborted transaction the collector is in (Kafka's
	// CompletedFetch.abortedTransactions and abortedProducerIds).
	aborted     []proto.AbortedTransaction
	abortedPids []int64
	fetchPosition
	leader      int32
	leaderEpoch int32
	validating  bool
	// validateAfter is when a validation may be sent (again): a request in
	// flight waits for its answer or timeout, a failed one for
	// retry.backoff.ms (Kafka's SubscriptionState nextRetryTimeMs).
	validateAfter time.Duration
	resetting     bool
	// initializing: a group member's newly assigned partition awaits its
	// committed offset (Kafka's INITIALIZING fetch state): no reset yet.
	initializing bool
	end          int64 // final reads: the end to reach (-1: unknown)
	// outOfRange: the leader answered OFFSET_OUT_OF_RANGE at the position
	// outOfRangeFrom, dropped for auto.offset.reset: the reset that follows
	// tells the god view how far it moved the position (FetchAuditor).
	outOfRange     bool
	outOfRangeFrom int64
	// handed is the position as the application last saw it: past the
	// last record a poll returned of the partition, or where a seek put it;
	// handedBy says which. A batch the application never sees (a
	// transaction marker; at read_committed, an aborted transaction's
	// records) moves the position past it without a record, as Kafka's
	// CompletedFetch.nextFetchedRecord does, so the position may run ahead
	// of handed: what the application polled says nothing of those
	// batches.
	handed   int64
	handedBy positionSource
}

// positionSource is what last set the position the application saw.
type positionSource uint8

const (
	sourceNone       positionSource = iota // no position yet (or lost: a reset follows)
	sourceRecord                           // past a record a poll returned
	sourceCommitted                        // the group's committed offset
	sourceReset                            // auto.offset.reset
	sourceTruncation                       // KIP-320's validation sought it back
)

// seek puts the position at pos, set by src (sourceNone: unknown, pos
// -1): the application sees the new position before any record.
func (p *partitionState) seek(pos fetchPosition, src positionSource) {
	p.fetchPosition = pos
	p.handed, p.handedBy = pos.offset, src
}

// updateLeader takes the partition's leader from the metadata (Kafka's
// maybeValidatePositionForCurrentLeader): an older leader epoch is stale
// metadata and changes nothing; a new leader or epoch drops what was
// fetched from the old one and, when validate is set and the position's
// epoch is known, makes the position await validation before the reader
// fetches from it again.
func (p *partitionState) updateLeader(leader, leaderEpoch int32, validate bool) {
	if leaderEpoch < p.leaderEpoch {
		return // stale metadata
	}
	changed := leader != p.leader || leaderEpoch != p.leaderEpoch
	p.leader, p.leaderEpoch = leader, leaderEpoch
	if changed {
		p.buf = nil // fetched from the old leader: fetch again
	}
	if changed && p.offset >= 0 && p.offsetEpoch >= 0 && validate && leader >= 0 {
		// KIP-320: the leader changed; before fetching again, ask the
		// new leader whether our position's epoch still ends where we
		// think, or the log was truncated under us.
		p.validating, p.validateAfter = true, 0
	}
}

// subscriptionState is the partitions assigned to the reader.
type subscriptionState struct {
	byKey map[partKey]*partitionState
	// parts are the assigned partitions by key: the order they are read in.
	parts []*partitionState
}

// assignedState is partition k's state, or nil if it is not assigned.
func (s *subscriptionState) assignedState(k partKey) *partitionState { return s.byKey[k] }

// assign adds partition k, with no position and no leader yet.
func (s *subscriptionState) assign(k partKey) *partitionState {
	p := &partitionState{key: k, fetchPosition: fetchPosition{offset: -1, offsetEpoch: -1}, leader: -1, leaderEpoch: -1, end: -1, handed: -1}
	s.byKey[k] = p
	// Inserted where it sorts (keys are unique: callers assign only what
	// is not assigned), not appended and the whole list sorted again: an
	// assign-mode reader learning 3,000 partitions sorted 3,000 times, 1.5 %
	// of the instructions of a run of big-cluster-3000.yaml.
	i, _ := slices.BinarySearchFunc(s.parts, k, func(a *partitionState, k partKey) int {
		if a.key.topic != k.topic {
			if a.key.topic < k.topic {
				return -1
			}
			return 1
		}
		return int(a.key.partition - k.partition)
	})
	s.parts = slices.Insert(s.parts, i, p)
	return p
}

// unassign drops partition k (a group member's revocation).
func (s *subscriptionState) unassign(k partKey) {
	delete(s.byKey, k)
	s.parts = slices.DeleteFunc(s.parts, func(p *partitionState) bool { return p.key == k })
}
