package reader

import "slices"

// What a pool of workers may commit of a partition. Workers finish records
// out of order, so the committed offset must stop below the lowest record
// not finished: the offset after the highest offset o such that every
// record of the partition polled at or below o has completed (its
// contiguous completed prefix). Committing past an unfinished record would
// skip it if the member crashed before finishing it — the bug an
// application makes when it commits the highest finished offset instead
// (GroupConfig.CommitHighestFinished), which the tracker also answers.

// pendingRecord is a polled record above the completed prefix.
type pendingRecord struct {
	offset int64
	epoch  int32
	// open counts the record's processings polled and not finished (a
	// record polled again, after a position moved back, opens another);
	// finished counts those that finished.
	open, finished int
}

// prefixTracker follows one partition's polled records in one assignment
// of it (ps: the partition state they were polled into).
type prefixTracker struct {
	ps *partitionState
	// prefix is the position after the contiguous completed prefix, and
	// highest the position after the highest finished record (offset -1:
	// none yet).
	prefix, highest fetchPosition
	// pending are the polled records above the prefix, by offset.
	pending []pendingRecord
	// loopCommitted is the offset the poll loop last committed (-1: none),
	// so that a turn that advanced nothing commits nothing.
	loopCommitted int64
}

func newPrefixTracker(ps *partitionState) *prefixTracker {
	none := fetchPosition{offset: -1, offsetEpoch: -1}
	return &prefixTracker{ps: ps, prefix: none, highest: none, loopCommitted: -1}
}

// polled adds a record handed to the workers. A record below the prefix
// comes after the member's position moved back below it (KIP-320's
// truncation seeks it back to the new log's end; a reset seeks it to the
// committed offset): the records polled from there are what the partition
// now holds, so the tracker starts again at that record, as the poll loop
// processing its batch itself commits the position after the records it
// last processed. Records polled before the move and still in processing
// no longer count. Keeping the old prefix instead would have the
// application commit nothing of the records it processes until they pass
// it — never, when the log was truncated below it and the commit of it
// lost with the group's __consumer_offsets data (fuzz seed 203552).
func (t *prefixTracker) polled(offset int64, epoch int32) {
	if t.prefix.offset >= 0 && offset < t.prefix.offset {
		t.prefix = fetchPosition{offset: -1, offsetEpoch: -1}
		t.pending = nil
	}
	i, found := slices.BinarySearchFunc(t.pending, offset, func(p pendingRecord, o int64) int { return cmpInt64(p.offset, o) })
	if found {
		t.pending[i].open++
		return
	}
	t.pending = slices.Insert(t.pending, i, pendingRecord{offset: offset, epoch: epoch, open: 1})
}

// finished marks a processing of a record done, and folds the records now
// contiguous into the prefix. A record dropped unprocessed is never
// finished: it holds the prefix back for good.
func (t *prefixTracker) finished(offset int64, epoch int32) {
	if offset+1 > t.highest.offset {
		t.highest = fetchPosition{offset: offset + 1, offsetEpoch: epoch}
	}
	i, found := slices.BinarySearchFunc(t.pending, offset, func(p pendingRecord, o int64) int { return cmpInt64(p.offset, o) })
	if !found {
		return
	}
	p := &t.pending[i]
	p.open = max(p.open-1, 0)
	p.finished++
	n := 0
	for n < len(t.pending) && t.pending[n].open == 0 && t.pending[n].finished > 0 {
		t.prefix = fetchPosition{offset: t.pending[n].offset + 1, offsetEpoch: t.pending[n].epoch}
		n++
	}
	t.pending = slices.Delete(t.pending, 0, n)
}

// committable is the position the application commits: the prefix's, or
// with the bug the highest finished record's. ok is false when nothing
// finished yet.
func (t *prefixTracker) committable(highestFinished bool) (fetchPosition, bool) {
	pos := t.prefix
	if highestFinished {
		pos = t.highest
	}
	return pos, pos.offset >= 0
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
