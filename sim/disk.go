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
// latency, both drawn from the disk's own stream. With a write throughput
// (DiskOptions.WriteThroughputBytesPerSecond; zero: unlimited, bytes cost no
// time), a write occupies it besides for its length/throughput (TransmitTime),
// FIFO behind the device's earlier work, so fsyncs after a burst of writes
// wait for the bytes to reach the medium. A write still takes effect in the
// page cache at once (write(2) returns; the bytes are dirty). Not modelled:
// reads cost no device time, writeback costs none (it is not on the device's
// queue), no write amplification or queue depth.
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
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
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
	// WriteThroughputBytesPerSecond is the device's write rate; zero is
	// unlimited (a write's length costs no time).
	WriteThroughputBytesPerSecond int64
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
	case o.WriteThroughputBytesPerSecond < 0:
		return fmt.Errorf("disk write throughput %d bytes/s: must not be negative", o.WriteThroughputBytesPerSecond)
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

// NodeDisk is what a node may do with its disk (Env.Disk), and all a
// node's author needs to know of it (the fault model above says the rest):
//   - files have flat names; the part before the last slash is a file's
//     directory (FsyncDir);
//   - a write, truncate, rename or removal is seen by reads at once (it is
//     in the page cache) and survives a power loss once an fsync of the
//     file has completed: Fsync and FsyncDir return at once, and the
//     node's Fire receives a *FsyncDone carrying the token when the fsync
//     completes (never, if the process dies first). Writeback may make
//     it durable earlier; nothing may count on that;
//   - a process crash loses nothing the node wrote, a power loss what no
//     fsync covered (the last write perhaps torn), a wipe everything;
//   - operations fail with ErrNotExist, ErrNoSpace (a full disk) or ErrIO
//     (an unreadable range); a flipped bit is found only by a checksum.
//
// *Disk implements it, and a fake may in unit tests. *Disk also offers
// optional interfaces (DiskMemo, OwnedWriter) that save work: a node
// finds them by type assertion, and behaves identically without them.
type NodeDisk interface {
	Exists(name string) bool
	Size(name string) (int64, bool)
	// List returns the names that start with prefix, sorted.
	List(prefix string) []string
	// Read returns a copy of up to n bytes from off (fewer at the end).
	Read(name string, off int64, n int) ([]byte, error)
	ReadFile(name string) ([]byte, error)
	// Write writes at off, creating the file and zero-filling any gap; the
	// disk keeps a copy of data.
	Write(name string, off int64, data []byte) error
	// Append writes at the end and returns where it landed.
	Append(name string, data []byte) (int64, error)
	// WriteFile replaces a file's content.
	WriteFile(name string, data []byte) error
	// Truncate cuts a file to size (no longer than it is).
	Truncate(name string, size int64) error
	// Rename replaces any file at to.
	Rename(from, to string) error
	Remove(name string) error
	// Fsync makes the file's operations issued so far durable; FsyncDir
	// also the renames and removals in its directory (a checkpoint's
	// atomic replacement).
	Fsync(name string, token any)
	FsyncDir(name string, token any)
}

var _ NodeDisk = (*Disk)(nil)

// DiskStats counts a disk's work.
type DiskStats struct {
	Writes, BytesWritten, Fsyncs, Writebacks, TornWrites, Corruptions uint64
	// Wipes counts the times the disk was replaced by an empty one.
	Wipes uint64
}

// Disk is one node's storage. The node that owns it calls its NodeDisk
// methods (through Env, between events) and the optional ones; the rest
// (Stats, Flips, Durable, Preload, ...) are the world owner's god view.
type Disk struct {
	w     *World
	owner NodeID
	opts  DiskOptions
	rng   *rand.Rand

	// files holds, by name, the page cache's copy (what reads see), the
	// durable copy (what survives a power loss) and the operations pending
	// on it. An entry goes once all three are gone.
	files map[string]*fileEntry
	dirs  diskDirs // files's names by directory, for List
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
	// undidIn counts, by directory, the power losses that undid an
	// operation on a file in it (a god-view fact: what a power loss
	// actually took, not only that one happened).
	undidIn map[string]uint64
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
		d.dirs.add(name, e)
	}
	return e
}

// tidy drops name's entry once it holds nothing.
func (d *Disk) tidy(name string, e *fileEntry) {
	if e.cache == nil && e.durable == nil && len(e.ops.pending()) == 0 && d.files[name] == e {
		delete(d.files, name)
		d.dirs.remove(name)
		d.dropped++
	}
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
func (d *Disk) List(prefix string) []string { return d.dirs.list(prefix) }

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
		return nil, &notExistError{op: "read", name: name}
	}
	return d.Read(name, 0, int(f.size))
}

// Write writes data at off, creating the file if needed and zero-filling any
// gap. It takes effect in the page cache at once.
func (d *Disk) Write(name string, off int64, data []byte) error {
	return d.write(name, off, append([]byte(nil), data...))
}

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
	d.busyUntil = max(d.busyUntil, d.w.sched.now) + d.opts.WriteLatency.Draw(d.rng) +
		TransmitTime(int64(len(data)), d.opts.WriteThroughputBytesPerSecond)
	return e, nil
}

// Append writes data at the end of a file and returns where it landed.
func (d *Disk) Append(name string, data []byte) (int64, error) {
	off, _ := d.Size(name)
	return off, d.Write(name, off, data)
}

// WriteFile replaces a file's content (truncate to zero, then write).
func (d *Disk) WriteFile(name string, data []byte) error {
	// A new file has nothing to truncate: asked first, not told by
	// Truncate's error (a broker opening 300 new replicas writes their
	// checkpoints, an error formatted and dropped for each).
	if d.Exists(name) {
		if err := d.Truncate(name, 0); err != nil {
			return err
		}
	}
	return d.Write(name, 0, data)
}

// notExistError is fmt.Errorf("%s %s: %w", op, name, ErrNotExist) without
// fmt's work: a broker opening a new replica looks for its checkpoints,
// which are not there, thousands of times on a big cluster.
type notExistError struct{ op, name string }

func (e *notExistError) Error() string { return e.op + " " + e.name + ": " + ErrNotExist.Error() }

func (e *notExistError) Unwrap() error { return ErrNotExist }

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
