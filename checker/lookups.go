package checker

import (
	"strings"

	"kafkasim/godview"
)

// Lookups by a finding's position (partition@offset, value): what the
// verdicts (verdicts.go, checker.go) ask of the analysis after the checks
// ran, to tell a permitted cost from a broken guarantee.

// inFinalReadsBefore reports whether final reads hold, at partition@offset,
// a record sent before operation op: one that was there when op ran, not
// one that took the offset later (after a loss reset the log). For a
// read_committed reader (rc), only a record it may read counts: a record
// of an aborted transaction there is one it rightly jumps over (fuzz seed
// 780: after an unclean election, an aborted transaction's records took
// the offsets of a committed one the reader had read before).
func (a *analyzer) inFinalReadsBefore(partition string, offset, op int64, rc bool) bool {
	pi := a.partByName(partition)
	if pi < 0 {
		return false
	}
	for _, o := range a.parts[pi].obsAt(offset) {
		if a.obsFlags(&o)&obsFinal == 0 || (rc && !a.visibleToRC(o.val)) {
			continue
		}
		if si := a.valSend[o.val]; si < 0 || a.invoke(&a.sends[si]) < op {
			return true
		}
	}
	return false
}

// commitUndone finds, for a read_committed reader that passed over the
// record final reads hold at partition@offset by operation op, a loss in
// __transaction_state that came after the acknowledgement of the record's
// transaction's commit and no later than op, before any read_committed poll
// returned the record: the coordinator, reloading the transactional id from
// what the partition still held, may have found the transaction Ongoing
// (its PrepareCommit lost with the rest) and aborted it, and its ABORT
// marker makes read_committed readers pass over the record.
func (a *analyzer) commitUndone(partition string, offset, op int64) (DataLoss, bool) {
	pi := a.partByName(partition)
	if pi < 0 {
		return DataLoss{}, false
	}
	for _, o := range a.parts[pi].obsAt(offset) {
		if a.obsFlags(&o)&obsFinal == 0 {
			continue
		}
		si := a.valSend[o.val]
		if si < 0 || a.txn(&a.sends[si]) < 0 {
			continue
		}
		t := &a.txns[a.txn(&a.sends[si])]
		if !t.okCommit || t.end < 0 {
			continue
		}
		for i, l := range a.lossOps.losses {
			at := a.lossOps.at[i]
			if !strings.HasPrefix(l.Partition, "__transaction_state-") || at <= t.end || at > op {
				continue
			}
			if !a.readCommittedBefore(pi, offset, o.val, at) {
				return l, true
			}
		}
	}
	return DataLoss{}, false
}

// readCommittedBefore reports whether a read_committed poll before operation
// index op returned value v at offset of partition pi.
func (a *analyzer) readCommittedBefore(pi int32, offset int64, v int32, op int64) bool {
	for _, o := range a.parts[pi].obsAt(offset) {
		if o.val == v && a.obsFlags(&o)&obsRC != 0 && o.op < op {
			return true
		}
	}
	return false
}

// finalHolds reports whether final reads hold value at partition@offset.
func (a *analyzer) finalHolds(partition string, offset int64, value string) bool {
	pi := a.partByName(partition)
	vi, ok := a.valIDs.get(value)
	if pi < 0 || !ok {
		return false
	}
	for _, o := range a.parts[pi].obsAt(offset) {
		if a.obsFlags(&o)&obsFinal != 0 && o.val == vi {
			return true
		}
	}
	return false
}

// readAt reports whether a poll saw value at partition@offset.
func (a *analyzer) readAt(partition string, offset int64, value string) bool {
	pi := a.partByName(partition)
	vi, ok := a.valIDs.get(value)
	if pi < 0 || !ok {
		return false
	}
	for _, o := range a.parts[pi].obsAt(offset) {
		if a.obsFlags(&o)&obsRead != 0 && o.val == vi {
			return true
		}
	}
	return false
}

// readValuesAt counts the distinct values polls saw at partition@offset.
func (a *analyzer) readValuesAt(partition string, offset int64) int {
	pi := a.partByName(partition)
	if pi < 0 {
		return 0
	}
	n := 0
	last := int32(-1)
	for _, o := range a.parts[pi].obsAt(offset) {
		if a.obsFlags(&o)&obsRead != 0 && o.val != last {
			n++
			last = o.val
		}
	}
	return n
}

// ackedCopyLostAt names the sender of a record acknowledged at
// partition@offset that no poll saw there and final reads do not hold there:
// that acknowledged copy is gone (the record may survive elsewhere, from
// another attempt of its batch).
func (a *analyzer) ackedCopyLostAt(partition string, offset int64) (string, bool) {
	pi := a.partByName(partition)
	if pi < 0 {
		return "", false
	}
	obs := a.parts[pi].obsAt(offset)
	for _, o := range obs {
		if a.obsFlags(&o)&obsRead != 0 || a.valSend[o.val] < 0 {
			continue
		}
		kept := false
		for _, x := range obs {
			kept = kept || (x.val == o.val && a.obsFlags(&x)&(obsRead|obsFinal) != 0)
		}
		if !kept {
			return a.procs[a.sends[a.valSend[o.val]].proc].name, true
		}
	}
	return "", false
}

// logStartOf is a partition's log start offset when final reads began.
func (a *analyzer) logStartOf(partition string) int64 {
	if pi := a.partByName(partition); pi >= 0 {
		return a.parts[pi].logStart
	}
	return 0
}

// senderOf names the process that sent value, if any.
func (a *analyzer) senderOf(value string) (string, bool) {
	vi, ok := a.valIDs.get(value)
	if !ok || a.valSend[vi] < 0 {
		return "", false
	}
	return a.procs[a.sends[a.valSend[vi]].proc].name, true
}

// reusedOffset reports whether another record took value's offset after it:
// seen there (acknowledged or read) later than value was last seen there.
// The cleaner never reuses an offset, so value was lost some other way (a
// leader failed before its followers copied it). A record that held the
// offset before value (one lost that way, whose offset value then took)
// says nothing about value. Nor does a later acknowledgement at an offset
// where a poll read value (below a high watermark: committed) when the god
// view saw no committed data lost there: a committed offset is never taken
// again without such a loss, so that acknowledgement came from a log that
// diverged (a deposed leader, resumed from a pause, appending and answering
// acks=1 at its own end: fuzz seed 3008800), and its write is the one lost.
func (a *analyzer) reusedOffset(partition string, offset int64, value string) bool {
	pi := a.partByName(partition)
	vi, ok := a.valIDs.get(value)
	if pi < 0 || !ok || offset < 0 {
		return false
	}
	obs := a.parts[pi].obsAt(offset)
	last := int64(-1)
	if si := a.valSend[vi]; si >= 0 {
		last = a.complete(&a.sends[si])
	}
	read := false
	for _, o := range obs {
		if o.val == vi {
			last = max(last, o.op)
			read = read || a.obsFlags(&o)&obsRead != 0
		}
	}
	committed := read && a.cfg.Happened.GodView() && !a.cfg.Happened.Covers(godview.Loss, partition, offset)
	for _, o := range obs {
		if o.val != vi && o.op > last && (a.obsFlags(&o)&obsRead != 0 || !committed) {
			return true
		}
	}
	return false
}

// supersededInFinal reports whether final reads hold, after offset, a record
// with the same key as the send of value.
func (a *analyzer) supersededInFinal(partition string, offset int64, value string) bool {
	vi, ok := a.valIDs.get(value)
	pi := a.partByName(partition)
	if !ok || pi < 0 || a.valSend[vi] < 0 {
		return false
	}
	s := &a.sends[a.valSend[vi]]
	if s.key < 0 {
		return false
	}
	po := a.parts[pi]
	for ob := range po.after(offset) {
		if a.obsFlags(ob)&obsFinal == 0 {
			continue
		}
		if li := a.valSend[ob.val]; li >= 0 && a.sends[li].key == s.key {
			return true
		}
	}
	return false
}
