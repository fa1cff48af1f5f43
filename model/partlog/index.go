package partlog

import (
	"math"
	"sort"

	"kafkasim/model/record"
)

// A segment's index lists, per batch, the batch and where it starts in the
// file (searches by offset read the batches' own last offsets: a run keeps
// an entry for every batch on every replica, six million in an hour of the
// reference load, and a copy of the last offset took 8 bytes of each 20). A replica's segment grows to hundreds of thousands of
// batches in a run, so the index lives in blocks that never move: each entry
// is allocated once (a doubling slice allocated twice the final size, half
// of it garbage). The first block grows by doubling from a few entries, so
// that a small segment stays small.
//
// Reads hand out views of a block's batches (view), which must never change
// below their length: a cut copies the block it keeps part of, and appends
// only ever write past every view.

const (
	indexBlockShift = 12
	indexBlockLen   = 1 << indexBlockShift
	indexBlockMask  = indexBlockLen - 1
	indexFirstLen   = 8
)

type indexBlock struct {
	batches []*record.Batch
	// A position fits 32 bits: segment.bytes is at most 2^31-1, and a
	// segment ends with the first batch past it.
	positions []uint32
}

type batchIndex struct {
	blocks []indexBlock
	n      int
	// next is the offset after the last entry's batch, when n > 0: the
	// log end offset, read on every fetch and append of every replica,
	// without going through the block to the batch (a miss each, on
	// thousands of partitions). Batches in a log never change.
	next int64
}

func (x *batchIndex) len() int { return x.n }

func (x *batchIndex) block(i int) *indexBlock { return &x.blocks[i>>indexBlockShift] }

func (x *batchIndex) batch(i int) *record.Batch {
	return x.block(i).batches[i&indexBlockMask]
}

func (x *batchIndex) position(i int) int64 {
	return int64(x.block(i).positions[i&indexBlockMask])
}

func (x *batchIndex) last(i int) int64 { return x.batch(i).LastOffset() }

func (x *batchIndex) add(b *record.Batch, pos uint32) {
	k := x.n >> indexBlockShift
	if k == len(x.blocks) {
		size := indexBlockLen
		if k == 0 {
			size = indexFirstLen
		}
		x.blocks = append(x.blocks, indexBlock{
			batches:   make([]*record.Batch, 0, size),
			positions: make([]uint32, 0, size),
		})
	}
	blk := &x.blocks[k]
	// Only the first block ever grows (by append's doubling).
	blk.batches = append(blk.batches, b)
	blk.positions = append(blk.positions, pos)
	x.n++
	x.next = b.NextOffset()
}

// settleNext sets next from the last entry, after the entries changed
// otherwise than by add.
func (x *batchIndex) settleNext() {
	if x.n > 0 {
		x.next = x.batch(x.n - 1).NextOffset()
	}
}

// lastBlock returns the last block's batches and the index of its first
// entry (a lookup near the end reads only them).
func (x *batchIndex) lastBlock() (batches []*record.Batch, base int) {
	if len(x.blocks) == 0 {
		return nil, 0
	}
	k := len(x.blocks) - 1
	return x.blocks[k].batches, k << indexBlockShift
}

// seek is the first i at or after from whose last offset is at least
// offset (len if none): a walk forward, for offsets that grow.
func (x *batchIndex) seek(from int, offset int64) int {
	for k := from >> indexBlockShift; k < len(x.blocks); k++ {
		batches := x.blocks[k].batches
		lo := 0
		if k == from>>indexBlockShift {
			lo = from & indexBlockMask
		}
		for j := lo; j < len(batches); j++ {
			if batches[j].LastOffset() >= offset {
				return k<<indexBlockShift + j
			}
		}
	}
	return x.n
}

// search is the first i whose last offset is at least offset (len if
// none): the batch holding offset, or where it would be.
func (x *batchIndex) search(offset int64) int {
	// The block first (by its last entry), then within it.
	k := sort.Search(len(x.blocks), func(k int) bool {
		// Only the last block can be empty (after a cut): it ends the
		// search as if it held everything past.
		b := x.blocks[k].batches
		return len(b) == 0 || b[len(b)-1].LastOffset() >= offset
	})
	if k == len(x.blocks) {
		return x.n
	}
	b := x.blocks[k].batches
	return k<<indexBlockShift + sort.Search(len(b), func(i int) bool { return b[i].LastOffset() >= offset })
}

// view returns batches [from, to): a view of the block when they share one
// (capped, so an append never reaches it), else a copy.
func (x *batchIndex) view(from, to int) []*record.Batch {
	if from >= to {
		return nil
	}
	if k := from >> indexBlockShift; (to-1)>>indexBlockShift == k {
		b := x.blocks[k].batches
		lo, hi := from&indexBlockMask, (to-1)&indexBlockMask+1
		return b[lo:hi:hi]
	}
	return x.appendTo(make([]*record.Batch, 0, to-from), from, to)
}

// appendTo appends batches [from, to) to out.
func (x *batchIndex) appendTo(out []*record.Batch, from, to int) []*record.Batch {
	for from < to {
		k := from >> indexBlockShift
		end := min(to, (k+1)<<indexBlockShift)
		out = append(out, x.blocks[k].batches[from&indexBlockMask:end-k<<indexBlockShift]...)
		from = end
	}
	return out
}

// each calls f for batches from, from+1, ... until f returns false; it
// returns false if f did.
func (x *batchIndex) each(from int, f func(b *record.Batch) bool) bool {
	return x.eachBefore(from, math.MaxInt64, f)
}

// eachBefore is each over the batches that start before upTo, the bound
// checked in the loop rather than by a closure around f (the audit scans
// every batch a high watermark passes, three replicas over).
func (x *batchIndex) eachBefore(from int, upTo int64, f func(b *record.Batch) bool) bool {
	for k := from >> indexBlockShift; k < len(x.blocks); k++ {
		b := x.blocks[k].batches
		lo := 0
		if k == from>>indexBlockShift {
			lo = from & indexBlockMask
		}
		for _, batch := range b[lo:] {
			if batch.BaseOffset >= upTo || !f(batch) {
				return false
			}
		}
	}
	return true
}

// prefix returns an index of x's first n entries that shares x's whole
// blocks (nobody writes a whole block again: adds go past it, and a cut
// copies the block it keeps part of) and copies the entries after them.
// Neither index changes the other afterwards.
func (x *batchIndex) prefix(n int) batchIndex {
	whole := min(n, x.n) >> indexBlockShift
	y := batchIndex{blocks: make([]indexBlock, whole, whole+1), n: whole << indexBlockShift}
	for i := range whole {
		b := x.blocks[i]
		y.blocks[i] = indexBlock{batches: b.batches[:indexBlockLen:indexBlockLen],
			positions: b.positions[:indexBlockLen:indexBlockLen]}
	}
	for i := y.n; i < n; i++ {
		y.add(x.batch(i), uint32(x.position(i)))
	}
	y.settleNext()
	return y
}

// cut keeps the first n entries. The block holding entry n moves to fresh
// arrays with what it keeps: views handed out of it stay as they were, and
// the blocks past it go.
func (x *batchIndex) cut(n int) {
	if n >= x.n {
		return
	}
	k := n >> indexBlockShift
	keep := n & indexBlockMask
	clear(x.blocks[k+1:])
	x.blocks = x.blocks[:k+1]
	old := x.blocks[k]
	size := cap(old.batches)
	x.blocks[k] = indexBlock{
		batches:   append(make([]*record.Batch, 0, size), old.batches[:keep]...),
		positions: append(make([]uint32, 0, size), old.positions[:keep]...),
	}
	x.n = n
	x.settleNext()
}
