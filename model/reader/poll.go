package reader

import (
	"kafkasim/history"
)

// The poll loop: each poll takes what the fetch buffers hold (collector.go),
// waits for a fetch when they hold nothing, and records the poll in the
// history.

// poll returns what the fetch buffer holds (Kafka's poll does not wait when
// records are buffered), and keeps one fetch in flight per leader for the
// partitions whose buffers are empty. With nothing buffered it waits for the
// first fetch to answer, up to the fetch wait.
func (r *Reader) poll() {
	if r.stopped && !r.final {
		return
	}
	if r.group != nil {
		if !r.groupPoll() {
			return
		}
	} else if r.cfg.Stop > 0 && r.env.WorldTime() >= r.cfg.Stop && !r.final {
		return
	}
	if r.final && r.finalDone && !r.finalUnsaid() {
		return
	}
	if r.final {
		r.askFinalEnds()
	}
	r.refreshIfLeaderless()
	r.polling = true
	r.collector.reset()
	v := history.NoValue()
	v.Isolation = r.cfg.Isolation
	v.Final = r.final
	if r.group != nil {
		v.X().Group = r.group.cfg.GroupID
	}
	if r.rec != nil {
		r.hist.Invoke(history.FPoll, &v)
	}
	r.Stats.Polls++
	r.collector.collectFetch(r.subs.parts)
	r.fetchMissing()
	if r.collector.n > 0 {
		r.finishPoll()
		return
	}
	// Nothing buffered: wait for a fetch (or the fetch wait, as a real
	// poll(timeout) returns empty).
	r.corr++
	r.pollWait = r.corr
	wait := r.cfg.PollTimeout
	if wait <= 0 {
		wait = r.cfg.FetchMaxWait + r.cfg.RequestTimeout/10
	}
	r.env.After(wait, rtimer{kind: timerPollTimeout, corr: r.corr})
	if r.fetching.empty() {
		r.refreshMetadata()
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
	if r.final {
		r.finalReport(&v)
	}
	if r.group != nil {
		v.X().Group = r.group.cfg.GroupID
	}
	if r.rec != nil {
		// The history keeps the spans (the batches are never changed),
		// not a copy of each record.
		r.hist.CompletePoll(history.OK, v, r.collector.spans)
	}
	r.Stats.Records += r.collector.n
	var items []workItem
	if r.group != nil {
		items = workItems(r.collector.spans, r.group.cfg.Processor != nil)
	}
	r.collector.reset()
	if r.final {
		r.checkFinal()
	}
	r.validate()
	if r.group != nil {
		r.handOver(items) // the application processes them
		return
	}
	r.env.After(r.cfg.Processing.Draw(r.env.Rand()), rtimer{kind: timerPoll})
}
