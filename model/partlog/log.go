// Package partlog is a partition replica's log: record batches in segment
// files on the simulated disk, the leader-epoch cache and its checkpoint,
// the idempotent producers' state, recovery after a crash, the flush policy,
// retention and compaction. Offsets are never renumbered.
//
// The batches of a log are also kept decoded in memory (the broker serves
// reads from them, as it would from the page cache); the disk holds their
// real bytes, which is what a restart recovers from. Corruption on disk is
// therefore found, by CRC, when the log is next recovered.
package partlog

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"kafkasim/model/record"
	"kafkasim/model/storage"
	"kafkasim/sim"
)

// Config is a partition log's topic-level configuration.
type Config struct {
	// SegmentBytes is segment.bytes (1 GiB).
	SegmentBytes int64
	// FlushIntervalMessages is flush.messages (log.flush.interval.messages):
	// fsync after this many messages; math.MaxInt64 (Kafka's default) never.
	FlushIntervalMessages int64
	// RetentionTime is retention.ms (7 days); negative keeps forever.
	RetentionTime time.Duration
	// RetentionBytes is retention.bytes; negative keeps everything.
	RetentionBytes int64
	// Compact is cleanup.policy=compact.
	Compact bool
	// NoLeaderEpochs switches on the bug zoo's hw-truncation's half that
	// lives in the log: batches carry no leader epoch (Kafka before KIP-101).
	NoLeaderEpochs bool
	// UntrackedProducers is the bug zoo's producer-state-not-replicated:
	// producer state is not kept from replicated batches, nor snapshotted
	// and rebuilt after a restart, only from what this replica appended as
	// leader.
	UntrackedProducers bool
}

// DefaultConfig has Kafka's defaults.
func DefaultConfig() Config {
	return Config{SegmentBytes: 1 << 30, FlushIntervalMessages: math.MaxInt64, RetentionTime: 7 * 24 * time.Hour, RetentionBytes: -1}
}

type segment struct {
	base  int64
	file  string
	size  int64
	idx   batchIndex  // its batches, where each starts, and their last offsets
	dirty bool        // written since its last fsync
	ref   sim.FileRef // appends go through it: no name lookup per batch
}

func (s *segment) next() int64 {
	if s.idx.len() == 0 {
		return s.base
	}
	return s.idx.last(s.idx.len()-1) + 1
}

func (s *segment) add(b *record.Batch, pos int64) {
	if pos > math.MaxUint32 {
		panic(fmt.Sprintf("partlog: %s: a batch at position %d, past what segment.bytes allows", s.file, pos))
	}
	s.idx.add(b, uint32(pos))
}

// end is where batch i ends in the file.
func (s *segment) end(i int) int64 {
	if i+1 < s.idx.len() {
		return s.idx.position(i + 1)
	}
	return s.idx.position(i) + int64(s.idx.batch(i).SizeBytes())
}

// cut keeps the first n batches (views Read handed out stay as they were:
// batchIndex.cut).
func (s *segment) cut(n int) { s.idx.cut(n) }

// Log is one partition replica's log.
type Log struct {
	disk      *sim.Disk
	gate      *storage.Gate
	dir       string
	cfg       Config
	segs      []*segment
	start     int64
	epochs    EpochCache
	producers *ProducerState
	// snaps: the offsets of the producer-state snapshots the log keeps, in
	// order; lastSnap: where the last one was taken, or what stands for it
	// (Kafka's lastSnapOffset). See snapshots.go.
	snaps    []int64
	lastSnap int64
	// producersFrom is where the producer state was last rebuilt from:
	// what lies below it the state knows only through the snapshot it
	// loaded (see ProducersRebuiltFrom).
	producersFrom int64
	unflushed     int64
	// RecoveryPoint is the offset up to which the log is known flushed.
	RecoveryPoint int64
}

// Recovery reports what opening a log found.
type Recovery struct {
	Batches          int
	TruncatedBytes   int64
	DeletedSegments  int
	TruncatedAt      int64 // the offset recovery cut at, or -1
	CorruptionReason string
}

// SegmentFile names a segment as Kafka does: the base offset in 20 digits.
func SegmentFile(dir string, base int64) string { return fmt.Sprintf("%s/%020d.log", dir, base) }

// EpochCheckpointFile is the partition's leader-epoch-checkpoint.
func EpochCheckpointFile(dir string) string { return dir + "/leader-epoch-checkpoint" }

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
func Open(disk *sim.Disk, gate *storage.Gate, dir string, cfg Config, ck Checkpoints) (*Log, Recovery) {
	logStart := ck.LogStart
	l := &Log{disk: disk, gate: gate, dir: dir, cfg: cfg, start: logStart}
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
	l.each(0, func(b *record.Batch) {
		if e := b.PartitionLeaderEpoch; e >= 0 && e > l.epochs.LatestEpoch() {
			l.epochs.Assign(e, b.BaseOffset)
		}
	})
	l.epochs.startEarlier(checkpointed, func(from, to int64) bool {
		found := false
		l.Scan(from, to, func(*record.Batch) bool { found = true; return false })
		return found
	})
	l.loadProducers(ck)
	return l, rec
}

// recallSegment takes, from the disk's memo of the segment as this node last
// held it in memory, the batches whose bytes the file still holds exactly,
// from the start: decoding them again would give the same batches. It
// returns where in the file it stopped. A file that does not read in whole
// takes the slow path, as it must fail the same way.
func (l *Log) recallSegment(seg *segment, rec *Recovery) int64 {
	old, _ := l.disk.Memo(seg.file).(*segment)
	if old == nil || !l.disk.Readable(seg.file) {
		return 0
	}
	n := old.idx.len()
	seg.idx = batchIndex{}
	// Below unchanged, the file holds what the node wrote, which is what
	// the memo holds: only the rest needs comparing.
	unchanged := min(l.disk.UnchangedBelow(seg.file), old.size)
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
		if end > size || (end > unchanged && !l.disk.Equal(seg.file, pos, b.Wire())) {
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
	l.disk.SetMemo(seg.file, seg)
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

// HeaderFlipped reports whether one of flips landed in the header of a batch
// the log holds, in the bytes the CRC does not cover (base offset, length,
// partition leader epoch): corruption no check can find, in Kafka either.
func (l *Log) HeaderFlipped(flips []sim.Flip) bool {
	for _, f := range flips {
		for _, s := range l.segs {
			if s.file != f.File {
				continue
			}
			i := sort.Search(s.idx.len(), func(i int) bool { return s.idx.position(i) > f.Offset }) - 1
			if i >= 0 && f.Offset-s.idx.position(i) < 16 {
				return true
			}
		}
	}
	return false
}

// firstOffset is the base of the log's first batch, or its end when empty.
func (l *Log) firstOffset() int64 {
	for _, s := range l.segs {
		if s.idx.len() > 0 {
			return s.idx.batch(0).BaseOffset
		}
	}
	return l.LEO()
}

// Dir is the log's folder.
func (l *Log) Dir() string { return l.dir }

// Config is the log's configuration.
func (l *Log) Config() Config { return l.cfg }

// LEO is the log end offset.
func (l *Log) LEO() int64 { return l.segs[len(l.segs)-1].next() }

// LogStartOffset is the first offset a reader may ask for.
func (l *Log) LogStartOffset() int64 { return l.start }

// Epochs is the leader-epoch cache.
func (l *Log) Epochs() *EpochCache { return &l.epochs }

// Producers is the idempotent producers' state.
func (l *Log) Producers() *ProducerState { return l.producers }

// LatestEpoch is the epoch of the newest cache entry, or -1.
func (l *Log) LatestEpoch() int32 { return l.epochs.LatestEpoch() }

// Batches lists the batches from the one holding offset from, oldest first.
func (l *Log) Batches(from int64) []*record.Batch {
	var out []*record.Batch
	l.each(from, func(b *record.Batch) { out = append(out, b) })
	return out
}

// each calls f for the batches from the one holding offset from, oldest
// first.
func (l *Log) each(from int64, f func(b *record.Batch)) {
	si, bi := l.find(from)
	for ; si < len(l.segs); si, bi = si+1, 0 {
		l.segs[si].idx.each(bi, func(b *record.Batch) bool { f(b); return true })
	}
}

// Cursor walks a log's batches in offset order.
type Cursor struct {
	l      *Log
	si, bi int
}

// Cursor starts a walk at the batch holding offset from.
func (l *Log) Cursor(from int64) Cursor {
	si, bi := l.find(from)
	return Cursor{l: l, si: si, bi: bi}
}

// At moves forward to the batch holding offset and returns it, or nil when
// no batch holds it. Offsets must not go back between calls.
func (c *Cursor) At(offset int64) *record.Batch {
	for c.si < len(c.l.segs) {
		s := c.l.segs[c.si]
		if c.bi = s.idx.seek(c.bi, offset); c.bi < s.idx.len() {
			if b := s.idx.batch(c.bi); b.BaseOffset <= offset {
				return b
			}
			return nil
		}
		c.si, c.bi = c.si+1, 0
	}
	return nil
}

// Scan calls f for the batches from the one holding offset from up to (not
// including) the first that starts at or after upTo, oldest first, until f
// returns false. Unlike Read it allocates nothing.
func (l *Log) Scan(from, upTo int64, f func(b *record.Batch) bool) {
	si, bi := l.find(from)
	for ; si < len(l.segs); si, bi = si+1, 0 {
		if !l.segs[si].idx.eachBefore(bi, upTo, f) {
			return
		}
	}
}

// SizeBytes is the log's size on disk.
func (l *Log) SizeBytes() int64 {
	var n int64
	for _, s := range l.segs {
		n += s.size
	}
	return n
}

// Segments is the number of segments.
func (l *Log) Segments() int { return len(l.segs) }

// find locates the batch holding offset: segment index and batch index, or
// the position where it would be.
func (l *Log) find(offset int64) (int, int) {
	// Most lookups are near the log end (a high watermark, a fetch
	// position): look at the last segment's last few batches first.
	// Offsets grow along the log, so a batch of the last segment whose
	// predecessor there ends below offset is the answer for the whole log.
	if n := len(l.segs); n > 0 {
		// (Within its last block: past its start, search.)
		lasts, base := l.segs[n-1].idx.lastBlock()
		if k := len(lasts); k > 0 {
			if offset > lasts[k-1] {
				return n, 0
			}
			for i := k - 1; i > 0 && i >= k-8; i-- {
				if lasts[i-1] < offset {
					return n - 1, base + i
				}
			}
		}
	}
	return l.findBySearch(offset)
}

// findBySearch is find by binary search over the whole log.
func (l *Log) findBySearch(offset int64) (int, int) {
	si := sort.Search(len(l.segs), func(i int) bool { return l.segs[i].next() > offset })
	if si == len(l.segs) {
		return si, 0
	}
	s := l.segs[si]
	return si, s.idx.search(offset)
}

// BatchAt returns the batch holding offset, or nil.
func (l *Log) BatchAt(offset int64) *record.Batch {
	si, bi := l.find(offset)
	if si == len(l.segs) || bi == l.segs[si].idx.len() {
		return nil
	}
	if b := l.segs[si].idx.batch(bi); b.BaseOffset <= offset {
		return b
	}
	return nil
}

// Read returns whole batches from the one holding from, up to (not
// including) upTo, and up to maxBytes (at least one batch, as Kafka's
// minOneMessage).
func (l *Log) Read(from, upTo int64, maxBytes int) []*record.Batch {
	si, bi := l.find(from)
	var out []*record.Batch
	size := 0
	for first := si; si < len(l.segs); si, bi = si+1, 0 {
		s := l.segs[si]
		start := bi
		for ; bi < s.idx.len(); bi++ {
			b := s.idx.batch(bi)
			if b.BaseOffset >= upTo || ((out != nil || bi > start) && size+b.SizeBytes() > maxBytes) {
				break
			}
			size += b.SizeBytes()
		}
		if si == first && (bi < s.idx.len() || si == len(l.segs)-1) {
			// Within one segment: a view of its batches when they share
			// a block (they never change below the view's length:
			// batchIndex.cut), else a copy.
			return s.idx.view(start, bi)
		}
		out = s.idx.appendTo(out, start, bi)
		if bi < s.idx.len() {
			break
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// ErrOffsetMismatch is returned when appended batches do not continue the log.
var ErrOffsetMismatch = errors.New("batch does not continue the log")

// Append writes batches whose offsets continue the log (a leader stamped
// them, or a follower copies them), rolling segments as they fill, and
// updates the epoch cache and producer state. fromLeader says whether this
// replica leads (for producer-state tracking under the bug switch).
// Compacted reports cleanup.policy=compact.
func (l *Log) Compacted() bool { return l.cfg.Compact }

func (l *Log) Append(batches []*record.Batch, asLeader bool) error {
	for _, b := range batches {
		// A leader writes at its log end; a follower copies the leader's
		// batches, which may skip offsets compaction removed (Kafka's
		// appendAsFollower refuses only offsets below the log end).
		if b.BaseOffset < l.LEO() || (asLeader && b.BaseOffset != l.LEO()) {
			return fmt.Errorf("%w: %d at end offset %d", ErrOffsetMismatch, b.BaseOffset, l.LEO())
		}
		seg := l.segs[len(l.segs)-1]
		if seg.size > 0 && seg.size+int64(b.SizeBytes()) > l.cfg.SegmentBytes {
			var err error
			if seg, err = l.roll(); err != nil {
				return err
			}
		}
		data := b.Wire()
		if err := l.disk.WriteOwnedRef(&seg.ref, seg.file, seg.size, data); err != nil {
			return err
		}
		seg.add(b, seg.size)
		seg.size += int64(len(data))
		seg.dirty = true
		if b.PartitionLeaderEpoch >= 0 && l.epochs.Assign(b.PartitionLeaderEpoch, b.BaseOffset) {
			l.writeEpochCheckpoint()
		}
		if asLeader || !l.cfg.UntrackedProducers {
			l.producers.Update(b)
		}
		l.unflushed += int64(b.Count())
	}
	if l.unflushed >= l.cfg.FlushIntervalMessages {
		l.Flush()
	}
	return nil
}

// AssignEpoch records that epoch starts at the log end (a new leader does this
// before any write of its epoch, so that followers' lookups find it).
func (l *Log) AssignEpoch(epoch int32) {
	if l.cfg.NoLeaderEpochs {
		return
	}
	if l.epochs.Assign(epoch, l.LEO()) {
		l.writeEpochCheckpoint()
	}
}

func (l *Log) writeEpochCheckpoint() {
	if err := storage.WriteCheckpoint(l.gate, EpochCheckpointFile(l.dir), l.epochs.Encode(), nil); err != nil {
		// A full disk: recovery rebuilds the cache from the batches.
		return
	}
}

// roll starts a new segment at the log end. The segments before it are
// flushed, as Kafka's roll flushes everything below the new segment's base
// offset (not only the segment it closes: after an unclean restart older
// ones may not be durable either), and a producer-state snapshot is taken at
// the new segment's base offset (UnifiedLog.roll). A snapshot that fails to
// write fails the append, as Kafka's takes the log directory offline.
func (l *Log) roll() (*segment, error) {
	for _, s := range l.segs {
		if s.dirty {
			l.gate.Fsync(s.file)
			s.dirty = false
		}
	}
	seg := &segment{base: l.LEO(), file: SegmentFile(l.dir, l.LEO())}
	l.addSegment(seg)
	l.RecoveryPoint = max(l.RecoveryPoint, seg.base)
	return seg, l.takeSnapshot()
}

// Close is what closing the log in a clean shutdown writes besides the final
// flush: a producer-state snapshot at the log end (UnifiedLog.close), which
// the next start loads instead of replaying the log. A snapshot that fails
// to write is left out (the next start replays more).
func (l *Log) Close() {
	l.takeSnapshot()
}

// Flush fsyncs every segment written since its last flush.
func (l *Log) Flush() {
	for _, s := range l.segs {
		if s.dirty {
			l.gate.Fsync(s.file)
			s.dirty = false
		}
	}
	l.unflushed = 0
	l.RecoveryPoint = l.LEO()
}

// TruncateTo removes every batch that ends at or after offset (a batch that
// straddles offset goes whole), and the epoch cache entries past it.
func (l *Log) TruncateTo(offset int64) {
	if offset >= l.LEO() {
		l.epochs.TruncateFromEnd(offset)
		return
	}
	if offset < l.segs[0].base {
		// Below everything the log still holds (retention took the rest):
		// Kafka's UnifiedLog.truncateTo starts the log again there.
		l.TruncateFullyAndStartAt(offset)
		return
	}
	si, bi := l.find(offset)
	if si < len(l.segs) {
		s := l.segs[si]
		pos := s.size
		if bi < s.idx.len() {
			pos = s.idx.position(bi)
		}
		s.cut(bi)
		s.size = pos
		s.dirty = true
		l.disk.Truncate(s.file, pos)
		for _, later := range l.segs[si+1:] {
			l.disk.Remove(later.file)
		}
		l.segs = l.segs[:si+1]
		if s.idx.len() == 0 && si > 0 {
			l.disk.Remove(s.file)
			l.segs = l.segs[:si]
		}
	}
	l.epochs.TruncateFromEnd(l.LEO())
	l.writeEpochCheckpoint()
	l.RecoveryPoint = min(l.RecoveryPoint, l.LEO())
	l.rebuildProducerState(l.start, l.LEO(), l.producers.Len() > 0)
}

// TruncateFullyAndStartAt empties the log and restarts it at offset: no
// producer state, no snapshot.
func (l *Log) TruncateFullyAndStartAt(offset int64) {
	for _, s := range l.segs {
		l.disk.Remove(s.file)
	}
	l.segs = nil
	l.addSegment(&segment{base: offset, file: SegmentFile(l.dir, offset)})
	l.start = offset
	l.epochs = EpochCache{}
	l.writeEpochCheckpoint()
	l.RecoveryPoint = offset
	for len(l.snaps) > 0 {
		l.removeSnapshot(l.snaps[0])
	}
	l.producers, l.lastSnap, l.producersFrom = NewProducerState(), offset, offset
}

// ProducersRebuiltFrom is the offset the producer state was last rebuilt
// from (a restart or truncation replays the log from the snapshot it loads,
// or from the log start; a log emptied to restart at an offset starts there).
// A producer whose batches all lie below it is known only if that snapshot
// held it; appends since the rebuild, and retention, forget no producer.
func (l *Log) ProducersRebuiltFrom() int64 { return l.producersFrom }

// MaybeIncrementLogStartOffset raises the log start offset (retention, or a
// follower following its leader's). Producer state keeps the producers
// whose batches are now below it (ProducerStateManager's
// onLogStartOffsetIncremented drops none).
func (l *Log) MaybeIncrementLogStartOffset(offset int64) {
	if offset > l.start && offset <= l.LEO() {
		l.start = offset
		l.epochs.TruncateFromStart(offset)
		l.lastSnap = l.latestSnapshot()
	}
}

// DeleteOldSegments applies retention: whole segments, oldest first, only
// below the high watermark, never the active one. nowMs is the broker's
// clock. It returns how many segments went.
func (l *Log) DeleteOldSegments(hw int64, nowMs int64) int {
	deleted := 0
	size := l.SizeBytes()
	for len(l.segs) > 1 {
		s, next := l.segs[0], l.segs[1]
		if next.base > hw {
			break
		}
		var largest int64
		for i := range s.idx.len() {
			largest = max(largest, s.idx.batch(i).MaxTimestamp)
		}
		byTime := l.cfg.RetentionTime >= 0 && nowMs-largest > l.cfg.RetentionTime.Milliseconds()
		bySize := l.cfg.RetentionBytes >= 0 && size-s.size >= l.cfg.RetentionBytes
		byStart := next.base <= l.start
		if !byTime && !bySize && !byStart {
			break
		}
		l.disk.Remove(s.file)
		l.removeSnapshot(s.base)
		size -= s.size
		l.segs = l.segs[1:]
		deleted++
	}
	if deleted > 0 {
		l.MaybeIncrementLogStartOffset(l.segs[0].base)
	}
	return deleted
}

// Compact keeps, in every segment below the active one and below the high
// watermark, only the newest record of each key (tombstones too, until they
// are cleaned a second time). Offsets stay; batches thin out. It returns how
// many records were removed.
func (l *Log) Compact(hw int64) int {
	if !l.cfg.Compact || len(l.segs) < 2 {
		return 0
	}
	limit := min(l.segs[len(l.segs)-1].base, hw)
	// Each producer's last batch stays as it is (Kafka's cleaner keeps it
	// too): the producer state rebuilt from the log after a restart must
	// still know the producer's last sequence, or a retry of a batch the
	// cleaner removed would be appended again.
	// latest[key] numbers the key's entry in latestOffset: looking a key's
	// bytes up allocates nothing, storing one allocates its string, once.
	latest := map[string]int{}
	var latestOffset []int64
	lastOfProducer := map[int64]int64{}
	l.Scan(0, l.LEO(), func(b *record.Batch) bool {
		if b.ProducerID >= 0 {
			lastOfProducer[b.ProducerID] = b.BaseOffset
		}
		if b.BaseOffset >= limit {
			return true
		}
		b.EachRecord(func(_ int, off int64, key []byte, hasKey bool, _ []byte) {
			if !hasKey {
				return
			}
			if k, ok := latest[string(key)]; ok {
				latestOffset[k] = off
				return
			}
			latest[string(key)] = len(latestOffset)
			latestOffset = append(latestOffset, off)
		})
		return true
	})
	removed := 0
	for _, s := range l.segs[:len(l.segs)-1] {
		if s.base >= limit {
			break
		}
		changed := false
		var kept []*record.Batch
		for i := range s.idx.len() {
			b := s.idx.batch(i)
			if b.ProducerID >= 0 && lastOfProducer[b.ProducerID] == b.BaseOffset {
				kept = append(kept, b)
				continue
			}
			c := b.Compacted(func(off int64, key []byte, hasKey bool) bool {
				if !hasKey || off >= limit {
					return true
				}
				k, ok := latest[string(key)]
				if !ok {
					return off == 0 // as a map's zero value answered before
				}
				return latestOffset[k] == off
			})
			if c != b {
				changed = true
				removed += b.RecordCount()
				if c != nil {
					removed -= c.RecordCount()
				}
			}
			if c != nil {
				kept = append(kept, c)
			}
		}
		if !changed {
			continue
		}
		// Rewrite the segment: a cleaned copy replaces it, as the cleaner's
		// .cleaned/.swap files do.
		var data []byte
		s.cut(0)
		for _, b := range kept {
			s.add(b, int64(len(data)))
			data = b.Encode(data)
		}
		s.size = int64(len(data))
		tmp := s.file + ".cleaned"
		if l.disk.WriteFile(tmp, data) == nil {
			l.gate.Fsync(tmp)
			l.disk.Rename(tmp, s.file)
			l.disk.SetMemo(s.file, s)
			l.gate.Fsync(s.file)
		}
	}
	return removed
}
