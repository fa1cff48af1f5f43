package sim

import (
	"bytes"
	"math/bits"
	"sort"
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

// extent is a run of a file's bytes ending at file offset end.
type extent struct {
	b   []byte
	end int64
}

type file struct {
	blocks [][]extent // all full but the last
	n      int        // extents
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

// start is where extent i begins.
func (f *file) start(i int) int64 {
	if i == 0 {
		return 0
	}
	return f.at(i - 1).end
}

// extentAt is the index of the extent holding off (f.n past the end).
func (f *file) extentAt(off int64) int {
	return sort.Search(f.n, func(i int) bool { return f.at(i).end > off })
}

// handOver returns a file with f's bytes, sharing its blocks, which takes
// over appending into the last one: f must not append again without
// copying it (the cache rebuilt from the durable copy is the one that
// grows).
func (f *file) handOver() *file {
	g := &file{blocks: f.blocks[:len(f.blocks):len(f.blocks)], n: f.n, size: f.size, mine: f.mine}
	f.mine = false
	return g
}

// each calls fn with f's bytes in [off, end), extent by extent, until fn
// returns false (the caller checked the range).
func (f *file) each(off, end int64, fn func(b []byte) bool) {
	for i := f.extentAt(off); off < end; i++ {
		s, e := f.start(i), f.at(i)
		b := e.b[off-s : min(end, e.end)-s]
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
	if len(b) == 0 {
		return
	}
	j, k := blockOf(f.n)
	switch {
	case k == 0:
		f.blocks = append(f.blocks, make([]extent, blockLen(j)))
		f.mine = true
	case !f.mine:
		own := make([]extent, blockLen(j))
		copy(own, f.blocks[j][:k])
		f.blocks = append(f.blocks[:j:j], own)
		f.mine = true
	}
	f.size += int64(len(b))
	f.blocks[j][k] = extent{b: b, end: f.size}
	f.n++
}

// extents returns f's extents in one new slice.
func (f *file) extents() []extent {
	out := make([]extent, 0, f.n)
	for j := 0; len(out) < f.n; j++ {
		out = append(out, f.blocks[j][:min(len(f.blocks[j]), f.n-len(out))]...)
	}
	return out
}

// rebuild makes f hold exts, in blocks of its own.
func (f *file) rebuild(exts []extent) {
	f.blocks, f.n, f.size, f.mine = nil, 0, 0, false
	for _, e := range exts {
		f.add(e.b)
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
	old := f.extents()
	end := off + int64(len(data))
	i, j := f.extentAt(off), f.extentAt(end)
	out := make([]extent, 0, i+2+len(old)-j)
	out = append(out, old[:i]...)
	if s := f.start(i); s < off {
		out = append(out, extent{b: old[i].b[:off-s]})
	}
	out = append(out, extent{b: data})
	if j < len(old) {
		if s := f.start(j); s < end {
			out = append(out, extent{b: old[j].b[end-s:]})
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
	cut := f.at(i).b[:size-s]
	f.n, f.size = i, s
	if i == 0 {
		f.blocks = nil
	} else {
		j, _ := blockOf(i - 1)
		f.blocks = f.blocks[: j+1 : j+1]
	}
	// Another copy may still see the extents dropped from the last block.
	f.mine = false
	f.add(cut)
}

// flip flips a bit of the byte at off, in a copy of its extent (the
// extent's bytes may be shared), in a new list.
func (f *file) flip(off int64, bit byte) {
	i := f.extentAt(off)
	exts := f.extents()
	exts[i].b = append([]byte(nil), exts[i].b...)
	exts[i].b[off-f.start(i)] ^= bit
	f.rebuild(exts)
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
	if c != nil && off == d.size && k < c.n && c.start(k) == off && sameBytes(c.at(k).b, data) {
		j, _ := blockOf(k)
		switch {
		case j < len(d.blocks) && &d.blocks[j][0] == &c.blocks[j][0]:
			d.adopt(off, data, c.at(k).end, nil)
			return
		case j == len(d.blocks):
			d.adopt(off, data, c.at(k).end, c.blocks[j])
			return
		}
	}
	d.write(off, data)
}

// adopt counts in the next extent of a block shared with the cache
// (appending the block first when it is a new one).
func (d *file) adopt(off int64, data []byte, end int64, block []extent) {
	var want []byte
	if verifyAdoptions {
		ref := &file{}
		ref.rebuild(d.extents())
		ref.write(off, data)
		want = ref.read(0, int(ref.size))
	}
	if block != nil {
		d.blocks = append(d.blocks[:len(d.blocks):len(d.blocks)], block)
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
