package sim

import "bytes"

// A file's bytes, in pages of up to pageBytes. The page cache's copy of a
// file and its durable copy share pages while they agree, which is most of
// the time (a log segment's durable copy is a prefix of the cached one): so
// making a write durable costs a comparison, not a copy, and a power loss
// rebuilds the cache without copying data.
//
// Sharing rules. A page is only ever shared between the cached and the
// durable copy of the same name, at the same index (a rename in the cache
// gives the moved file private pages). A file's valid bytes on page i are
// the first validLen(i); bytes beyond that are not its business, and the
// slice may be longer because the other copy appended in place. A file may
// change a shared page in place only from an offset at which the other copy
// holds no bytes; otherwise it copies the page first (own).

const pageBytes = 64 << 10

type page struct{ b []byte }

type file struct {
	pages []*page
	size  int64
	// stableFrom (page-cache copies only): the disk operation sequence
	// from which on this file, under its current name, only grew — no
	// byte it held changed (an overwrite, a truncation, a bit flip, a
	// rename onto the name moves it up). A write issued at or after it
	// still finds its own bytes in the cache, so making it durable needs
	// no comparison (settleWrite).
	stableFrom uint64
}

func (f *file) validLen(i int) int {
	return int(min(max(f.size-int64(i)*pageBytes, 0), pageBytes))
}

func (f *file) shallowCopy() *file {
	return &file{pages: append([]*page(nil), f.pages...), size: f.size}
}

// deepCopy gives a file private pages.
func (f *file) deepCopy() *file {
	c := &file{pages: make([]*page, len(f.pages)), size: f.size}
	for i, p := range f.pages {
		c.pages[i] = &page{b: append([]byte(nil), p.b[:f.validLen(i)]...)}
	}
	return c
}

// read copies n bytes from off (the caller checked the range).
func (f *file) read(off int64, n int) []byte {
	out := make([]byte, 0, n)
	for n > 0 {
		pi, po := int(off/pageBytes), int(off%pageBytes)
		chunk := f.pages[pi].b[po:f.validLen(pi)]
		if len(chunk) > n {
			chunk = chunk[:n]
		}
		out = append(out, chunk...)
		n -= len(chunk)
		off += int64(len(chunk))
	}
	return out
}

func (f *file) sharedWith(g *file, i int) bool {
	return g != nil && i < len(g.pages) && i < len(f.pages) && f.pages[i] == g.pages[i]
}

// writable readies page i for f to change from offset from on: it copies
// the page if other shares it and holds bytes there, and trims the slice to
// f's valid bytes so that appends land where f expects them.
func (f *file) writable(other *file, i int, from int64) *page {
	n := f.validLen(i)
	if f.sharedWith(other, i) && other.size > from {
		f.pages[i] = &page{b: append(make([]byte, 0, min(2*n+1, pageBytes)), f.pages[i].b[:n]...)}
	}
	p := f.pages[i]
	p.b = p.b[:n]
	return p
}

// appendAt adds data at the end of f, page by page.
func (f *file) appendAt(data []byte, other *file) {
	for len(data) > 0 {
		pi := int(f.size / pageBytes)
		if pi == len(f.pages) {
			f.pages = append(f.pages, &page{b: make([]byte, 0, min(len(data), pageBytes))})
		}
		p := f.writable(other, pi, f.size)
		n := min(len(data), pageBytes-len(p.b))
		if need := len(p.b) + n; need > cap(p.b) {
			// Grow by four (a log's page fills by many small appends),
			// straight to a whole page past the first.
			c := min(pageBytes, max(need, 4*cap(p.b), 512))
			if pi > 0 {
				c = pageBytes
			}
			p.b = append(make([]byte, 0, c), p.b...)
		}
		p.b = append(p.b, data[:n]...)
		data = data[n:]
		f.size += int64(n)
	}
}

// verifyStableFiles makes settleWrite compare even where the cached file
// is stable, and panic if the bytes differ (tests set it).
var verifyStableFiles = false

var zeroPage [pageBytes]byte

// write stores data at off, zero-filling any gap, never changing bytes
// other still holds.
func (f *file) write(off int64, data []byte, other *file) {
	for f.size < off {
		f.appendAt(zeroPage[:min(off-f.size, pageBytes)], other)
	}
	inside := data[:min(int64(len(data)), f.size-off)]
	tail := data[len(inside):]
	for len(inside) > 0 {
		pi, po := int(off/pageBytes), int(off%pageBytes)
		p := f.writable(other, pi, off)
		n := copy(p.b[po:], inside)
		inside = inside[n:]
		off += int64(n)
	}
	f.appendAt(tail, other)
}

// truncate cuts f to size (not beyond its end).
func (f *file) truncate(size int64) {
	if size >= f.size {
		return
	}
	keep := int((size + pageBytes - 1) / pageBytes)
	clear(f.pages[keep:])
	f.pages = f.pages[:keep]
	// The last page keeps its bytes (only f's valid length shrinks), so a
	// sharer loses nothing.
	f.size = size
}

// settleWrite makes a write durable in d, the durable copy, given c, the
// cached copy of the same name, and seq, the write's operation sequence.
// Where c's pages hold exactly what d would after the write, d adopts them
// instead of writing its own.
func (d *file) settleWrite(off int64, data []byte, c *file, seq uint64) {
	end := off + int64(len(data))
	if c != nil && len(data) > 0 && off <= d.size && end <= c.size && d.canAdopt(off, data, c, seq >= c.stableFrom) {
		last := int((end - 1) / pageBytes)
		for pi := int(off / pageBytes); pi <= last; pi++ {
			if pi < len(d.pages) {
				d.pages[pi] = c.pages[pi]
			} else {
				d.pages = append(d.pages, c.pages[pi])
			}
		}
		d.size = max(d.size, end)
		return
	}
	d.write(off, data, c)
}

// canAdopt reports whether taking c's pages over [off, off+len(data)) gives d
// the right bytes: each page must be one d shares already or holds no bytes
// of, and c must hold data there (known without looking when c is stable
// since the write).
func (d *file) canAdopt(off int64, data []byte, c *file, stable bool) bool {
	end := off + int64(len(data))
	for pi := int(off / pageBytes); int64(pi)*pageBytes < end; pi++ {
		base := int64(pi) * pageBytes
		if d.validLen(pi) > 0 && !d.sharedWith(c, pi) {
			return false
		}
		if stable && !verifyStableFiles {
			continue
		}
		lo, hi := max(off, base), min(end, base+pageBytes)
		if !bytes.Equal(c.pages[pi].b[lo-base:hi-base], data[lo-off:hi-off]) {
			if stable {
				panic("sim: a page-cache file taken as stable no longer holds a write issued since")
			}
			return false
		}
	}
	// A page d does not have yet may hold, below off, bytes of c that d
	// must not see; off <= d.size rules that out except on the page
	// holding d's end, which d then has (validLen > 0) and shares.
	return true
}
