package partlog

import (
	"errors"
	"fmt"
	"slices"

	"kafkasim/model/record"
	"kafkasim/model/storage"
)

// Writing the log: appends (rolling segments as they fill), the start of a
// leader epoch, flushes and the close, and truncation (to an offset, or of
// everything to start again at one).

// ErrOffsetMismatch is returned when appended batches do not continue the log.
var ErrOffsetMismatch = errors.New("batch does not continue the log")

// Append writes batches whose offsets continue the log (a leader stamped
// them, or a follower copies them), rolling segments as they fill, and
// updates the epoch cache and producer state. asLeader says whether this
// replica leads (for producer-state tracking under the bug switch).
func (l *Log) Append(batches []*record.Batch, asLeader bool) error {
	defer l.changed()
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
		if err := l.writeBatch(seg, data); err != nil {
			return err
		}
		seg.add(b, seg.size)
		seg.size += int64(len(data))
		seg.dirty = true
		if b.PartitionLeaderEpoch >= 0 && l.epochs.Assign(b.PartitionLeaderEpoch, b.BaseOffset) {
			l.writeEpochCheckpoint()
		}
		if asLeader || !l.cfg.UntrackedProducers {
			// UnifiedLog.append: an aborted transaction goes to the
			// index of the segment its marker went to.
			if done, aborted := l.producers.update(b); aborted {
				l.indexAborted(seg, done)
			}
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
	defer l.changed()
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
	defer l.changed()
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
	defer l.changed()
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
		// LogSegment.truncateTo: the index entries of markers cut go.
		s.aborted = slices.DeleteFunc(s.aborted, func(a AbortedTxn) bool { return a.LastOffset >= offset })
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
	defer l.changed()
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

// writeBatch writes a batch's wire bytes at the end of seg: without a copy
// where the disk takes them as they are (they never change), else copied.
func (l *Log) writeBatch(seg *segment, data []byte) error {
	if l.owned != nil {
		return l.owned.WriteOwnedRef(&seg.ref, seg.file, seg.size, data)
	}
	return l.disk.Write(seg.file, seg.size, data)
}

// Delete removes the log's files from the disk: the replica was reassigned
// away (Kafka's LogManager.asyncDelete, here at once). The log must not be
// used afterwards.
func (l *Log) Delete() {
	defer l.changed()
	for _, name := range l.disk.List(l.dir + "/") {
		l.disk.Remove(name)
	}
	l.snaps = nil
}
