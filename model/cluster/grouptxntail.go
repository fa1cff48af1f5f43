package cluster

import (
	"slices"

	"kafkasim/model/partlog"
	"kafkasim/model/record"
)

// nothingVisibleBetween reports whether the records of log in [from, hw)
// are none that a member of the group could be handed: transaction markers
// (a consumer skips control batches at every isolation level) and, at
// read_committed, the records of aborted transactions. An application that
// commits the offsets of the records it processed (commitSync(Map), as the
// reader's after-processing and auto modes do) commits nothing past the
// last record it got, so a group whose input ends in a transaction's
// marker lags its high watermark by that marker for good — the "lag of
// one" Kafka users see with transactional producers. It is no liveness
// failure.
func nothingVisibleBetween(log *partlog.Log, from, hw int64, readCommitted bool) bool {
	if from < log.LogStartOffset() || !log.Transactional() {
		return false
	}
	var aborted []partlog.AbortedTxn
	if readCommitted {
		aborted = log.CollectAbortedTransactions(from, hw)
	}
	visible := false
	log.Scan(from, hw, func(b *record.Batch) bool {
		visible = handedToMembers(b, from, aborted, readCommitted)
		return !visible
	})
	return !visible
}

// handedToMembers reports whether a batch holds records at or after from
// that a consumer's poll returns: not a marker, and at read_committed not
// a record of a transaction in aborted (each producer's aborted
// transaction runs from its first offset to its abort marker).
func handedToMembers(b *record.Batch, from int64, aborted []partlog.AbortedTxn, readCommitted bool) bool {
	switch {
	case b.LastOffset() < from, b.Control:
		return false
	case readCommitted && b.Transactional:
		return !slices.ContainsFunc(aborted, func(a partlog.AbortedTxn) bool {
			return a.ProducerID == b.ProducerID && a.FirstOffset <= b.BaseOffset && b.LastOffset() <= a.LastOffset
		})
	}
	return true
}
