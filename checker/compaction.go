package checker

import (
	"slices"

	"kafkasim/history"
)

// The log cleaner's excuse: whether a compacted topic's cleaner may have
// removed the record at an offset. Both poll-skip checks (pollskip.go,
// coverage.go) and skipped-record (groupchecks.go) ask it.

// compactable reports whether the cleaner of a compacted topic may have
// removed the record at partition part's offset: the one record known there
// has a key that a record at a higher offset has too.
func (a *analyzer) compactable(part int32, offset int64) bool {
	ci := a.compactionIndex(part)
	if ci == nil {
		return false
	}
	keys := ci.keysAt[offset]
	return len(keys) == 1 && (keys[0].key >= 0 && ci.last[keys[0].key] > offset || a.abortable(keys[0].txn))
}

// abortable: a record of transaction t (-1: none) that the cleaner may
// drop whatever its key, its transaction not known to have committed (an
// aborted transaction's batches are discarded whole: LogCleaner's
// CleanedTransactionMetadata; one of unknown outcome may have been
// aborted by its coordinator).
func (a *analyzer) abortable(t int32) bool {
	return t >= 0 && int(t) < len(a.txns) && a.txns[t].outcome != txnCommitted
}

// compactableBefore is compactable for a reader that jumped over offset in
// the poll that completed at operation op: the records it can have jumped
// over are those known there whose send began before op (one sent later took
// the offset after a loss emptied the log, and was not there to skip), and
// the cleaner may have removed whichever the log held then if each has a
// key that a record at a higher offset has too. An offset where two such
// records are known is one whose record a loss replaced, or one where a
// deposed leader's tail and its successor's log disagreed: the leader the
// reader fetched from held one of them (fuzz seed 325955: the cleaner of the
// leader of epoch 1 had removed its record at 3270, and an unclean election
// later made the deposed leader's older-epoch record there the log). With
// none sent before op, compactable answers.
func (a *analyzer) compactableBefore(part int32, offset, op int64) bool {
	ci := a.compactionIndex(part)
	if ci == nil {
		return false
	}
	n := 0
	for _, k := range ci.keysAt[offset] {
		if k.first >= op {
			continue
		}
		if (k.key < 0 || ci.last[k.key] <= offset) && !a.abortable(k.txn) {
			return false
		}
		n++
	}
	if n == 0 {
		return a.compactable(part, offset)
	}
	return true
}

// compactableRecord is compactable for one record known at the offset:
// where two are known (one of them lost, its offset reused), the group was
// owed whichever the log held, and the cleaner may have removed that one
// if a record at a higher offset has its key. skipped-record asks it; the
// poll-skip checks ask compactableBefore, which asks the same of every
// record the reader can have jumped over.
func (a *analyzer) compactableRecord(part int32, offset int64, val int32) bool {
	ci := a.compactionIndex(part)
	if ci == nil {
		return false
	}
	key, txn := int32(-1), int32(-1)
	if si := a.valSend[val]; si >= 0 {
		key, txn = a.sends[si].key, a.txn(&a.sends[si])
	}
	return key >= 0 && ci.last[key] > offset || a.abortable(txn)
}

// compactionIndex is partition part's index (nil: not compacted), built
// for every partition at the first question.
func (a *analyzer) compactionIndex(part int32) *compactIndex {
	if a.compaction == nil {
		a.compaction = map[int32]*compactIndex{}
		compact := map[string]bool{}
		for _, t := range a.cfg.Topics {
			compact[t.Name] = t.Compact
		}
		for pi, po := range a.parts {
			if !compact[topicOf(po.name)] {
				continue
			}
			ci := &compactIndex{keysAt: map[int64][]keyAt{}, last: map[int32]int64{}}
			for ob := range po.all() {
				key, first, txn := int32(-1), int64(-1), int32(-1)
				if si := a.valSend[ob.val]; si >= 0 {
					key, first, txn = a.sends[si].key, a.invoke(&a.sends[si]), a.txn(&a.sends[si])
				}
				ci.note(ob.off, key, first, txn)
			}
			a.compaction[int32(pi)] = ci
		}
		for i := range a.sends {
			s := &a.sends[i]
			if ci := a.compaction[s.part()]; s.part() >= 0 && ci != nil && s.typ == history.OK && a.offset(s) >= 0 {
				ci.note(a.offset(s), s.key, a.invoke(s), a.txn(s))
			}
		}
	}
	return a.compaction[part]
}

// compactIndex is what compactable knows of one compacted partition: the
// keys of the records known at each offset (-1: a record without a key),
// each with the earliest invocation of a send of that key known there, and
// each key's highest known offset.
type compactIndex struct {
	keysAt map[int64][]keyAt
	last   map[int32]int64
}

// keyAt is a key known at an offset, and the earliest invocation (op index;
// -1: unknown) of a send of a record of that key known there, and the
// transaction of the records of that key there (-1: none, or not one
// transaction).
type keyAt struct {
	key   int32
	first int64
	txn   int32
}

// note records a record of key (-1: none) seen at off, sent by a send
// invoked at first (-1: unknown).
func (ci *compactIndex) note(off int64, key int32, first int64, txn int32) {
	keys := ci.keysAt[off]
	if i := slices.IndexFunc(keys, func(k keyAt) bool { return k.key == key }); i >= 0 {
		keys[i].first = min(keys[i].first, first)
		if keys[i].txn != txn {
			keys[i].txn = -1
		}
	} else {
		ci.keysAt[off] = append(keys, keyAt{key, first, txn})
	}
	if key >= 0 {
		ci.last[key] = max(ci.last[key], off)
	}
}
