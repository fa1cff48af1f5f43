package raft

import (
	"encoding/binary"
	"fmt"
	"slices"

	"kafkasim/model/storage"
	"kafkasim/sim"
)

// Entry is one batch of the metadata log. Offsets count batches (Kafka's
// count records; a batch is what is appended and committed atomically, so the
// protocol is the same). Control entries are the leader-change records a new
// leader appends at the start of its epoch.
type Entry struct {
	Offset  int64
	Epoch   int32
	Control bool
	Data    []byte
	// Memo is shared by every copy of the entry made from the one its
	// leader appended (replicas' logs share the entries they fetch), so
	// that what one reader makes of Data, a pure function of it, serves
	// the others. Not Kafka's, whose replicas each decode their copy: it
	// saves the simulation decoding each metadata batch once per broker.
	// An entry read back from disk takes the Memo of the entry the node
	// held at that offset before its restart where the bytes are provably
	// the same (recall.go), and a fresh one otherwise: a restart does not
	// decode again what was decoded before (metadata snapshots are not
	// modelled, so a restart replays the whole log).
	Memo *Memo
}

// Memo holds what a reader made of an entry's data (see Entry.Memo); it
// must never be modified once set.
type Memo struct {
	Value any
	// frame is the entry's frame as its logs write it (checksummed), made
	// by the first log to append it: the controllers and every broker
	// write the same bytes, a copy each.
	frame frameMemo
}

// frameMemo is an entry's frame and what it was made of: a copy of the
// entry whose fields differ (none does; a test's might) makes its own.
type frameMemo struct {
	bytes   []byte
	offset  int64
	epoch   int32
	control bool
	data    []byte // the entry's Data, whose array the copies share
}

// entryFrame returns e's frame, which the caller must not modify (it may
// be the one e's Memo keeps).
func entryFrame(e Entry) []byte {
	m := e.Memo
	if m == nil {
		return storage.AppendFrame(nil, encodeEntry(e))
	}
	f := &m.frame
	if f.bytes == nil || f.offset != e.Offset || f.epoch != e.Epoch || f.control != e.Control || !sameBytes(f.data, e.Data) {
		if f.bytes != nil {
			return storage.AppendFrame(nil, encodeEntry(e)) // not the entry the memo's frame is of
		}
		*f = frameMemo{bytes: storage.AppendFrame(nil, encodeEntry(e)), offset: e.Offset, epoch: e.Epoch, control: e.Control, data: e.Data}
	}
	return f.bytes
}

// sameBytes: a and b are the same slice of the same array.
func sameBytes(a, b []byte) bool {
	return len(a) == len(b) && cap(a) == cap(b) && (len(a) == 0 || &a[0] == &b[0])
}

// Same reports whether two entries are the same batch.
func (e Entry) Same(o Entry) bool {
	return e.Offset == o.Offset && e.Epoch == o.Epoch && e.Control == o.Control && string(e.Data) == string(o.Data)
}

// Log is the metadata log of one replica: entries in memory, mirrored as
// checksummed frames in one file on the node's disk.
type Log struct {
	disk sim.NodeDisk
	memo sim.DiskMemo // nil: the disk keeps none
	// owned is the disk's owned writes (nil: it has none): a frame is
	// never written again once made (a memo's is shared by every
	// replica's copy of the entry), so the disk may keep it without the
	// copy Write makes — 25 MB a minute of BenchmarkBigCluster, whose
	// 33 metadata logs each wrote the 3,000 partitions' records.
	owned   sim.OwnedWriter
	file    string
	entries []Entry
	starts  []int64 // file position of each entry's frame
	size    int64
	// recalled counts the entries OpenLog took from the disk's memo,
	// Memo and all, rather than anew from the file's bytes (tests).
	recalled int
}

const entryHeaderBytes = 13

func encodeEntry(e Entry) []byte {
	b := make([]byte, entryHeaderBytes+len(e.Data))
	binary.BigEndian.PutUint64(b[0:], uint64(e.Offset))
	binary.BigEndian.PutUint32(b[8:], uint32(e.Epoch))
	if e.Control {
		b[12] = 1
	}
	copy(b[entryHeaderBytes:], e.Data)
	return b
}

// decodeEntry reads a frame's payload; the entry's Data shares b (see
// Log.reuse, which copies what it keeps).
func decodeEntry(b []byte) (Entry, bool) {
	if len(b) < entryHeaderBytes {
		return Entry{}, false
	}
	return Entry{
		Offset:  int64(binary.BigEndian.Uint64(b[0:])),
		Epoch:   int32(binary.BigEndian.Uint32(b[8:])),
		Control: b[12] == 1,
		Data:    b[entryHeaderBytes:],
	}, true
}

// OpenLog recovers a log from disk: it keeps the longest prefix of valid
// frames whose offsets run 0, 1, 2, ... and truncates the file after it (a
// torn or corrupt tail). It reports how many bytes were cut. The entries the
// file still provably holds as the node last held them in memory are taken
// from the disk's memo (recall.go) rather than decoded again.
func OpenLog(disk sim.NodeDisk, file string) (*Log, int64) {
	l := &Log{disk: disk, file: file}
	l.memo, _ = disk.(sim.DiskMemo)
	l.owned, _ = disk.(sim.OwnedWriter)
	defer l.setMemo()
	old := l.recall()
	pos := l.size
	size, _ := disk.Size(file)
	data, err := disk.Read(file, pos, int(size-pos))
	if err != nil {
		return l, 0
	}
	payloads, starts, valid := storage.ScanFrames(data)
	valid += pos
	for i, p := range payloads {
		e, ok := decodeEntry(p)
		if !ok || e.Offset != int64(len(l.entries)) || (len(l.entries) > 0 && e.Epoch < l.LastEpoch()) {
			valid = pos + starts[i]
			break
		}
		l.entries = append(l.entries, l.reuse(old, e))
		l.starts = append(l.starts, pos+starts[i])
	}
	l.size = valid
	cut := size - valid
	if cut > 0 {
		if err := disk.Truncate(file, valid); err != nil {
			panic(fmt.Sprintf("raft: truncating recovered log: %v", err))
		}
	}
	return l, cut
}

// File is the log's file name.
func (l *Log) File() string { return l.file }

// EndOffset is the offset the next entry will get (the LEO).
func (l *Log) EndOffset() int64 { return int64(len(l.entries)) }

// LastEpoch is the epoch of the last entry, or 0 for an empty log.
func (l *Log) LastEpoch() int32 {
	if len(l.entries) == 0 {
		return 0
	}
	return l.entries[len(l.entries)-1].Epoch
}

// Entry returns the entry at offset, which must exist.
func (l *Log) Entry(offset int64) Entry { return l.entries[offset] }

// Entries returns up to max entries from offset on (shared, not copied:
// entries are never modified in place, nor written over after a truncation).
func (l *Log) Entries(from int64, max int) []Entry {
	if from >= int64(len(l.entries)) {
		return nil
	}
	end := min(int64(len(l.entries)), from+int64(max))
	return l.entries[from:end:end]
}

// Append writes entries at the end of the log, in the page cache; the caller
// decides when to fsync. Their offsets must continue the log.
func (l *Log) Append(entries ...Entry) error {
	var buf []byte
	for i, e := range entries {
		if e.Offset != l.EndOffset()+int64(i) {
			panic(fmt.Sprintf("raft: appending offset %d at end offset %d", e.Offset, l.EndOffset()+int64(i)))
		}
		if len(entries) == 1 {
			buf = entryFrame(e) // read-only: the disk copies it, or keeps it as is
		} else {
			buf = append(buf, entryFrame(e)...)
		}
	}
	var err error
	if l.owned != nil {
		err = l.owned.WriteOwned(l.file, l.size, buf)
	} else {
		err = l.disk.Write(l.file, l.size, buf)
	}
	if err != nil {
		return err
	}
	pos := l.size
	for _, e := range entries {
		l.entries = append(l.entries, e)
		l.starts = append(l.starts, pos)
		pos += int64(storage.FrameHeaderBytes + entryHeaderBytes + len(e.Data))
	}
	l.size = pos
	return nil
}

// TruncateTo removes every entry at offset to and above.
func (l *Log) TruncateTo(to int64) {
	if to >= l.EndOffset() {
		return
	}
	to = max(to, 0)
	l.size = l.starts[to]
	// Clipped: the next append must not write over the entries removed, as
	// a fetch answer sent (or held for an fsync) before the truncation
	// still holds them (Entries shares the array; Kafka sends copies).
	l.entries = slices.Clip(l.entries[:to])
	l.starts = l.starts[:to]
	if err := l.disk.Truncate(l.file, l.size); err != nil {
		panic(fmt.Sprintf("raft: truncating log: %v", err))
	}
}

// EndOffsetForEpoch answers "where does epoch end in this log": the largest
// epoch in the log not above epoch, and the offset where it ends (the start
// of the next epoch, or the log end). With no such epoch it returns (0, 0).
func (l *Log) EndOffsetForEpoch(epoch int32) (int32, int64) {
	for j := len(l.entries) - 1; j >= 0; j-- {
		if l.entries[j].Epoch <= epoch {
			return l.entries[j].Epoch, int64(j + 1)
		}
	}
	return 0, 0
}
