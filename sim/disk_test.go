package sim

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

type diskOp struct {
	kind opKind
	file string
	off  int64
	data []byte
	at   time.Duration
}

func applyOracle(fs map[string][]byte, op diskOp) {
	switch op.kind {
	case opWrite:
		b := fs[op.file]
		if end := op.off + int64(len(op.data)); end > int64(len(b)) {
			b = append(b, make([]byte, end-int64(len(b)))...)
		}
		copy(b[op.off:], op.data)
		fs[op.file] = b
	case opTruncate:
		fs[op.file] = fs[op.file][:op.off]
	}
}

type fsyncMark struct {
	file   string
	issued int // ops before it
}

// TestPowerLossLosesExactlyTheNonDurableWrites drives a disk with random
// writes, truncations, fsyncs and waits, then cuts the power, and compares
// what survives with an oracle: an operation survives iff an fsync of its file
// issued after it completed, or it was older than the writeback delay. Several
// rounds run back to back, and writes range from a few bytes to several pages,
// so that the page sharing between the cache and the durable copy (which a
// power loss sets up wholesale) is exercised across page boundaries.
func TestPowerLossLosesExactlyTheNonDurableWrites(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		opts := DefaultOptions(Seed(rapid.Uint64().Draw(t, "seed")))
		opts.Disk.WritebackDelay = time.Duration(rapid.SampledFrom([]int{0, 50, 500}).Draw(t, "writeback_ms")) * time.Millisecond
		// Small operation blocks are reused within a few operations: a
		// block reused while an operation in it was pending would show.
		defer func(n int) { opBlockOps = n }(opBlockOps)
		opBlockOps = rapid.SampledFrom([]int{1, 2, 3, 256}).Draw(t, "op_block_ops")
		w, disk, p := diskProbeWorld(opts)
		files := []string{"a", "b", "c"}
		want := map[string][]byte{} // what survived the rounds before
		rounds := rapid.IntRange(1, 3).Draw(t, "rounds")
		for round := range rounds {
			var ops []diskOp
			var fsyncs []fsyncMark
			steps := rapid.IntRange(1, 40).Draw(t, "steps")
			for range steps {
				file := rapid.SampledFrom(files).Draw(t, "file")
				size, _ := disk.Size(file)
				switch rapid.IntRange(0, 4).Draw(t, "action") {
				case 0, 1: // append, overwrite or write past the end
					data := diskTestData(t)
					off := size
					switch rapid.IntRange(0, 3).Draw(t, "where") {
					case 0:
						if size > 0 {
							off = rapid.Int64Range(0, size).Draw(t, "off")
						}
					case 1:
						off = size + rapid.Int64Range(1, 3*pageBytes/2).Draw(t, "gap")
					}
					if err := disk.Write(file, off, data); err != nil {
						t.Fatal(err)
					}
					ops = append(ops, diskOp{kind: opWrite, file: file, off: off, data: data, at: w.Now()})
				case 2:
					if size > 0 {
						to := rapid.Int64Range(0, size).Draw(t, "truncate_to")
						if err := disk.Truncate(file, to); err != nil {
							t.Fatal(err)
						}
						ops = append(ops, diskOp{kind: opTruncate, file: file, off: to, at: w.Now()})
					}
				case 3:
					disk.Fsync(file, len(fsyncs))
					fsyncs = append(fsyncs, fsyncMark{file: file, issued: len(ops)})
				case 4:
					w.RunFor(time.Duration(rapid.IntRange(0, 100).Draw(t, "wait_ms")) * time.Millisecond)
				}
			}
			// Before the crash the cache holds every operation.
			all := cloneFiles(want)
			for _, op := range ops {
				applyOracle(all, op)
			}
			for _, f := range files {
				got, _ := disk.ReadFile(f)
				if !bytes.Equal(got, all[f]) {
					t.Fatalf("round %d: page cache of %s = %d bytes, want %d (first difference at %d)", round, f, len(got), len(all[f]), firstDifference(got, all[f]))
				}
			}
			durable := make([]bool, len(ops))
			for _, tok := range (*p).fired {
				done, ok := tok.(*FsyncDone)
				if !ok {
					continue
				}
				m := fsyncs[done.Token.(int)]
				for i := 0; i < m.issued; i++ {
					if ops[i].file == m.file {
						durable[i] = true
					}
				}
			}
			crashAt := w.Now()
			for i, op := range ops {
				if opts.Disk.WritebackDelay > 0 && op.at+opts.Disk.WritebackDelay <= crashAt {
					durable[i] = true
				}
			}
			w.Crash(0, true)
			for i, op := range ops {
				if durable[i] {
					applyOracle(want, op)
				}
			}
			for _, f := range files {
				got, _ := disk.ReadFile(f)
				if !bytes.Equal(got, want[f]) {
					t.Fatalf("round %d: after power loss %s = %d bytes, want %d (first difference at %d; durable ops %v)", round, f, len(got), len(want[f]), firstDifference(got, want[f]), durable)
				}
				if dur, _ := disk.Durable(f); !bytes.Equal(dur, want[f]) {
					t.Fatalf("round %d: durable copy of %s differs from the oracle at %d", round, f, firstDifference(dur, want[f]))
				}
			}
			if disk.PendingOps() != 0 {
				t.Fatalf("%d pending ops survived the power loss", disk.PendingOps())
			}
			w.Restart(0)
			w.RunFor(0)
		}
	})
}

// pageBytes scales the tests' writes: several of them cross the larger
// pages a page cache keeps (folios of up to 64 KiB).
const pageBytes = 64 << 10

// diskTestData is a write: usually a few random bytes, sometimes a run
// spanning pages, patterned so that misplaced bytes show.
func diskTestData(t *rapid.T) []byte {
	if rapid.IntRange(0, 3).Draw(t, "big") > 0 {
		return rapid.SliceOfN(rapid.Byte(), 1, 64).Draw(t, "data")
	}
	n := rapid.IntRange(1, 3*pageBytes).Draw(t, "len")
	salt := rapid.Byte().Draw(t, "salt")
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i*7) ^ salt ^ byte(i>>9)
	}
	return data
}

func cloneFiles(fs map[string][]byte) map[string][]byte {
	c := make(map[string][]byte, len(fs))
	for k, v := range fs {
		c[k] = append([]byte(nil), v...)
	}
	return c
}

func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func diskWorld(t *testing.T, opts DiskOptions) (*World, *Disk, **probe) {
	t.Helper()
	o := DefaultOptions(42)
	o.Disk = opts
	return diskProbeWorld(o)
}

// diskProbeWorld starts a world of one probe node, "n", at time zero, and
// returns it with the node's disk; *p is the node's current probe (a
// restart makes another).
func diskProbeWorld(o Options) (w *World, disk *Disk, p **probe) {
	w, p = NewWorld(o), new(*probe)
	w.AddNode(NodeSpec{Name: "n", New: func() Node { *p = &probe{}; return *p }})
	w.Start()
	w.RunUntil(0)
	return w, w.Disk(0), p
}

func TestProcessCrashKeepsThePageCache(t *testing.T) {
	w, disk, _ := diskWorld(t, DefaultDiskOptions())
	disk.Append("log", []byte("hello"))
	w.Crash(0, false)
	w.Restart(0)
	if got, _ := disk.ReadFile("log"); string(got) != "hello" {
		t.Fatalf("kill -9 must not lose the page cache: %q", got)
	}
	w.RunFor(time.Minute) // writeback
	w.Crash(0, true)
	if got, _ := disk.ReadFile("log"); string(got) != "hello" {
		t.Fatalf("written back data must survive a power loss: %q", got)
	}
}

func TestFsyncCompletesAfterTheDeviceLatency(t *testing.T) {
	opts := DefaultDiskOptions()
	opts.FsyncLatency = Fixed(5 * time.Millisecond)
	opts.WriteLatency = Fixed(time.Millisecond)
	w, disk, p := diskWorld(t, opts)
	disk.Append("log", []byte("x"))
	disk.Append("log", []byte("y"))
	disk.Fsync("log", "tok")
	w.RunFor(6 * time.Millisecond)
	if len((*p).fired) != 0 {
		t.Fatal("fsync completed before the writes ahead of it (2ms) and its own latency (5ms)")
	}
	w.RunFor(time.Millisecond)
	if len((*p).fired) != 1 || (*p).fired[0].(*FsyncDone).Token != "tok" {
		t.Fatalf("fsync should complete at 7ms: %v", (*p).fired)
	}
}

func TestFsyncInFlightAtPowerLossIsLost(t *testing.T) {
	w, disk, _ := diskWorld(t, DefaultDiskOptions())
	disk.Append("log", []byte("abc"))
	disk.Fsync("log", nil)
	w.Crash(0, true)
	w.Restart(0)
	w.RunFor(time.Second)
	if disk.Exists("log") {
		t.Fatal("an fsync that had not completed must not make data durable")
	}
}

func TestRenameBeforeFsyncCanLeaveAnEmptyFile(t *testing.T) {
	w, disk, _ := diskWorld(t, DefaultDiskOptions())
	// The classic mistake: write a temp file, rename it, fsync only the name.
	disk.WriteFile("cp.tmp", []byte("checkpoint"))
	disk.Rename("cp.tmp", "cp")
	disk.Fsync("cp", nil)
	w.RunFor(time.Second)
	w.Crash(0, true)
	got, ok := disk.ReadFile("cp")
	if ok != nil || len(got) != 0 {
		t.Fatalf("rename persisted without its data: want an empty cp, got %q (%v)", got, ok)
	}
	// The right way: fsync the temp file before renaming.
	disk.WriteFile("cp.tmp", []byte("checkpoint"))
	disk.Fsync("cp.tmp", nil)
	w.RunFor(time.Second)
	disk.Rename("cp.tmp", "cp")
	disk.Fsync("cp", nil)
	w.RunFor(time.Second)
	w.Crash(0, true)
	if got, _ := disk.ReadFile("cp"); string(got) != "checkpoint" {
		t.Fatalf("fsync, rename, fsync must survive: %q", got)
	}
}

func TestTornWriteLeavesAPrefix(t *testing.T) {
	for seed := range 20 {
		o := DefaultOptions(Seed(seed))
		w, disk, _ := diskProbeWorld(o)
		disk.Append("log", []byte("durable|"))
		disk.Fsync("log", nil)
		w.RunFor(time.Second)
		disk.Append("log", []byte("0123456789"))
		if err := w.InjectFault(Fault{Kind: FaultDisk, Disk: DiskTornWrite, Target: "n"}); err != nil {
			t.Fatal(err)
		}
		got, _ := disk.ReadFile("log")
		if !bytes.HasPrefix(got, []byte("durable|")) || len(got) <= 8 || len(got) >= 18 {
			t.Fatalf("seed %d: torn write should leave the durable part and a strict prefix of the last write: %q", seed, got)
		}
		if !bytes.HasPrefix([]byte("durable|0123456789"), got) {
			t.Fatalf("seed %d: torn bytes are not a prefix: %q", seed, got)
		}
		if w.State(0) != Down || disk.Stats().TornWrites != 1 {
			t.Fatalf("torn-write is a power loss with a tear: state %v, stats %+v", w.State(0), disk.Stats())
		}
	}
}

func TestCorruptionFlipsOneBitOnTheMedium(t *testing.T) {
	w, disk, _ := diskWorld(t, DefaultDiskOptions())
	orig := bytes.Repeat([]byte{0x55}, 100)
	disk.WriteFile("seg", orig)
	disk.Fsync("seg", nil)
	w.RunFor(time.Second)
	if err := w.InjectFault(Fault{Kind: FaultDisk, Disk: DiskCorrupt, Target: "n"}); err != nil {
		t.Fatal(err)
	}
	check := func(got []byte) {
		diff := 0
		for i := range got {
			x := got[i] ^ orig[i]
			for ; x != 0; x &= x - 1 {
				diff++
			}
		}
		if diff != 1 {
			t.Fatalf("want exactly one flipped bit, got %d", diff)
		}
	}
	got, _ := disk.ReadFile("seg")
	check(got)
	w.Crash(0, true)
	got, _ = disk.ReadFile("seg")
	check(got) // on the medium too
}

func TestReadErrorUntilOverwritten(t *testing.T) {
	w, disk, _ := diskWorld(t, DefaultDiskOptions())
	disk.WriteFile("seg", make([]byte, 100))
	if err := w.InjectFault(Fault{Kind: FaultDisk, Disk: DiskReadError, Target: "n", File: "seg"}); err != nil {
		t.Fatal(err)
	}
	if _, err := disk.ReadFile("seg"); !errors.Is(err, ErrIO) {
		t.Fatalf("want ErrIO, got %v", err)
	}
	disk.Truncate("seg", 0)
	disk.Write("seg", 0, make([]byte, 100))
	if _, err := disk.ReadFile("seg"); err != nil {
		t.Fatalf("rewriting the range clears a latent error: %v", err)
	}
}

func TestFullDiskRejectsGrowthUntilCleared(t *testing.T) {
	w, disk, _ := diskWorld(t, DefaultDiskOptions())
	disk.WriteFile("seg", make([]byte, 10))
	if err := w.InjectFault(Fault{Kind: FaultDisk, Disk: DiskFull, Target: "n", For: time.Second}); err != nil {
		t.Fatal(err)
	}
	if _, err := disk.Append("seg", []byte("x")); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("want ErrNoSpace, got %v", err)
	}
	if err := disk.Write("seg", 0, []byte("overwrite")); err != nil {
		t.Fatalf("overwriting in place needs no space: %v", err)
	}
	if err := disk.Truncate("seg", 5); err != nil {
		t.Fatal(err)
	}
	if _, err := disk.Append("seg", []byte("x")); err != nil {
		t.Fatalf("freed space can be used again: %v", err)
	}
	if _, err := disk.Append("seg", bytes.Repeat([]byte("x"), 10)); !errors.Is(err, ErrNoSpace) {
		t.Fatal("growing past the old usage must still fail")
	}
	w.RunFor(2 * time.Second)
	if _, err := disk.Append("seg", bytes.Repeat([]byte("x"), 100)); err != nil {
		t.Fatalf("the fault ends after its duration: %v", err)
	}
}

func TestCapacityBound(t *testing.T) {
	opts := DefaultDiskOptions()
	opts.CapacityBytes = 10
	_, disk, _ := diskWorld(t, opts)
	if err := disk.WriteFile("a", make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	if err := disk.WriteFile("b", []byte("x")); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("want ErrNoSpace past capacity, got %v", err)
	}
}

func TestSlowFsync(t *testing.T) {
	opts := DefaultDiskOptions()
	opts.FsyncLatency = Fixed(time.Millisecond)
	opts.WriteLatency = Fixed(0)
	w, disk, p := diskWorld(t, opts)
	if err := w.InjectFault(Fault{Kind: FaultDisk, Disk: DiskSlowFsync, Target: "n", SlowFactor: 50}); err != nil {
		t.Fatal(err)
	}
	disk.Fsync("x", nil)
	w.RunFor(49 * time.Millisecond)
	if len((*p).fired) != 0 {
		t.Fatal("slow fsync completed early")
	}
	w.RunFor(time.Millisecond)
	if len((*p).fired) != 1 {
		t.Fatal("slow fsync should complete after 50ms")
	}
}

func TestWipeReplacesTheDisk(t *testing.T) {
	w, disk, _ := diskWorld(t, DefaultDiskOptions())
	disk.WriteFile("seg", []byte("data"))
	disk.Fsync("seg", nil)
	w.RunFor(time.Second)
	if err := w.InjectFault(Fault{Kind: FaultDisk, Disk: DiskWipe, Target: "n", For: time.Second}); err != nil {
		t.Fatal(err)
	}
	if w.State(0) != Down || disk.Exists("seg") || disk.UsedBytes() != 0 {
		t.Fatal("wipe takes the node down and leaves an empty disk")
	}
	w.RunFor(2 * time.Second)
	if w.State(0) != Running {
		t.Fatal("the node restarts after the wipe's duration")
	}
}

func TestDiskListIsSorted(t *testing.T) {
	_, disk, _ := diskWorld(t, DefaultDiskOptions())
	for i := 9; i >= 0; i-- {
		disk.WriteFile(fmt.Sprintf("seg-%d", i), nil)
	}
	disk.WriteFile("other", nil)
	got := disk.List("seg-")
	if len(got) != 10 || got[0] != "seg-0" || got[9] != "seg-9" {
		t.Fatalf("List = %v", got)
	}
}

// TestRenamedFileDoesNotWriteThroughTheOldNamesDurableCopy: the cache and the
// durable copy share pages; after a rename that is not yet durable, writing
// the new name must leave the old name's durable bytes alone.
func TestRenamedFileDoesNotWriteThroughTheOldNamesDurableCopy(t *testing.T) {
	w, disk, _ := diskWorld(t, DiskOptions{})
	disk.WriteFile("seg", []byte("original"))
	disk.Fsync("seg", nil)
	w.RunFor(time.Second)
	disk.Rename("seg", "seg.deleted")
	if err := disk.Write("seg.deleted", 0, []byte("OVERWRITE")); err != nil {
		t.Fatal(err)
	}
	if got, _ := disk.Durable("seg"); string(got) != "original" {
		t.Fatalf("durable seg = %q before any fsync of the rename, want %q", got, "original")
	}
	w.Crash(0, true)
	if got, err := disk.ReadFile("seg"); err != nil || string(got) != "original" {
		t.Fatalf("after power loss seg = %q (%v), want %q", got, err, "original")
	}
	if disk.Exists("seg.deleted") {
		t.Fatal("the rename was never made durable, yet seg.deleted survived")
	}
}

// A file renamed onto its own name stays, as rename(2) leaves it.
func TestRenameOntoItselfChangesNothing(t *testing.T) {
	w, disk, _ := diskWorld(t, DiskOptions{WritebackDelay: 10 * time.Millisecond})
	disk.Write("a", 0, []byte("hello"))
	if err := disk.Rename("a", "a"); err != nil {
		t.Fatal(err)
	}
	w.RunFor(time.Second)
	if got, err := disk.ReadFile("a"); err != nil || string(got) != "hello" || disk.UsedBytes() != 5 {
		t.Fatalf("after renaming a onto itself: %q, %v, %d bytes used", got, err, disk.UsedBytes())
	}
	if got, ok := disk.Durable("a"); !ok || string(got) != "hello" {
		t.Fatalf("durable a = %q, %v", got, ok)
	}
}

// The durable side of a rename must not carry pages it shares with a file
// created since under the old name: a write made durable under the old name
// adopts the new file's page when the bytes agree, and the rename then moved
// that page to the new name, where a later durable write changed it in place
// — and with it the other file's cached bytes.
func TestDurableRenameDoesNotShareTheNewFileAtItsOldName(t *testing.T) {
	w, disk, _ := diskWorld(t, DiskOptions{})
	disk.Write("a", 0, []byte("abc"))
	disk.Rename("a", "b")
	disk.Write("a", 0, []byte("abc")) // a new file, the same bytes
	disk.Write("b", 1, []byte("X"))
	disk.Fsync("a", nil) // the first write (adopting the new file's page), the rename, the second write
	w.RunFor(time.Second)
	disk.Fsync("b", nil)
	w.RunFor(time.Second)
	if got, _ := disk.ReadFile("a"); string(got) != "abc" {
		t.Fatalf("a = %q, want %q: a durable write to b changed it", got, "abc")
	}
	if got, _ := disk.ReadFile("b"); string(got) != "aXc" {
		t.Fatalf("b = %q, want %q", got, "aXc")
	}
	w.Crash(0, true)
	for name, want := range map[string]string{"a": "abc", "b": "aXc"} {
		if got, _ := disk.ReadFile(name); string(got) != want {
			t.Fatalf("after power loss %s = %q, want %q", name, got, want)
		}
	}
}

// The list of flips names files as they are now: a segment renamed after a
// flip (compaction's swap) keeps its flip under the new name, and a file
// removed or replaced takes its flips with it.
func TestFlipsFollowTheirFile(t *testing.T) {
	w, disk, _ := diskWorld(t, DefaultDiskOptions())
	disk.WriteFile("a.cleaned", bytes.Repeat([]byte{0x55}, 100))
	disk.WriteFile("a", bytes.Repeat([]byte{0x66}, 100))
	disk.WriteFile("b", bytes.Repeat([]byte{0x77}, 100))
	for _, f := range []string{"a", "a.cleaned", "b"} {
		if err := w.InjectFault(Fault{Kind: FaultDisk, Disk: DiskCorrupt, Target: "n", File: f}); err != nil {
			t.Fatal(err)
		}
	}
	files := func() []string {
		var out []string
		for _, f := range disk.Flips() {
			out = append(out, f.File)
		}
		return out
	}
	if got := files(); !slices.Equal(got, []string{"a", "a.cleaned", "b"}) {
		t.Fatalf("flips after three corruptions: %v", got)
	}
	if err := disk.Rename("a.cleaned", "a"); err != nil {
		t.Fatal(err)
	}
	if got := files(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("after a.cleaned replaced a: flips in %v, want the cleaned file's under a, and b's", got)
	}
	if err := disk.Remove("b"); err != nil {
		t.Fatal(err)
	}
	if got := files(); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("after b was removed: flips in %v, want [a]", got)
	}
}

// A directory fsync (Kafka's checkpoint writes flush their folder) makes the
// earlier removals and renames of files in that folder durable, and nothing
// else: a removal elsewhere, or a new file's data, stays pending.
func TestDirectoryFsyncPersistsRemovalsInItsFolder(t *testing.T) {
	w, disk, _ := diskWorld(t, DefaultDiskOptions())
	for _, f := range []string{"p/0.log", "p/9.log", "q/0.log"} {
		disk.WriteFile(f, []byte("old"))
		disk.Fsync(f, nil)
	}
	w.RunFor(time.Second)
	// A truncation removes p/9.log (and q/0.log elsewhere), then writes its
	// new copy and the epoch checkpoint.
	disk.Write("p/9.log", 0, []byte("more"))
	disk.Remove("p/9.log")
	disk.Remove("q/0.log")
	disk.WriteFile("p/9.log", []byte("new"))
	disk.WriteFile("p/cp.tmp", []byte("cp"))
	disk.Fsync("p/cp.tmp", nil)
	disk.Rename("p/cp.tmp", "p/cp")
	disk.FsyncDir("p/cp", nil)
	w.RunFor(time.Second)
	w.Crash(0, true)
	if got, err := disk.ReadFile("p/cp"); string(got) != "cp" {
		t.Fatalf("the checkpoint: %q %v", got, err)
	}
	if disk.Exists("p/9.log") {
		got, _ := disk.ReadFile("p/9.log")
		t.Fatalf("a removal in the flushed folder came back after a power loss: %q", got)
	}
	if !disk.Exists("q/0.log") || !disk.Exists("p/0.log") {
		t.Fatal("a removal in another folder must stay pending, and untouched files stay")
	}
	w.Restart(0)
	// A plain fsync of the checkpoint does not flush its folder.
	disk.Remove("p/0.log")
	disk.WriteFile("p/cp.tmp", []byte("cp2"))
	disk.Fsync("p/cp.tmp", nil)
	disk.Rename("p/cp.tmp", "p/cp")
	disk.Fsync("p/cp", nil)
	w.RunFor(time.Second)
	w.Crash(0, true)
	if !disk.Exists("p/0.log") {
		t.Fatal("a file fsync persisted another file's removal")
	}
}

// Operation blocks are reused however the queue drains: a queue that
// empties exactly at a block's end, again and again, keeps a bounded number
// of blocks (a block the drain left first in line once held every later
// one for good).
func TestOperationBlocksAreReusedWhenTheQueueDrainsAtABlockEnd(t *testing.T) {
	defer func(n int) { opBlockOps = n }(opBlockOps)
	for _, size := range []int{1, 2, 4} {
		opBlockOps = size
		opts := DefaultOptions(1)
		opts.Disk.WritebackDelay = 10 * time.Millisecond
		w, disk, _ := diskProbeWorld(opts)
		for round := range 50 {
			for i := range size {
				if err := disk.Write("a", int64(round*size+i), []byte{byte(i)}); err != nil {
					t.Fatal(err)
				}
			}
			w.RunFor(time.Second) // the writeback drains the queue
			if n := disk.PendingOps(); n != 0 {
				t.Fatalf("blocks of %d: %d operations pending after the writeback", size, n)
			}
		}
		if held := len(disk.blocks) + len(disk.spare); held > 2 {
			t.Fatalf("blocks of %d: %d blocks held after 50 drains (%d in use, %d spare), want at most 2", size, held, len(disk.blocks), len(disk.spare))
		}
		got, _ := disk.ReadFile("a")
		if len(got) != 50*size {
			t.Fatalf("blocks of %d: file holds %d bytes, want %d", size, len(got), 50*size)
		}
	}
}

// A directory fsync looks through the pending renames and removals only
// (Disk.names), not every pending write. Under random writes, renames,
// removals, file and directory fsyncs, waits and power losses, with small
// operation blocks that are reused quickly: names holds exactly the pending
// renames and removals not yet durable, in issue order (besides durable
// ones not dropped yet), and nothing that left the queue.
func TestDirectoryFsyncIndexHoldsThePendingNamespaceOperations(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		defer func(n int) { opBlockOps = n }(opBlockOps)
		opBlockOps = rapid.SampledFrom([]int{1, 2, 3, 256}).Draw(t, "op_block_ops")
		opts := DefaultOptions(Seed(rapid.Uint64().Draw(t, "seed")))
		opts.Disk.WritebackDelay = time.Duration(rapid.SampledFrom([]int{0, 20, 200}).Draw(t, "writeback_ms")) * time.Millisecond
		w, disk, _ := diskProbeWorld(opts)
		files := []string{"p/a", "p/b", "q/a", "q/b"}
		for step := range rapid.IntRange(1, 80).Draw(t, "steps") {
			file := rapid.SampledFrom(files).Draw(t, "file")
			switch rapid.IntRange(0, 6).Draw(t, "action") {
			case 0:
				disk.WriteFile(file, []byte{byte(step)})
			case 1:
				if disk.Exists(file) {
					disk.Rename(file, rapid.SampledFrom(files).Draw(t, "to"))
				}
			case 2:
				if disk.Exists(file) {
					disk.Remove(file)
				}
			case 3:
				disk.Fsync(file, nil)
			case 4:
				disk.FsyncDir(file, nil)
			case 5:
				w.RunFor(time.Duration(rapid.IntRange(0, 100).Draw(t, "wait_ms")) * time.Millisecond)
			case 6:
				if rapid.IntRange(0, 4).Draw(t, "power_loss") == 0 {
					w.Crash(0, true)
					w.Restart(0)
					w.RunFor(0)
				}
			}
			queued := map[*pendingOp]bool{}
			var want []*pendingOp
			for _, op := range disk.pending[disk.head:] {
				queued[op] = true
				if (op.kind == opRename || op.kind == opRemove) && !op.done {
					want = append(want, op)
				}
			}
			i := 0
			for j, op := range disk.names {
				if !queued[op] {
					t.Fatalf("step %d: names[%d] (%v %s) is no longer queued", step, j, op.kind, op.name())
				}
				if j > 0 && disk.names[j-1].seq >= op.seq {
					t.Fatalf("step %d: names out of issue order at %d", step, j)
				}
				if i < len(want) && want[i] == op {
					i++
				}
			}
			if i != len(want) {
				t.Fatalf("step %d: a pending %v of %s is missing from names", step, want[i].kind, want[i].name())
			}
		}
	})
}

// A file's queue of pending operations, which reuses its slice, behaves as
// a plain first-in first-out list through any mix of pushes and drops (long
// enough to compact in place, again and again).
func TestFileOpsQueueIsFirstInFirstOut(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var q fileOps
		var want []*pendingOp
		for range rapid.IntRange(1, 60).Draw(t, "rounds") {
			for range rapid.IntRange(0, 200).Draw(t, "pushes") {
				op := &pendingOp{}
				q.push(op)
				want = append(want, op)
			}
			n := rapid.IntRange(0, len(want)).Draw(t, "drops")
			q.drop(n)
			want = want[n:]
			got := q.pending()
			if len(got) != len(want) {
				t.Fatalf("%d pending, want %d", len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("pending[%d] is not the operation pushed there", i)
				}
			}
			for i := range q.ops[:q.head] {
				if q.ops[i] != nil {
					t.Fatalf("a dropped operation is still referenced at %d", i)
				}
			}
		}
	})
}

// Entries go once they hold nothing: a run that writes and removes many
// files (segments, checkpoints, their temporary files) does not keep an
// entry for each, and no queue keeps operations that settled.
func TestFileEntriesGoOnceEmpty(t *testing.T) {
	w, disk, _ := diskWorld(t, DiskOptions{WriteLatency: Fixed(0), FsyncLatency: Fixed(time.Millisecond), WritebackDelay: 10 * time.Millisecond})
	for i := range 100 {
		name := fmt.Sprintf("p/%d.log", i)
		disk.WriteFile(name, []byte("x"))
		if i%2 == 0 {
			disk.Fsync(name, nil) // some leave by fsync, the rest by writeback
		}
	}
	w.RunFor(time.Second)
	for name, e := range disk.files {
		if n := len(e.ops.pending()); n != 0 {
			t.Fatalf("%s keeps %d operations after everything settled", name, n)
		}
	}
	if n := len(disk.files); n != 100 || disk.PendingOps() != 0 {
		t.Fatalf("%d entries and %d operations for 100 files after everything settled", n, disk.PendingOps())
	}
	for i := range 100 {
		name := fmt.Sprintf("p/%d.log", i)
		disk.Remove(name)
		if i%2 == 0 {
			disk.FsyncDir(name, nil)
		}
	}
	w.RunFor(time.Second)
	if n := len(disk.files); n != 0 || disk.PendingOps() != 0 {
		t.Fatalf("%d entries and %d operations left after every file was removed", n, disk.PendingOps())
	}
}

// A write is made durable by taking the cache's extent for it when the
// durable copy holds a prefix of the cache's extent list and the next extent
// is the write's own buffer (settleWrite). Any operation that changes or
// replaces a cached file's bytes — an overwrite, a truncation, a rename onto
// its name, a removal and a new file, a bit flip, a power loss — must keep
// that from taking wrong bytes: with verifyAdoptions the disk also writes
// the data the plain way and panics where the two differ.
func TestAdoptedWritesHoldTheirBytes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		defer func(v bool) { verifyAdoptions = v }(verifyAdoptions)
		verifyAdoptions = true
		opts := DefaultOptions(Seed(rapid.Uint64().Draw(t, "seed")))
		opts.Disk.WritebackDelay = time.Duration(rapid.SampledFrom([]int{0, 20, 200}).Draw(t, "writeback_ms")) * time.Millisecond
		w, disk, _ := diskProbeWorld(opts)
		files := []string{"p/a", "p/b", "p/c"}
		for range rapid.IntRange(1, 100).Draw(t, "steps") {
			file := rapid.SampledFrom(files).Draw(t, "file")
			size, _ := disk.Size(file)
			switch rapid.IntRange(0, 9).Draw(t, "action") {
			case 0, 1, 2: // mostly appends, as a log does
				off := size
				if size > 0 && rapid.IntRange(0, 3).Draw(t, "overwrite") == 0 {
					off = rapid.Int64Range(0, size-1).Draw(t, "off")
				}
				if err := disk.Write(file, off, diskTestData(t)); err != nil {
					t.Fatal(err)
				}
			case 3: // a truncation, often grown back past where it cut
				if size > 0 {
					to := rapid.Int64Range(0, size).Draw(t, "truncate_to")
					disk.Truncate(file, to)
					if rapid.Bool().Draw(t, "regrow") {
						disk.Write(file, to, diskTestData(t))
					}
				}
			case 4:
				if disk.Exists(file) {
					disk.Rename(file, rapid.SampledFrom(files).Draw(t, "to"))
				}
			case 5:
				if disk.Exists(file) {
					disk.Remove(file)
				}
			case 6:
				if size > 0 {
					disk.corrupt(file)
				}
			case 7:
				if rapid.Bool().Draw(t, "dir") {
					disk.FsyncDir(file, nil)
				} else {
					disk.Fsync(file, nil)
				}
			case 8:
				w.RunFor(time.Duration(rapid.IntRange(0, 100).Draw(t, "wait_ms")) * time.Millisecond)
			case 9:
				if rapid.IntRange(0, 3).Draw(t, "power_loss") == 0 {
					w.Crash(0, true)
					w.Restart(0)
					w.RunFor(0)
				}
			}
		}
		w.RunFor(time.Second) // settle what is left
	})
}

// A power loss counts against the directories whose files it undid an
// operation on, and only those: one that found a directory all on disk
// took nothing from it (an audit must not blame it for data lost there).
func TestPowerLossesUndoingCountsOnlyTheDirectoriesItTookFrom(t *testing.T) {
	w, disk, _ := diskWorld(t, DefaultDiskOptions())
	disk.Append("data/a/log", []byte("synced"))
	disk.Fsync("data/a/log", nil)
	w.RunFor(time.Second)
	disk.Append("data/b/log", []byte("cached"))
	disk.WriteFile("data/c/tmp", []byte("x"))
	disk.Fsync("data/c/tmp", nil)
	w.RunFor(time.Second)
	disk.Rename("data/c/tmp", "data/d/cp")
	w.Crash(0, true)
	for _, tc := range []struct {
		dir  string
		want uint64
	}{{"data/a", 0}, {"data/b", 1}, {"data/c", 1}, {"data/d", 1}, {"data", 0}} {
		if got := disk.PowerLossesUndoing(tc.dir); got != tc.want {
			t.Errorf("PowerLossesUndoing(%q) = %d after the first power loss, want %d", tc.dir, got, tc.want)
		}
	}
	w.Restart(0)
	disk.Append("data/b/log", []byte("again"))
	w.Crash(0, true)
	if got := disk.PowerLossesUndoing("data/b"); got != 2 {
		t.Errorf("PowerLossesUndoing(data/b) = %d after a second power loss that undid a write there, want 2", got)
	}
	if got := disk.PowerLossesUndoing("data/a"); got != 0 {
		t.Errorf("PowerLossesUndoing(data/a) = %d, want 0: both power losses found it on disk", got)
	}
}

// A missing file's read error reads as fmt's wrapping of ErrNotExist did, and
// is ErrNotExist; WriteFile makes a new file and replaces an old one.
func TestMissingFileErrorsAndWriteFile(t *testing.T) {
	_, disk, _ := diskWorld(t, DefaultDiskOptions())
	_, err := disk.ReadFile("dir/none.checkpoint")
	if !errors.Is(err, ErrNotExist) {
		t.Fatalf("reading a missing file: %v, want ErrNotExist", err)
	}
	if want := fmt.Errorf("read %s: %w", "dir/none.checkpoint", ErrNotExist).Error(); err.Error() != want {
		t.Fatalf("reading a missing file: %q, want %q", err, want)
	}
	if err := disk.WriteFile("cp", []byte("first, long")); err != nil {
		t.Fatal(err)
	}
	if err := disk.WriteFile("cp", []byte("second")); err != nil {
		t.Fatal(err)
	}
	if got, err := disk.ReadFile("cp"); err != nil || string(got) != "second" {
		t.Fatalf("after two WriteFiles: %q, %v; want \"second\"", got, err)
	}
}
