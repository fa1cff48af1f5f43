package storage

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"kafkasim/sim"
)

// memDisk is a sim.NodeDisk in memory, without faults or fsync delays:
// what a unit test of a disk's user needs instead of a world.
type memDisk struct {
	files map[string][]byte
}

var _ sim.NodeDisk = (*memDisk)(nil)

func newMemDisk() *memDisk { return &memDisk{files: map[string][]byte{}} }

func (d *memDisk) Exists(name string) bool { _, ok := d.files[name]; return ok }

func (d *memDisk) Size(name string) (int64, bool) {
	f, ok := d.files[name]
	return int64(len(f)), ok
}

func (d *memDisk) List(prefix string) []string {
	var out []string
	for name := range d.files {
		if strings.HasPrefix(name, prefix) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func (d *memDisk) Read(name string, off int64, n int) ([]byte, error) {
	f, ok := d.files[name]
	if !ok {
		return nil, sim.ErrNotExist
	}
	off = min(off, int64(len(f)))
	return slices.Clone(f[off:min(off+int64(n), int64(len(f)))]), nil
}

func (d *memDisk) ReadFile(name string) ([]byte, error) { return d.Read(name, 0, 1<<30) }

func (d *memDisk) Write(name string, off int64, data []byte) error {
	f := d.files[name]
	if grow := off + int64(len(data)) - int64(len(f)); grow > 0 {
		f = append(f, make([]byte, grow)...)
	}
	copy(f[off:], data)
	d.files[name] = f
	return nil
}

func (d *memDisk) Append(name string, data []byte) (int64, error) {
	off := int64(len(d.files[name]))
	return off, d.Write(name, off, data)
}

func (d *memDisk) WriteFile(name string, data []byte) error {
	d.files[name] = slices.Clone(data)
	return nil
}

func (d *memDisk) Truncate(name string, size int64) error {
	f, ok := d.files[name]
	if !ok {
		return sim.ErrNotExist
	}
	d.files[name] = f[:size]
	return nil
}

func (d *memDisk) Rename(from, to string) error {
	f, ok := d.files[from]
	if !ok {
		return sim.ErrNotExist
	}
	delete(d.files, from)
	d.files[to] = f
	return nil
}

func (d *memDisk) Remove(name string) error {
	if _, ok := d.files[name]; !ok {
		return sim.ErrNotExist
	}
	delete(d.files, name)
	return nil
}

// Fsync and FsyncDir: everything is durable at once, and no FsyncDone
// comes back (the tests here wait for none).
func (d *memDisk) Fsync(string, any)    {}
func (d *memDisk) FsyncDir(string, any) {}

// A checkpoint file reads back as its one frame's payload; a missing one as
// sim.ErrNotExist; one cut short, with a flipped bit, or with a second
// frame after the first as ErrCorrupt.
func TestReadCheckpoint(t *testing.T) {
	good := AppendFrame(nil, []byte("0\n1\norders 0 42\n"))
	flipped := slices.Clone(good)
	flipped[len(flipped)-2] ^= 4
	for _, c := range []struct {
		name    string
		content []byte // nil: no file
		want    string
		err     error
	}{
		{"one frame", good, "0\n1\norders 0 42\n", nil},
		{"an empty payload", AppendFrame(nil, nil), "", nil},
		{"no file", nil, "", sim.ErrNotExist},
		{"cut short", good[:len(good)-1], "", ErrCorrupt},
		{"header only", good[:FrameHeaderBytes], "", ErrCorrupt},
		{"a flipped bit", flipped, "", ErrCorrupt},
		{"two frames", AppendFrame(slices.Clone(good), []byte("x")), "", ErrCorrupt},
		{"empty file", []byte{}, "", ErrCorrupt},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := newMemDisk()
			if c.content != nil {
				d.files["data/ckpt"] = c.content
			}
			got, err := ReadCheckpoint(d, "data/ckpt")
			if !errors.Is(err, c.err) || string(got) != c.want {
				t.Fatalf("got %q, %v; want %q, %v", got, err, c.want, c.err)
			}
		})
	}
}
