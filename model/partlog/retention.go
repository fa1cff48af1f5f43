package partlog

// MaybeIncrementLogStartOffset raises the log start offset (retention, or a
// follower following its leader's). Producer state keeps the producers
// whose batches are now below it (ProducerStateManager's
// onLogStartOffsetIncremented drops none).
func (l *Log) MaybeIncrementLogStartOffset(offset int64) {
	defer l.changed()
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
	defer l.changed()
	deleted := 0
	size := l.SizeBytes()
	for len(l.segs) > 1 {
		s, next := l.segs[0], l.segs[1]
		if next.base > hw {
			break
		}
		var largest int64
		for i := range s.idx.len() {
			largest = max(largest, s.idx.batch(i).MaxTimestamp())
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
