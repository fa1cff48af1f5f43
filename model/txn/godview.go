package txn

import (
	"cmp"
	"slices"

	"kafkasim/model/proto"
)

// Lister is the god view of every transactional id a coordinator holds
// (the simulator's checks and `kafkasim describe transactions` read it;
// Kafka's ListTransactions then DescribeTransactions).
type Lister interface {
	// Transactions lists the ids this coordinator holds, in the loaded
	// partitions it leads, by id.
	Transactions() []proto.TransactionDescription
}

// Transactions implements Lister.
func (c *coordinator) Transactions() []proto.TransactionDescription {
	var out []proto.TransactionDescription
	for _, part := range sortedKeys(c.parts) {
		p := c.parts[part]
		if p.loading {
			continue
		}
		for _, id := range sortedKeys(p.txns) {
			m := p.txns[id]
			out = append(out, proto.TransactionDescription{TransactionalID: id, State: m.state.String(), ProducerID: m.producerID,
				ProducerEpoch: m.producerEpoch, TransactionTimeout: m.timeout, StartTime: m.startTime,
				Partitions: slices.Clone(m.partitions)})
		}
	}
	slices.SortFunc(out, func(a, b proto.TransactionDescription) int {
		return cmp.Compare(a.TransactionalID, b.TransactionalID)
	})
	return out
}

// Staller is the god view of the transactions a coordinator stopped
// sending the markers of (TransactionMarkerRequestCompletionHandler's
// abortSending on INVALID_PRODUCER_EPOCH or TRANSACTION_COORDINATOR_FENCED):
// Kafka leaves them in PrepareCommit or PrepareAbort, their Complete*
// pending, for as long as that coordinator holds them.
type Staller interface {
	// StalledTransactions lists those transactional ids, in the loaded
	// partitions this coordinator leads, by id.
	StalledTransactions() []string
}

// StalledTransactions implements Staller.
func (c *coordinator) StalledTransactions() []string {
	var out []string
	for _, part := range sortedKeys(c.parts) {
		p := c.parts[part]
		if p.loading {
			continue
		}
		for _, id := range sortedKeys(p.txns) {
			if m := p.txns[id]; m.markersAbandoned && (m.pending == CompleteCommit || m.pending == CompleteAbort) {
				out = append(out, id)
			}
		}
	}
	slices.Sort(out)
	return out
}

// Open reports whether a transaction in state (State.String) is open: it
// holds the last stable offset of the partitions it wrote until its
// markers are written (Empty, CompleteCommit, CompleteAbort and Dead hold
// nothing).
func Open(state string) bool {
	switch state {
	case Ongoing.String(), PrepareCommit.String(), PrepareAbort.String(), PrepareEpochFence.String():
		return true
	}
	return false
}
