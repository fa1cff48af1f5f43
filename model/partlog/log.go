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
	"fmt"
	"math"
	"sort"
	"time"

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

// Log is one partition replica's log.
type Log struct {
	disk sim.NodeDisk
	// memo and owned are the disk's optional hooks, nil when it has
	// none: the log then decodes every segment it opens, and copies
	// what it appends (behaving identically).
	memo      sim.DiskMemo
	owned     sim.OwnedWriter
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
	// hasAborted: some segment's transaction index has an entry (or had:
	// it is not cleared by truncation).
	hasAborted bool
	unflushed  int64
	// RecoveryPoint is the offset up to which the log is known flushed.
	RecoveryPoint int64
	// onChange is told of every change to the log (OnChange).
	onChange func()
	// walked counts the batches recovery's walks (the epoch cache's, the
	// transaction index's, producer-state replays) read since the open:
	// with the digests, only those they did not cover (digest.go).
	walked int
}

// OnChange sets what is told after each change to the log: an append, a
// truncation, a new log start or leader epoch, a deletion, a compaction.
// The broker's fetch sessions use it to know which partitions moved
// without looking at every one on every fetch.
func (l *Log) OnChange(f func()) { l.onChange = f }

func (l *Log) changed() {
	if l.onChange != nil {
		l.onChange()
	}
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
func SegmentFile(dir string, base int64) string { return offsetFile(dir, base, ".log") }

// offsetFile is dir/offset suffix, the offset in 20 digits as Kafka names a
// log's files: fmt's "%s/%020d" did the same, slower (every replica a broker
// opens names its segments, 9,000 on 3,000 partitions of RF 3).
func offsetFile(dir string, offset int64, suffix string) string {
	if offset < 0 {
		return fmt.Sprintf("%s/%020d%s", dir, offset, suffix)
	}
	digits := [20]byte{'0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0', '0'}
	for i, v := len(digits)-1, uint64(offset); v > 0; i, v = i-1, v/10 {
		digits[i] = byte('0' + v%10)
	}
	return dir + "/" + string(digits[:]) + suffix
}

// EpochCheckpointFile is the partition's leader-epoch-checkpoint.
func EpochCheckpointFile(dir string) string { return dir + "/leader-epoch-checkpoint" }

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

// UpdateConfig replaces the log's config (UnifiedLog.updateConfig after a
// topic config change): retention and segment size apply from the next
// retention pass and the next append.
func (l *Log) UpdateConfig(cfg Config) { l.cfg = cfg }

// Compacted reports cleanup.policy=compact.
func (l *Log) Compacted() bool { return l.cfg.Compact }

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

// ProducersRebuiltFrom is the offset the producer state was last rebuilt
// from (a restart or truncation replays the log from the snapshot it loads,
// or from the log start; a log emptied to restart at an offset starts there).
// A producer whose batches all lie below it is known only if that snapshot
// held it; appends since the rebuild, and retention, forget no producer.
func (l *Log) ProducersRebuiltFrom() int64 { return l.producersFrom }
