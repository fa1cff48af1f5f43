package reader

import (
	"slices"
	"strconv"
	"time"

	"kafkasim/history"
)

// One record's processing, by the poll loop itself or by a worker of the
// pool: a process operation from its start to its end, taking a draw of
// the processing range, then, with side effects, the write of its effect
// to the external store (sideeffect.go) — the processing ends only once the
// store acknowledged it.
//
// A write the store does not acknowledge within default.api.timeout.ms
// fails the processing: the process operation completes info (its effect
// may have been applied), and the application processes the record again
// after retry.backoff.ms, as long as it still owns the partition — the
// blocking retry of a careful at-least-once application (Spring Kafka's
// DefaultErrorHandler retries a failed record the same way, without
// skipping it). Skipping the record would lose its effect; seeking back
// would make the member read the partition's records out of order. The
// partition's committed offset stays below the record meanwhile; a poll
// loop that processes records itself stops polling while it retries (and
// may outlast max.poll.interval.ms, as Kafka's would), a pool polls on.

// taskPhase is where a processing stands.
type taskPhase uint8

const (
	taskProcessing   taskPhase = iota // the processing's draw runs
	taskWriting                       // a write to the store is in flight
	taskWriteBackoff                  // a write failed; the next waits retry.backoff.ms
	taskFailed                        // given up; processed again after retry.backoff.ms
)

// task is one record's processing.
type task struct {
	item workItem
	// ps is the partition's state the record was polled into: the
	// processing counts for the partition only while the member still
	// holds that assignment of it.
	ps *partitionState
	// generation and memberID are the member's when the record was polled.
	generation int32
	memberID   string
	token      uint64
	phase      taskPhase
	// ext is the process operation's group fields (the rest of it is the
	// record's: processValue).
	ext *history.Ext
	// The write to the store: the attempt in flight (0: none), its
	// operation (nil until the first), and when the processing gives up
	// retrying. A task is made per record processed: what only side
	// effects use stays out of it.
	writeCorr     uint64
	write         *history.Value
	writeDeadline time.Duration
}

// processValue is the task's process operation, completed with err unless
// err is "".
func (t *task) processValue(err string) history.Value {
	v := history.NoValue()
	v.Topic, v.Partition, v.Offset = t.item.key.topic, t.item.key.partition, t.item.offset
	v.Ext, v.Error = t.ext, err
	return v
}

// atimerKind is a timer of the application's processings.
type atimerKind uint8

const (
	aWriteTimeout atimerKind = iota // a write got no answer within its timeout (token: the write's corr)
	aWriteRetry                     // a failed write goes again (token: the task's)
	aProcessAgain                   // a failed processing starts again (token: the task's)
)

// atimer is a timer of the application's processings.
type atimer struct {
	kind  atimerKind
	token uint64
}

// String is how the trace shows the timer.
func (t atimer) String() string {
	return "reader.atimer {kind:" + strconv.Itoa(int(t.kind)) + " token:" + strconv.FormatUint(t.token, 10) + "}"
}

// startTask starts processing a record.
func (r *Reader) startTask(t *task) {
	g := r.group
	a := &g.app
	t.phase = taskProcessing
	// The process operations of one generation share their group fields:
	// the history keeps the pointer, and no one changes an Ext once
	// recorded.
	if e := a.processExt; e == nil || e.Generation != t.generation || e.MemberID != t.memberID {
		a.processExt = &history.Ext{Group: g.cfg.GroupID, Generation: t.generation, MemberID: t.memberID}
	}
	t.ext = a.processExt
	if p := g.cfg.Processor; p != nil {
		p.BeforeProcess()
	}
	if r.rec != nil {
		v := t.processValue("")
		r.hist.Invoke(history.FProcess, &v)
	}
	a.token++
	t.token = a.token
	a.tasks = append(a.tasks, t)
	r.env.After(g.cfg.Processing.Draw(r.env.Rand()), gtimer{kind: gProcessed, token: t.token})
}

// taskByToken is the processing token numbers, nil when it ended.
func (r *Reader) taskByToken(token uint64) *task {
	for _, t := range r.group.app.tasks {
		if t.token == token {
			return t
		}
	}
	return nil
}

// recordProcessed ends a record's processing draw: with side effects its
// write goes to the store, without it the processing is done.
func (r *Reader) recordProcessed(token uint64) {
	t := r.taskByToken(token)
	if t == nil || t.phase != taskProcessing {
		return
	}
	if r.group.cfg.SideEffects != SideEffectsNone {
		t.writeDeadline = r.env.Now() + r.group.cfg.DefaultAPITimeout
		r.sendWrite(t)
		return
	}
	r.finishTask(t)
}

// finishTask completes a record's processing.
func (r *Reader) finishTask(t *task) {
	if p := r.group.cfg.Processor; p != nil {
		it := t.item
		p.Output(Input{Topic: it.key.topic, Partition: it.key.partition, Offset: it.offset, Key: it.rkey, HasKey: it.hasKey})
	}
	if r.rec != nil {
		v := t.processValue("")
		r.hist.Complete(history.OK, history.FProcess, &v)
	}
	r.endTask(t, true)
}

// endTask frees the record's worker: finished, or dropped unprocessed.
func (r *Reader) endTask(t *task, finished bool) {
	a := &r.group.app
	a.tasks = slices.DeleteFunc(a.tasks, func(x *task) bool { return x == t })
	if r.group.cfg.Workers > 1 {
		r.poolTaskEnded(t, finished)
		return
	}
	r.loopTaskEnded(t, finished)
}

// giveUp fails a record's processing: its write was not acknowledged
// within default.api.timeout.ms. The record is processed again after
// retry.backoff.ms.
func (r *Reader) giveUp(t *task, why string) {
	t.phase = taskFailed
	if r.rec != nil {
		v := t.processValue(why)
		r.hist.Complete(history.Info, history.FProcess, &v)
	}
	r.env.After(r.group.cfg.RetryBackoff, atimer{kind: aProcessAgain, token: t.token})
}

// processAgain starts a failed record over, unless the member gave up its
// partition (or is giving it up) since: then the record is dropped, and
// whoever owns the partition next processes it from the committed offset.
func (r *Reader) processAgain(t *task) {
	a := &r.group.app
	if r.subs.assignedState(t.item.key) != t.ps || r.poolRevoking(t.item.key) {
		r.endTask(t, false)
		return
	}
	a.tasks = slices.DeleteFunc(a.tasks, func(x *task) bool { return x == t })
	t.write = nil
	r.startTask(t)
}

// fireApp handles a timer of the application's processings.
func (r *Reader) fireApp(at atimer) {
	if r.group == nil {
		return
	}
	switch at.kind {
	case aWriteTimeout:
		for _, t := range r.group.app.tasks {
			if t.phase == taskWriting && t.writeCorr == at.token {
				r.writeFailed(t, "no answer within request.timeout.ms")
				return
			}
		}
	case aWriteRetry:
		if t := r.taskByToken(at.token); t != nil && t.phase == taskWriteBackoff {
			r.sendWrite(t)
		}
	case aProcessAgain:
		if t := r.taskByToken(at.token); t != nil && t.phase == taskFailed {
			r.processAgain(t)
		}
	}
}
