package reader

import (
	"slices"

	"kafkasim/history"
	"kafkasim/model/record"
)

// fetchCollector gathers a poll's records from the partitions' fetch
// buffers, at or after each position, up to max.poll.records (Kafka's
// FetchCollector), as spans of the fetched batches: the history keeps the
// spans (the batches are never changed), not a copy of each record.
type fetchCollector struct {
	maxPollRecords int
	// readCommitted is isolation.level=read_committed: the records of
	// aborted transactions are dropped (CompletedFetch).
	readCommitted bool
	// spans are the records of the poll under way; n counts them.
	spans []history.RecordSpan
	n     int
}

// reset empties the collector for the next poll.
func (c *fetchCollector) reset() { c.spans, c.n = c.spans[:0], 0 }

// collectFetch moves buffered records at or after each position into the
// poll, up to max.poll.records, partitions in order.
func (c *fetchCollector) collectFetch(parts []*partitionState) {
	for _, p := range parts {
		if c.n >= c.maxPollRecords {
			return
		}
		for len(p.buf) > 0 && c.n < c.maxPollRecords {
			b := p.buf[0]
			if b.Transactional && (b.Control || c.readCommitted) && c.skipBatch(p, b) {
				// CompletedFetch.nextFetchedRecord: the position moves
				// past a batch the application never sees.
				if p.offset <= b.LastOffset() {
					p.offset = b.NextOffset()
					p.offsetEpoch = b.PartitionLeaderEpoch
				}
				p.buf = p.buf[1:]
				continue
			}
			c.fetchRecords(p, b)
			if p.offset > b.LastOffset() {
				p.buf = p.buf[1:]
			}
		}
		if len(p.buf) == 0 {
			p.buf = nil
		}
	}
}

// skipBatch reports whether the application never sees b's records, as
// Kafka's CompletedFetch.nextFetchedRecord decides: a control batch (a
// transaction marker) at every isolation level; at read_committed a
// transactional batch of a producer whose transaction the fetch answer
// lists as aborted from an offset at or below the batch, until that
// producer's abort marker. The aborted list is the buffer's (one fetch
// answer's), consumed in first-offset order as the batches go by.
func (c *fetchCollector) skipBatch(p *partitionState, b *record.Batch) bool {
	if c.readCommitted && b.ProducerID >= 0 {
		// consumeAbortedTransactionsUpTo(batch.lastOffset)
		for len(p.aborted) > 0 && p.aborted[0].FirstOffset <= b.LastOffset() {
			p.abortedPids = append(p.abortedPids, p.aborted[0].ProducerID)
			p.aborted = p.aborted[1:]
		}
		if b.Control {
			if b.IsAbort() {
				p.abortedPids = slices.DeleteFunc(p.abortedPids, func(pid int64) bool { return pid == b.ProducerID })
			}
			return true
		}
		if slices.Contains(p.abortedPids, b.ProducerID) {
			return true
		}
	}
	return b.Control
}

// fetchRecords adds a batch's records at or after the position, up to
// max.poll.records, and moves the position past them.
func (c *fetchCollector) fetchRecords(p *partitionState, b *record.Batch) {
	// The records at or past the position, up to max.poll.records: offsets
	// grow within a batch, so they are one run of its records. Record i is
	// at BaseOffset+i unless compaction thinned the batch; only then are
	// its records decoded to find their offsets.
	lo, n := 0, b.RecordCount()
	var thinned []record.Record
	if b.Thinned() {
		thinned = b.Records()
		for lo < n && b.BaseOffset+int64(thinned[lo].OffsetDelta) < p.offset {
			lo++
		}
	} else {
		lo = int(min(max(p.offset-b.BaseOffset, 0), int64(n)))
	}
	hi := min(n, lo+c.maxPollRecords-c.n)
	if hi > lo {
		c.spans = append(c.spans, history.RecordSpan{Src: b, Topic: p.key.topic, Partition: p.key.partition, Lo: int32(lo), Hi: int32(hi)})
		c.n += hi - lo
		last := b.BaseOffset + int64(hi-1)
		if thinned != nil {
			last = b.BaseOffset + int64(thinned[hi-1].OffsetDelta)
		}
		p.offset = last + 1
		p.offsetEpoch = b.PartitionLeaderEpoch
		p.handed, p.handedBy = p.offset, sourceRecord
	}
	// A thinned (compacted) batch may end before its last offset.
	if p.offset <= b.LastOffset() && c.n < c.maxPollRecords {
		p.offset = b.LastOffset() + 1
		p.offsetEpoch = b.PartitionLeaderEpoch
	}
}
