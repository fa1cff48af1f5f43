package sim

// Owned writes: an optional interface (a performance hook). A node that
// writes a buffer nobody changes again (a record batch's wire form) may hand
// it to the disk without the copy Write makes, and may keep a FileRef to a
// file it writes over and over (a log's active segment) so that its name is
// not looked up on every write: without them the data-plane benchmark
// allocates 194 bytes per event instead of 139 (docs/performance.md, The
// performance hooks), and the name lookups were 1% of its CPU profile. The
// disk holds the same bytes either way: a node that only uses Write behaves
// identically.

// OwnedWriter is the owned writes' interface, found on Env.Disk by type
// assertion.
type OwnedWriter interface {
	WriteOwned(name string, off int64, data []byte) error
	WriteOwnedRef(ref *FileRef, name string, off int64, data []byte) error
}

var _ OwnedWriter = (*Disk)(nil)

// FileRef remembers the entry a name had when last written through it, so
// that a file written over and over (a log's active segment) has its name
// looked up once rather than on every write. A ref is good until the disk
// drops an entry (a file emptied and gone, the disk wiped); its next use
// then looks the name up again. The zero FileRef is ready to use.
type FileRef struct {
	name    string
	e       *fileEntry
	dropped uint64
}

// WriteOwnedRef is WriteOwned of file name, through ref.
func (d *Disk) WriteOwnedRef(ref *FileRef, name string, off int64, data []byte) error {
	if ref.e == nil || ref.dropped != d.dropped || ref.name != name {
		*ref = FileRef{name: name, e: d.files[name], dropped: d.dropped}
	}
	e, err := d.writeEntry(name, ref.e, off, data)
	ref.e = e
	return err
}

// WriteOwned is Write for a buffer nobody changes again (the caller's own,
// or bytes shared read-only, such as a record batch's wire form): the disk
// keeps it as is, never writes into it, and saves a copy on the hot path of
// log appends.
func (d *Disk) WriteOwned(name string, off int64, data []byte) error { return d.write(name, off, data) }
