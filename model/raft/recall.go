package raft

// A restart's recovery of the metadata log takes back, from the disk's memo
// (sim.DiskMemo), the entries the node held in memory before it, Memo and
// all, as far as the file provably still holds their bytes: what a reader
// made of an entry's data (the decoded metadata batch) then serves again,
// instead of every restart decoding the whole log from offset 0 (metadata
// snapshots are not modelled). The file's bytes decide, as without the
// memo: an entry is taken back only where decoding the file gives the same
// offset, epoch, control flag and data.

import (
	"sort"

	"kafkasim/model/storage"
)

// recall returns the log the node last held for this file (nil if the disk
// keeps no memo of it, or the file does not read in whole: the slow path
// must then fail as it does), and starts l with its entries whose frames lie
// wholly below where the file still holds what the node wrote there, which
// need neither reading nor comparing. The rest of the file is read and
// checked entry by entry (reuse).
func (l *Log) recall() *Log {
	if l.memo == nil {
		return nil
	}
	old, _ := l.memo.Memo(l.file).(*Log)
	if old == nil || !l.memo.Readable(l.file) {
		return nil
	}
	size, _ := l.disk.Size(l.file)
	limit := min(l.memo.UnchangedBelow(l.file), old.size, size)
	k := sort.Search(len(old.entries), func(i int) bool { return old.end(i) > limit })
	// What the slow path checks of every entry holds of those the node
	// wrote, but is checked all the same (it is cheap): frames end to end
	// from 0, offsets 0, 1, 2, ..., epochs not decreasing.
	var pos int64
	for i := range k {
		e := old.entries[i]
		if old.starts[i] != pos || e.Offset != int64(i) || (i > 0 && e.Epoch < old.entries[i-1].Epoch) {
			k = i
			break
		}
		pos = old.end(i)
	}
	l.entries = make([]Entry, k, len(old.entries))
	for i := range k {
		l.entries[i] = withMemo(old.entries[i])
	}
	l.starts = append(make([]int64, 0, len(old.starts)), old.starts[:k]...)
	l.size = pos
	l.recalled = k
	return old
}

// reuse returns the entry decoded from the file (whose Data shares the
// bytes read) as the log keeps it: the old log's entry at its offset when
// that is the same batch, a copy with a fresh Memo otherwise (a tail cut or
// changed by a power loss or a bit flip, or another leader's entry).
func (l *Log) reuse(old *Log, e Entry) Entry {
	if old != nil && e.Offset >= 0 && e.Offset < int64(len(old.entries)) {
		if o := old.entries[e.Offset]; o.Same(e) {
			l.recalled++
			return withMemo(o)
		}
	}
	e.Data = append([]byte(nil), e.Data...)
	e.Memo = &Memo{}
	return e
}

// withMemo gives an entry appended without a Memo (a control entry, a test's)
// one, so that a later restart finds what was made of it.
func withMemo(e Entry) Entry {
	if e.Memo == nil {
		e.Memo = &Memo{}
	}
	return e
}

// end is where entry i's frame ends in the file.
func (l *Log) end(i int) int64 {
	return l.starts[i] + int64(storage.FrameHeaderBytes+entryHeaderBytes+len(l.entries[i].Data))
}

// setMemo leaves the log in the disk's memo, if it keeps one, as the file
// now holds it: the entries it appends and truncates later are the file's
// too, and a power loss or a bit flip that changes the file behind the
// node's back lowers UnchangedBelow.
func (l *Log) setMemo() {
	if l.memo != nil {
		l.memo.SetMemo(l.file, l)
	}
}
