package partlog

import (
	"encoding/binary"
	"errors"
	"slices"
	"sort"
	"strconv"
	"strings"

	"kafkasim/model/storage"
)

// Producer-state snapshots, as Kafka's ProducerStateManager keeps them: a
// file <offset>.snapshot in the partition's folder holding, for every
// producer the replica knows, its epoch and its last batch only (sequence
// range and offsets), as of offset. Kafka takes one
//   - when a segment is rolled, at the new segment's base offset;
//   - when the log is closed in a clean shutdown, at the log end;
//   - when producer state is rebuilt (a restart, a truncation), at the end
//     it was rebuilt to.
//
// Retention does not touch a producer's in-memory state (KIP-360: producers
// stay until producer.id.expiration.ms, a day), and so does not touch the
// snapshots taken from it either; only the snapshot at a deleted segment's
// base offset goes with the segment. What rebuilds producer state
// (UnifiedLog.rebuildProducerState, ProducerStateManager.truncateAndReload)
// deletes the snapshots past the end it rebuilds to and those at or below the
// log start, loads the latest one left and replays the log after it. A
// producer whose batches retention deleted is therefore remembered after a
// clean restart (the snapshot at the log end has it), and forgotten only when
// no snapshot above the log start that has it survived: an unclean restart
// while the log start is the active segment's base (fuzz seed 4009935: the
// model rebuilt producer state from the log alone, and a clean restart
// forgot a producer whose batch retention had deleted; its retry was taken
// as new and written twice).

// SnapshotFile names a producer-state snapshot as Kafka does: the offset in
// 20 digits.
func SnapshotFile(dir string, offset int64) string {
	return offsetFile(dir, offset, ".snapshot")
}

// snapshotOffset parses the offset of a snapshot file directly in dir.
func snapshotOffset(dir, name string) (int64, bool) {
	rest, ok := strings.CutPrefix(name, dir+"/")
	if !ok || strings.Contains(rest, "/") {
		return 0, false
	}
	digits, ok := strings.CutSuffix(rest, ".snapshot")
	if !ok {
		return 0, false
	}
	off, err := strconv.ParseInt(digits, 10, 64)
	return off, err == nil && off >= 0
}

// A snapshot: version (2 bytes), CRC-32C of the rest (4), the number of
// entries (4), then per producer, by id: id (8), epoch (2), last sequence
// (4), last offset (8), offset delta (4) — the batch's last offset minus its
// first, which is also its last sequence minus its first (Kafka's snapshot
// schema, without timestamps). A partition that has seen transactions
// writes version 2, whose entries add the coordinator epoch (4) and the
// first offset of the ongoing transaction (8, -1: none), as Kafka's
// snapshot does (CoordinatorEpoch, CurrentTxnFirstOffset), and hold the
// producers whose epoch a marker bumped, who have no batch of that epoch
// yet (last sequence and last offset -1); a partition without transactions
// writes version 1, as before.
const (
	snapshotVersion     = 1
	snapshotVersionTxn  = 2
	snapshotHeader      = 10
	snapshotEntrySize   = 26
	snapshotEntrySizeV2 = 38
)

var errCorruptSnapshot = errors.New("corrupt producer-state snapshot")

// encodeSnapshot writes each producer's epoch and last batch.
func (p *ProducerState) encodeSnapshot() []byte {
	txn := p.txn != nil
	version, size := uint16(snapshotVersion), snapshotEntrySize
	if txn {
		version, size = snapshotVersionTxn, snapshotEntrySizeV2
	}
	pids := make([]int64, 0, len(p.pids))
	for i, pid := range p.pids {
		if e := p.entries[i]; len(e.Batches) > 0 || (txn && (e.TxnFirstOffset >= 0 || e.CoordinatorEpoch >= 0)) {
			pids = append(pids, pid)
		}
	}
	slices.Sort(pids)
	buf := make([]byte, snapshotHeader, snapshotHeader+size*len(pids))
	binary.BigEndian.PutUint16(buf, version)
	binary.BigEndian.PutUint32(buf[6:], uint32(len(pids)))
	for _, pid := range pids {
		e := p.Entry(pid)
		m := BatchMeta{FirstSeq: -1, LastSeq: -1, FirstOffset: -1, LastOffset: -1}
		if len(e.Batches) > 0 {
			m = e.Batches[len(e.Batches)-1]
		}
		buf = binary.BigEndian.AppendUint64(buf, uint64(pid))
		buf = binary.BigEndian.AppendUint16(buf, uint16(e.Epoch))
		buf = binary.BigEndian.AppendUint32(buf, uint32(m.LastSeq))
		buf = binary.BigEndian.AppendUint64(buf, uint64(m.LastOffset))
		buf = binary.BigEndian.AppendUint32(buf, uint32(m.LastOffset-m.FirstOffset))
		if txn {
			buf = binary.BigEndian.AppendUint32(buf, uint32(e.CoordinatorEpoch))
			buf = binary.BigEndian.AppendUint64(buf, uint64(e.TxnFirstOffset))
		}
	}
	binary.BigEndian.PutUint32(buf[2:], storage.Checksum(buf[6:]))
	return buf
}

// decodeSnapshot reads a snapshot back: each producer with its last batch,
// and with version 2 its ongoing transaction.
func decodeSnapshot(data []byte) (*ProducerState, error) {
	if len(data) < snapshotHeader || binary.BigEndian.Uint32(data[2:]) != storage.Checksum(data[6:]) {
		return nil, errCorruptSnapshot
	}
	size := snapshotEntrySize
	switch binary.BigEndian.Uint16(data) {
	case snapshotVersion:
	case snapshotVersionTxn:
		size = snapshotEntrySizeV2
	default:
		return nil, errCorruptSnapshot
	}
	n := int(binary.BigEndian.Uint32(data[6:]))
	if len(data) != snapshotHeader+n*size {
		return nil, errCorruptSnapshot
	}
	p := NewProducerState()
	if size == snapshotEntrySizeV2 {
		p.txn = &txnState{}
	}
	for i := range n {
		b := data[snapshotHeader+i*size:]
		pid := int64(binary.BigEndian.Uint64(b))
		lastSeq := int32(binary.BigEndian.Uint32(b[10:]))
		lastOffset := int64(binary.BigEndian.Uint64(b[14:]))
		delta := int32(binary.BigEndian.Uint32(b[22:]))
		e := &ProducerEntry{Epoch: int16(binary.BigEndian.Uint16(b[8:])), CoordinatorEpoch: -1, TxnFirstOffset: -1}
		if lastOffset >= 0 {
			firstSeq := int32((int64(lastSeq) - int64(delta) + 1<<31) % (1 << 31)) // sequences wrap at 2^31
			e.Batches = []BatchMeta{{FirstSeq: firstSeq, LastSeq: lastSeq, FirstOffset: lastOffset - int64(delta), LastOffset: lastOffset}}
		}
		if p.txn != nil {
			e.CoordinatorEpoch = int32(binary.BigEndian.Uint32(b[26:]))
			e.TxnFirstOffset = int64(binary.BigEndian.Uint64(b[30:]))
			if e.TxnFirstOffset >= 0 {
				p.txn.ongoing = append(p.txn.ongoing, txnMeta{pid: pid, firstOffset: e.TxnFirstOffset, lastOffset: -1})
			}
		}
		p.set(pid, e)
	}
	if p.txn != nil {
		slices.SortFunc(p.txn.ongoing, func(a, b txnMeta) int { return cmpInt64(a.firstOffset, b.firstOffset) })
	}
	return p, nil
}

// takeSnapshot writes a snapshot of the producer state at the log end, and
// fsyncs it, unless the latest snapshot taken is there already (Kafka's
// takeSnapshot: lastMapOffset > lastSnapOffset). A failed write is returned.
func (l *Log) takeSnapshot() error {
	return l.takeSnapshotAt(l.LEO())
}

func (l *Log) takeSnapshotAt(offset int64) error {
	if l.cfg.UntrackedProducers || offset <= l.lastSnap {
		return nil
	}
	name := SnapshotFile(l.dir, offset)
	if err := l.disk.WriteFile(name, l.producers.encodeSnapshot()); err != nil {
		return err
	}
	l.gate.Fsync(name)
	if i, found := slices.BinarySearch(l.snaps, offset); !found {
		l.snaps = slices.Insert(l.snaps, i, offset)
	}
	l.lastSnap = offset
	return nil
}

// removeSnapshot deletes the snapshot at offset, if there is one.
func (l *Log) removeSnapshot(offset int64) {
	if i, found := slices.BinarySearch(l.snaps, offset); found {
		l.snaps = slices.Delete(l.snaps, i, i+1)
		l.disk.Remove(SnapshotFile(l.dir, offset))
	}
}

// latestSnapshot is the offset of the newest snapshot, or the log start.
func (l *Log) latestSnapshot() int64 {
	if n := len(l.snaps); n > 0 {
		return l.snaps[n-1]
	}
	return l.start
}

// loadProducers rebuilds producer state when the log is opened, as Kafka's
// LogLoader does. After an unclean shutdown every segment from the one
// holding the recovery point on is recovered (recoverSegment) with producer
// state of its own, rebuilt up to the segment's base from the log start the
// checkpoint gave (which may be older than the log's: the checkpoint is
// written every log.flush.offset.checkpoint.interval.ms), the segment
// replayed into it and a snapshot taken at its end. Then the snapshots that
// belong to no segment are removed (removeStraySnapshots keeps only the
// latest stray, a clean shutdown's or a recovery's, if it is past every
// segment's base), and producer state is rebuilt up to the log end from the
// log's own start.
func (l *Log) loadProducers(ck Checkpoints) {
	l.producers, l.snaps, l.lastSnap = NewProducerState(), nil, 0
	if l.cfg.UntrackedProducers {
		return
	}
	for _, f := range l.disk.List(l.dir + "/") {
		if off, ok := snapshotOffset(l.dir, f); ok {
			l.snaps = append(l.snaps, off)
		}
	}
	slices.Sort(l.snaps)
	if !ck.Clean {
		// segments.values(recoveryPoint, MAX): from the last segment
		// starting at or before the recovery point (the first if none).
		first := max(sort.Search(len(l.segs), func(i int) bool { return l.segs[i].base > ck.RecoveryPoint })-1, 0)
		for _, s := range l.segs[first:] {
			start, keyed := l.rebuildProducerState(ck.LogStart, s.base, true)
			l.replay(s, 0, s.idx.len(), start, keyed)
			l.takeSnapshotAt(s.next())
		}
	}
	var strays []int64
	for _, off := range l.snaps {
		if !slices.ContainsFunc(l.segs, func(s *segment) bool { return s.base == off }) {
			strays = append(strays, off)
		}
	}
	for i, off := range strays {
		if i < len(strays)-1 || off < l.segs[len(l.segs)-1].base {
			l.removeSnapshot(off)
		}
	}
	l.rebuildProducerState(l.start, l.LEO(), true)
}

// rebuildProducerState rebuilds producer state up to offset last, as Kafka's
// UnifiedLog.rebuildProducerState does (ProducerStateManager.truncateAndReload
// first): the snapshots past last or at or below logStart are deleted, the
// latest one left that reads is loaded (one that does not, a corrupt one, is
// deleted and the one before it tried), the batches after it and below last
// are replayed — a snapshot is taken where the replay enters each of the
// log's last two segments — and a snapshot is taken at last. replay false
// skips the replay (a truncation of a log whose state knew no producer:
// Kafka's isEmptyBeforeTruncation). A snapshot that fails to write is left
// out: a later load replays more. It returns what the state was loaded from
// (replayCheckpoint) while nothing is replayed into it yet (keyed).
func (l *Log) rebuildProducerState(logStart, last int64, replay bool) (start string, keyed bool) {
	l.producers = NewProducerState()
	if l.cfg.UntrackedProducers {
		return "", false
	}
	for _, off := range slices.Clone(l.snaps) {
		if off > last || off <= logStart {
			l.removeSnapshot(off)
		}
	}
	mapEnd := logStart
	for len(l.snaps) > 0 {
		off := l.snaps[len(l.snaps)-1]
		if data, err := l.disk.ReadFile(SnapshotFile(l.dir, off)); err == nil {
			if p, err := decodeSnapshot(data); err == nil {
				l.producers, mapEnd, start = p, off, string(data)
				break
			}
		}
		l.removeSnapshot(off)
	}
	l.lastSnap = mapEnd
	l.producersFrom = max(mapEnd, logStart)
	if !replay {
		l.producersFrom = last
	}
	keyed = true
	n := len(l.segs)
	for i, s := range l.segs {
		// segments.values(mapEnd, last): from the last segment starting at
		// or before mapEnd, up to those starting before last.
		if !replay || last <= mapEnd || s.base >= last || (i+1 < n && l.segs[i+1].base <= mapEnd) {
			continue
		}
		from := max(s.base, mapEnd, logStart)
		if i >= n-2 {
			l.takeSnapshotAt(from)
		}
		// The batches from the one holding from that start below last:
		// found by a search where offsets grow along the segment (a log
		// without the disk's memo walks, the reference for it).
		j, end := s.idx.search(from), 0
		if l.memo != nil {
			end = max(j, sort.Search(s.idx.len(), func(k int) bool { return s.idx.batch(k).BaseOffset >= last }))
		} else {
			for end = j; end < s.idx.len() && s.idx.batch(end).BaseOffset < last; end++ {
			}
		}
		l.replay(s, j, end, start, keyed)
		keyed = keyed && end == j
	}
	l.takeSnapshotAt(last)
	return start, keyed
}
