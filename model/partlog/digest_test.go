package partlog

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"kafkasim/model/record"
	"kafkasim/sim"
)

// dumpProducers is everything a producer state holds, in its own order.
func dumpProducers(p *ProducerState) string {
	var b strings.Builder
	fmt.Fprintf(&b, "pids %v;", p.pids)
	for i, pid := range p.pids {
		e := p.entries[i]
		fmt.Fprintf(&b, " %d: epoch %d coordinator %d txn %d batches %v;", pid, e.Epoch, e.CoordinatorEpoch, e.TxnFirstOffset, e.Batches)
	}
	if p.txn != nil {
		fmt.Fprintf(&b, " ongoing %v unreplicated %v", p.txn.ongoing, p.txn.unreplicated)
	}
	return b.String()
}

// dumpDir is every file of the log's folder: its bytes now (or the read's
// error) and its durable bytes.
func dumpDir(b *logBench) string {
	disk := b.w.Disk(0)
	var out strings.Builder
	for _, name := range disk.List(testDir + "/") {
		data, err := disk.ReadFile(name)
		durable, ok := disk.Durable(name)
		fmt.Fprintf(&out, "%s: %x (%v) durable %x (%v)\n", name, data, err, durable, ok)
	}
	return out.String()
}

// producerTraffic draws the batches of a few producers, idempotent and
// transactional, with their markers, as a leader would stamp them.
type producerTraffic struct {
	epoch   []int16
	seq     []int32
	inTxn   []bool
	coord   int32
	written int
}

func newProducerTraffic(n int) *producerTraffic {
	return &producerTraffic{epoch: make([]int16, n), seq: make([]int32, n), inTxn: make([]bool, n)}
}

func (p *producerTraffic) draw(t *rapid.T, step int, leo int64, leaderEpoch int32) *record.Batch {
	label := func(s string) string { return fmt.Sprintf("%s%d", s, step) }
	pid := rapid.IntRange(-1, len(p.epoch)-1).Draw(t, label("pid"))
	if pid < 0 {
		return drawBatch(t, step, leo, leaderEpoch)
	}
	switch rapid.IntRange(0, 9).Draw(t, label("kind")) {
	case 0: // a new epoch (the producer restarted, or a retry's bump)
		p.epoch[pid]++
		p.seq[pid] = 0
		p.inTxn[pid] = false
	case 1, 2: // a marker, when a transaction is open (or a stray one)
		if p.inTxn[pid] || rapid.Bool().Draw(t, label("stray")) {
			p.coord += int32(rapid.IntRange(0, 1).Draw(t, label("coord")))
			p.inTxn[pid] = false
			m := record.NewControl(int64(pid), p.epoch[pid], rapid.Bool().Draw(t, label("commit")), p.coord, int64(step))
			p.epoch[pid]++ // transaction version 2 bumps the epoch at every marker
			p.seq[pid] = 0
			return m.Stamped(leo, leaderEpoch)
		}
	case 3, 4:
		p.inTxn[pid] = true
	}
	n := rapid.IntRange(1, 3).Draw(t, label("records"))
	recs := make([]record.Record, n)
	for i := range recs {
		recs[i] = record.Record{Key: fmt.Sprintf("k%d", i), HasKey: true, Value: fmt.Sprintf("v-%d-%d", step, i), Timestamp: int64(step)}
	}
	b := record.New(recs, record.Producer{ID: int64(pid), Epoch: p.epoch[pid], BaseSequence: p.seq[pid]}, p.inTxn[pid], record.CompressionNone)
	p.seq[pid] += int32(n)
	return b.Stamped(leo, leaderEpoch)
}

// TestRecoveryDigestsChangeNothing drives two identical worlds with
// producers, idempotent and transactional, through appends, truncations,
// flushes, retention, clean and unclean restarts (with the recovery point
// the log had, or an older one), power losses, torn writes and bit flips.
// One opens its log with the disk's memo, and so with the digests of
// recovery's walks (digest.go); the other, through a disk without its
// hooks, replays every batch every time, as Kafka's LogLoader does. The
// producer state, the epoch cache, the transaction index, every file of
// the log's folder (the snapshots among them, as they are and as they are
// durable), the disk's counters and the world's trace hash must be the
// same after every step.
func TestRecoveryDigestsChangeNothing(t *testing.T) {
	shortcuts := 0 // restarts whose walks the digests shortened
	rapid.Check(t, func(t *rapid.T) {
		seed := rapid.Uint64().Draw(t, "seed")
		cfg := DefaultConfig()
		if rapid.Bool().Draw(t, "small_segments") {
			cfg.SegmentBytes = int64(rapid.IntRange(200, 3000).Draw(t, "segment_bytes"))
		}
		if rapid.IntRange(0, 3).Draw(t, "flush_every_message") == 0 {
			cfg.FlushIntervalMessages = 1
		}
		fast, slow := newLogBench(seed, cfg, false), newLogBench(seed, cfg, true)
		benches := []*logBench{fast, slow}
		traffic := newProducerTraffic(rapid.IntRange(1, 4).Draw(t, "producers"))
		epoch := int32(0)
		for step := range rapid.IntRange(1, 80).Draw(t, "steps") {
			label := func(s string) string { return fmt.Sprintf("%s%d", s, step) }
			switch op := rapid.IntRange(0, 14).Draw(t, label("op")); {
			case op <= 6:
				bt := traffic.draw(t, step, fast.log.LEO(), epoch)
				for _, b := range benches {
					if err := b.log.Append([]*record.Batch{bt}, true); err != nil {
						t.Fatalf("append: %v", err)
					}
				}
			case op == 7:
				to := rapid.Int64Range(0, fast.log.LEO()).Draw(t, label("truncate"))
				for _, b := range benches {
					b.log.TruncateTo(to)
				}
				epoch++
			case op == 8:
				for _, b := range benches {
					b.log.Flush()
				}
			case op == 9:
				d := time.Duration(rapid.IntRange(0, 400).Draw(t, label("wait"))) * time.Millisecond
				for _, b := range benches {
					b.wait(d)
				}
			case op == 10:
				start := rapid.Int64Range(0, fast.log.LEO()).Draw(t, label("start"))
				for _, b := range benches {
					b.log.MaybeIncrementLogStartOffset(start)
					b.log.DeleteOldSegments(b.log.LEO(), 0)
				}
			case op == 11 && rapid.IntRange(0, 2).Draw(t, label("corrupt")) == 0:
				for _, b := range benches {
					b.w.InjectFault(sim.Fault{Kind: sim.FaultDisk, Target: "broker-1", Disk: sim.DiskCorrupt})
				}
			default:
				how := rapid.IntRange(0, 3).Draw(t, label("crash"))
				var ck Checkpoints
				switch how {
				case 0: // a clean shutdown
					ck = Checkpoints{LogStart: fast.log.LogStartOffset(), RecoveryPoint: fast.log.LEO(), Clean: true}
				default:
					rp := fast.log.RecoveryPoint
					if rapid.Bool().Draw(t, label("old_recovery_point")) {
						rp = rapid.Int64Range(0, rp).Draw(t, label("recovery_point"))
					}
					ck = Checkpoints{LogStart: rapid.Int64Range(0, fast.log.LogStartOffset()).Draw(t, label("log_start")), RecoveryPoint: rp}
				}
				for _, b := range benches {
					b.ck = ck
					switch how {
					case 0:
						b.log.Flush()
						b.log.Close()
						b.crash(false)
					case 1:
						b.crash(false)
					case 2:
						b.crash(true)
					case 3:
						b.w.InjectFault(sim.Fault{Kind: sim.FaultDisk, Target: "broker-1", Disk: sim.DiskTornWrite})
						b.w.Restart(0)
						b.w.RunUntil(b.w.Now())
						b.reopen()
					}
				}
				if how >= 2 {
					epoch++
				}
				if fast.log.walked < slow.log.walked {
					shortcuts++
				}
			}
			compareBenches(t, step, fast, slow)
		}
	})
	if shortcuts == 0 {
		t.Fatal("no restart took a digest's shortcut: the test compared nothing")
	}
	t.Logf("%d restarts took a digest's shortcut", shortcuts)
}

func compareBenches(t *rapid.T, step int, fast, slow *logBench) {
	fl, sl := fast.log, slow.log
	if f, s := dumpProducers(fl.Producers()), dumpProducers(sl.Producers()); f != s {
		t.Fatalf("step %d: producer state with the digests\n%s\nreplaying every batch\n%s", step, f, s)
	}
	if fl.ProducersRebuiltFrom() != sl.ProducersRebuiltFrom() {
		t.Fatalf("step %d: producer state rebuilt from %d with the digests, %d without", step, fl.ProducersRebuiltFrom(), sl.ProducersRebuiltFrom())
	}
	if f, s := fl.Epochs().Entries(), sl.Epochs().Entries(); !slices.Equal(f, s) {
		t.Fatalf("step %d: epoch cache %v with the digests, %v without", step, f, s)
	}
	if f, s := fl.AbortedTransactions(), sl.AbortedTransactions(); !slices.Equal(f, s) {
		t.Fatalf("step %d: aborted transactions %v with the digests, %v without", step, f, s)
	}
	if fast.rec != slow.rec {
		t.Fatalf("step %d: recovery %+v with the digests, %+v without", step, fast.rec, slow.rec)
	}
	if fl.LEO() != sl.LEO() || fl.LogStartOffset() != sl.LogStartOffset() || fl.RecoveryPoint != sl.RecoveryPoint {
		t.Fatalf("step %d: LEO/start/recovery point differ", step)
	}
	fw, sw := fast.wires(), slow.wires()
	if !slices.EqualFunc(fw, sw, bytes.Equal) {
		t.Fatalf("step %d: the logs' batches differ", step)
	}
	if f, s := dumpDir(fast), dumpDir(slow); f != s {
		t.Fatalf("step %d: the log's folder with the digests\n%s\nwithout\n%s", step, f, s)
	}
	if f, s := fast.w.Disk(0).Stats(), slow.w.Disk(0).Stats(); f != s {
		t.Fatalf("step %d: disk counters %+v with the digests, %+v without", step, f, s)
	}
	if f, s := fast.w.TraceHash(), slow.w.TraceHash(); f != s {
		t.Fatalf("step %d: trace hash %x with the digests, %x without", step, f, s)
	}
}

// digestBenches are a log opened with the disk's memo and one without,
// after the same 500 one-record batches of two producers (a transaction of
// the second among them) in one segment, as a busy partition's active
// segment, and an unclean restart.
func digestBenches(t *testing.T) (fast, slow *logBench) {
	fast, slow = newLogBench(1, DefaultConfig(), false), newLogBench(1, DefaultConfig(), true)
	for i := range 500 {
		pid, txn := int64(i%2), i%2 == 1 && i < 100
		for _, b := range []*logBench{fast, slow} {
			bt := digestBatch(b.log.LEO(), pid, int32(i/2), txn)
			if i == 101 {
				bt = record.NewControl(1, 0, false, 0, 0).Stamped(b.log.LEO(), 0)
			}
			if err := b.log.Append([]*record.Batch{bt}, true); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, b := range []*logBench{fast, slow} {
		b.crash(false)
	}
	return fast, slow
}

func digestBatch(leo, pid int64, seq int32, txn bool) *record.Batch {
	r := record.Record{Key: "k", HasKey: true, Value: fmt.Sprintf("v%d", leo)}
	return record.New([]record.Record{r}, record.Producer{ID: pid, BaseSequence: seq}, txn, record.CompressionNone).Stamped(leo, int32(leo/100))
}

// requireSame is compareBenches outside rapid.
func requireSame(t *testing.T, fast, slow *logBench) {
	t.Helper()
	if f, s := dumpProducers(fast.log.Producers()), dumpProducers(slow.log.Producers()); f != s {
		t.Fatalf("producer state with the digests\n%s\nreplaying every batch\n%s", f, s)
	}
	if f, s := fast.log.Epochs().Entries(), slow.log.Epochs().Entries(); !slices.Equal(f, s) {
		t.Fatalf("epoch cache %v with the digests, %v without", f, s)
	}
	if f, s := fast.log.AbortedTransactions(), slow.log.AbortedTransactions(); !slices.Equal(f, s) || len(f) != 1 {
		t.Fatalf("aborted transactions %v with the digests, %v without (want the one)", f, s)
	}
	if f, s := dumpDir(fast), dumpDir(slow); f != s {
		t.Fatalf("the log's folder with the digests\n%s\nwithout\n%s", f, s)
	}
	if fast.rec != slow.rec || fast.w.TraceHash() != slow.w.TraceHash() || fast.w.Disk(0).Stats() != slow.w.Disk(0).Stats() {
		t.Fatalf("recovery %+v / %+v, trace hash %x / %x, disk %+v / %+v", fast.rec, slow.rec,
			fast.w.TraceHash(), slow.w.TraceHash(), fast.w.Disk(0).Stats(), slow.w.Disk(0).Stats())
	}
}

// An unclean restart's walks over a segment whose batches the last one
// digested read only the batches appended since (the epoch cache's and
// the producer state's replay: one each), where a log without the memo
// reads all of them three times over; so does a truncation's rebuild of
// producer state, from the checkpoint of the replay before. Every result
// is the same.
func TestRestartWalksOnlyTheNewBatches(t *testing.T) {
	fast, slow := digestBenches(t)
	requireSame(t, fast, slow)
	// The first restart after the open of the empty log had no digest.
	if fast.log.walked != 2*500 || slow.log.walked != 3*500 {
		t.Fatalf("first restart: walked %d batches with the memo, %d without; want %d, %d", fast.log.walked, slow.log.walked, 2*500, 3*500)
	}
	for round := range 3 {
		for _, b := range []*logBench{fast, slow} {
			for range 20 {
				if err := b.log.Append([]*record.Batch{digestBatch(b.log.LEO(), 0, int32(b.log.LEO()), false)}, true); err != nil {
					t.Fatal(err)
				}
			}
			b.ck = Checkpoints{RecoveryPoint: b.log.RecoveryPoint}
			b.crash(false)
		}
		requireSame(t, fast, slow)
		n := 500 + 20*(round+1)
		if fast.log.walked != 2*20 || slow.log.walked != 3*n {
			t.Fatalf("restart %d: walked %d batches with the memo, %d without; want %d, %d", round+2, fast.log.walked, slow.log.walked, 2*20, 3*n)
		}
	}
	// Truncating into the batches appended since the last restart but one:
	// the replay starts at that restart's checkpoint (its own is past the
	// truncation).
	walked := fast.log.walked
	for _, b := range []*logBench{fast, slow} {
		b.log.TruncateTo(b.log.LEO() - 25)
	}
	requireSame(t, fast, slow)
	if got := fast.log.walked - walked; got != 15 {
		t.Fatalf("the truncation's rebuild walked %d batches with the memo, want 15", got)
	}
}

// A bit flipped in a batch a digest covers is found as without the memo:
// the batch is decoded again (its CRC fails, or it is a new batch), the
// log is cut where it was, and the digests after it are not used.
func TestFlipInADigestedBatchIsFound(t *testing.T) {
	for flips := range 20 {
		fast, slow := digestBenches(t)
		for _, b := range []*logBench{fast, slow} {
			b.w.InjectFault(sim.Fault{Kind: sim.FaultDisk, Target: "broker-1", Disk: sim.DiskCorrupt, File: SegmentFile(testDir, 0)})
			for range flips {
				b.w.InjectFault(sim.Fault{Kind: sim.FaultDisk, Target: "broker-1", Disk: sim.DiskCorrupt, File: SegmentFile(testDir, 0)})
			}
			b.crash(false)
		}
		if fast.rec.CorruptionReason == "" && !fast.log.HeaderFlipped(fast.w.Disk(0).Flips()) {
			t.Fatalf("%d flips: a flip went unnoticed: %+v", flips+1, fast.rec)
		}
		if fast.rec != slow.rec {
			t.Fatalf("%d flips: recovery %+v with the memo, %+v without", flips+1, fast.rec, slow.rec)
		}
		if f, s := dumpProducers(fast.log.Producers()), dumpProducers(slow.log.Producers()); f != s {
			t.Fatalf("%d flips: producer state with the digests\n%s\nreplaying every batch\n%s", flips+1, f, s)
		}
		if f, s := dumpDir(fast), dumpDir(slow); f != s || fast.w.TraceHash() != slow.w.TraceHash() {
			t.Fatalf("%d flips: the folders or trace hashes differ", flips+1)
		}
	}
}

// A digest's batches are matched by identity: through blocks the index
// still shares (a restart's prefix), through a first block that grew into
// a new array, and not past a cut and different batches appended after it.
func TestDigestMatchesOnlyTheSameBatches(t *testing.T) {
	l := &Log{}
	mk := func(off int64) *record.Batch { return digestBatch(off, 0, int32(off), false) }
	s := &segment{}
	for off := range int64(3 * indexBlockLen / 2) {
		s.add(mk(off), off)
	}
	d := l.digest(s)
	if got := d.matched(&s.idx); got != s.idx.len() {
		t.Fatalf("a digest matches %d of its own %d batches", got, s.idx.len())
	}
	// A restart's index: whole blocks shared, the rest copied.
	re := &segment{idx: s.idx.prefix(s.idx.len() - 10), digest: d}
	if got := d.matched(&re.idx); got != s.idx.len()-10 {
		t.Fatalf("a prefix's index matches %d, want %d", got, s.idx.len()-10)
	}
	// The first block grows into new arrays: compared batch by batch.
	small := &segment{}
	small.add(mk(0), 0)
	ds := l.digest(small)
	for off := int64(1); off < 100; off++ {
		small.add(mk(off), off)
	}
	if got := ds.matched(&small.idx); got != 1 {
		t.Fatalf("the grown first block matches %d, want 1", got)
	}
	// Cut into the second block, and other batches appended: only the
	// batches before the cut are the digest's.
	cut := indexBlockLen + 7
	s.idx.cut(cut)
	for off := int64(cut); off < int64(cut+20); off++ {
		s.add(mk(off), off)
	}
	if got := d.matched(&s.idx); got != cut {
		t.Fatalf("after a cut and new batches a digest matches %d, want %d", got, cut)
	}
	// The digest brought up to date walks only the new batches.
	l.walked = 0
	if l.digest(s); l.walked != 20 {
		t.Fatalf("bringing the digest up to date walked %d batches, want 20", l.walked)
	}
}
