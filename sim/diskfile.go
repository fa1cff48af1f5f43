package sim

import (
	"bytes"
	"math/bits"
	"sort"

	"kafkasim/internal/byteview"
)

// A file's bytes, as a list of extents: runs of bytes that nobody changes
// once written (a write's own buffer, handed over by WriteOwned or copied
// by Write, or a stretch of the shared zeros a gap reads as). Writing costs
// no copy of the data — a log's record batches reach every replica's disk
// as the very bytes the batch holds — and the page cache's copy of a file
// and its durable copy share extents, and the blocks holding them.
//
// The list is kept in blocks that never move: block j holds firstBlock<<j
// extents up to maxBlock, so a list that grows to millions of extents is
// never copied, and a small file's list stays small.
//
// Sharing rules.
//   - Extent bytes are never written: a bit flip copies its extent first.
//   - A block element a file can see is never changed. A file writes into a
//     block only past its own length, and only into a block that is its
//     own (mine: its last block, which no other file has ever been given
//     sight of past this file's length). Otherwise it copies the block
//     first.
//   - A file handing its list to another gives the block pointers in a
//     clipped slice, so that neither appends over the other's.
//
// So two files sharing a block see the same elements below the shorter
// length, which is what lets the durable copy make a write durable by
// counting one more element of a block it shares with the cache
// (settleWrite).

// extent is a run of a file's bytes: n bytes from data, ending at file
// offset end past the start of its block (the file's starts). It takes 16
// bytes, not the 32 of a slice and an offset: a run keeps an extent for
// every batch on every replica's disk (six million in an hour of the
// reference load). So that a block's span fits end, no extent holds more
// than extentMaxBytes (a larger write is cut in pieces).
type extent struct {
	data *byte
	n    uint32
	end  uint32
}

// extentMaxBytes bounds an extent: a block of maxBlock of them then spans
// at most a GiB.
const extentMaxBytes = 1 << 20

func (e *extent) bytes() []byte { return byteview.Of(e.data, e.n) }

type file struct {
	blocks [][]extent // all full but the last
	// starts holds the file offset each block starts at. Files sharing a
	// block share everything before it, so its start too; a file clips
	// starts where it clips blocks.
	starts []int64
	n      int // extents
	size   int64
	// mine says the last block is this file's to append into.
	mine bool
}

// firstBlock is how many extents the first block holds; each next one
// holds twice as many, up to maxBlock (32 KiB of extents: a block half
// empty wastes little).
const (
	firstBlock     = 4
	maxBlockShift  = 8
	maxBlock       = firstBlock << maxBlockShift
	growingExtents = firstBlock * (2<<maxBlockShift - 1) // in the blocks that double
)

// blockOf returns the block and the place in it of extent i.
func blockOf(i int) (j, k int) {
	if i >= growingExtents {
		i -= growingExtents
		return maxBlockShift + 1 + i/maxBlock, i % maxBlock
	}
	j = bits.Len(uint(i/firstBlock+1)) - 1
	return j, i - firstBlock*(1<<j-1)
}

// blockLen is how many extents block j holds.
func blockLen(j int) int { return firstBlock << min(j, maxBlockShift) }

// zeros backs the gaps a write past a file's end leaves (never written).
var zeros [64 << 10]byte

func (f *file) at(i int) *extent {
	j, k := blockOf(i)
	return &f.blocks[j][k]
}

// end is where extent i ends.
func (f *file) end(i int) int64 {
	j, k := blockOf(i)
	return f.starts[j] + int64(f.blocks[j][k].end)
}

// start is where extent i begins.
func (f *file) start(i int) int64 {
	if i == 0 {
		return 0
	}
	return f.end(i - 1)
}

// extentAt is the index of the extent holding off (f.n past the end).
func (f *file) extentAt(off int64) int {
	return sort.Search(f.n, func(i int) bool { return f.end(i) > off })
}

// handOver returns a file with f's bytes, sharing its blocks, which takes
// over appending into the last one: f must not append again without
// copying it (the cache rebuilt from the durable copy is the one that
// grows).
func (f *file) handOver() *file {
	g := &file{blocks: f.blocks[:len(f.blocks):len(f.blocks)], starts: f.starts[:len(f.starts):len(f.starts)], n: f.n, size: f.size, mine: f.mine}
	f.mine = false
	return g
}

// each calls fn with f's bytes in [off, end), extent by extent, until fn
// returns false (the caller checked the range).
func (f *file) each(off, end int64, fn func(b []byte) bool) {
	for i := f.extentAt(off); off < end; i++ {
		s := f.start(i)
		b := f.at(i).bytes()[off-s : min(end, f.end(i))-s]
		if !fn(b) {
			return
		}
		off += int64(len(b))
	}
}

// read copies n bytes from off (the caller checked the range).
func (f *file) read(off int64, n int) []byte {
	out := make([]byte, 0, n)
	f.each(off, off+int64(n), func(b []byte) bool { out = append(out, b...); return true })
	return out
}

// add appends b, which nobody writes again, at f's end.
func (f *file) add(b []byte) {
	for len(b) > extentMaxBytes {
		f.add(b[:extentMaxBytes])
		b = b[extentMaxBytes:]
	}
	if len(b) == 0 {
		return
	}
	j, k := blockOf(f.n)
	switch {
	case k == 0:
		f.blocks = append(f.blocks, make([]extent, blockLen(j)))
		f.starts = append(f.starts, f.size)
		f.mine = true
	case !f.mine:
		own := make([]extent, blockLen(j))
		copy(own, f.blocks[j][:k])
		f.blocks = append(f.blocks[:j:j], own)
		f.mine = true
	}
	f.size += int64(len(b))
	f.blocks[j][k] = extent{data: &b[0], n: uint32(len(b)), end: uint32(f.size - f.starts[j])}
	f.n++
}

// pieces returns f's extents' bytes in one new slice.
func (f *file) pieces() [][]byte {
	out := make([][]byte, 0, f.n)
	for i := range f.n {
		out = append(out, f.at(i).bytes())
	}
	return out
}

// rebuild makes f hold pieces, in blocks of its own.
func (f *file) rebuild(pieces [][]byte) {
	f.blocks, f.starts, f.n, f.size, f.mine = nil, nil, 0, 0, false
	for _, b := range pieces {
		f.add(b)
	}
}

// write stores data (which nobody writes again) at off, zero-filling any
// gap.
func (f *file) write(off int64, data []byte) {
	for f.size < off {
		f.add(zeros[:min(off-f.size, int64(len(zeros)))])
	}
	if off == f.size {
		f.add(data)
		return
	}
	// An overwrite (logs never do one): the bytes around the write are
	// cut from the old extents, into a new list.
	old := f.pieces()
	end := off + int64(len(data))
	i, j := f.extentAt(off), f.extentAt(end)
	out := make([][]byte, 0, i+2+len(old)-j)
	out = append(out, old[:i]...)
	if s := f.start(i); s < off {
		out = append(out, old[i][:off-s])
	}
	out = append(out, data)
	if j < len(old) {
		if s := f.start(j); s < end {
			out = append(out, old[j][end-s:])
			j++
		}
		out = append(out, old[j:]...)
	}
	f.rebuild(out)
}

// truncate cuts f to size (not beyond its end).
func (f *file) truncate(size int64) {
	if size >= f.size {
		return
	}
	i := f.extentAt(size)
	s := f.start(i)
	cut := f.at(i).bytes()[:size-s]
	f.n, f.size = i, s
	if i == 0 {
		f.blocks, f.starts = nil, nil
	} else {
		j, _ := blockOf(i - 1)
		f.blocks = f.blocks[: j+1 : j+1]
		f.starts = f.starts[: j+1 : j+1]
	}
	// Another copy may still see the extents dropped from the last block.
	f.mine = false
	f.add(cut)
}

// flip flips a bit of the byte at off, in a copy of its extent (the
// extent's bytes may be shared), in a new list.
func (f *file) flip(off int64, bit byte) {
	i := f.extentAt(off)
	pieces := f.pieces()
	pieces[i] = append([]byte(nil), pieces[i]...)
	pieces[i][off-f.start(i)] ^= bit
	f.rebuild(pieces)
}

// sameBytes reports whether a and b are the very same bytes (not a copy).
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// settleWrite makes a write durable in d, the durable copy, given c, the
// cached copy of the same name. When c's next extent past d's is the
// write's own buffer, in a block d shares (or would start), d counts it in;
// otherwise it writes the data itself.
func (d *file) settleWrite(off int64, data []byte, c *file) {
	k := d.n
	if c != nil && off == d.size && k < c.n && c.start(k) == off && sameBytes(c.at(k).bytes(), data) {
		j, _ := blockOf(k)
		switch {
		case j < len(d.blocks) && &d.blocks[j][0] == &c.blocks[j][0]:
			d.adopt(off, data, c.end(k), nil, 0)
			return
		case j == len(d.blocks):
			d.adopt(off, data, c.end(k), c.blocks[j], c.starts[j])
			return
		}
	}
	d.write(off, data)
}

// adopt counts in the next extent of a block shared with the cache
// (appending the block, which starts at blockStart, first when it is a new
// one).
func (d *file) adopt(off int64, data []byte, end int64, block []extent, blockStart int64) {
	var want []byte
	if verifyAdoptions {
		ref := &file{}
		ref.rebuild(d.pieces())
		ref.write(off, data)
		want = ref.read(0, int(ref.size))
	}
	if block != nil {
		d.blocks = append(d.blocks[:len(d.blocks):len(d.blocks)], block)
		d.starts = append(d.starts[:len(d.starts):len(d.starts)], blockStart)
		d.mine = false
	}
	d.n++
	d.size = end
	if verifyAdoptions && !bytes.Equal(d.read(0, int(d.size)), want) {
		panic("sim: a durable copy adopted an extent that does not hold the write")
	}
}

// verifyAdoptions makes settleWrite check each extent it adopts against a
// plain write of the data, and panic if the bytes differ (tests set it).
var verifyAdoptions = false
