package sim

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"kafkasim/internal/grow"
)

// Pending operations: what the page cache holds that the durable copy does
// not yet, in issue order per file; an fsync or the writeback makes them
// durable, a power loss drops them (disk_faults.go).

type opKind uint8

const (
	opWrite opKind = iota
	opTruncate
	opRename
	opRemove
)

// A pending operation takes 72 bytes: thousands wait out the writeback
// delay, and each write queues one. The names it concerns are its entries'.
type pendingOp struct {
	seq  uint64
	at   time.Duration
	off  int64 // write offset, or truncate size
	data []byte
	// e and eTo are the entries of the file's name and of a rename's
	// target: the operation waits in their queues, and settles without a
	// lookup.
	e, eTo *fileEntry
	kind   opKind
	done   bool // made durable (by an fsync) ahead of its turn
}

// name is the file the operation concerns; to is a rename's target ("" for
// other operations).
func (op *pendingOp) name() string { return op.e.name }

func (op *pendingOp) to() string {
	if op.eTo == nil {
		return ""
	}
	return op.eTo.name
}

func (d *Disk) queue(op pendingOp) {
	d.opSeq++
	op.seq = d.opSeq
	op.at = d.w.sched.now
	// Operations are carved from blocks: one allocation per block, not per
	// write, and a block is reused once all its operations have left the
	// queue (they leave in issue order; see releaseBlocks).
	if len(d.opBlock) == cap(d.opBlock) {
		if n := len(d.spare); n > 0 {
			d.opBlock, d.spare = d.spare[n-1], d.spare[:n-1]
		} else {
			d.opBlock = make([]pendingOp, 0, opBlockOps)
		}
		d.blocks = append(d.blocks, d.opBlock)
	}
	d.opBlock = append(d.opBlock, op)
	p := &d.opBlock[len(d.opBlock)-1]
	d.pending = grow.Append(d.pending, p)
	d.live++
	p.e.ops.push(p)
	if op.kind == opRename {
		p.eTo.ops.push(p)
	}
	if op.kind == opRename || op.kind == opRemove {
		d.names = append(d.names, p)
	}
	if d.opts.WritebackDelay > 0 && !d.writebackArmed {
		d.armWriteback(op.at + d.opts.WritebackDelay)
	}
}

// opBlockOps is how many operations a block holds (tests shrink it, so
// that blocks are reused within a few operations).
var opBlockOps = 256

// releaseBlocks makes the oldest block spare once op, which just left the
// queue, was its last: operations leave in issue order, so the block's
// others left before it, and nothing points into it any more (the queue
// and the per-file queues dropped them).
func (d *Disk) releaseBlocks(op *pendingOp) {
	if len(d.blocks) == 0 || op != &d.blocks[0][:opBlockOps][opBlockOps-1] {
		return
	}
	if len(d.blocks) == 1 {
		// The block being carved, full and now empty of pending
		// operations: the next one takes a spare.
		d.opBlock = nil
	}
	b := d.blocks[0][:opBlockOps]
	clear(b) // no names or data kept alive
	d.spare = append(d.spare, b[:0])
	d.blocks[0] = nil
	d.blocks = d.blocks[1:]
}

func (d *Disk) armWriteback(at time.Duration) {
	d.writebackArmed = true
	d.w.sched.schedule(&Event{At: at, Kind: EventWriteback, Node: d.owner})
}

// applyCache performs op in the page cache, keeping d.used in step.
func (d *Disk) applyCache(op *pendingOp) {
	switch op.kind {
	case opWrite:
		d.applyCacheWrite(op)
	case opTruncate:
		f := op.e.cache
		d.used -= f.size - op.off
		f.truncate(op.off)
	case opRename:
		f := op.e.cache
		if old := op.eTo.cache; old != nil {
			d.used -= old.size
		}
		op.eTo.cache = f
		op.e.cache = nil
	case opRemove:
		d.used -= op.e.cache.size
		op.e.cache = nil
	}
}

// applyCacheWrite performs a write in the page cache.
func (d *Disk) applyCacheWrite(op *pendingOp) {
	f := op.e.cache
	if f == nil {
		f = &file{}
		op.e.cache = f
	}
	before := f.size
	f.write(op.off, op.data)
	d.used += f.size - before
}

// applyDurable performs op on the durable copy.
func (d *Disk) applyDurable(op *pendingOp) {
	e := op.e
	switch op.kind {
	case opWrite:
		f := e.durable
		if f == nil {
			f = &file{}
			e.durable = f
		}
		f.settleWrite(op.off, op.data, e.cache)
	case opTruncate:
		if f := e.durable; f != nil {
			f.truncate(op.off)
		} else {
			e.durable = &file{}
		}
	case opRename:
		// A durable rename whose source's creation is not durable still
		// leaves a (zero-length) file: the directory entry is metadata,
		// the data is not. This is the classic empty-file-after-crash.
		f := e.durable
		if f == nil {
			f = &file{}
		}
		op.eTo.durable = f
		e.durable = nil
	case opRemove:
		e.durable = nil
	}
}

// settle makes one pending operation durable, if it is not already.
func (d *Disk) settle(op *pendingOp) {
	if !op.done {
		d.applyDurable(op)
		op.done = true
		d.live--
	}
}

// fileOps is one file's queue of pending operations, oldest first from
// head on. Operations join at the back and leave at the front; the slice is
// reused (compacted in place) rather than resliced, so that a file written
// all the time does not reallocate its queue all the time.
type fileOps struct {
	ops  []*pendingOp
	head int
}

func (q *fileOps) pending() []*pendingOp { return q.ops[q.head:] }

func (q *fileOps) push(op *pendingOp) { q.ops = grow.Append(q.ops, op) }

// drop removes the first n pending operations.
func (q *fileOps) drop(n int) {
	clear(q.ops[q.head : q.head+n])
	q.head += n
	switch {
	case q.head == len(q.ops):
		q.ops, q.head = q.ops[:0], 0
	case q.head >= 64 && 2*q.head >= len(q.ops):
		k := copy(q.ops, q.ops[q.head:])
		clear(q.ops[k:])
		q.ops, q.head = q.ops[:k], 0
	}
}

// dropFront removes op from the front of name's queue (e's), if it is
// there.
func (d *Disk) dropFront(name string, e *fileEntry, op *pendingOp) {
	if p := e.ops.pending(); len(p) > 0 && p[0] == op {
		d.dropOps(name, e, 1)
	}
}

// dropOps removes the first n operations of name's queue (e's), and the
// entry once it holds nothing.
func (d *Disk) dropOps(name string, e *fileEntry, n int) {
	e.ops.drop(n)
	if len(e.ops.pending()) == 0 {
		d.tidy(name, e)
	}
}

// fsyncDone makes durable, in order, the operations on name issued before the
// fsync.
func (d *Disk) fsyncDone(issued uint64, name string) {
	e := d.files[name]
	if e == nil {
		return
	}
	p := e.ops.pending()
	n := 0
	for n < len(p) && p[n].seq <= issued {
		d.settle(p[n])
		n++
	}
	d.dropOps(name, e, n)
}

// dirSyncDone makes durable the renames and removals of files in name's
// directory issued before the fsync, each with the operations issued before
// it on the files it concerns (in order: what a rename moves, or a removal
// ends, must be in place first).
func (d *Disk) dirSyncDone(issued uint64, name string) {
	dir := parentDir(name)
	for _, op := range d.names {
		if op.seq > issued {
			break
		}
		if op.done {
			continue
		}
		if parentDir(op.name()) == dir || (op.kind == opRename && parentDir(op.to()) == dir) {
			d.settleThrough(op)
		}
	}
	// Done ones go: writeback skips what it finds gone (see dropName).
	kept := d.names[:0]
	for _, op := range d.names {
		if !op.done {
			kept = append(kept, op)
		}
	}
	clear(d.names[len(kept):])
	d.names = kept
}

// dropName removes op, leaving the queue, from the front of names if it is
// there: both are in issue order, so an op still in names is at its front.
func (d *Disk) dropName(op *pendingOp) {
	if len(d.names) > 0 && d.names[0] == op {
		d.names[0] = nil
		d.names = d.names[1:]
	}
}

// settleThrough makes op durable after every operation issued before it on
// the files it concerns, and on the files those renamed, in issue order.
func (d *Disk) settleThrough(op *pendingOp) {
	names := []string{op.name()}
	if op.kind == opRename {
		names = append(names, op.to())
	}
	var ops []*pendingOp
	for i := 0; i < len(names); i++ {
		fe := d.files[names[i]]
		if fe == nil {
			continue
		}
		for _, q := range fe.ops.pending() {
			if q.done || q.seq > op.seq || slices.Contains(ops, q) {
				continue
			}
			ops = append(ops, q)
			if q.kind == opRename {
				for _, n := range []string{q.name(), q.to()} {
					if !slices.Contains(names, n) {
						names = append(names, n)
					}
				}
			}
		}
	}
	slices.SortFunc(ops, func(a, b *pendingOp) int { return cmp.Compare(a.seq, b.seq) })
	for _, q := range ops {
		d.settle(q)
	}
}

// parentDir is the directory part of a file name ("" at the top).
func parentDir(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[:i]
	}
	return ""
}

func (d *Disk) writeback() {
	d.writebackArmed = false
	now := d.w.sched.now
	for d.head < len(d.pending) {
		op := d.pending[d.head]
		if !op.done && op.at+d.opts.WritebackDelay > now {
			break
		}
		if !op.done {
			d.settle(op)
			d.stats.Writebacks++
		}
		d.dropFront(op.name(), op.e, op)
		if op.kind == opRename {
			d.dropFront(op.to(), op.eTo, op)
		}
		if op.kind == opRename || op.kind == opRemove {
			d.dropName(op)
		}
		d.pending[d.head] = nil
		d.head++
		d.releaseBlocks(op)
	}
	if d.head > 1024 && d.head*2 > len(d.pending) {
		d.pending = append(d.pending[:0], d.pending[d.head:]...)
		d.head = 0
	}
	if d.head < len(d.pending) && d.opts.WritebackDelay > 0 {
		d.armWriteback(d.pending[d.head].at + d.opts.WritebackDelay)
	}
}

func (d *Disk) clearPending() {
	clear(d.pending)
	d.pending = d.pending[:0]
	d.head = 0
	d.live = 0
	for _, e := range d.files { // kafkasim:orderless: empties every queue
		e.ops = fileOps{}
	}
	clear(d.names)
	d.names = d.names[:0]
	// Every block holds only dropped operations now; the one being carved
	// goes on being carved unless it is full (its last operation will
	// never leave the queue to release it).
	keep := 0
	if len(d.opBlock) < cap(d.opBlock) {
		keep = 1
	}
	n := len(d.blocks) - keep
	for _, b := range d.blocks[:n] {
		clear(b[:cap(b)])
		d.spare = append(d.spare, b[:0])
	}
	d.blocks = append(d.blocks[:0], d.blocks[n:]...)
	clear(d.blocks[len(d.blocks) : n+keep])
	if keep == 0 {
		d.opBlock = nil
	}
}

// powerLoss drops the page cache: pending operations are lost, except that a
// torn last write may leave a prefix of itself on the medium.
