package reader

import (
	"kafkasim/history"
	"kafkasim/model/record"
)

// The poll loop: each poll takes what the fetch buffers hold, up to
// max.poll.records (Kafka's FetchCollector), waits for a fetch when they
// hold nothing, and records the poll in the history.

// poll returns what the fetch buffer holds (Kafka's poll does not wait when
// records are buffered), and keeps one fetch in flight per leader for the
// partitions whose buffers are empty. With nothing buffered it waits for the
// first fetch to answer, up to the fetch wait.
func (r *Reader) poll() {
	if r.stopped && !r.final {
		return
	}
	if r.cfg.Stop > 0 && r.env.WorldTime() >= r.cfg.Stop && !r.final {
		return
	}
	if r.final && r.finalDone {
		return
	}
	if r.final {
		r.askFinalEnds()
	}
	r.refreshIfLeaderless()
	r.polling = true
	r.pollSpans, r.pollN = r.pollSpans[:0], 0
	v := history.NoValue()
	v.Isolation = r.cfg.Isolation
	v.Final = r.final
	if r.rec != nil {
		r.hist.Invoke(history.FPoll, &v)
	}
	r.Stats.Polls++
	r.drain()
	r.fetchMissing()
	if r.pollN > 0 {
		r.finishPoll()
		return
	}
	// Nothing buffered: wait for a fetch (or the fetch wait, as a real
	// poll(timeout) returns empty).
	r.corr++
	r.pollWait = r.corr
	r.env.After(r.cfg.FetchMaxWait+r.cfg.RequestTimeout/10, rtimer{kind: timerPollTimeout, corr: r.corr})
	if r.fetching.empty() {
		r.refreshMetadata()
	}
}

// drain moves buffered records at or after each position into the poll, up
// to max.poll.records, partitions in order.
func (r *Reader) drain() {
	for _, p := range r.parts {
		if r.pollN >= r.cfg.MaxPollRecords {
			return
		}
		for len(p.buf) > 0 && r.pollN < r.cfg.MaxPollRecords {
			b := p.buf[0]
			r.take(p, b)
			if p.offset > b.LastOffset() {
				p.buf = p.buf[1:]
			}
		}
		if len(p.buf) == 0 {
			p.buf = nil
		}
	}
}

// take adds a batch's records at or after the position, up to max.poll.records.
func (r *Reader) take(p *position, b *record.Batch) {
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
	hi := min(n, lo+r.cfg.MaxPollRecords-r.pollN)
	if hi > lo {
		r.pollSpans = append(r.pollSpans, history.RecordSpan{Src: b, Topic: p.key.topic, Partition: p.key.partition, Lo: int32(lo), Hi: int32(hi)})
		r.pollN += hi - lo
		last := b.BaseOffset + int64(hi-1)
		if thinned != nil {
			last = b.BaseOffset + int64(thinned[hi-1].OffsetDelta)
		}
		p.offset = last + 1
		p.offsetEpoch = b.PartitionLeaderEpoch
	}
	// A thinned (compacted) batch may end before its last offset.
	if p.offset <= b.LastOffset() && r.pollN < r.cfg.MaxPollRecords {
		p.offset = b.LastOffset() + 1
		p.offsetEpoch = b.PartitionLeaderEpoch
	}
}

func (r *Reader) finishPoll() {
	if !r.polling {
		return
	}
	r.polling = false
	r.pollWait = 0
	v := history.NoValue()
	v.Isolation = r.cfg.Isolation
	v.Final = r.final
	if r.final && len(r.finalStarts) > 0 {
		v.X().LogStartOffsets = r.finalStarts
		r.finalStarts = nil
	}
	if r.rec != nil {
		// The history keeps the spans (the batches are never changed),
		// not a copy of each record.
		r.hist.CompletePoll(history.OK, v, r.pollSpans)
	}
	r.Stats.Records += r.pollN
	r.pollSpans, r.pollN = r.pollSpans[:0], 0
	if r.final {
		r.checkFinal()
	}
	r.validate()
	r.env.After(r.cfg.Processing.Draw(r.env.Rand()), rtimer{kind: timerPoll})
}
