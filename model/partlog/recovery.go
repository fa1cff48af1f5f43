package partlog

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"kafkasim/model/record"
	"kafkasim/model/storage"
	"kafkasim/sim"
)

// Opening a log at startup: its segments read back from disk, every batch
// checked and the log cut at the first bad one, then the leader-epoch cache
// and the producer state rebuilt (from the checkpoints, the snapshots and
// the batches).

// Checkpoints are what the broker knows of a log it opens at startup.
type Checkpoints struct {
	// LogStart and RecoveryPoint are the log's entries in the broker's
	// log-start-offset-checkpoint and recovery-point-offset-checkpoint (0
	// when none).
	LogStart, RecoveryPoint int64
	// Clean: the broker's last stop was a clean shutdown (the marker file
	// was there), so Kafka recovers no segment.
	Clean bool
}

// Open loads a log from disk, validating every batch (CRC, offsets): it keeps
// the longest valid prefix, truncates the segment where it ends and deletes
// the segments after it. It loads producer state as Kafka's LogLoader does,
// from the producer-state snapshots and the checkpoints (snapshots.go).
func Open(disk sim.NodeDisk, gate *storage.Gate, dir string, cfg Config, ck Checkpoints) (*Log, Recovery) {
	logStart := ck.LogStart
	l := &Log{disk: disk, gate: gate, dir: dir, cfg: cfg, start: logStart}
	l.memo, _ = disk.(sim.DiskMemo)
	l.owned, _ = disk.(sim.OwnedWriter)
	rec := Recovery{TruncatedAt: -1}
	var files []string
	for _, f := range disk.List(dir + "/") {
		if strings.HasSuffix(f, ".log") && strings.Count(f[len(dir)+1:], "/") == 0 {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	broken := false
	for _, f := range files {
		base, err := strconv.ParseInt(strings.TrimSuffix(f[len(dir)+1:], ".log"), 10, 64)
		if err != nil || broken {
			disk.Remove(f)
			rec.DeletedSegments++
			continue
		}
		seg := &segment{base: base, file: f}
		pos := l.recallSegment(seg, &rec)
		size, _ := disk.Size(f)
		// The rest of the file is decoded and checked batch by batch. (A
		// file that does not read keeps size 0 and stops recovery here.)
		data, err := disk.Read(f, pos, int(size-pos))
		if err != nil {
			rec.CorruptionReason = err.Error()
			broken = true
		}
		end := pos + int64(len(data))
		for !broken && pos < end {
			b, n, derr := record.Decode(data[len(data)-int(end-pos):])
			// Offsets only grow (compaction leaves gaps, never overlaps).
			expected := l.nextOffsetAfter(seg)
			if derr != nil || (expected >= 0 && b.BaseOffset < expected) {
				broken = true
				if derr != nil {
					rec.CorruptionReason = derr.Error()
				} else {
					rec.CorruptionReason = fmt.Sprintf("batch at %d, expected %d", b.BaseOffset, expected)
				}
				break
			}
			seg.add(b, pos)
			pos += int64(n)
			rec.Batches++
		}
		if end > pos {
			rec.TruncatedBytes += end - pos
			rec.TruncatedAt = seg.next()
			disk.Truncate(f, pos)
		}
		seg.size = pos
		// What recovery found may still sit in page cache only (a killed
		// process leaves it there): the next flush must fsync it, as
		// Kafka's flushes cover everything past the recovery point of an
		// unclean shutdown.
		seg.dirty = pos > 0
		if n := len(l.segs); n > 0 && seg.idx.len() == 0 && seg.base < l.segs[n-1].next() {
			// A segment file that overlaps the log before it (one a
			// truncation removed, back after a power loss, as the removal
			// was never made durable) holds nothing the log can keep: an
			// empty segment there would put the log end back.
			disk.Remove(f)
			rec.DeletedSegments++
			broken = true
			continue
		}
		l.addSegment(seg)
	}
	if len(l.segs) == 0 {
		l.addSegment(&segment{base: logStart, file: SegmentFile(dir, logStart)})
	}
	if l.start < l.segs[0].base {
		l.start = l.segs[0].base
	}
	if l.start > l.LEO() {
		l.start = l.LEO()
	}
	l.RecoveryPoint = l.LEO()
	// The epoch cache: the checkpoint, cut back (as Kafka's loader,
	// entries starting at or past the log end go), then rebuilt from the
	// batches the log holds. The checkpoint may be newer than the log: a
	// follower's truncation is not fsynced, its epoch checkpoint is, so a
	// power loss can bring back older-epoch batches under entries of a
	// later epoch. Only entries for offsets below the first batch (which
	// retention deleted) are taken from it; the rest comes from the batches,
	// an epoch assigned where it first exceeds the latest (as
	// LogSegment.recover: the partition leader epoch is outside the CRC, so
	// a flipped bit may raise one, and the older epochs after it must not
	// wipe the cache). An epoch whose first batches the cleaner removed
	// starts where the checkpoint says, not at its first batch left.
	var checkpointed []EpochEntry
	if data, err := storage.ReadCheckpoint(disk, EpochCheckpointFile(dir)); err == nil {
		if c, err := DecodeEpochCache(data); err == nil {
			l.epochs = *c
			checkpointed = slices.Clone(c.Entries())
		}
	}
	l.epochs.TruncateFromEnd(l.firstOffset())
	if si, bi := l.find(0); l.memo != nil && bi == 0 {
		// The same assignments, from each segment's digest (digest.go).
		for _, s := range l.segs[si:] {
			for _, h := range l.digest(s).highs {
				if h.epoch > l.epochs.LatestEpoch() {
					l.epochs.Assign(h.epoch, h.base)
				}
			}
		}
	} else {
		l.each(0, func(b *record.Batch) {
			l.walked++
			if e := b.PartitionLeaderEpoch; e >= 0 && e > l.epochs.LatestEpoch() {
				l.epochs.Assign(e, b.BaseOffset)
			}
		})
	}
	l.epochs.startEarlier(checkpointed, func(from, to int64) bool {
		found := false
		l.Scan(from, to, func(*record.Batch) bool { found = true; return false })
		return found
	})
	l.loadProducers(ck)
	l.rebuildTxnIndex()
	return l, rec
}

// recallSegment takes, from the disk's memo of the segment as this node last
// held it in memory, the batches whose bytes the file still holds exactly,
// from the start: decoding them again would give the same batches. It
// returns where in the file it stopped. A file that does not read in whole
// takes the slow path, as it must fail the same way, and so does a disk
// without a memo.
func (l *Log) recallSegment(seg *segment, rec *Recovery) int64 {
	if l.memo == nil {
		return 0
	}
	old, _ := l.memo.Memo(seg.file).(*segment)
	if old == nil || !l.memo.Readable(seg.file) {
		return 0
	}
	n := old.idx.len()
	seg.idx = batchIndex{}
	// The digest goes along: what of it still holds is checked where it
	// is used (Log.digest).
	seg.digest = old.digest
	// Below unchanged, the file holds what the node wrote, which is what
	// the memo holds: only the rest needs comparing.
	unchanged := min(l.memo.UnchangedBelow(seg.file), old.size)
	size, _ := l.disk.Size(seg.file)
	// A memo's batches lie end to end in offset order (Append and recovery
	// put them so): those wholly below unchanged are taken at once, once
	// the first is seen to start where it should. The rest go one by one.
	k := 0
	if n > 0 && old.idx.position(0) == 0 {
		if expected := l.nextOffsetAfter(seg); expected < 0 || old.idx.batch(0).BaseOffset >= expected {
			limit := min(unchanged, size)
			k = sort.Search(n, func(i int) bool { return old.end(i) > limit })
		}
	}
	seg.idx = old.idx.prefix(k)
	rec.Batches += k
	var pos int64
	if k > 0 {
		pos = old.end(k - 1)
	}
	for i := k; i < n; i++ {
		b := old.idx.batch(i)
		expected := l.nextOffsetAfter(seg)
		if old.idx.position(i) != pos || (expected >= 0 && b.BaseOffset < expected) {
			break
		}
		end := pos + int64(b.SizeBytes())
		if end > size || (end > unchanged && !l.memo.Equal(seg.file, pos, b.Wire())) {
			break
		}
		seg.add(b, pos)
		pos = end
		rec.Batches++
	}
	return pos
}

// addSegment appends a segment, and leaves it in the disk's memo for a
// restart to recall.
func (l *Log) addSegment(seg *segment) {
	l.segs = append(l.segs, seg)
	l.setMemo(seg)
}

// setMemo leaves seg in the disk's memo, if it keeps one, as the file now
// holds it.
func (l *Log) setMemo(seg *segment) {
	if l.memo != nil {
		l.memo.SetMemo(seg.file, seg)
	}
}

func (l *Log) nextOffsetAfter(seg *segment) int64 {
	if seg.idx.len() > 0 {
		return seg.next()
	}
	if len(l.segs) > 0 {
		return l.segs[len(l.segs)-1].next()
	}
	return -1
}
