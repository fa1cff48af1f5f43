package partlog

import (
	"sort"

	"kafkasim/model/record"
)

// Reading the log: batches from an offset (a fetch's Read, a Scan, a
// Cursor walking forward), found by segment and batch index.

// Batches lists the batches from the one holding offset from, oldest first.
func (l *Log) Batches(from int64) []*record.Batch {
	var out []*record.Batch
	l.each(from, func(b *record.Batch) { out = append(out, b) })
	return out
}

// each calls f for the batches from the one holding offset from, oldest
// first.
func (l *Log) each(from int64, f func(b *record.Batch)) {
	si, bi := l.find(from)
	for ; si < len(l.segs); si, bi = si+1, 0 {
		l.segs[si].idx.each(bi, func(b *record.Batch) bool { f(b); return true })
	}
}

// Cursor walks a log's batches in offset order.
type Cursor struct {
	l      *Log
	si, bi int
}

// Cursor starts a walk at the batch holding offset from.
func (l *Log) Cursor(from int64) Cursor {
	si, bi := l.find(from)
	return Cursor{l: l, si: si, bi: bi}
}

// At moves forward to the batch holding offset and returns it, or nil when
// no batch holds it. Offsets must not go back between calls.
func (c *Cursor) At(offset int64) *record.Batch {
	for c.si < len(c.l.segs) {
		s := c.l.segs[c.si]
		if c.bi = s.idx.seek(c.bi, offset); c.bi < s.idx.len() {
			if b := s.idx.batch(c.bi); b.BaseOffset <= offset {
				return b
			}
			return nil
		}
		c.si, c.bi = c.si+1, 0
	}
	return nil
}

// Scan calls f for the batches from the one holding offset from up to (not
// including) the first that starts at or after upTo, oldest first, until f
// returns false. Unlike Read it allocates nothing.
func (l *Log) Scan(from, upTo int64, f func(b *record.Batch) bool) {
	si, bi := l.find(from)
	for ; si < len(l.segs); si, bi = si+1, 0 {
		if !l.segs[si].idx.eachBefore(bi, upTo, f) {
			return
		}
	}
}

// find locates the batch holding offset: segment index and batch index, or
// the position where it would be.
func (l *Log) find(offset int64) (int, int) {
	// Most lookups are near the log end (a high watermark, a fetch
	// position): look at the last segment's last few batches first.
	// Offsets grow along the log, so a batch of the last segment whose
	// predecessor there ends below offset is the answer for the whole log.
	if n := len(l.segs); n > 0 {
		// (Within its last block: past its start, search.)
		batches, base := l.segs[n-1].idx.lastBlock()
		if k := len(batches); k > 0 {
			if offset > batches[k-1].LastOffset() {
				return n, 0
			}
			for i := k - 1; i > 0 && i >= k-8; i-- {
				if batches[i-1].LastOffset() < offset {
					return n - 1, base + i
				}
			}
		}
	}
	return l.findBySearch(offset)
}

// findBySearch is find by binary search over the whole log.
func (l *Log) findBySearch(offset int64) (int, int) {
	si := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].next() > offset })
	if si == len(l.segs) {
		return si, 0
	}
	s := l.segs[si]
	return si, s.idx.search(offset)
}

// BatchAt returns the batch holding offset, or nil.
func (l *Log) BatchAt(offset int64) *record.Batch {
	si, bi := l.find(offset)
	if si == len(l.segs) || bi == l.segs[si].idx.len() {
		return nil
	}
	if b := l.segs[si].idx.batch(bi); b.BaseOffset <= offset {
		return b
	}
	return nil
}

// Read returns whole batches from the one holding from, up to (not
// including) upTo, and up to maxBytes (at least one batch, as Kafka's
// minOneMessage).
func (l *Log) Read(from, upTo int64, maxBytes int) []*record.Batch {
	si, bi := l.find(from)
	var out []*record.Batch
	size := 0
	for first := si; si < len(l.segs); si, bi = si+1, 0 {
		s := l.segs[si]
		start := bi
		for ; bi < s.idx.len(); bi++ {
			b := s.idx.batch(bi)
			if b.BaseOffset >= upTo || ((out != nil || bi > start) && size+b.SizeBytes() > maxBytes) {
				break
			}
			size += b.SizeBytes()
		}
		if si == first && (bi < s.idx.len() || si == len(l.segs)-1) {
			// Within one segment: a view of its batches when they share
			// a block (they never change below the view's length:
			// batchIndex.cut), else a copy.
			return s.idx.view(start, bi)
		}
		out = s.idx.appendTo(out, start, bi)
		if bi < s.idx.len() {
			break
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
