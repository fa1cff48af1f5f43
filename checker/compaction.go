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
	return len(keys) == 1 && keys[0] >= 0 && ci.last[keys[0]] > offset
}

// compactableRecord is compactable for one record known at the offset:
// where two are known (one of them lost, its offset reused), the group was
// owed whichever the log held, and the cleaner may have removed that one
// if a record at a higher offset has its key. Only skipped-record asks it
// so far: the poll-skip checks keep compactable, so that runs without
// groups are judged as before.
func (a *analyzer) compactableRecord(part int32, offset int64, val int32) bool {
	ci := a.compactionIndex(part)
	if ci == nil {
		return false
	}
	key := int32(-1)
	if si := a.vals[val].send; si >= 0 {
		key = a.sends[si].key
	}
	return key >= 0 && ci.last[key] > offset
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
	return a.compaction[part]
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
