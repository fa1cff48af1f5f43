package partlog

import (
	"kafkasim/model/record"
)

// Compact keeps, in every segment below the active one and below the high
// watermark, only the newest record of each key (tombstones too, until they
// are cleaned a second time). Offsets stay; batches thin out. It returns how
// many records were removed.
func (l *Log) Compact(hw int64) int {
	defer l.changed()
	if !l.cfg.Compact || len(l.segs) < 2 {
		return 0
	}
	limit := min(l.segs[len(l.segs)-1].base, hw)
	// The cleaner stops at the first unstable offset too
	// (LogCleanerManager.cleanableOffsets): an undecided transaction's
	// records are not yet known to be kept or dropped.
	var aborted []AbortedTxn
	if l.Transactional() {
		limit = min(limit, l.LastStableOffset(hw))
		aborted = l.AbortedTransactions()
	}
	// A batch of an aborted transaction is dropped whole, and its records
	// are no key's latest (the cleaner's offset map skips them,
	// CleanedTransactionMetadata). Markers stay: Kafka removes one only
	// once its transaction's records are gone and delete.retention.ms has
	// passed since it was first cleaned, which the model does not.
	abortedBatch := func(b *record.Batch) bool {
		if !b.Transactional || b.Control || len(aborted) == 0 {
			return false
		}
		for _, a := range aborted {
			if a.ProducerID == b.ProducerID && a.FirstOffset <= b.BaseOffset && b.BaseOffset <= a.LastOffset {
				return true
			}
		}
		return false
	}
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
		if b.BaseOffset >= limit || b.Control || abortedBatch(b) {
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
			if b.Control || (b.ProducerID >= 0 && lastOfProducer[b.ProducerID] == b.BaseOffset) {
				kept = append(kept, b)
				continue
			}
			if b.BaseOffset < limit && abortedBatch(b) {
				changed = true
				removed += b.RecordCount()
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
			l.setMemo(s)
			l.gate.Fsync(s.file)
		}
	}
	return removed
}
