package reader

import (
	"strconv"

	"kafkasim/history"
	"kafkasim/model/extstore"
	"kafkasim/sim"
)

// Side effects: processing a record ends with a write of its effect to an
// external store (model/extstore: a database, a payment service), keyed by
// the record's identity "<topic>-<partition>-<offset>", so that an
// idempotent store keeps one effect per record. Kafka's guarantees stop at
// the store: a write whose acknowledgement is lost is sent again, and a
// plain store applies it twice; a record processed twice (after a crash, a
// rebalance, a zombie) writes twice. Each attempt is a side-effect
// operation: ok when the store acknowledged it, info when no answer came
// (it may have been applied).

// SideEffects is what processing a record writes to the external store.
type SideEffects string

const (
	// SideEffectsNone: processing writes nothing.
	SideEffectsNone SideEffects = ""
	// SideEffectsPlain: each record's effect goes to a plain store, which
	// applies every write it receives.
	SideEffectsPlain SideEffects = "plain"
	// SideEffectsIdempotent: each record's effect goes to an idempotent
	// store, which keeps one effect per key. The member writes the same
	// way to both; the store makes the difference.
	SideEffectsIdempotent SideEffects = "idempotent"
)

// sideEffectKey is the external key of a record's effect.
func sideEffectKey(k partKey, offset int64) string {
	return k.topic + "-" + strconv.Itoa(int(k.partition)) + "-" + strconv.FormatInt(offset, 10)
}

// sendWrite sends an attempt of the record's write, which waits for the
// store's answer up to request.timeout.ms (or the processing's deadline,
// default.api.timeout.ms after the first attempt, if sooner).
func (r *Reader) sendWrite(t *task) {
	g := r.group
	a := &g.app
	a.writeCorr++
	t.phase, t.writeCorr = taskWriting, a.writeCorr
	key := sideEffectKey(t.item.key, t.item.offset)
	w := history.NoValue()
	w.Topic, w.Partition, w.Offset = t.item.key.topic, t.item.key.partition, t.item.offset
	w.Key, w.HasKey = key, true
	x := w.X()
	x.Group, x.MemberID = g.cfg.GroupID, t.memberID
	t.write = &w
	if r.rec != nil {
		r.hist.Invoke(history.FSideEffect, t.write)
	}
	r.env.Send(g.cfg.Store, &extstore.ApplyRequest{CorrelationID: t.writeCorr, Key: key})
	timeout := min(g.cfg.RequestTimeout, t.writeDeadline-r.env.Now())
	r.env.After(max(timeout, 0), atimer{kind: aWriteTimeout, token: t.writeCorr})
}

// handleApplied takes the store's acknowledgement: the write is done, and
// with it the record's processing. An answer to an attempt given up (a
// late acknowledgement) is ignored: the application stopped waiting.
func (r *Reader) handleApplied(m *extstore.ApplyResponse) {
	for _, t := range r.group.app.tasks {
		if t.phase == taskWriting && t.writeCorr == m.CorrelationID {
			t.writeCorr = 0
			if r.rec != nil {
				// A copy: the recorded invoke shares t.write's Ext.
				x := *t.write.X()
				x.HasApplied, x.Applied = true, m.Applied
				done := *t.write
				done.Ext = &x
				r.hist.Complete(history.OK, history.FSideEffect, &done)
			}
			r.finishTask(t)
			return
		}
	}
}

// writeFailed ends an attempt that got no answer: info, for the store may
// have applied it. The write goes again after retry.backoff.ms, or, past
// the processing's deadline, the processing fails (task.go).
func (r *Reader) writeFailed(t *task, why string) {
	g := r.group
	t.writeCorr = 0
	t.write.Error = why
	if r.rec != nil {
		r.hist.Complete(history.Info, history.FSideEffect, t.write)
	}
	if r.env.Now()+g.cfg.RetryBackoff >= t.writeDeadline {
		r.giveUp(t, "side effect not acknowledged within default.api.timeout.ms")
		return
	}
	t.phase = taskWriteBackoff
	r.env.After(g.cfg.RetryBackoff, atimer{kind: aWriteRetry, token: t.token})
}

// storeDisconnected fails the writes in flight to a store whose connection
// reset: no answer will come to them.
func (r *Reader) storeDisconnected(peer sim.NodeID) {
	g := r.group
	if g.cfg.SideEffects == SideEffectsNone || peer != g.cfg.Store {
		return
	}
	var failed []*task
	for _, t := range g.app.tasks {
		if t.phase == taskWriting {
			failed = append(failed, t)
		}
	}
	for _, t := range failed {
		r.writeFailed(t, "store disconnected")
	}
}
