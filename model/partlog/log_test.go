package partlog

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"kafkasim/model/record"
	"kafkasim/model/storage"
	"kafkasim/sim"
)

// logNode is a node that only holds a disk and a gate for a log under test.
type logNode struct {
	env  sim.Env
	gate *storage.Gate
}

func (n *logNode) Start(env sim.Env)               { n.env, n.gate = env, storage.NewGate(env) }
func (n *logNode) Deliver(sim.NodeID, sim.Message) {}
func (n *logNode) Fire(t sim.Timer)                { n.gate.Fire(t) }

// logBench is one world with one node and one log on its disk.
type logBench struct {
	w      *sim.World
	node   *logNode
	log    *Log
	cfg    Config
	forget bool        // open through a disk without its hooks: no memo, appends copied (the slow paths only)
	ck     Checkpoints // what the next reopen is told
	rec    Recovery
}

const testDir = "data/t-0"

func newLogBench(seed uint64, cfg Config, forget bool) *logBench {
	opts := sim.DefaultOptions(sim.Seed(seed))
	opts.Disk.WritebackDelay = 200 * time.Millisecond
	b := &logBench{w: sim.NewWorld(opts), cfg: cfg, forget: forget}
	b.w.AddNode(sim.NodeSpec{Name: "broker-1", Role: "broker", New: func() sim.Node { b.node = &logNode{}; return b.node }})
	b.w.Start()
	b.w.RunUntil(0)
	b.reopen()
	return b
}

func (b *logBench) reopen() {
	disk := b.node.env.Disk()
	if b.forget {
		disk = sim.WithoutDiskHooks(disk)
	}
	b.log, b.rec = Open(disk, b.node.gate, testDir, b.cfg, b.ck)
}

func (b *logBench) crash(losePageCache bool) {
	b.w.Crash(0, losePageCache)
	b.w.Restart(0)
	b.w.RunUntil(b.w.Now())
	b.reopen()
}

func (b *logBench) wait(d time.Duration) { b.w.RunUntil(b.w.Now() + d) }

func (b *logBench) wires() [][]byte {
	var out [][]byte
	for _, bt := range b.log.Batches(0) {
		out = append(out, bt.Wire())
	}
	return out
}

func drawBatch(t *rapid.T, n int, leo int64, epoch int32) *record.Batch {
	recs := make([]record.Record, rapid.IntRange(1, 4).Draw(t, fmt.Sprintf("records%d", n)))
	for i := range recs {
		recs[i] = record.Record{Key: fmt.Sprintf("k%d", i%3), HasKey: i%2 == 0, Value: fmt.Sprintf("v-%d-%d", n, i), Timestamp: int64(n)}
	}
	codec := record.CompressionNone
	if rapid.Bool().Draw(t, fmt.Sprintf("gzip%d", n)) {
		codec = record.CompressionGzip
	}
	return record.New(recs, record.Producer{ID: record.NoProducer}, false, codec).Stamped(leo, epoch)
}

// TestLogAgainstOracleAndWithoutMemo drives two identical worlds through
// appends, truncations, flushes, crashes (with and without page cache),
// torn writes and bit flips. One reopens its log with the disk's memo of the
// decoded batches, the other, through a disk without its hooks, decodes
// every file from scratch (and copies what it appends): every log and
// every recovery report must be the same. Without corruption, the log must
// also be what an oracle says: the batches appended and not truncated, and
// after a power loss a prefix of them at least as long as the last flush.
func TestLogAgainstOracleAndWithoutMemo(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		seed := rapid.Uint64().Draw(t, "seed")
		cfg := DefaultConfig()
		cfg.SegmentBytes = int64(rapid.IntRange(150, 2000).Draw(t, "segment_bytes"))
		if rapid.Bool().Draw(t, "flush_every_message") {
			cfg.FlushIntervalMessages = 1
		}
		fast, slow := newLogBench(seed, cfg, false), newLogBench(seed, cfg, true)
		benches := []*logBench{fast, slow}
		var oracle [][]byte // wire bytes of the batches the log must hold
		flushed := 0        // how many of them a completed flush made durable
		flushing := 0       // how many an fsync in flight will make durable
		corrupted := false
		// A truncation that was not fsynced may come undone in a power loss
		// (truncate(2) is not durable by itself), so after one the oracle
		// only knows what process crashes keep.
		truncated := false
		epoch := int32(0)
		for step := range rapid.IntRange(1, 60).Draw(t, "steps") {
			// A read's answer is a view of the log's batches (Read): what
			// the log does next must not change it.
			view := fast.log.Read(rapid.Int64Range(0, fast.log.LEO()).Draw(t, fmt.Sprintf("view%d", step)), math.MaxInt64, math.MaxInt)
			saw := slices.Clone(view)
			switch op := rapid.IntRange(0, 9).Draw(t, fmt.Sprintf("op%d", step)); {
			case op <= 4:
				bt := drawBatch(t, step, fast.log.LEO(), epoch)
				for _, b := range benches {
					if err := b.log.Append([]*record.Batch{bt}, true); err != nil {
						t.Fatalf("append: %v", err)
					}
				}
				oracle = append(oracle, bt.Wire())
				if cfg.FlushIntervalMessages == 1 {
					flushing = len(oracle)
				}
			case op == 5:
				to := rapid.Int64Range(0, fast.log.LEO()).Draw(t, fmt.Sprintf("truncate%d", step))
				for _, b := range benches {
					b.log.TruncateTo(to)
				}
				epoch++
				truncated = true
				oracle = fast.wires()
				flushed, flushing = min(flushed, len(oracle)), min(flushing, len(oracle))
			case op == 6:
				for _, b := range benches {
					b.log.Flush()
				}
				flushing = len(oracle)
			case op == 7:
				d := time.Duration(rapid.IntRange(0, 400).Draw(t, fmt.Sprintf("wait%d", step))) * time.Millisecond
				for _, b := range benches {
					b.wait(d)
				}
				if !fast.node.gate.Pending() {
					flushed = max(flushed, flushing)
				}
			case op == 8 && rapid.IntRange(0, 3).Draw(t, fmt.Sprintf("corrupt%d", step)) == 0:
				for _, b := range benches {
					b.w.InjectFault(sim.Fault{Kind: sim.FaultDisk, Target: "broker-1", Disk: sim.DiskCorrupt})
				}
				corrupted = true
			default:
				// A process crash, a power loss, or a power loss that tears
				// the last unsynced write.
				how := rapid.IntRange(0, 2).Draw(t, fmt.Sprintf("crash%d", step))
				before := fast.wires()
				for _, b := range benches {
					if how == 2 {
						b.w.InjectFault(sim.Fault{Kind: sim.FaultDisk, Target: "broker-1", Disk: sim.DiskTornWrite})
						b.w.Restart(0)
						b.w.RunUntil(b.w.Now())
						b.reopen()
					} else {
						b.crash(how == 1)
					}
				}
				after := fast.wires()
				if !corrupted {
					if how == 0 && len(after) != len(before) {
						t.Fatalf("a process crash lost batches: %d before, %d after", len(before), len(after))
					}
					if how == 0 || !truncated {
						if len(after) < flushed || len(after) > len(before) {
							t.Fatalf("after a power loss the log holds %d batches; %d were flushed, %d appended", len(after), flushed, len(before))
						}
						for i := range after {
							if !bytes.Equal(after[i], before[i]) {
								t.Fatalf("batch %d came back different after recovery: %x, before %x", i, after[i][:21], before[i][:21])
							}
						}
					}
				}
				oracle = after
				flushed = min(flushed, len(oracle))
				flushing = flushed
				if how > 0 {
					epoch++
				}
			}
			if !slices.Equal(view, saw) {
				t.Fatalf("step %d: a read's batches changed under it", step)
			}
			fw, sw := fast.wires(), slow.wires()
			if len(fw) != len(sw) {
				t.Fatalf("step %d: with the memo the log holds %d batches, without %d", step, len(fw), len(sw))
			}
			for i := range fw {
				if !bytes.Equal(fw[i], sw[i]) {
					t.Fatalf("step %d: batch %d differs with and without the memo", step, i)
				}
			}
			if fast.rec != slow.rec {
				t.Fatalf("step %d: recovery with the memo %+v, without %+v", step, fast.rec, slow.rec)
			}
			if fast.log.LEO() != slow.log.LEO() || fast.log.LogStartOffset() != slow.log.LogStartOffset() || fast.log.SizeBytes() != slow.log.SizeBytes() {
				t.Fatalf("step %d: LEO/start/size differ with and without the memo", step)
			}
			if !corrupted && (!truncated || len(oracle) == len(fw)) {
				if len(fw) != len(oracle) {
					t.Fatalf("step %d: log holds %d batches, oracle %d", step, len(fw), len(oracle))
				}
				for i := range fw {
					if !bytes.Equal(fw[i], oracle[i]) {
						t.Fatalf("step %d: batch %d is not the oracle's", step, i)
					}
				}
			}
			checkLookups(t, fast.log)
		}
	})
}

// checkLookups compares BatchAt, Read, Scan and Cursor with a plain walk.
func checkLookups(t *rapid.T, l *Log) {
	all := l.Batches(0)
	holder := func(off int64) *record.Batch {
		for _, b := range all {
			if b.BaseOffset <= off && off <= b.LastOffset() {
				return b
			}
		}
		return nil
	}
	// Probe around every batch's ends (a bit flip in a header may leave an
	// offset far away, so offsets are not walked one by one).
	probes := []int64{0, l.LEO(), l.LEO() + 1}
	for _, b := range all {
		probes = append(probes, b.BaseOffset-1, b.BaseOffset, b.LastOffset(), b.LastOffset()+1)
	}
	slices.Sort(probes)
	c := l.Cursor(0)
	for _, off := range slices.Compact(probes) {
		si, bi := l.find(off)
		if wsi, wbi := l.findBySearch(off); si != wsi || bi != wbi {
			t.Fatalf("find(%d) = %d, %d; by search %d, %d", off, si, bi, wsi, wbi)
		}
		if got, want := l.BatchAt(off), holder(off); got != want {
			t.Fatalf("BatchAt(%d) = %v, want %v", off, got, want)
		}
		if got, want := c.At(off), holder(off); got != want {
			t.Fatalf("Cursor.At(%d) = %v, want %v", off, got, want)
		}
		// Read within bounds: up to an offset, and a byte budget (at least
		// one batch, as Kafka's minOneMessage).
		upTo := rapid.SampledFrom(probes).Draw(t, "read_up_to")
		maxBytes := rapid.SampledFrom([]int{1, 100, 300, 1000, math.MaxInt}).Draw(t, "read_max_bytes")
		var bounded []*record.Batch
		size := 0
		for _, b := range all {
			if b.LastOffset() < off {
				continue
			}
			if b.BaseOffset >= upTo || (len(bounded) > 0 && size+b.SizeBytes() > maxBytes) {
				break
			}
			bounded = append(bounded, b)
			size += b.SizeBytes()
		}
		if got := l.Read(off, upTo, maxBytes); !slices.Equal(got, bounded) {
			t.Fatalf("Read(%d, %d, %d) gave %d batches, want %d", off, upTo, maxBytes, len(got), len(bounded))
		}
		var scanned []*record.Batch
		l.Scan(off, math.MaxInt64, func(b *record.Batch) bool { scanned = append(scanned, b); return true })
		read := l.Read(off, math.MaxInt64, math.MaxInt)
		var want []*record.Batch
		for _, b := range all {
			if b.LastOffset() >= off {
				want = append(want, b)
			}
		}
		if len(scanned) != len(want) || len(read) != len(want) {
			var segs []string
			for _, sg := range l.segs {
				lasts := make([]int64, sg.idx.len())
				for i := range lasts {
					lasts[i] = sg.idx.last(i)
				}
				segs = append(segs, fmt.Sprintf("[base %d lasts %v]", sg.base, lasts))
			}
			t.Fatalf("from %d: Scan gave %d batches, Read %d, want %d; segments %v", off, len(scanned), len(read), len(want), segs)
		}
	}
}

// TestRecoveryEpochCacheSurvivesFlippedLeaderEpoch: the partition leader
// epoch sits outside a batch's CRC, so recovery keeps a batch whose epoch a
// bit flip raised. As Kafka's LogSegment.recover, it assigns only epochs above
// the cache's latest: the raised epoch enters the cache, and the epoch-0
// batches after it do not wipe it (and the true start of epoch 0) out.
func TestRecoveryEpochCacheSurvivesFlippedLeaderEpoch(t *testing.T) {
	b := newLogBench(1, DefaultConfig(), true)
	var pos int64
	for i := range 4 {
		bt := record.New([]record.Record{{Value: fmt.Sprintf("v%d", i)}}, record.Producer{ID: record.NoProducer}, false, record.CompressionNone).Stamped(b.log.LEO(), 0)
		if i == 2 {
			pos = b.log.SizeBytes()
		}
		if err := b.log.Append([]*record.Batch{bt}, true); err != nil {
			t.Fatal(err)
		}
	}
	disk := b.node.env.Disk()
	seg := SegmentFile(testDir, 0)
	// Batch 2's epoch 0 becomes 256: byte 14 of its header, bit 0.
	data, err := disk.Read(seg, pos+14, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := disk.Write(seg, pos+14, []byte{data[0] ^ 1}); err != nil {
		t.Fatal(err)
	}
	b.crash(false)
	if b.rec.TruncatedBytes != 0 || b.log.LEO() != 4 {
		t.Fatalf("the flip is outside the CRC: want the whole log back, got %+v, log end %d", b.rec, b.log.LEO())
	}
	if got := b.log.BatchAt(2).PartitionLeaderEpoch; got != 256 {
		t.Fatalf("batch 2's epoch %d, want the flipped 256", got)
	}
	want := []EpochEntry{{0, 0}, {256, 2}}
	if got := b.log.Epochs().Entries(); !slices.Equal(got, want) {
		t.Fatalf("epoch cache %v, want %v (Kafka's recovery)", got, want)
	}
}

// HeaderFlipped tells a flip in the bytes a batch's CRC does not cover
// (base offset, length, leader epoch) from one in the bytes it does.
func TestHeaderFlipped(t *testing.T) {
	b := newLogBench(1, DefaultConfig(), false)
	for i := range 3 {
		recs := []record.Record{{Value: fmt.Sprintf("v%d", i)}}
		if err := b.log.Append([]*record.Batch{record.New(recs, record.Producer{ID: record.NoProducer}, false, record.CompressionNone).Stamped(b.log.LEO(), 0)}, true); err != nil {
			t.Fatal(err)
		}
	}
	file := SegmentFile(testDir, 0)
	second := int64(b.log.Batches(0)[0].SizeBytes())
	for _, c := range []struct {
		off  int64
		want bool
	}{{0, true}, {15, true}, {16, false}, {21, false}, {second + 3, true}, {second + 12, true}, {second + 30, false}} {
		if got := b.log.HeaderFlipped([]sim.Flip{{File: file, Offset: c.off}}); got != c.want {
			t.Errorf("flip at %d: header %v, want %v", c.off, got, c.want)
		}
	}
	if b.log.HeaderFlipped([]sim.Flip{{File: "elsewhere", Offset: 0}}) {
		t.Error("a flip in another file counted")
	}
}

// Truncating below the first segment a log still holds (retention deleted
// the ones before) starts the log again at the target, as Kafka's
// UnifiedLog.truncateTo does: a follower of a leader whose log ends below
// its own log start must be able to follow it (it looped for ever at its
// log start, out of range).
func TestTruncateBelowTheFirstSegmentStartsAgain(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SegmentBytes = 1 // a segment per batch
	b := newLogBench(1, cfg, false)
	for i := range 6 {
		bt := record.New([]record.Record{{Value: fmt.Sprintf("v%d", i)}}, record.Producer{ID: record.NoProducer}, false, record.CompressionNone).Stamped(b.log.LEO(), 0)
		if err := b.log.Append([]*record.Batch{bt}, true); err != nil {
			t.Fatal(err)
		}
	}
	b.log.MaybeIncrementLogStartOffset(4)
	b.log.DeleteOldSegments(6, 0)
	if b.log.LogStartOffset() != 4 {
		t.Fatalf("log start %d, want 4", b.log.LogStartOffset())
	}
	b.log.TruncateTo(2)
	if b.log.LEO() != 2 || b.log.LogStartOffset() != 2 || len(b.log.Batches(0)) != 0 {
		t.Fatalf("after truncating to 2: log start %d, end %d, %d batches; want an empty log at 2",
			b.log.LogStartOffset(), b.log.LEO(), len(b.log.Batches(0)))
	}
}

// The cleaner removes an epoch's first batches, not the start the epoch
// had: after a restart the epoch still starts where the leader-epoch
// checkpoint says (a follower asking where the epoch before it ends must
// hear that offset, not the first batch compaction left — fuzz seed 2083).
func TestEpochStartSurvivesCompactionAcrossARestart(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SegmentBytes = 1 // a segment per batch
	cfg.Compact = true
	b := newLogBench(1, cfg, false)
	for i, e := range []int32{0, 0, 0, 0, 1, 1, 1, 1} {
		r := record.Record{Key: "b" + fmt.Sprint(i), HasKey: true, Value: fmt.Sprintf("v%d", i)}
		if i >= 4 {
			r.Key = "a" // epoch 1's records share a key: the cleaner keeps the latest
		}
		if e == 1 && i == 4 {
			b.log.AssignEpoch(1)
		}
		bt := record.New([]record.Record{r}, record.Producer{ID: record.NoProducer}, false, record.CompressionNone).Stamped(b.log.LEO(), e)
		if err := b.log.Append([]*record.Batch{bt}, true); err != nil {
			t.Fatal(err)
		}
	}
	b.log.Compact(8)
	if b.log.BatchAt(4) != nil {
		t.Fatal("the cleaner kept offset 4")
	}
	b.wait(time.Second)
	b.crash(false)
	want := []EpochEntry{{0, 0}, {1, 4}}
	if got := b.log.Epochs().Entries(); !slices.Equal(got, want) {
		t.Fatalf("epoch cache after the restart %v, want %v", got, want)
	}
}

// The cleaner keeps each producer's last batch as it is (Kafka's does): the
// producer state rebuilt from the log after a restart must still know the
// producer's last sequence, or a retry of a batch the cleaner removed would
// be appended twice (fuzz seed 1001912).
func TestCompactionKeepsEachProducersLastBatch(t *testing.T) {
	cfg := DefaultConfig()
	cfg.SegmentBytes = 1
	cfg.Compact = true
	b := newLogBench(1, cfg, false)
	for i := range 4 {
		r := record.Record{Key: "a", HasKey: true, Value: fmt.Sprintf("v%d", i)}
		pid := record.Producer{ID: record.NoProducer}
		if i == 1 {
			pid = record.Producer{ID: 7, Epoch: 0, BaseSequence: 0}
		}
		bt := record.New([]record.Record{r}, pid, false, record.CompressionNone).Stamped(b.log.LEO(), 0)
		if err := b.log.Append([]*record.Batch{bt}, true); err != nil {
			t.Fatal(err)
		}
	}
	b.log.Compact(4)
	if b.log.BatchAt(0) != nil {
		t.Fatal("the cleaner kept a superseded record of no producer")
	}
	if bt := b.log.BatchAt(1); bt == nil || bt.ProducerID != 7 || bt.RecordCount() != 1 {
		t.Fatalf("producer 7's last batch: %+v", bt)
	}
	b.wait(time.Second)
	b.crash(false)
	if e := b.log.Producers().Entry(7); e == nil || len(e.Batches) != 1 || e.Batches[0].LastSeq != 0 || e.Batches[0].FirstOffset != 1 {
		t.Fatalf("producer 7 after a restart: %+v", e)
	}
}
