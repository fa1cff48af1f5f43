package partlog

import (
	"maps"
	"slices"

	"kafkasim/model/record"
)

// Recovery's walks over the batches, remembered. Opening a log walks every
// batch it holds: the leader-epoch cache is rebuilt from their epochs, the
// transaction index from the transactional ones, and after an unclean
// shutdown the producer state is rebuilt by replaying the recovered
// segments from their base (LogLoader.recoverSegment). A busy log's active
// segment rolls only at segment.bytes, so it may hold all of the log: every
// restart then cost as much as the log was long (a day-long soak spent a
// fifth of its time there). Each walk is a fold, a pure function of what
// it starts from and of the batches, and a batch never changes once in a
// log (record.Batch); so a segment keeps a digest of what the folds need
// from its first batches, which travels with the disk's memo of the
// segment (recallSegment) to the next restart, and the folds walk only the
// batches after it. The result, and so every snapshot written and every
// file touched, is the walk's: the digest is the simulator's shortcut, not
// the broker's.
//
// Sameness is checked, never assumed: a digest holds the index's blocks as
// they were, and a slot of a block's batches is written once (index.go),
// so a block the index still shares holds the same batches, and any other
// is compared batch by batch (matched). A batch decoded again, after a bit
// flip or a power loss, is a new batch, and ends what is the same.
//
// Only a log on a disk with a memo uses digests: on one without, every
// walk goes over every batch, the reference the tests compare with.

// segmentDigest is what the folds need from a segment's first n batches.
type segmentDigest struct {
	n int
	// blocks are the index's blocks' batches when the digest was made.
	blocks [][]*record.Batch
	// highs: the batches whose leader epoch exceeds every earlier one's
	// (and -1), oldest first. Rebuilding the epoch cache assigns exactly
	// those of them above the cache's latest epoch: a batch below one of
	// them is at or below what the cache holds by then.
	highs []epochHigh
	// txn: the indexes of the transactional batches with a producer id,
	// the only ones the transaction index is rebuilt from (a segment's
	// bytes, and so its batches, are fewer than 2^31).
	txn []int32
	// replays: producer states after replays of the segment's batches.
	replays []replayCheckpoint
}

type epochHigh struct {
	i     int
	epoch int32
	base  int64
}

// replayCheckpoint is the producer state that replaying batches [from, to)
// of the segment gave, starting from start: the snapshot's bytes the state
// was loaded from, or "" for the empty state (no snapshot is empty bytes).
type replayCheckpoint struct {
	start    string
	from, to int
	state    *ProducerState
}

// replayCheckpointsKept bounds a segment's checkpoints: one per restart is
// taken, and a truncation after it may need the one before.
const replayCheckpointsKept = 4

// matched is how many of x's first batches are the digest's: the same
// *record.Batch at the same index.
func (d *segmentDigest) matched(x *batchIndex) int { return min(d.n, d.matchedBlocks(x)) }

func (d *segmentDigest) matchedBlocks(x *batchIndex) int {
	m := 0
	for k, was := range d.blocks {
		if k >= len(x.blocks) {
			return m
		}
		now := x.blocks[k].batches
		n := min(len(was), len(now))
		if n > 0 && &was[0] == &now[0] {
			// One array: its first n slots were each written once.
			m += n
		} else {
			for j := range n {
				if was[j] != now[j] {
					return m + j
				}
			}
			m += n
		}
		if n < len(was) || n < len(now) && k+1 < len(d.blocks) {
			return m
		}
	}
	return m
}

// prefix is the digest of the first n of its batches.
func (d *segmentDigest) prefix(n int) *segmentDigest {
	if n >= d.n {
		return d
	}
	p := &segmentDigest{n: n}
	// Blocks are kept as they were (matched compares at most their first
	// n batches, as p.n bounds what the rest of p says).
	p.blocks = slices.Clone(d.blocks[:min(len(d.blocks), (n+indexBlockLen-1)>>indexBlockShift)])
	if k := len(p.blocks); k > 0 && n&indexBlockMask != 0 {
		p.blocks[k-1] = p.blocks[k-1][:min(len(p.blocks[k-1]), n&indexBlockMask)]
	}
	p.highs = slices.Clip(d.highs[:countBelow(d.highs, n, func(h epochHigh) int { return h.i })])
	p.txn = slices.Clip(d.txn[:countBelow(d.txn, n, func(i int32) int { return int(i) })])
	for _, c := range d.replays {
		if c.to <= n {
			p.replays = append(p.replays, c)
		}
	}
	return p
}

// countBelow is how many of the leading elements of s (in index order)
// have an index below n.
func countBelow[T any](s []T, n int, index func(T) int) int {
	k := len(s)
	for k > 0 && index(s[k-1]) >= n {
		k--
	}
	return k
}

// digest brings the segment's digest up to date with its batches (what of
// the old one still holds, and a walk over the rest) and returns it.
func (l *Log) digest(s *segment) *segmentDigest {
	x := &s.idx
	old := s.digest
	m := 0
	if old != nil {
		m = old.matched(x)
		if m == old.n && m == x.len() {
			return old
		}
		old = old.prefix(m)
	} else {
		old = &segmentDigest{}
	}
	d := &segmentDigest{n: x.len(), highs: old.highs, txn: old.txn, replays: old.replays}
	top := int32(-1)
	if k := len(d.highs); k > 0 {
		top = d.highs[k-1].epoch
	}
	l.walked += x.len() - m
	for i := m; i < x.len(); i++ {
		b := x.batch(i)
		if e := b.PartitionLeaderEpoch; e > top {
			d.highs = append(d.highs, epochHigh{i: i, epoch: e, base: b.BaseOffset})
			top = e
		}
		if b.Transactional && b.ProducerID >= 0 {
			d.txn = append(d.txn, int32(i))
		}
	}
	d.highs, d.txn = slices.Clip(d.highs), slices.Clip(d.txn)
	d.blocks = make([][]*record.Batch, len(x.blocks))
	for k := range x.blocks {
		d.blocks[k] = x.blocks[k].batches
	}
	s.digest = d
	return d
}

// replay replays batches [from, to) of s into the log's producer state.
// start is what the state was loaded from (replayCheckpoint), when keyed:
// then a checkpoint of an earlier replay from the same state over the same
// batches is taken up, and the state where this one ends is kept.
func (l *Log) replay(s *segment, from, to int, start string, keyed bool) {
	if from >= to {
		return
	}
	if l.memo == nil || !keyed {
		l.walked += to - from
		for i := from; i < to; i++ {
			l.producers.Update(s.idx.batch(i))
		}
		return
	}
	d := l.digest(s)
	i := from
	for _, c := range d.replays {
		if c.start == start && c.from == from && c.to <= to && c.to > i {
			l.producers, i = c.state.clone(), c.to
		}
	}
	if i == to {
		return
	}
	l.walked += to - i
	for ; i < to; i++ {
		l.producers.Update(s.idx.batch(i))
	}
	c := replayCheckpoint{start: start, from: from, to: to, state: l.producers.clone()}
	d.replays = append(d.replays[max(0, len(d.replays)-(replayCheckpointsKept-1)):len(d.replays):len(d.replays)], c)
}

// clone is a copy of the state that shares nothing with it.
func (p *ProducerState) clone() *ProducerState {
	c := &ProducerState{pids: slices.Clone(p.pids), entries: make([]*ProducerEntry, len(p.entries)), index: maps.Clone(p.index)}
	for i, e := range p.entries {
		ce := *e
		ce.Batches, ce.array = slices.Clone(e.Batches), nil
		c.entries[i] = &ce
	}
	if p.txn != nil {
		c.txn = &txnState{ongoing: slices.Clone(p.txn.ongoing), unreplicated: slices.Clone(p.txn.unreplicated)}
	}
	return c
}
