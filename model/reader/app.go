package reader

import (
	"slices"

	"kafkasim/history"
	"kafkasim/model/record"
)

// The application of a group member: a poll loop that processes each
// polled record (each a process operation, taking a draw of the processing
// range) and commits per its commit mode. Kafka runs rebalance callbacks
// and applies assignments only inside poll (ClassicKafkaConsumer.poll:
// updateAssignmentMetadataIfNeeded), so a batch being processed by the
// poll loop itself never loses a partition under it; only the heartbeat
// thread acts meanwhile (it may leave the group on the poll timer, after
// which the batch is still processed but its commit is refused).
//
// With GroupConfig.Workers of 1 (or unset) the poll loop processes each
// batch itself, record by record, then commits and polls again. With more,
// it hands the records to a pool of workers (pool.go) and polls on while
// they work. A record's processing (task.go) may end with a write to an
// external store (sideeffect.go).

// workItem is one polled record to process.
type workItem struct {
	key    partKey
	offset int64
	epoch  int32 // the leader epoch of its batch
	// rkey is the record's key, for a stream processor's output (hasKey:
	// not null); others leave it empty.
	rkey   string
	hasKey bool
}

// application is the state of the poll loop between polls.
type application struct {
	// The batch the poll loop processes itself (one worker): queue[next]
	// is the record in processing (or next).
	queue []workItem
	next  int
	// generation and memberID are the member's when the batch was polled:
	// what its process operations carry.
	generation int32
	memberID   string
	// token numbers the processings started, for their timers.
	token uint64
	// tasks are the records being processed, in the order they started.
	tasks []*task
	// afterBatch are the revocations of a stream processor's member that
	// wait for the batch in processing to end (its commit must not cut a
	// batch: Streams processes a poll's records, then its next poll runs
	// the rebalance callback, which commits).
	afterBatch []func()
	// spare is the poll loop's last task, ended and held by no one: the
	// loop processes one record at a time, and makes its next task of it.
	spare *task
	// recommit: the last commit after a batch failed; the next poll
	// commits again what was processed.
	recommit bool
	// dropped: at-most-once, the positions past the batches whose commit
	// before processing was refused, each with the assignment it was
	// polled in; the next poll commits them again (atMostOnceOffsets).
	dropped []droppedCommit
	// processExt is the group fields of the process operations of the
	// generation under way (task.go).
	processExt *history.Ext
	// writeCorr numbers the writes to the external store.
	writeCorr uint64
	pool      pool
}

// groupPoll is the group's part of a poll (ClassicKafkaConsumer.
// updateAssignmentMetadataIfNeeded, ConsumerCoordinator.poll): discovery,
// the assignment synced since the last poll (onJoinComplete), a join when
// one is needed (onJoinPrepare first), the auto-commit, and the committed
// offsets of new partitions. It reports whether the poll goes on to fetch;
// when a rebalance callback's commit is under way it does not, and the
// commit's end polls again.
func (r *Reader) groupPoll() bool {
	g := r.group
	if g.consumer != nil {
		return r.consumerPoll() // consumerproto.go
	}
	if g.fatal != "" || g.blocked {
		return false
	}
	now := r.env.Now()
	g.lastPoll = now // Heartbeat.poll: the poll timer starts over
	if !g.coordinatorKnown {
		r.lookupCoordinator()
	}
	if g.synced != nil && !r.onJoinComplete() {
		return false
	}
	if g.rejoinNeeded && g.coordinatorKnown && g.joinCorr == 0 && g.syncCorr == 0 && now >= g.joinRetryAt {
		if g.needsJoinPrepare && !r.onJoinPrepare() {
			return false
		}
		r.sendJoinGroup()
	}
	r.maybeAutoCommitAsync()
	r.fetchCommittedIfNeeded()
	return true
}

// maybeAutoCommitAsync is ConsumerCoordinator.maybeAutoCommitOffsetsAsync:
// every auto.commit.interval.ms, at a poll, the positions of what the
// previous polls returned (all processed by now) are committed, without
// waiting. Kafka also tries while no coordinator is known or the member is
// rebalancing, and fails at once; the reader waits for the next poll then.
func (r *Reader) maybeAutoCommitAsync() {
	g := r.group
	if g.cfg.Commit != CommitAuto || g.state != stable || !g.coordinatorKnown || r.env.Now() < g.nextAutoCommit {
		return
	}
	g.nextAutoCommit = r.env.Now() + g.cfg.AutoCommitInterval
	r.commitAsync(r.autoCommitOffsets())
}

// autoCommitOffsets is what the auto-commit commits: Kafka's
// SubscriptionState.allConsumed, the position of every assigned partition
// that has one, here as far as the application finished the records polled
// (processedOffsets). A partition whose position came from
// auto.offset.reset with no record polled since has that position
// committed too, as Kafka's is, once every record polled of it before the
// reset is finished: without it a partition reset to latest after the
// producers stopped is never committed — first assigned there, or moved
// there mid-session when its position fell out of range (retention deleted
// what it had not read yet) — and the group lags its high watermark. The
// reset position then counts as processed, so that every later commit of
// the member (a revocation's too) starts from it. So does a position
// KIP-320's validation sought back to, the log truncated under it, though it
// lies below what the member processed: Kafka commits the position, and a
// commit past the new log's end would have the partition's next owner skip
// the records written there next.
func (r *Reader) autoCommitOffsets() []commitOffset {
	g := r.group
	tps := r.ownedTPs()
	for _, tp := range tps {
		k := partKey{tp.Topic, tp.Partition}
		ps := r.subs.assignedState(k)
		if r.poolUnfinished(k, ps) {
			continue
		}
		if r.TruncatedUnconsumed(tp.Topic, tp.Partition) {
			g.processed[k] = ps.fetchPosition
			continue
		}
		if !r.ResetUnconsumed(tp.Topic, tp.Partition) {
			continue
		}
		if done, ok := g.processed[k]; !ok || done.offset < ps.fetchPosition.offset {
			g.processed[k] = ps.fetchPosition
		}
	}
	return r.processedOffsets(tps)
}

// wakePoll ends a poll waiting for records at once, as Kafka's poll loop
// would go round again to act on a rebalance event.
func (r *Reader) wakePoll() {
	if r.polling && r.pollWait != 0 {
		r.collector.collectFetch(r.subs.parts)
		r.finishPoll()
	}
}

// workItems lists the records of a poll's spans.
func workItems(spans []history.RecordSpan, keys bool) []workItem {
	n := 0
	for _, s := range spans {
		n += int(s.Hi - s.Lo)
	}
	if n == 0 {
		return nil
	}
	out := make([]workItem, 0, n)
	for _, s := range spans {
		epoch := int32(-1)
		if b, ok := s.Src.(*record.Batch); ok {
			epoch = b.PartitionLeaderEpoch
		}
		k := partKey{s.Topic, s.Partition}
		if b, ok := s.Src.(*record.Batch); ok && !b.Thinned() && !keys {
			// Record i is at BaseOffset+i (as the collector took them):
			// no need to decode the records for their offsets.
			for i := s.Lo; i < s.Hi; i++ {
				out = append(out, workItem{key: k, offset: b.BaseOffset + int64(i), epoch: epoch})
			}
			continue
		}
		s.Src.PolledRecords(int(s.Lo), int(s.Hi), func(offset int64, key []byte, hasKey bool, _ []byte) {
			it := workItem{key: k, offset: offset, epoch: epoch}
			if keys {
				it.rkey, it.hasKey = string(key), hasKey
			}
			out = append(out, it)
		})
	}
	return out
}

// offsetsAfter is, per partition, the position after the last of items
// (ordered within each partition), partitions in order of first appearance.
func offsetsAfter(items []workItem) []commitOffset {
	var out []commitOffset
	for _, it := range items {
		pos := fetchPosition{offset: it.offset + 1, offsetEpoch: it.epoch}
		found := false
		for i := range out {
			if out[i].key == it.key {
				out[i].pos, found = pos, true
			}
		}
		if !found {
			out = append(out, commitOffset{key: it.key, pos: pos})
		}
	}
	return out
}

// handOver gives the application the records a poll returned.
func (r *Reader) handOver(items []workItem) {
	g := r.group
	if g.cfg.Workers > 1 {
		r.poolHandOver(items)
		return
	}
	a := &g.app
	a.queue, a.next = items, 0
	a.generation, a.memberID = g.ownedGeneration, g.ownedMemberID
	if g.cfg.Commit == CommitBeforeProcessing && (len(a.queue) > 0 || r.recommitDropped()) {
		// At-most-once: commit past the records, then process them; a
		// refused commit means the partitions may be another member's now,
		// so the batch is dropped unprocessed.
		r.commitBeforeProcessing(a.queue, func(ok bool) {
			if !ok || len(a.queue) == 0 {
				a.queue = nil
				r.nextPoll()
				return
			}
			r.processNext()
		})
		return
	}
	if len(a.queue) == 0 && len(a.afterBatch) > 0 {
		// A revocation waited for this poll: nothing to process first.
		a.queue = nil
		r.processNext()
		return
	}
	if len(a.queue) == 0 {
		if g.cfg.Processor != nil {
			// Streams' run loop commits on its interval whether or not
			// the poll returned records (StreamThread.maybeCommit).
			r.processorCommit(false, r.nextPoll)
			return
		}
		if a.recommit && g.cfg.Commit == CommitAfterProcessing && g.state == stable {
			r.commitProcessed()
			return
		}
		r.nextPoll()
		return
	}
	r.processNext()
}

// droppedCommit is a position past a batch dropped at-most-once, and the
// assignment of its partition it was polled in.
type droppedCommit struct {
	commitOffset
	ps *partitionState
}

// recommitDropped reports whether a poll that returned nothing commits
// again past dropped batches: the member is in a stable generation
// (during a rebalance the commit would fail at once again).
func (r *Reader) recommitDropped() bool {
	return len(r.group.app.dropped) > 0 && r.group.state == stable
}

// commitBeforeProcessing is the at-most-once commitSync before a batch
// (items, maybe none) is processed: past the batch, and past the batches
// dropped before it on the partitions the member still holds where it
// left them. A commit refused during a rebalance (RebalanceInProgress-
// Exception) leaves the batch's position past records the member never
// processed; KafkaConsumer.commitSync's javadoc says to complete the
// rebalance by polling and reconsider the commit then, for the partitions
// still assigned. An application that does not commits nothing for them
// until more records come: the group's committed offset lags its position
// for good once the producers stop. A partition assigned again since, or
// whose position the application saw move (reset to the committed offset,
// KIP-320's truncation), drops its entry: committing it would move the
// committed offset past records the member reads again. The consumer's
// position alone may have moved on past batches the application never
// sees (a transaction marker after the batch): the application knows the
// offsets of the records it polled, not that, and commits them again.
func (r *Reader) commitBeforeProcessing(items []workItem, then func(ok bool)) {
	a := &r.group.app
	offsets := offsetsAfter(items)
	for _, d := range a.dropped {
		if r.subs.assignedState(d.key) != d.ps || d.ps.handedBy != sourceRecord || d.ps.handed != d.pos.offset {
			continue
		}
		if !slices.ContainsFunc(offsets, func(o commitOffset) bool { return o.key == d.key }) {
			offsets = append(offsets, d.commitOffset)
		}
	}
	a.dropped = nil
	r.commitSync(offsets, func(ok bool) {
		if !ok {
			for _, o := range offsets {
				if ps := r.subs.assignedState(o.key); ps != nil {
					a.dropped = append(a.dropped, droppedCommit{commitOffset: o, ps: ps})
				}
			}
		}
		then(ok)
	})
}

// processNext starts the poll loop's next record, or ends the batch.
func (r *Reader) processNext() {
	g := r.group
	a := &g.app
	for a.next < len(a.queue) {
		it := a.queue[a.next]
		ps := r.subs.assignedState(it.key)
		if ps == nil {
			a.next++ // revoked since the poll: dropped
			continue
		}
		t := a.spare
		if t == nil {
			t = new(task)
		}
		a.spare = nil
		*t = task{item: it, ps: ps, generation: a.generation, memberID: a.memberID}
		r.startTask(t)
		return
	}
	a.queue = nil
	if len(a.afterBatch) > 0 {
		// The revocation's commit covers the whole batch; the poll that
		// follows it is the revocation's.
		waiting := a.afterBatch
		a.afterBatch = nil
		for _, f := range waiting {
			f()
		}
		return
	}
	if g.cfg.Processor != nil {
		r.processorCommit(false, r.nextPoll)
		return
	}
	if g.cfg.Commit == CommitAfterProcessing {
		r.commitProcessed()
		return
	}
	r.nextPoll()
}

// commitProcessed is the at-least-once loop's commitSync after a batch. A
// commit that failed (a rebalance under way: RebalanceInProgressException,
// whose javadoc says to poll and commit again; the coordinator lost) is
// tried again after the next poll even when that poll returns nothing, or
// what the member processed would stay uncommitted until more records come.
func (r *Reader) commitProcessed() {
	a := &r.group.app
	r.commitSync(r.processedOffsets(r.ownedTPs()), func(ok bool) {
		a.recommit = !ok
		r.nextPoll()
	})
}

// loopTaskEnded goes on with the poll loop's batch once its record in
// processing ended: finished (its position is what the member processed
// of the partition) or dropped.
func (r *Reader) loopTaskEnded(t *task, finished bool) {
	g := r.group
	g.app.next++
	if finished && r.subs.assignedState(t.item.key) != nil {
		g.processed[t.item.key] = fetchPosition{offset: t.item.offset + 1, offsetEpoch: t.item.epoch}
	}
	// endTask took it out of tasks, and its timers find it by token only.
	g.app.spare = t
	r.processNext()
}

// nextPoll polls again after the reader's pause between polls.
func (r *Reader) nextPoll() {
	r.env.After(r.cfg.Processing.Draw(r.env.Rand()), rtimer{kind: timerPoll})
}

// closeGroup is ClassicKafkaConsumer.close for a member: with auto-commit,
// a last commitSync of what it processed, then LeaveGroup (a dynamic
// member's; a static one lets its session expire).
func (r *Reader) closeGroup() {
	g := r.group
	if g.consumer != nil {
		r.closeConsumerGroup() // consumerproto.go
		return
	}
	leave := func(bool) {
		sent := r.maybeLeaveGroup("the consumer is being closed")
		// Kafka's close ends once the LeaveGroup is answered (or its
		// timeout, the close timeout: the world's shutdown grace kills
		// the process first); a static member sends none and is done.
		if sent {
			g.exitOnLeave = true
		} else {
			r.env.Exit()
		}
	}
	if g.cfg.Commit == CommitAuto && g.state == stable && g.syncCommit == nil {
		r.commitSync(r.processedOffsets(r.ownedTPs()), leave)
		return
	}
	leave(true)
}
