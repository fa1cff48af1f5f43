package sim

// The disk's fault model.
//
// Each node has one disk: a flat namespace of files behind a page cache. A
// write, truncate, rename or remove takes effect in the page cache at once
// (reads see it, as after write(2)) and is queued as a pending operation. A
// pending operation becomes durable when
//   - an fsync of a file it concerns completes (Fsync is asynchronous: the node
//     is told by a FsyncDone timer after the device's latency); an fsync makes
//     durable the pending operations on that file issued before it, in order.
//     A rename concerns both of its names, so fsyncing the new name after a
//     rename persists the rename; the renamed file's data is durable only if
//     it was fsynced itself (the classic empty-file-after-crash is possible);
//   - or an fsync that also flushes the file's directory completes (FsyncDir:
//     what Kafka's checkpoint files do after their atomic rename): it makes
//     durable, besides, every rename and removal of a file in that directory
//     issued before it, with the earlier operations on the files concerned
//     (a directory fsync persists entries, not the data of files created
//     since: those are durable only with their data);
//   - or background writeback reaches it: an operation older than
//     DiskOptions.WritebackDelay is written back (Linux's dirty_expire), oldest
//     first. A writeback delay of zero disables writeback.
//
// The device serves one operation at a time: each write occupies it for a
// write latency, and an fsync completes after the device is free plus an fsync
// latency, both drawn from the disk's own stream.
//
// What goes wrong:
//   - Power loss (a machine crash): every pending operation is lost; the page
//     cache is rebuilt from durable storage. If a torn write is armed (or drawn
//     with TornWriteProbability), the last pending write is persisted only in
//     part: a prefix of its bytes, cut at a random point.
//   - A process crash (kill -9) loses nothing: the kernel keeps the page cache
//     and writes it back later.
//   - Corruption: a bit of a file flips on the medium (and in the cache). Only
//     checksums find it (Kafka's record-batch CRC).
//   - Latent read error: reads overlapping a bad range fail with ErrIO until
//     the range is overwritten, truncated away or the file removed.
//   - Full disk: writes that would grow the disk past its capacity fail with
//     ErrNoSpace; truncations and removals still work.
//   - Slow fsync: fsync latency is multiplied until the fault is cleared.
//   - Wipe: the disk is replaced by an empty one (a hardware swap). The node
//     must be down; it restarts with nothing.

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"kafkasim/internal/grow"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"
)

// Disk errors, as the model sees them from a failed operation.
var (
	ErrIO       = errors.New("input/output error")
	ErrNoSpace  = errors.New("no space left on device")
	ErrNotExist = errors.New("file does not exist")
)

// DiskOptions configure a disk.
type DiskOptions struct {
	WriteLatency Range
	FsyncLatency Range
	// WritebackDelay is how old dirty data gets before the kernel writes it
	// back; zero means never.
	WritebackDelay time.Duration
	// CapacityBytes bounds the disk; zero means unbounded.
	CapacityBytes int64
	// TornWriteProbability is the chance that a power loss tears the last
	// pending write.
	TornWriteProbability float64
}

// DefaultDiskOptions is an SSD under Linux defaults: 30 s dirty expiry.
func DefaultDiskOptions() DiskOptions {
	return DiskOptions{
		WriteLatency:   Range{Min: 50 * time.Microsecond, Max: 500 * time.Microsecond},
		FsyncLatency:   Range{Min: time.Millisecond, Max: 10 * time.Millisecond},
		WritebackDelay: 30 * time.Second,
	}
}

// Validate reports an option out of range.
func (o DiskOptions) Validate() error {
	switch {
	case o.WriteLatency.Min < 0 || o.WriteLatency.Max < o.WriteLatency.Min:
		return fmt.Errorf("disk write latency %v..%v: want 0 <= min <= max", o.WriteLatency.Min, o.WriteLatency.Max)
	case o.FsyncLatency.Min < 0 || o.FsyncLatency.Max < o.FsyncLatency.Min:
		return fmt.Errorf("disk fsync latency %v..%v: want 0 <= min <= max", o.FsyncLatency.Min, o.FsyncLatency.Max)
	case o.WritebackDelay < 0:
		return fmt.Errorf("disk writeback delay %v: must not be negative", o.WritebackDelay)
	case o.CapacityBytes < 0:
		return fmt.Errorf("disk capacity %d: must not be negative", o.CapacityBytes)
	case o.TornWriteProbability < 0 || o.TornWriteProbability > 1:
		return fmt.Errorf("disk torn-write probability %v: want 0..1", o.TornWriteProbability)
	}
	return nil
}

// FsyncDone is the timer a node receives when an fsync it asked for completes.
type FsyncDone struct {
	File  string
	Token any // what the node passed to Fsync
	Err   error
	// Dir: the fsync flushed File's directory too (FsyncDir).
	Dir bool
}

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

type badRange struct {
	name     string
	off, end int64
}

// DiskStats counts a disk's work.
type DiskStats struct {
	Writes, BytesWritten, Fsyncs, Writebacks, TornWrites, Corruptions uint64
	// Wipes counts the times the disk was replaced by an empty one.
	Wipes uint64
}

// Disk is one node's storage. Its methods are called by the node that owns it,
// through Env, between events.
type Disk struct {
	w     *World
	owner NodeID
	opts  DiskOptions
	rng   *rand.Rand

	// files holds, by name, the page cache's copy (what reads see), the
	// durable copy (what survives a power loss) and the operations pending
	// on it. An entry goes once all three are gone.
	files map[string]*fileEntry
	// pending holds the operations not yet durable, oldest first, from head
	// on (some may be done already: an fsync took them out of turn). Each
	// entry's queue holds the same operations for the names they concern,
	// so that an fsync touches only its file's.
	pending []*pendingOp
	head    int
	live    int
	// names holds the pending renames and removals, oldest first (some
	// may be done): what a directory fsync looks through, instead of
	// every pending write.
	names []*pendingOp
	opSeq uint64
	used  int64

	busyUntil       time.Duration
	writebackArmed  bool
	tornArmed       bool
	fullAt          int64 // capacity while a full-disk fault holds; -1 when none
	fsyncSlowFactor int64
	bad             []badRange
	stats           DiskStats
	// opBlock is the block operations are carved from; blocks holds the
	// blocks with operations still pending, oldest first (opBlock last),
	// and spare the blocks whose operations all left the queue, for reuse.
	opBlock []pendingOp
	blocks  [][]pendingOp
	spare   [][]pendingOp
	// memo holds what the node derived from its files (a log's decoded
	// batches), across process crashes; see Memo. unchangedBelow holds,
	// per memo key, the offset below which the file's bytes have not
	// changed except by the node's own writes since SetMemo (a power loss
	// undoing pending writes, or a bit flip, lowers it).
	memo           map[string]any
	unchangedBelow map[string]int64
	// flips: where bit flips landed, by the files' current names. A flip
	// of bytes only the cache held yet leaves the durable copy clean once
	// the write settles, so a later power loss changes those bytes back.
	flips []Flip
	// dropped counts the entries dropped from files: a FileRef made
	// before the last drop looks its name up again.
	dropped uint64
}

func newDisk(w *World, owner NodeID, opts DiskOptions, rng *rand.Rand) *Disk {
	return &Disk{w: w, owner: owner, opts: opts, rng: rng, files: map[string]*fileEntry{}, fullAt: -1, fsyncSlowFactor: 1}
}

// fileEntry is what the disk holds under one name.
type fileEntry struct {
	name           string // the name it is held under, for good
	cache, durable *file
	ops            fileOps // pending operations that concern the name
}

// cached is the page cache's copy of a file, or nil.
func (d *Disk) cached(name string) *file {
	if e := d.files[name]; e != nil {
		return e.cache
	}
	return nil
}

// entry returns name's entry, making it if need be.
func (d *Disk) entry(name string) *fileEntry {
	e := d.files[name]
	if e == nil {
		e = &fileEntry{name: name}
		d.files[name] = e
	}
	return e
}

// tidy drops name's entry once it holds nothing.
func (d *Disk) tidy(name string, e *fileEntry) {
	if e.cache == nil && e.durable == nil && len(e.ops.pending()) == 0 && d.files[name] == e {
		delete(d.files, name)
		d.dropped++
	}
}

// FileRef remembers the entry a name had when last written through it, so
// that a file written over and over (a log's active segment) has its name
// looked up once rather than on every write. A ref is good until the disk
// drops an entry (a file emptied and gone, the disk wiped); its next use
// then looks the name up again. The zero FileRef is ready to use.
type FileRef struct {
	name    string
	e       *fileEntry
	dropped uint64
}

// WriteOwnedRef is WriteOwned of file name, through ref.
func (d *Disk) WriteOwnedRef(ref *FileRef, name string, off int64, data []byte) error {
	if ref.e == nil || ref.dropped != d.dropped || ref.name != name {
		*ref = FileRef{name: name, e: d.files[name], dropped: d.dropped}
	}
	e, err := d.writeEntry(name, ref.e, off, data)
	ref.e = e
	return err
}

// Stats returns the disk's counters.
func (d *Disk) Stats() DiskStats { return d.stats }

// Exists reports whether a file exists in the page cache.
func (d *Disk) Exists(name string) bool { return d.cached(name) != nil }

// Size returns a file's size, or false if it does not exist.
func (d *Disk) Size(name string) (int64, bool) {
	f := d.cached(name)
	if f == nil {
		return 0, false
	}
	return f.size, true
}

// UsedBytes is the total size of the files in the page cache.
func (d *Disk) UsedBytes() int64 { return d.used }

// List returns the names of the files that start with prefix, sorted.
func (d *Disk) List(prefix string) []string {
	var names []string
	for name, e := range d.files { // kafkasim:orderless: sorted below
		if e.cache != nil && strings.HasPrefix(name, prefix) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// Memo returns what the node last stored under key with SetMemo (nil if
// nothing), even across its crashes and power losses; removing or renaming
// the file of that name drops it, and a wipe clears it all. It
// is a shortcut only, for work derived from file bytes (decoding a log
// segment on restart): a user must check, with Equal, that the bytes it came
// from are still the file's, so that the shortcut never changes a result.
func (d *Disk) Memo(key string) any { return d.memo[key] }

// SetMemo stores v under key (see Memo), taken to agree with the file of
// that name as it is now.
func (d *Disk) SetMemo(key string, v any) {
	if d.memo == nil {
		d.memo, d.unchangedBelow = map[string]any{}, map[string]int64{}
	}
	d.memo[key] = v
	delete(d.unchangedBelow, key)
}

// UnchangedBelow is the offset below which a memo's file still holds what
// the node itself last wrote there, since SetMemo: only a power loss (which
// undoes the writes not yet durable) or a bit flip change bytes behind the
// node's back. A user of the memo may skip checking bytes below it.
func (d *Disk) UnchangedBelow(key string) int64 {
	if _, ok := d.memo[key]; !ok {
		return 0
	}
	if low, ok := d.unchangedBelow[key]; ok {
		return low
	}
	return math.MaxInt64
}

// changedFrom notes that a file's bytes from off on changed behind its
// node's back.
func (d *Disk) changedFrom(name string, off int64) {
	if _, ok := d.memo[name]; !ok {
		return
	}
	if low, ok := d.unchangedBelow[name]; !ok || off < low {
		d.unchangedBelow[name] = off
	}
}

// Flip is where a bit flip landed (a god-view fact, for audits).
type Flip struct {
	File   string
	Offset int64
}

// Flips lists every bit flip in the disk's files, oldest first, by the
// files' current names: a rename carries a file's flips along, a removal or
// a wipe clears them.
func (d *Disk) Flips() []Flip { return d.flips }

// Readable reports whether the whole of a file reads without error.
func (d *Disk) Readable(name string) bool {
	f := d.cached(name)
	if f == nil {
		return false
	}
	for _, r := range d.bad {
		if r.name == name && r.off < f.size && r.end > 0 {
			return false
		}
	}
	return true
}

// Equal reports whether a file holds exactly data at off (false when the
// range is not all in the file, or does not read), comparing in place.
func (d *Disk) Equal(name string, off int64, data []byte) bool {
	f := d.cached(name)
	if f == nil || off < 0 || off+int64(len(data)) > f.size {
		return false
	}
	end := off + int64(len(data))
	for _, r := range d.bad {
		if r.name == name && r.off < end && off < r.end {
			return false
		}
	}
	equal := true
	f.each(off, end, func(b []byte) bool {
		equal = bytes.Equal(b, data[:len(b)])
		data = data[len(b):]
		return equal
	})
	return equal
}

// Read returns a copy of up to n bytes of a file from off. Reading past the end
// returns what there is.
func (d *Disk) Read(name string, off int64, n int) ([]byte, error) {
	f := d.cached(name)
	if f == nil {
		return nil, fmt.Errorf("read %s: %w", name, ErrNotExist)
	}
	if off < 0 || n < 0 {
		return nil, fmt.Errorf("read %s at %d len %d: invalid range", name, off, n)
	}
	end := min(off+int64(n), f.size)
	if off >= end {
		return nil, nil
	}
	for _, r := range d.bad {
		if r.name == name && r.off < end && off < r.end {
			return nil, fmt.Errorf("read %s at %d: %w", name, off, ErrIO)
		}
	}
	return f.read(off, int(end-off)), nil
}

// ReadFile returns a copy of a whole file.
func (d *Disk) ReadFile(name string) ([]byte, error) {
	f := d.cached(name)
	if f == nil {
		return nil, fmt.Errorf("read %s: %w", name, ErrNotExist)
	}
	return d.Read(name, 0, int(f.size))
}

// Write writes data at off, creating the file if needed and zero-filling any
// gap. It takes effect in the page cache at once.
func (d *Disk) Write(name string, off int64, data []byte) error {
	return d.write(name, off, append([]byte(nil), data...))
}

// WriteOwned is Write for a buffer nobody changes again (the caller's own,
// or bytes shared read-only, such as a record batch's wire form): the disk
// keeps it as is, never writes into it, and saves a copy on the hot path of
// log appends.
func (d *Disk) WriteOwned(name string, off int64, data []byte) error { return d.write(name, off, data) }

func (d *Disk) write(name string, off int64, data []byte) error {
	_, err := d.writeEntry(name, d.files[name], off, data)
	return err
}

// writeEntry writes to name, whose entry is e (nil: none yet), and returns
// the entry written to.
func (d *Disk) writeEntry(name string, e *fileEntry, off int64, data []byte) (*fileEntry, error) {
	if off < 0 {
		return e, fmt.Errorf("write %s at %d: negative offset", name, off)
	}
	var old int64
	if e != nil && e.cache != nil {
		old = e.cache.size
	}
	if grow := max(off+int64(len(data))-old, 0); grow > 0 && d.full(grow) {
		return e, fmt.Errorf("write %s: %w", name, ErrNoSpace)
	}
	if e == nil {
		e = d.entry(name)
	}
	op := pendingOp{kind: opWrite, off: off, data: data, e: e}
	d.applyCacheWrite(&op)
	d.clearBad(name, off, off+int64(len(data)))
	d.queue(op)
	d.stats.Writes++
	d.stats.BytesWritten += uint64(len(data))
	d.busyUntil = max(d.busyUntil, d.w.sched.now) + d.opts.WriteLatency.Draw(d.rng)
	return e, nil
}

// Append writes data at the end of a file and returns where it landed.
func (d *Disk) Append(name string, data []byte) (int64, error) {
	off, _ := d.Size(name)
	return off, d.Write(name, off, data)
}

// WriteFile replaces a file's content (truncate to zero, then write).
func (d *Disk) WriteFile(name string, data []byte) error {
	if err := d.Truncate(name, 0); err != nil && !errors.Is(err, ErrNotExist) {
		return err
	}
	return d.Write(name, 0, data)
}

// Truncate cuts a file to size (which must not exceed its length).
func (d *Disk) Truncate(name string, size int64) error {
	old, ok := d.Size(name)
	if !ok {
		return fmt.Errorf("truncate %s: %w", name, ErrNotExist)
	}
	if size < 0 || size > old {
		return fmt.Errorf("truncate %s to %d: file has %d bytes", name, size, old)
	}
	op := pendingOp{kind: opTruncate, off: size, e: d.files[name]}
	d.applyCache(&op)
	d.clearBad(name, size, 1<<62)
	d.queue(op)
	return nil
}

// Rename moves a file, replacing any file at the new name.
func (d *Disk) Rename(from, to string) error {
	if d.cached(from) == nil {
		return fmt.Errorf("rename %s: %w", from, ErrNotExist)
	}
	if from == to {
		return nil // rename(2) onto itself changes nothing
	}
	op := pendingOp{kind: opRename, e: d.files[from], eTo: d.entry(to)}
	delete(d.memo, from) // what was derived from either name no longer holds
	delete(d.memo, to)
	delete(d.unchangedBelow, from)
	delete(d.unchangedBelow, to)
	// The flips follow the bytes they hit: those of the file replaced at to
	// are gone with it, those of from are now to's.
	d.flips = slices.DeleteFunc(d.flips, func(f Flip) bool { return f.File == to })
	for i := range d.flips {
		if d.flips[i].File == from {
			d.flips[i].File = to
		}
	}
	d.applyCache(&op)
	d.dropBad(to)
	for i := range d.bad {
		if d.bad[i].name == from {
			d.bad[i].name = to
		}
	}
	d.queue(op)
	return nil
}

// Remove deletes a file.
func (d *Disk) Remove(name string) error {
	if d.cached(name) == nil {
		return fmt.Errorf("remove %s: %w", name, ErrNotExist)
	}
	op := pendingOp{kind: opRemove, e: d.files[name]}
	delete(d.memo, name)
	delete(d.unchangedBelow, name)
	d.flips = slices.DeleteFunc(d.flips, func(f Flip) bool { return f.File == name })
	d.applyCache(&op)
	d.dropBad(name)
	d.queue(op)
	return nil
}

// Fsync asks for a file's pending operations to be made durable. When they are,
// the node's Fire receives FsyncDone carrying token. If the node crashes first,
// nothing is delivered (and a power loss loses the operations).
func (d *Disk) Fsync(name string, token any) { d.fsync(name, false, token) }

// FsyncDir is Fsync of name followed by an fsync of its directory (the part
// of name before its last slash), as one operation of the device: when it
// completes, every rename and removal of a file in that directory issued
// before it is durable too. Kafka flushes the directory after the atomic
// rename of each checkpoint file (Utils.atomicMoveWithFallback), which makes
// durable the segment files a truncation removed in that partition's folder.
func (d *Disk) FsyncDir(name string, token any) { d.fsync(name, true, token) }

func (d *Disk) fsync(name string, dir bool, token any) {
	w := d.w
	issued := d.opSeq
	latency := d.opts.FsyncLatency.Draw(d.rng) * time.Duration(d.fsyncSlowFactor)
	done := max(d.busyUntil, w.sched.now) + latency
	d.busyUntil = done
	d.stats.Fsyncs++
	slot := w.nodes[d.owner]
	w.sched.schedule(&Event{At: done, Kind: EventFsync, Node: d.owner, Incarnation: slot.incarnation,
		Arg: issued, Payload: &FsyncDone{File: name, Token: token, Dir: dir}})
}

// Preload writes a file straight to durable storage, before a run starts: what
// an installer or kafka-storage format leaves on a disk.
func (d *Disk) Preload(name string, data []byte) {
	e := d.entry(name)
	if e.cache != nil {
		d.used -= e.cache.size
	}
	f := &file{}
	f.write(0, append([]byte(nil), data...))
	e.durable = f
	e.cache = f.handOver()
	d.used += f.size
}

// Durable returns a copy of a file as it would be after a power loss now, for
// tests and god-view checks.
func (d *Disk) Durable(name string) ([]byte, bool) {
	e := d.files[name]
	if e == nil || e.durable == nil {
		return nil, false
	}
	return e.durable.read(0, int(e.durable.size)), true
}

// PendingOps is the number of operations not yet durable.
func (d *Disk) PendingOps() int { return d.live }

func (d *Disk) full(grow int64) bool {
	if d.fullAt >= 0 && d.used+grow > d.fullAt {
		return true
	}
	return d.opts.CapacityBytes > 0 && d.used+grow > d.opts.CapacityBytes
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
func (d *Disk) powerLoss() {
	tear := d.tornArmed || chance(d.rng, d.opts.TornWriteProbability)
	d.tornArmed = false
	if tear {
		for i := len(d.pending) - 1; i >= d.head; i-- {
			op := *d.pending[i]
			if op.kind != opWrite || op.done {
				continue
			}
			if len(op.data) > 1 {
				op.data = op.data[:1+d.rng.IntN(len(op.data)-1)]
				d.applyDurable(&op)
				d.stats.TornWrites++
			}
			break
		}
	}
	// What the page cache held beyond the durable copy is undone: a file
	// changes from the lowest offset an operation not yet durable touched,
	// or a bit flip hit.
	for _, f := range d.flips {
		d.changedFrom(f.File, f.Offset)
	}
	for _, op := range d.pending[d.head:] {
		if op.done {
			continue
		}
		switch op.kind {
		case opWrite, opTruncate:
			d.changedFrom(op.name(), op.off)
		default:
			d.changedFrom(op.name(), 0)
			d.changedFrom(op.to(), 0)
		}
	}
	d.clearPending()
	d.used = 0
	for name, e := range d.files { // kafkasim:orderless: each entry on its own
		e.cache = nil
		if f := e.durable; f != nil {
			e.cache = f.handOver()
			d.used += f.size
		}
		d.tidy(name, e)
	}
}

// wipe replaces the disk with an empty one.
func (d *Disk) wipe() {
	d.stats.Wipes++
	d.clearPending()
	d.files = map[string]*fileEntry{}
	d.dropped++
	d.used = 0
	d.bad = nil
	d.memo, d.unchangedBelow, d.flips = nil, nil, nil
	d.tornArmed = false
	d.fullAt = -1
	d.fsyncSlowFactor = 1
}

// corrupt flips one bit of a file (a random file when name is empty) at a
// random offset, on the medium and in the cache. It returns the file and
// offset, or false if there was nothing to corrupt.
func (d *Disk) corrupt(name string) (string, int64, bool) {
	if name == "" {
		var names []string
		for _, n := range d.List("") {
			if d.cached(n).size > 0 {
				names = append(names, n)
			}
		}
		if len(names) == 0 {
			return "", 0, false
		}
		name = names[d.rng.IntN(len(names))]
	}
	f := d.cached(name)
	if f == nil || f.size == 0 {
		return "", 0, false
	}
	off := d.rng.Int64N(f.size)
	bit := byte(1) << d.rng.IntN(8)
	f.flip(off, bit)
	d.changedFrom(name, off)
	d.flips = append(d.flips, Flip{File: name, Offset: off})
	if df := d.files[name].durable; df != nil && off < df.size {
		df.flip(off, bit) // on the medium too
	}
	d.stats.Corruptions++
	return name, off, true
}

// readError makes a range of a file unreadable (a random file and range when
// name is empty). It returns what it chose.
func (d *Disk) readError(name string) (string, int64, bool) {
	if name == "" {
		names := d.List("")
		if len(names) == 0 {
			return "", 0, false
		}
		name = names[d.rng.IntN(len(names))]
	}
	size, _ := d.Size(name)
	off := int64(0)
	if size > 0 {
		off = d.rng.Int64N(size)
	}
	d.bad = append(d.bad, badRange{name: name, off: off, end: off + 4096})
	return name, off, true
}

func (d *Disk) clearBad(name string, off, end int64) {
	kept := d.bad[:0]
	for _, r := range d.bad {
		if r.name == name && off <= r.off && r.end <= end {
			continue
		}
		kept = append(kept, r)
	}
	d.bad = kept
}

func (d *Disk) dropBad(name string) { d.clearBad(name, 0, 1<<62) }

// SetFull makes the disk full at its current usage (on) or lifts that (off).
func (d *Disk) setFull(on bool) {
	if on {
		d.fullAt = d.used
	} else {
		d.fullAt = -1
	}
}
