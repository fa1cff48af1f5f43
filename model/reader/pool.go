package reader

import (
	"slices"

	"kafkasim/model/proto"
)

// The pool of workers (GroupConfig.Workers > 1), as an application builds
// it on a java.util.concurrent.ThreadPoolExecutor of N threads with a
// bounded queue of N records and a blocking hand-off: the poll loop puts
// each polled record in the queue, waiting while the queue is full; a free
// worker takes the queue's first record, so records of one partition are
// processed concurrently and finish out of order. Once the whole batch is
// in the queue the loop commits (after-processing) and polls again while
// the workers run, which keeps max.poll.interval.ms from expiring — unless
// the pool stays saturated that long, when the loop, waiting to hand over
// a record, does not poll (the poll timer expires and a dynamic member
// leaves the group, as Kafka's would).
//
// Commits cover each partition's contiguous completed prefix (prefix.go):
// after-processing commits it (commitSync) at each turn of the loop that
// changed it, auto commits it at its interval, before-processing commits
// past the batch before handing it over (at-most-once).
//
// Rebalance callbacks run in poll, while workers may be processing. The
// listener of a careful application (onPartitionsRevoked) drops the
// revoked partitions' queued records, waits for their records in
// processing to finish, commits their completed prefix, and only then
// lets the revocation complete (with before-processing, which committed
// past the records before handing them over, it commits nothing). On
// partitions lost (the member was fenced: its generation is gone) it
// drops their queued records and commits nothing; records in processing
// still finish — the application cannot recall a request already sent to
// a database — but no longer count for the partition. A crash loses everything in flight.

// pool is the pool's state.
type pool struct {
	// queue holds the records waiting for a worker, in order; a record is
	// a task not started yet.
	queue []*task
	// handoff is the rest of the poll's batch, which the loop waits to put
	// in the queue; handingOff is set while it waits.
	handoff    []*task
	handingOff bool
	// trackers are each partition's polled records, for the prefix.
	trackers map[partKey]*prefixTracker
	// drain is the revocation waiting for its partitions' records in
	// processing, nil if none.
	drain *poolDrain
}

// poolDrain is a revocation waiting for its partitions' records.
type poolDrain struct {
	keys []partKey
	then func(commit bool)
}

// tracker is partition k's tracker for its assignment ps, a new one when
// the partition was assigned again since.
func (p *pool) tracker(k partKey, ps *partitionState) *prefixTracker {
	if p.trackers == nil {
		p.trackers = map[partKey]*prefixTracker{}
	}
	t := p.trackers[k]
	if t == nil || t.ps != ps {
		t = newPrefixTracker(ps)
		p.trackers[k] = t
	}
	return t
}

// poolUnfinished reports whether records polled of partition k in its
// assignment ps are still queued or in processing in the pool (with one
// worker, a poll comes only once the previous batch is processed).
func (r *Reader) poolUnfinished(k partKey, ps *partitionState) bool {
	t := r.group.app.pool.trackers[k]
	return t != nil && t.ps == ps && len(t.pending) > 0
}

// poolHandOver hands a poll's records to the pool.
func (r *Reader) poolHandOver(items []workItem) {
	g := r.group
	tasks := make([]*task, 0, len(items))
	for _, it := range items {
		tasks = append(tasks, &task{item: it, ps: r.subs.assignedState(it.key), generation: g.ownedGeneration, memberID: g.ownedMemberID})
	}
	if g.cfg.Commit == CommitBeforeProcessing && (len(items) > 0 || r.recommitDropped()) {
		// At-most-once, as with one worker: a refused commit drops the
		// batch unprocessed, and the next poll commits past it again.
		r.commitBeforeProcessing(items, func(ok bool) {
			if !ok {
				r.nextPoll()
				return
			}
			r.poolAccept(tasks)
		})
		return
	}
	r.poolAccept(tasks)
}

// poolAccept starts the hand-off of a batch: its records count as polled
// for their partitions' prefixes from now on.
func (r *Reader) poolAccept(tasks []*task) {
	p := &r.group.app.pool
	for _, t := range tasks {
		if t.ps != nil {
			p.tracker(t.item.key, t.ps).polled(t.item.offset, t.item.epoch)
		}
	}
	p.handoff, p.handingOff = tasks, true
	r.poolFill()
}

// poolFill lets free workers take queued records and the loop put its
// batch in the queue's room; once the batch is all in, the loop goes on.
func (r *Reader) poolFill() {
	g := r.group
	a := &g.app
	p := &a.pool
	for {
		moved := false
		for len(a.tasks) < g.cfg.Workers && len(p.queue) > 0 {
			t := p.queue[0]
			p.queue = p.queue[1:]
			moved = true
			if r.subs.assignedState(t.item.key) != t.ps || t.ps == nil {
				continue // revoked since it was polled: dropped
			}
			r.startTask(t)
		}
		for len(p.queue) < g.cfg.Workers && len(p.handoff) > 0 {
			p.queue = append(p.queue, p.handoff[0])
			p.handoff = p.handoff[1:]
			moved = true
		}
		if !moved {
			break
		}
	}
	if p.handingOff && len(p.handoff) == 0 {
		p.handingOff = false
		r.poolLoopTurn()
	}
}

// poolLoopTurn is the loop's turn once the batch is handed over:
// after-processing commits the prefixes that advanced, then the loop polls.
func (r *Reader) poolLoopTurn() {
	g := r.group
	if g.cfg.Commit != CommitAfterProcessing {
		r.nextPoll()
		return
	}
	var offsets []commitOffset
	for _, o := range r.processedOffsets(r.ownedTPs()) {
		if t := g.app.pool.trackers[o.key]; t != nil && t.loopCommitted != o.pos.offset {
			offsets = append(offsets, o)
		}
	}
	r.commitSync(offsets, func(ok bool) {
		if ok {
			for _, o := range offsets {
				if t := g.app.pool.trackers[o.key]; t != nil {
					t.loopCommitted = o.pos.offset
				}
			}
		}
		r.nextPoll()
	})
}

// poolTaskEnded frees a worker: a finished record advances its partition's
// prefix (while the member holds the assignment it was polled in).
func (r *Reader) poolTaskEnded(t *task, finished bool) {
	g := r.group
	p := &g.app.pool
	k := t.item.key
	if tr := p.trackers[k]; finished && tr != nil && tr.ps == t.ps && r.subs.assignedState(k) == t.ps {
		tr.finished(t.item.offset, t.item.epoch)
		if pos, ok := tr.committable(g.cfg.CommitHighestFinished); ok {
			g.processed[k] = pos
		}
	}
	r.poolFill()
	r.poolCheckDrain()
}

// poolRevoking reports whether the listener is giving partition k up.
func (r *Reader) poolRevoking(k partKey) bool {
	d := r.group.app.pool.drain
	return d != nil && slices.Contains(d.keys, k)
}

// quiesce is the application's listener before partitions are given up
// (onPartitionsRevoked, onPartitionsLost): then runs once the member may
// commit what it processed of them (commit: whether it should). The poll
// loop processing its batch itself has nothing in processing by then —
// unless the member is closed mid-batch (a consumer-protocol member's
// close unsubscribes, which revokes at once): an at-most-once application
// commits nothing on revoke either way, as with a pool (poolCheckDrain),
// since what it processed lies at or below what it committed before
// processing, maybe below a commit still in flight.
func (r *Reader) quiesce(tps []proto.TopicPartition, then func(commit bool)) {
	g := r.group
	if g.cfg.Workers <= 1 {
		if g.cfg.Processor != nil && (len(g.app.queue) > 0 || r.polling) {
			// A stream thread hears of the revocation in its next poll,
			// once it has processed the batch it polled (or the poll under
			// way returned and its batch was processed): its commit then
			// covers the batch, and no output of the batch lands in the
			// transaction after the commit began.
			g.app.afterBatch = append(g.app.afterBatch, func() { then(true) })
			return
		}
		then(g.cfg.Commit != CommitBeforeProcessing)
		return
	}
	p := &g.app.pool
	keys := make([]partKey, 0, len(tps))
	for _, tp := range tps {
		keys = append(keys, partKey{tp.Topic, tp.Partition})
	}
	gone := func(t *task) bool { return slices.Contains(keys, t.item.key) }
	p.queue = slices.DeleteFunc(p.queue, gone)
	p.handoff = slices.DeleteFunc(p.handoff, gone)
	if g.generation == proto.NoGeneration || g.memberID == "" {
		then(false) // lost: nothing to commit, nothing to wait for
		return
	}
	p.drain = &poolDrain{keys: keys, then: then}
	r.poolCheckDrain()
}

// poolCheckDrain lets a revocation go on once none of its partitions'
// records is in processing.
func (r *Reader) poolCheckDrain() {
	a := &r.group.app
	d := a.pool.drain
	if d == nil {
		return
	}
	for _, t := range a.tasks {
		if slices.Contains(d.keys, t.item.key) && r.subs.assignedState(t.item.key) == t.ps {
			return
		}
	}
	a.pool.drain = nil
	// An at-most-once application committed past its records before
	// handing them over: committing its prefix now would move the
	// committed offset back below records it dropped.
	d.then(r.group.cfg.Commit != CommitBeforeProcessing)
}
