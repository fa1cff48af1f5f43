package sim

// The disk's memo: an optional interface (a performance hook). A node may
// leave on its disk what it derived from a file's bytes (a log segment's
// decoded batches) and, after a restart, take it back instead of decoding
// the file again, as far as the bytes are provably the same: without it the
// data-plane benchmark's nine broker restarts decode every segment, and a
// run allocates 220 bytes per event instead of 139 (docs/performance.md, The
// performance hooks). A node that never asks for it decodes every file and
// behaves identically: the memo is checked against the bytes, never trusted
// beyond them.

import (
	"bytes"
	"math"
)

// DiskMemo is the memo's interface, found on Env.Disk by type assertion.
// The bytes a memo came from must be checked (Equal) wherever they might
// have changed behind the node's back (below UnchangedBelow they have
// not), and a file that does not read in whole (Readable) must take the
// slow path, which fails as it must.
type DiskMemo interface {
	Memo(key string) any
	SetMemo(key string, v any)
	UnchangedBelow(key string) int64
	Readable(name string) bool
	Equal(name string, off int64, data []byte) bool
}

var _ DiskMemo = (*Disk)(nil)

// Memo returns what the node last stored under key with SetMemo (nil if
// nothing), even across its crashes and power losses; removing or renaming
// the file of that name drops it, and a wipe clears it all. It
// is a shortcut only, for work derived from file bytes (decoding a log
// segment on restart): a user must check, with Equal, that the bytes it came
// from are still the file's, so that the shortcut never changes a result.
func (d *Disk) Memo(key string) any { return d.memo[key] }

// SetMemo stores v under key (see Memo), taken to agree with the file of
// that name as it is now.
func (d *Disk) SetMemo(key string, v any) {
	if d.memo == nil {
		d.memo, d.unchangedBelow = map[string]any{}, map[string]int64{}
	}
	d.memo[key] = v
	delete(d.unchangedBelow, key)
}

// UnchangedBelow is the offset below which a memo's file still holds what
// the node itself last wrote there, since SetMemo: only a power loss (which
// undoes the writes not yet durable) or a bit flip change bytes behind the
// node's back. A user of the memo may skip checking bytes below it.
func (d *Disk) UnchangedBelow(key string) int64 {
	if _, ok := d.memo[key]; !ok {
		return 0
	}
	if low, ok := d.unchangedBelow[key]; ok {
		return low
	}
	return math.MaxInt64
}

// changedFrom notes that a file's bytes from off on changed behind its
// node's back.
func (d *Disk) changedFrom(name string, off int64) {
	if _, ok := d.memo[name]; !ok {
		return
	}
	if low, ok := d.unchangedBelow[name]; !ok || off < low {
		d.unchangedBelow[name] = off
	}
}

// Readable reports whether the whole of a file reads without error.
func (d *Disk) Readable(name string) bool {
	f := d.cached(name)
	if f == nil {
		return false
	}
	for _, r := range d.bad {
		if r.name == name && r.off < f.size && r.end > 0 {
			return false
		}
	}
	return true
}

// Equal reports whether a file holds exactly data at off (false when the
// range is not all in the file, or does not read), comparing in place.
func (d *Disk) Equal(name string, off int64, data []byte) bool {
	f := d.cached(name)
	if f == nil || off < 0 || off+int64(len(data)) > f.size {
		return false
	}
	end := off + int64(len(data))
	for _, r := range d.bad {
		if r.name == name && r.off < end && off < r.end {
			return false
		}
	}
	equal := true
	f.each(off, end, func(b []byte) bool {
		equal = bytes.Equal(b, data[:len(b)])
		data = data[len(b):]
		return equal
	})
	return equal
}
