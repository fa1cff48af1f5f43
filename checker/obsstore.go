package checker

import (
	"cmp"
	"iter"
	"math"
	"slices"
	"sort"
)

// obsStore holds a partition's observations without one entry per record
// read. A long run reads each record about three times (the final reads
// among them), and nearly every read of an offset sees the value the
// first read there saw. So the store keeps that value once per offset
// (canon) and a poll's consecutive reads that agree with it as runs
// (operation, session, first offset, count); only reads that disagree (the
// anomalies checks look for), or fall outside canon's dense range, are
// kept whole (extra). Acknowledgements are their sends'
// indexes: 240 simulated s of the reference load keep their partitions'
// observations in 4.8 MB, where one observation per record took 44 MB.
//
// Checks see the observations as they always did, sorted by (offset,
// value, operation, session), each once: the cursor, and partState's
// accessors built on it (all, after, groups, obsAt), merge the three
// lists offset by offset.
type obsStore struct {
	base  int64   // offset of canon[0]
	canon []int32 // the value first read at base+i; -1: none read there
	reads int     // records taken: how sparse canon may grow
	runs  []readRun
	// origin and opOrigin are what runs' offsets and operations count
	// from: the first run's.
	origin, opOrigin int64
	extra            []observation
	acks             []int32  // indexes in rec.sends of the sends acknowledged here
	rec              *records // the analyzer's sends
	built            bool     // sorted (build): the cursor may run
}

// readRun is one poll's reads of consecutive offsets, each holding its
// offset's canonical value. Its first offset and its operation's index
// are kept from the store's origins, in 32 bits (16 bytes a run, a long
// run holds millions): a read too far from them for that is kept whole.
type readRun struct {
	first int32 // offset, from obsStore.origin
	op    int32 // history index, from obsStore.opOrigin
	sess  int32
	n     int32 // <= maxRunLen
}

// runFirst is run r's first offset.
func (st *obsStore) runFirst(r *readRun) int64 { return st.origin + int64(r.first) }

// runOp is the history index of the poll that read run r.
func (st *obsStore) runOp(r *readRun) int64 { return st.opOrigin + int64(r.op) }

// fits reports whether x - origin fits a run's 32 bits.
func fits(x, origin int64) bool {
	d := x - origin
	return (d >= 0) == (x >= origin) && d >= math.MinInt32 && d <= math.MaxInt32
}

// maxRunLen bounds a run, so that the runs covering an offset start less
// than maxRunLen offsets below it (seek).
const maxRunLen = 64

// canonSlack is how many offsets canon may span beyond four per record
// read: a sparse log (retention, compaction) keeps its reads whole rather
// than a table mostly empty.
const canonSlack = 1024

// maxCanonOffset bounds the offsets canon holds: far beyond any log's, and
// small enough that no offset arithmetic here overflows.
const maxCanonOffset = 1 << 50

// slot is offset off's index in canon, growing canon to hold it when it
// stays dense enough; false: off is kept outside canon.
func (st *obsStore) slot(off int64) (int, bool) {
	if off < 0 || off >= maxCanonOffset {
		return 0, false
	}
	limit := int64(4*st.reads + canonSlack)
	if len(st.canon) == 0 {
		st.base = off
		st.canon = append(st.canon[:0], -1)
		return 0, true
	}
	switch {
	case off >= st.base && off-st.base < int64(len(st.canon)):
		return int(off - st.base), true
	case off >= st.base:
		if off-st.base >= limit {
			return 0, false
		}
		for int64(len(st.canon)) <= off-st.base {
			st.canon = append(st.canon, -1)
		}
		return int(off - st.base), true
	default:
		need := st.base - off
		if need+int64(len(st.canon)) > limit {
			return 0, false
		}
		// Grown downwards by at least half again, so that reads walking
		// down the log cost amortised constant time.
		grow := max(need, int64(len(st.canon)/2))
		grow = min(grow, st.base, max(need, limit-int64(len(st.canon))))
		c := make([]int32, int64(len(st.canon))+grow, int64(len(st.canon))+grow+int64(cap(st.canon)-len(st.canon)))
		for i := range grow {
			c[i] = -1
		}
		copy(c[grow:], st.canon)
		st.canon, st.base = c, st.base-grow
		return int(off - st.base), true
	}
}

// read takes one record a poll read, in history order. run is the poll's
// open run in this partition (-1: none); read returns it, extended or new,
// or unchanged when the record is kept whole.
func (st *obsStore) read(off int64, val int32, op int64, sess int32, run int32) int32 {
	st.reads++
	i, ok := st.slot(off)
	if ok && st.canon[i] < 0 {
		st.canon[i] = val
	}
	if !ok || st.canon[i] != val {
		st.extra = append(st.extra, observation{off: off, op: op, val: val, sess: sess})
		return run
	}
	if run >= 0 {
		r := &st.runs[run]
		if st.runOp(r) == op && r.sess == sess && st.runFirst(r)+int64(r.n) == off && r.n < maxRunLen {
			r.n++
			return run
		}
	}
	if len(st.runs) == 0 {
		st.origin, st.opOrigin = off, op
	}
	if !fits(off, st.origin) || !fits(op, st.opOrigin) {
		st.extra = append(st.extra, observation{off: off, op: op, val: val, sess: sess})
		return run
	}
	st.runs = append(st.runs, readRun{first: int32(off - st.origin), op: int32(op - st.opOrigin), sess: sess, n: 1})
	return int32(len(st.runs) - 1)
}

// ack takes send si's acknowledgement at its offset.
func (st *obsStore) ack(si int32) { st.acks = append(st.acks, si) }

// ackObs is the observation the i-th acknowledgement makes.
func (st *obsStore) ackObs(i int) observation {
	s := &st.rec.sends[st.acks[i]]
	return observation{off: st.rec.offset(s), op: st.rec.complete(s), val: s.val, sess: -1}
}

// build sorts the lists for the cursor. Duplicates (one poll returning a
// record twice) stay: the cursor drops them.
func (st *obsStore) build() {
	sortObservations(st.extra)
	slices.SortFunc(st.runs, func(x, y readRun) int { return cmp.Compare(x.first, y.first) })
	sends := st.rec.sends
	slices.SortFunc(st.acks, func(x, y int32) int {
		sx, sy := &sends[x], &sends[y]
		if c := cmp.Compare(st.rec.offset(sx), st.rec.offset(sy)); c != 0 {
			return c
		}
		if c := cmp.Compare(sx.val, sy.val); c != 0 {
			return c
		}
		return cmp.Compare(st.rec.complete(sx), st.rec.complete(sy))
	})
	st.built = true
}

// rawReads calls f with every record read, each as often as it was read,
// in no particular order (keepLinRecs).
func (st *obsStore) rawReads(f func(off int64, val int32, op int64)) {
	for _, r := range st.runs {
		for k := range int64(r.n) {
			off := st.runFirst(&r) + k
			f(off, st.canon[off-st.base], st.runOp(&r))
		}
	}
	for _, ob := range st.extra {
		f(ob.off, ob.val, ob.op)
	}
}

// obsCursor walks a built store's observations offset by offset.
type obsCursor struct {
	st         *obsStore
	ri, ei, ai int
	active     []int32 // runs begun that may cover next
	next       int64   // the lowest offset not yet visited
	buf        []observation
}

// seek returns a cursor at the first offset at or after from.
func (st *obsStore) seek(from int64) *obsCursor {
	c := st.seekReads(from)
	sends := st.rec.sends
	c.ai = sort.Search(len(st.acks), func(i int) bool { return st.rec.offset(&sends[st.acks[i]]) >= from })
	return c
}

// seekReads is seek for a walk of the polls' reads alone: an
// acknowledgement's observation costs a look at its send, which sits far
// from the partition's other data in a long run's table.
func (st *obsStore) seekReads(from int64) *obsCursor {
	if !st.built {
		panic("checker: observations read before build")
	}
	c := &obsCursor{st: st, next: from}
	lo := 0
	if from > math.MinInt64+maxRunLen {
		lo = sort.Search(len(st.runs), func(i int) bool { return st.runFirst(&st.runs[i]) > from-maxRunLen })
	}
	c.ri = sort.Search(len(st.runs), func(i int) bool { return st.runFirst(&st.runs[i]) >= from })
	for k := lo; k < c.ri; k++ {
		if r := &st.runs[k]; st.runFirst(r)+int64(r.n) > from {
			c.active = append(c.active, int32(k))
		}
	}
	c.ei = sort.Search(len(st.extra), func(i int) bool { return st.extra[i].off >= from })
	c.ai = len(st.acks)
	return c
}

// step returns the next offset holding observations and them (sorted,
// each once; valid until the next step), or false at the end.
func (c *obsCursor) step() (int64, []observation, bool) {
	st := c.st
	runs := st.runs
	kept := c.active[:0]
	for _, k := range c.active {
		if r := &runs[k]; st.runFirst(r)+int64(r.n) > c.next {
			kept = append(kept, k)
		}
	}
	c.active = kept
	x := int64(math.MaxInt64)
	if len(c.active) > 0 {
		x = c.next
	} else if c.ri < len(runs) {
		x = st.runFirst(&runs[c.ri])
	}
	if c.ei < len(st.extra) {
		x = min(x, st.extra[c.ei].off)
	}
	if c.ai < len(st.acks) {
		x = min(x, st.rec.offset(&st.rec.sends[st.acks[c.ai]]))
	}
	if x == math.MaxInt64 && c.ri == len(runs) && c.ei == len(st.extra) && c.ai == len(st.acks) && len(c.active) == 0 {
		return 0, nil, false
	}
	for c.ri < len(runs) && st.runFirst(&runs[c.ri]) == x {
		c.active = append(c.active, int32(c.ri))
		c.ri++
	}
	buf := c.buf[:0]
	if len(c.active) > 0 {
		v := st.canon[x-st.base]
		for _, k := range c.active {
			buf = append(buf, observation{off: x, op: st.runOp(&runs[k]), val: v, sess: runs[k].sess})
		}
	}
	for c.ei < len(st.extra) && st.extra[c.ei].off == x {
		buf = append(buf, st.extra[c.ei])
		c.ei++
	}
	for c.ai < len(st.acks) && st.rec.offset(&st.rec.sends[st.acks[c.ai]]) == x {
		buf = append(buf, st.ackObs(c.ai))
		c.ai++
	}
	if len(buf) > 12 {
		slices.SortFunc(buf, cmpObservation)
	} else {
		insertionSortObs(buf)
	}
	// One poll that returned a record twice observed it once.
	out := buf[:0]
	for i := range buf {
		if i == 0 || buf[i] != buf[i-1] {
			out = append(out, buf[i])
		}
	}
	c.buf = buf
	if x < math.MaxInt64 {
		c.next = x + 1
	} else {
		c.ri, c.ei, c.ai, c.active = len(runs), len(st.extra), len(st.acks), c.active[:0]
	}
	return x, out, true
}

// all yields the partition's observations in order. The observation is
// the iterator's: copy it to keep it.
func (po *partState) all() iter.Seq[*observation] { return po.after(math.MinInt64) }

// after yields the observations at offsets above off, in order.
func (po *partState) after(off int64) iter.Seq[*observation] {
	return func(yield func(*observation) bool) {
		if off == math.MaxInt64 {
			return
		}
		po.obs.seek(off + 1).each(yield)
	}
}

// reads yields the observations polls made (not acknowledgements'), in
// order.
func (po *partState) reads() iter.Seq[*observation] {
	return func(yield func(*observation) bool) {
		po.obs.seekReads(math.MinInt64).each(yield)
	}
}

// each yields the cursor's observations one by one until yield says stop.
func (c *obsCursor) each(yield func(*observation) bool) {
	for {
		_, obs, ok := c.step()
		if !ok {
			return
		}
		for i := range obs {
			if !yield(&obs[i]) {
				return
			}
		}
	}
}

// groups yields, for each known offset in order (po.offsets[i] once
// built), its index i and its observations (the iterator's: valid until
// the next).
func (po *partState) groups() iter.Seq2[int, []observation] {
	return func(yield func(int, []observation) bool) {
		c := po.obs.seek(math.MinInt64)
		for i := 0; ; i++ {
			_, obs, ok := c.step()
			if !ok || !yield(i, obs) {
				return
			}
		}
	}
}

// obsAt returns the observations at an offset of a partition (a slice of
// its own).
func (po *partState) obsAt(off int64) []observation {
	c := po.obs.seek(off)
	x, obs, ok := c.step()
	if !ok || x != off {
		return nil
	}
	return obs
}
