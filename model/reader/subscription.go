package reader

import (
	"strconv"
	"time"

	"kafkasim/model/record"
)

// The partitions a reader reads, and where it stands in each.

type partKey struct {
	topic     string
	partition int32
}

func (k partKey) String() string { return k.topic + "-" + strconv.Itoa(int(k.partition)) }

type position struct {
	key         partKey
	buf         []*record.Batch // fetched, not yet returned
	offset      int64           // -1: unknown, needs a reset
	offsetEpoch int32           // epoch of the last record consumed (-1: none)
	leader      int32
	leaderEpoch int32
	validating  bool
	// validateAfter is when a validation may be sent (again): a request in
	// flight waits for its answer or timeout, a failed one for
	// retry.backoff.ms (Kafka's SubscriptionState nextRetryTimeMs).
	validateAfter time.Duration
	resetting     bool
	end           int64 // final reads: the end to reach (-1: unknown)
}
