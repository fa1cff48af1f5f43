package checker

import (
	"slices"

	"kafkasim/history"
)

// The log cleaner's excuse: whether a compacted topic's cleaner may have
// removed the record at an offset. Both poll-skip checks (pollskip.go,
// coverage.go) and skipped-record (groupchecks.go) ask it; its index is
// built at the first question.

// compactable reports whether the cleaner of a compacted topic may have
// removed the record at partition part's offset: every record known there
// has a key that a record at a higher offset has too.
func (a *analyzer) compactable(part int32, offset int64) bool {
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
			ci := &compactIndex{keysAt: map[int64][]int32{}, last: map[int32]int64{}}
			for i := range po.obs {
				key := int32(-1)
				if si := a.vals[po.obs[i].val].send; si >= 0 {
					key = a.sends[si].key
				}
				ci.note(po.obs[i].off, key)
			}
			a.compaction[int32(pi)] = ci
		}
		for i := range a.sends {
			s := &a.sends[i]
			if ci := a.compaction[s.part]; s.part >= 0 && ci != nil && s.typ == history.OK && s.offset >= 0 {
				ci.note(s.offset, s.key)
			}
		}
	}
	ci := a.compaction[part]
	if ci == nil {
		return false
	}
	keys, ok := ci.keysAt[offset]
	if !ok {
		return false
	}
	// Two records known at one offset (one of them lost with a leader, its
	// offset reused): whichever the log holds, the cleaner may have removed
	// it only if each has a later record of its key.
	for _, key := range keys {
		if key < 0 || ci.last[key] <= offset {
			return false
		}
	}
	return true
}

// compactIndex is what compactable knows of one compacted partition: the
// keys of the records known at each offset (-1: a record without a key),
// and each key's highest known offset.
type compactIndex struct {
	keysAt map[int64][]int32
	last   map[int32]int64
}

// note records a record of key (-1: none) seen at off.
func (ci *compactIndex) note(off int64, key int32) {
	if keys := ci.keysAt[off]; !slices.Contains(keys, key) {
		ci.keysAt[off] = append(keys, key)
	}
	if key >= 0 {
		ci.last[key] = max(ci.last[key], off)
	}
}
