package sim

import (
	"bytes"
	"cmp"
	"errors"
	"math/bits"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// This file checks the Disk against a reference written for clarity alone:
// plain byte slices by name for the page cache and for the durable copy,
// and a list of pending operations replayed by the rules of the fault-model
// comment at the top of disk.go. It touches the disk only through its
// methods (and the corrupt and wipe fault hooks), so that it holds whatever
// the disk's in-memory representation of file bytes becomes.

// refPage is the scale of the test's data: writes range from one byte to
// three of these, so that they straddle any page size of that order.
const refPage = 64 << 10

// refNames are the files the test plays with: two directories (renames
// cross them, and a directory fsync must pick its own), and one file at the
// top.
var refNames = []string{"d1/x", "d1/y", "d2/x", "d2/y", "top"}

type refKind uint8

const (
	refWrite refKind = iota
	refTruncate
	refRename
	refRemove
)

// refOp is an operation not yet durable.
type refOp struct {
	seq      uint64
	at       time.Duration
	kind     refKind
	name, to string // to: a rename's target
	off      int64  // a write's offset, a truncation's size
	data     []byte // the reference's own copy
	durable  bool
}

func (op *refOp) concerns(name string) bool {
	return op.name == name || (op.kind == refRename && op.to == name)
}

// refFsync is an fsync in flight.
type refFsync struct {
	at     time.Duration // when it completes
	issued uint64        // the last operation issued before it
	name   string
	dir    bool
	token  int
}

// diskRef is the reference disk.
type diskRef struct {
	t              *rapid.T
	cache, durable map[string][]byte // a file exists iff its name is a key
	pending        []*refOp          // issue order; durable ones are dropped at each step's end
	seq            uint64
	fsyncs         []refFsync // completion order (the device serves one at a time)
	tokens         int
	busyUntil      time.Duration
	writeLatency   time.Duration
	fsyncLatency   time.Duration
	writeback      time.Duration
}

// writeAt stores data at off in *b, zero-filling any gap.
func writeAt(b []byte, off int64, data []byte) []byte {
	if end := int(off) + len(data); end > len(b) {
		b = append(b, make([]byte, end-len(b))...)
	}
	copy(b[off:], data)
	return b
}

func (r *diskRef) queue(now time.Duration, op *refOp) {
	r.seq++
	op.seq, op.at = r.seq, now
	r.pending = append(r.pending, op)
}

func (r *diskRef) write(now time.Duration, name string, off int64, data []byte) {
	data = slices.Clone(data)
	r.cache[name] = writeAt(r.cache[name], off, data)
	r.queue(now, &refOp{kind: refWrite, name: name, off: off, data: data})
	// Each write occupies the device for a write latency.
	r.busyUntil = max(r.busyUntil, now) + r.writeLatency
}

func (r *diskRef) truncate(now time.Duration, name string, size int64) {
	r.cache[name] = r.cache[name][:size]
	r.queue(now, &refOp{kind: refTruncate, name: name, off: size})
}

func (r *diskRef) rename(now time.Duration, from, to string) {
	if from == to {
		return // rename(2) onto itself: nothing happens, nothing is queued
	}
	r.cache[to] = r.cache[from]
	delete(r.cache, from)
	r.queue(now, &refOp{kind: refRename, name: from, to: to})
}

func (r *diskRef) remove(now time.Duration, name string) {
	delete(r.cache, name)
	r.queue(now, &refOp{kind: refRemove, name: name})
}

// fsync returns the token the node will be told with, when the device is
// free plus an fsync latency.
func (r *diskRef) fsync(now time.Duration, name string, dir bool) int {
	r.busyUntil = max(r.busyUntil, now) + r.fsyncLatency
	r.tokens++
	r.fsyncs = append(r.fsyncs, refFsync{at: r.busyUntil, issued: r.seq, name: name, dir: dir, token: r.tokens})
	return r.tokens
}

// applyDurable performs op on the durable copy, by name. This is the
// literal reading of the fault-model comment, and what the disk does today,
// including where that is doubtful: an operation made durable after a
// rename of its name that was issued later (an fsync of a rename's target
// settles the rename but not an earlier write of its source, which
// writeback settles afterwards) lands on whatever file holds its name on
// the medium by then. So write a, rename a b, fsync b, writeback leaves a
// durable file a (the data) and an empty b, though the cache holds only b
// and nothing is pending. Should the disk come to make such a write follow
// its file instead, this is the one place the reference must follow.
func (r *diskRef) applyDurable(op *refOp) {
	switch op.kind {
	case refWrite:
		r.durable[op.name] = writeAt(r.durable[op.name], op.off, op.data)
	case refTruncate:
		b, ok := r.durable[op.name]
		if !ok {
			b = []byte{}
		}
		// A truncation never grows the file: on the medium a file may
		// be shorter than it was in the cache when it was cut.
		r.durable[op.name] = b[:min(int64(len(b)), op.off)]
	case refRename:
		// A rename made durable without its source's data still leaves
		// a file: the classic empty-file-after-crash.
		b, ok := r.durable[op.name]
		if !ok {
			b = []byte{}
		}
		delete(r.durable, op.name)
		r.durable[op.to] = b
	case refRemove:
		delete(r.durable, op.name)
	}
}

func (r *diskRef) settle(op *refOp) {
	if !op.durable {
		r.applyDurable(op)
		op.durable = true
	}
}

// settleThrough makes op durable after every pending operation issued
// before it on the files it concerns, and on the files those renamed (a
// rename moves what was written under its source), in issue order.
func (r *diskRef) settleThrough(op *refOp) {
	names := map[string]bool{op.name: true}
	if op.kind == refRename {
		names[op.to] = true
	}
	var ops []*refOp
	for grew := true; grew; {
		grew = false
		for _, q := range r.pending {
			if q.seq > op.seq || q.durable || slices.Contains(ops, q) {
				continue
			}
			if names[q.name] || (q.kind == refRename && names[q.to]) {
				ops = append(ops, q)
				grew = true
				names[q.name] = true
				if q.kind == refRename {
					names[q.to] = true
				}
			}
		}
	}
	slices.SortFunc(ops, func(a, b *refOp) int { return cmp.Compare(a.seq, b.seq) })
	for _, q := range ops {
		r.settle(q)
	}
}

func refDir(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[:i]
	}
	return ""
}

// fsyncDone: the file's operations issued before the fsync, in order;
// with dir, besides, every rename and removal in its directory issued before
// it, each with the earlier operations on the files concerned.
func (r *diskRef) fsyncDone(f refFsync) {
	for _, op := range r.pending {
		if op.seq <= f.issued && op.concerns(f.name) {
			r.settle(op)
		}
	}
	if !f.dir {
		return
	}
	dir := refDir(f.name)
	for _, op := range r.pending {
		if op.seq > f.issued || op.durable || (op.kind != refRename && op.kind != refRemove) {
			continue
		}
		if refDir(op.name) == dir || (op.kind == refRename && refDir(op.to) == dir) {
			r.settleThrough(op)
		}
	}
}

// advance runs the reference's clock to now: fsyncs complete, and
// writeback settles each operation once it is WritebackDelay old, oldest
// first. It returns the fsyncs that completed, in order.
//
// An fsync's completion and a writeback never fall on the same instant:
// the test acts on a millisecond grid (so writeback deadlines are on it),
// and fsyncs complete at a grid point plus whole write latencies (multiples
// of 100µs) plus j fsync latencies of whole milliseconds and 1ns, j ≥ 1,
// which is off the grid unless j is a multiple of 100000 (far more fsyncs
// than a test case issues). advance fails the test should it happen anyway, since
// the order of the two would then be the scheduler's business.
func (r *diskRef) advance(now time.Duration) []refFsync {
	var done []refFsync
	for {
		var oldest *refOp
		if r.writeback > 0 {
			for _, op := range r.pending {
				if !op.durable {
					oldest = op
					break
				}
			}
		}
		switch {
		case len(r.fsyncs) > 0 && r.fsyncs[0].at <= now &&
			(oldest == nil || r.fsyncs[0].at < oldest.at+r.writeback):
			f := r.fsyncs[0]
			r.fsyncs = r.fsyncs[1:]
			r.fsyncDone(f)
			done = append(done, f)
		case oldest != nil && oldest.at+r.writeback <= now:
			at := oldest.at + r.writeback
			if len(r.fsyncs) > 0 && r.fsyncs[0].at == at {
				r.t.Fatalf("test setup: an fsync completes at %v, the instant of a writeback", at)
			}
			for _, op := range r.pending {
				if op.at+r.writeback > at {
					break
				}
				r.settle(op)
			}
		default:
			r.compact()
			return done
		}
	}
}

func (r *diskRef) compact() {
	r.pending = slices.DeleteFunc(r.pending, func(op *refOp) bool { return op.durable })
}

// lastPendingWrite is what a torn write tears: the last write not durable.
func (r *diskRef) lastPendingWrite() *refOp {
	for i := len(r.pending) - 1; i >= 0; i-- {
		if op := r.pending[i]; op.kind == refWrite && !op.durable {
			return op
		}
	}
	return nil
}

// powerLoss: pending operations and fsyncs in flight are lost, and the page
// cache is the durable copy again.
func (r *diskRef) powerLoss() {
	r.pending, r.fsyncs = nil, nil
	r.cache = map[string][]byte{}
	for name, b := range r.durable {
		r.cache[name] = slices.Clone(b)
	}
}

// tear persists the first k bytes of op. The cut point is the disk's own
// random draw, so the test reads it back from what the disk persisted:
// the one k in [1, len(op.data)) for which the reference's durable copy
// with that prefix written is what the disk holds (any k giving the same
// bytes is as good). Everything else about the power loss is checked
// exactly; a tear that is not a strict, non-empty prefix of that very write
// at its offset on top of the reference's durable state finds no k.
func (r *diskRef) tear(op *refOp, got []byte) {
	old := r.durable[op.name]
	var k int
	if len(got) > len(old) {
		k = len(got) - int(op.off)
	} else {
		for i := range op.data {
			if int(op.off)+i >= len(old) || int(op.off)+i >= len(got) {
				break
			}
			if got[int(op.off)+i] != old[int(op.off)+i] {
				k = i + 1
			}
		}
		k = max(k, 1)
	}
	if k < 1 || k >= len(op.data) {
		r.t.Fatalf("torn write of %s at %d (%d bytes): the disk holds %d bytes on the medium, not a strict prefix on top of %d durable bytes",
			op.name, op.off, len(op.data), len(got), len(old))
	}
	want := writeAt(slices.Clone(old), op.off, op.data[:k])
	if !bytes.Equal(got, want) {
		r.t.Fatalf("torn write of %s at %d: the medium differs from its first %d bytes on the durable copy at %d",
			op.name, op.off, k, firstDifference(got, want))
	}
	r.durable[op.name] = want
}

// refData is a write's bytes: mostly a few, sometimes none, sometimes
// pages' worth, patterned so that misplaced bytes show.
func refData(t *rapid.T, label string) []byte {
	var n int
	switch rapid.IntRange(0, 9).Draw(t, label+"_size") {
	case 0, 1:
		n = rapid.IntRange(refPage/2, 3*refPage).Draw(t, label+"_len")
	case 2:
		n = rapid.IntRange(0, 1).Draw(t, label+"_len")
	default:
		n = rapid.IntRange(1, 300).Draw(t, label+"_len")
	}
	salt := rapid.Byte().Draw(t, label+"_salt")
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i*7) ^ salt ^ byte(i>>9) ^ byte(i>>17)
	}
	return data
}

// refOffset is where a write goes in a file of size bytes: over what is
// there, at the end, past it (leaving a gap of zeros), or near a page
// boundary.
func refOffset(t *rapid.T, size int64) int64 {
	switch rapid.IntRange(0, 4).Draw(t, "where") {
	case 0:
		return rapid.Int64Range(0, size).Draw(t, "off")
	case 1:
		return size + rapid.Int64Range(1, 3*refPage/2).Draw(t, "gap")
	case 2:
		b := int64(rapid.IntRange(1, 3).Draw(t, "boundary")) * refPage
		return max(0, b+rapid.Int64Range(-2, 2).Draw(t, "near"))
	default:
		return size
	}
}

// ownedBuf is a buffer handed to WriteOwned, and what it held then.
type ownedBuf struct {
	buf, want []byte
}

// TestDiskAgreesWithAPlainReference drives a disk with random writes
// (overwrites, appends, writes past the end, WriteOwned of buffers the test
// keeps and reuses), truncations, renames (across directories, onto an
// existing file, onto itself), removals, file and directory fsyncs, waits
// long enough for writeback, bit flips, process crashes, power losses (torn
// writes armed or drawn), and wipes, and after each step compares
// everything the disk shows — the page cache's files, sizes and listing,
// the durable copies, the pending operations, the fsyncs the node is told
// of and when — with the reference above. Buffers given to WriteOwned must
// never change; buffers given to Write may change right after; slices the
// disk returns are the caller's to change.
//
// The durable copies are compared at every step, not only where nothing is
// pending: with fixed latencies the reference keeps the device's time (see
// diskRef.fsync and advance), so it knows when each fsync and writeback
// lands, and checks that against the FsyncDone timers the node receives.
// Every case ends with a long wait and a power loss.
func TestDiskAgreesWithAPlainReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := DefaultOptions(Seed(rapid.Uint64().Draw(t, "seed")))
		opts.Disk = DiskOptions{
			// Latencies on a grid that keeps fsyncs and writebacks apart
			// (see diskRef.advance).
			WriteLatency:         Fixed(time.Duration(rapid.SampledFrom([]int{0, 100, 1000}).Draw(t, "write_us")) * time.Microsecond),
			FsyncLatency:         Fixed(time.Duration(rapid.SampledFrom([]int{1, 7}).Draw(t, "fsync_ms"))*time.Millisecond + time.Nanosecond),
			WritebackDelay:       time.Duration(rapid.SampledFrom([]int{0, 50, 500}).Draw(t, "writeback_ms")) * time.Millisecond,
			TornWriteProbability: rapid.SampledFrom([]float64{0, 0.5, 1}).Draw(t, "torn_probability"),
		}
		w, disk, p := diskProbeWorld(opts)
		ref := &diskRef{t: t, cache: map[string][]byte{}, durable: map[string][]byte{},
			writeLatency: opts.Disk.WriteLatency.Min, fsyncLatency: opts.Disk.FsyncLatency.Min,
			writeback: opts.Disk.WritebackDelay}
		var owned []ownedBuf
		seen := 0 // of p.fired

		// run waits d, checking that the node is told of exactly the
		// fsyncs the reference completes, at the times it does.
		run := func(d time.Duration) {
			w.RunFor(d)
			want := ref.advance(w.Now())
			got, at := (*p).fired[seen:], (*p).firedAt[seen:]
			seen = len((*p).fired)
			if len(got) != len(want) {
				t.Fatalf("%d fsyncs completed by %v, want %d", len(got), w.Now(), len(want))
			}
			for i, f := range want {
				done, ok := got[i].(*FsyncDone)
				if !ok || done.Token != f.token || done.File != f.name || done.Dir != f.dir || done.Err != nil || at[i] != f.at {
					t.Fatalf("fsync %d: told %+v at %v, want token %d of %s (dir %v) at %v", i, got[i], at[i], f.token, f.name, f.dir, f.at)
				}
			}
		}
		restart := func() {
			if !w.Restart(0) {
				t.Fatal("the node did not restart")
			}
			seen = 0 // a new probe
			run(0)
		}
		// powerLoss cuts the power (arming a torn write, or not) and
		// checks the tear, if any.
		powerLoss := func(armed bool) {
			last := ref.lastPendingWrite()
			before := disk.Stats().TornWrites
			if armed {
				if err := w.InjectFault(Fault{Kind: FaultDisk, Disk: DiskTornWrite, Target: "n"}); err != nil {
					t.Fatal(err)
				}
			} else if !w.Crash(0, true) {
				t.Fatal("the node was not up")
			}
			tore := disk.Stats().TornWrites - before
			eligible := last != nil && len(last.data) > 1
			switch {
			case tore > 1 || (tore == 1 && !eligible):
				t.Fatalf("%d torn writes, with last pending write %+v", tore, last)
			case tore == 0 && eligible && (armed || opts.Disk.TornWriteProbability == 1):
				t.Fatalf("a tear was certain, yet the last pending write (%s at %d, %d bytes) was not torn", last.name, last.off, len(last.data))
			case tore == 1:
				got, _ := disk.Durable(last.name)
				ref.tear(last, got)
			}
			ref.powerLoss()
		}

		write := func(step int, file string, off int64, data []byte) {
			t.Logf("step %d: write %s at %d, %d bytes", step, file, off, len(data))
			if err := disk.Write(file, off, data); err != nil {
				t.Fatal(err)
			}
			ref.write(w.Now(), file, off, data)
			for i := range data {
				data[i] = ^data[i] // the caller's to change now
			}
		}
		// FileRefs kept across steps, by name, as a log keeps its active
		// segment's: they must follow removals, renames, wipes; one is
		// sometimes handed a name other than its own.
		fileRefs := map[string]*FileRef{}
		writeOwned := func(step int, file string, off int64, buf []byte) {
			var err error
			switch how := rapid.IntRange(0, 3).Draw(t, "through"); {
			case how == 0:
				t.Logf("step %d: write owned %s at %d, %d bytes", step, file, off, len(buf))
				err = disk.WriteOwned(file, off, buf)
			default:
				name := file
				if how == 3 {
					name = rapid.SampledFrom(refNames).Draw(t, "ref_of")
				}
				if fileRefs[name] == nil {
					fileRefs[name] = &FileRef{}
				}
				t.Logf("step %d: write owned %s at %d, %d bytes, through the ref of %s", step, file, off, len(buf), name)
				err = disk.WriteOwnedRef(fileRefs[name], file, off, buf)
			}
			if err != nil {
				t.Fatal(err)
			}
			ref.write(w.Now(), file, off, buf)
		}
		fsync := func(step int, file string, dir bool) {
			t.Logf("step %d: fsync %s (dir %v)", step, file, dir)
			token := ref.fsync(w.Now(), file, dir)
			if dir {
				disk.FsyncDir(file, token)
			} else {
				disk.Fsync(file, token)
			}
		}
		rename := func(step int, from, to string) {
			t.Logf("step %d: rename %s to %s", step, from, to)
			err := disk.Rename(from, to)
			if _, ok := ref.cache[from]; ok {
				if err != nil {
					t.Fatal(err)
				}
				ref.rename(w.Now(), from, to)
			} else if !errors.Is(err, ErrNotExist) {
				t.Fatalf("renaming a missing file: %v, want ErrNotExist", err)
			}
		}

		steps := rapid.IntRange(1, 150).Draw(t, "steps")
		for step := range steps {
			file := rapid.SampledFrom(refNames).Draw(t, "file")
			_, exists := ref.cache[file]
			size := int64(len(ref.cache[file]))
			switch action := rapid.IntRange(0, 17).Draw(t, "action"); action {
			case 0, 1, 2: // Write; the caller may change its buffer after
				write(step, file, refOffset(t, size), refData(t, "data"))
			case 3, 4: // WriteOwned, of a new buffer or one given before, maybe to two files
				var buf []byte
				if len(owned) > 0 && rapid.IntRange(0, 3).Draw(t, "reuse") == 0 {
					buf = owned[rapid.IntRange(0, len(owned)-1).Draw(t, "which")].buf
				} else {
					buf = refData(t, "owned")
					owned = append(owned, ownedBuf{buf: buf, want: slices.Clone(buf)})
				}
				writeOwned(step, file, refOffset(t, size), buf)
				if rapid.Bool().Draw(t, "twice") {
					// A record batch's bytes go to several files.
					file2 := rapid.SampledFrom(refNames).Draw(t, "file2")
					writeOwned(step, file2, refOffset(t, int64(len(ref.cache[file2]))), buf)
				}
			case 5:
				to := int64(0)
				if size > 0 {
					to = rapid.Int64Range(0, size).Draw(t, "truncate_to")
				}
				t.Logf("step %d: truncate %s to %d", step, file, to)
				err := disk.Truncate(file, to)
				if exists {
					if err != nil {
						t.Fatal(err)
					}
					ref.truncate(w.Now(), file, to)
				} else if !errors.Is(err, ErrNotExist) {
					t.Fatalf("truncating a missing file: %v, want ErrNotExist", err)
				}
			case 6, 7:
				rename(step, file, rapid.SampledFrom(refNames).Draw(t, "to"))
			case 8:
				t.Logf("step %d: remove %s", step, file)
				err := disk.Remove(file)
				if exists {
					if err != nil {
						t.Fatal(err)
					}
					ref.remove(w.Now(), file)
				} else if !errors.Is(err, ErrNotExist) {
					t.Fatalf("removing a missing file: %v, want ErrNotExist", err)
				}
			case 9, 10:
				fsync(step, file, rapid.Bool().Draw(t, "dir"))
			case 11:
				// Kafka's checkpoint: write a temporary file, fsync it
				// (or, wrongly, not), rename it over the checkpoint in
				// its directory, flush the directory (or only the file).
				cp := rapid.SampledFrom(refNames).Draw(t, "checkpoint")
				write(step, file, 0, refData(t, "checkpoint_data"))
				if rapid.IntRange(0, 3).Draw(t, "skip_fsync") > 0 {
					fsync(step, file, false)
				}
				rename(step, file, cp)
				fsync(step, cp, rapid.IntRange(0, 3).Draw(t, "plain_fsync") > 0)
			case 12, 13:
				ms := rapid.IntRange(0, 60).Draw(t, "wait_ms")
				if rapid.IntRange(0, 3).Draw(t, "long") == 0 {
					ms = rapid.IntRange(0, 700).Draw(t, "long_wait_ms")
				}
				t.Logf("step %d: wait %dms", step, ms)
				run(time.Duration(ms) * time.Millisecond)
			case 14:
				if size == 0 {
					continue
				}
				name, off, ok := disk.corrupt(file)
				if !ok || name != file || off < 0 || off >= size {
					t.Fatalf("corrupt %s (%d bytes) = %s, %d, %v", file, size, name, off, ok)
				}
				got, err := disk.Read(file, off, 1)
				if err != nil || len(got) != 1 {
					t.Fatalf("reading the flipped byte: %v", err)
				}
				bit := got[0] ^ ref.cache[file][off]
				if bits.OnesCount8(bit) != 1 {
					t.Fatalf("corrupt %s at %d changed the byte by %08b, not one bit", file, off, bit)
				}
				t.Logf("step %d: flip %08b of %s at %d", step, bit, file, off)
				// The bit flips in the cache, and on the medium wherever
				// the durable copy under that name holds the offset.
				ref.cache[file][off] ^= bit
				if b, ok := ref.durable[file]; ok && off < int64(len(b)) {
					b[off] ^= bit
				}
			case 15:
				switch rapid.IntRange(0, 4).Draw(t, "crash") {
				case 0, 1:
					t.Logf("step %d: process crash", step)
					if !w.Crash(0, false) {
						t.Fatal("the node was not up")
					}
					// The page cache stays, with its pending operations
					// (writeback goes on), but the fsyncs the process
					// was waiting for are dropped undone.
					ref.fsyncs = nil
				case 2:
					t.Logf("step %d: power loss", step)
					powerLoss(false)
				case 3:
					t.Logf("step %d: power loss with a torn write armed", step)
					powerLoss(true)
				case 4:
					t.Logf("step %d: wipe", step)
					powerLoss(false)
					disk.wipe()
					ref.cache, ref.durable = map[string][]byte{}, map[string][]byte{}
				}
				restart()
			case 16, 17:
				// Read and Equal over a range of one file.
				if !exists {
					continue
				}
				off := rapid.Int64Range(0, size).Draw(t, "read_off")
				n := rapid.IntRange(0, 2*refPage).Draw(t, "read_len")
				got, err := disk.Read(file, off, n)
				want := ref.cache[file][off:min(off+int64(n), size)]
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("read %s at %d len %d: %d bytes (%v), want %d (first difference at %d)", file, off, n, len(got), err, len(want), firstDifference(got, want))
				}
				if !disk.Equal(file, off, want) {
					t.Fatalf("Equal(%s, %d, its %d bytes) = false", file, off, len(want))
				}
				if len(want) > 0 {
					other := slices.Clone(want)
					other[rapid.IntRange(0, len(other)-1).Draw(t, "differ_at")] ^= 0x10
					if disk.Equal(file, off, other) {
						t.Fatalf("Equal(%s, %d) = true for bytes that differ", file, off)
					}
				}
				if off+int64(len(want)) == size && disk.Equal(file, off, append(slices.Clone(want), 0)) {
					t.Fatalf("Equal(%s, %d) = true for a range past the end", file, off)
				}
			}
			ref.compact()
			checkAgainstReference(t, disk, ref, owned)
		}
		// Every case ends with what settles in a while, then a power loss.
		run(time.Second)
		checkAgainstReference(t, disk, ref, owned)
		powerLoss(false)
		restart()
		checkAgainstReference(t, disk, ref, owned)
	})
}

// checkAgainstReference compares all the disk shows with the reference.
func checkAgainstReference(t *rapid.T, disk *Disk, ref *diskRef, owned []ownedBuf) {
	var names []string
	var used int64
	for name, b := range ref.cache {
		names = append(names, name)
		used += int64(len(b))
	}
	slices.Sort(names)
	if got := disk.List(""); !slices.Equal(got, names) && len(got)+len(names) > 0 {
		t.Fatalf("List = %v, want %v", got, names)
	}
	for _, prefix := range []string{"d1/", "d2/", "d", "d1", "d1/x", "d2/y", "t", "top", "x", "zz"} {
		var want []string
		for _, n := range names {
			if strings.HasPrefix(n, prefix) {
				want = append(want, n)
			}
		}
		if got := disk.List(prefix); !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Fatalf("List(%s) = %v, want %v", prefix, got, want)
		}
	}
	if got := disk.UsedBytes(); got != used {
		t.Fatalf("UsedBytes = %d, want %d", got, used)
	}
	if got, want := disk.PendingOps(), len(ref.pending); got != want {
		t.Fatalf("PendingOps = %d, want %d", got, want)
	}
	for _, name := range refNames {
		want, ok := ref.cache[name]
		if disk.Exists(name) != ok {
			t.Fatalf("Exists(%s) = %v, want %v", name, !ok, ok)
		}
		size, sok := disk.Size(name)
		if sok != ok || size != int64(len(want)) {
			t.Fatalf("Size(%s) = %d, %v, want %d, %v", name, size, sok, len(want), ok)
		}
		got, err := disk.ReadFile(name)
		switch {
		case !ok && !errors.Is(err, ErrNotExist):
			t.Fatalf("ReadFile(%s) of a missing file: %v", name, err)
		case ok && (err != nil || !bytes.Equal(got, want)):
			t.Fatalf("page cache of %s: %d bytes (%v), want %d (first difference at %d)", name, len(got), err, len(want), firstDifference(got, want))
		}
		if len(got) > 0 {
			got[0] ^= 0xff // the caller's copy
		}
		dwant, dok := ref.durable[name]
		dgot, gok := disk.Durable(name)
		if gok != dok || !bytes.Equal(dgot, dwant) {
			t.Fatalf("durable copy of %s: %d bytes (%v), want %d (%v) (first difference at %d)", name, len(dgot), gok, len(dwant), dok, firstDifference(dgot, dwant))
		}
		if len(dgot) > 0 {
			dgot[len(dgot)-1] ^= 0xff
		}
	}
	for i, o := range owned {
		if !bytes.Equal(o.buf, o.want) {
			t.Fatalf("owned buffer %d (%d bytes) changed at %d", i, len(o.buf), firstDifference(o.buf, o.want))
		}
	}
}
