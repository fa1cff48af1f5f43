package history

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"sort"
)

// segment is a spilled block read back: its operations' bytes as the
// stream held them, their steps, and its side entries. Nothing changes it
// once read, so the strings handed out of it may share its bytes (as those
// out of the stream do).
type segment struct {
	block int
	first int64
	buf   []byte
	pos   []uint32 // where each operation starts in buf
	steps []uint64
	// sideLo is the first side entry's index; side[k] where entry
	// sideLo+k's encoding starts in buf.
	sideLo int
	side   []uint32
	refs   []sideRefs
}

// segCursor is a sequential reader's current segment (Each's own, so that
// two readers at once do not evict each other's from the shared cache).
type segCursor struct{ seg *segment }

var errDamaged = errors.New("a block read back does not match its checksum")

// segmentOf returns the segment holding operation i (spilled), through
// cur when set, else through the shared cache; nil when it cannot be read
// (the error is kept: Err).
func (r *Recorder) segmentOf(cur *segCursor, i int64) *segment {
	d := &r.disk
	if cur != nil && cur.seg != nil && cur.seg.holds(i) {
		return cur.seg
	}
	// The first block ending past i.
	b := sort.Search(len(d.blocks), func(k int) bool { return d.first[k+1] > i })
	if cur != nil {
		cur.seg = r.readBlock(b)
		return cur.seg
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for k, s := range d.cache {
		if s != nil && s.block == b {
			if k > 0 {
				d.cache[0], d.cache[1] = s, d.cache[0]
			}
			return s
		}
	}
	s := r.readBlockLocked(b)
	if s != nil {
		d.cache[0], d.cache[1] = s, d.cache[0]
	}
	return s
}

func (r *Recorder) readBlock(b int) *segment {
	s, err := r.decodeBlock(b)
	if err != nil {
		r.disk.fail(err)
	}
	return s
}

// readBlockLocked is readBlock with the store's lock held.
func (r *Recorder) readBlockLocked(b int) *segment {
	s, err := r.decodeBlock(b)
	if err != nil && r.disk.err == nil {
		r.disk.err = spillError(err)
	}
	return s
}

// decodeBlock reads block b back (encodeBlock wrote it).
func (r *Recorder) decodeBlock(b int) (*segment, error) {
	d := &r.disk
	meta := d.blocks[b]
	buf := make([]byte, meta.n)
	if _, err := d.file.ReadAt(buf, meta.off); err != nil {
		return nil, err
	}
	if len(buf) < 4 {
		return nil, errDamaged
	}
	body := buf[:len(buf)-4]
	if binary.LittleEndian.Uint32(buf[len(buf)-4:]) != crc32.Checksum(body, castagnoli) {
		return nil, errDamaged
	}
	s := &segment{block: b, first: d.first[b], buf: body, refs: meta.refs}
	rd := opReader{b: body}
	n := int(rd.uvarint())
	s.pos = make([]uint32, n)
	at := 0
	for j := range n {
		s.pos[j] = uint32(at)
		at += int(rd.uvarint())
	}
	for j := range s.pos {
		s.pos[j] += uint32(rd.k)
	}
	rd.k += at
	s.steps = make([]uint64, rd.uvarint())
	prev := uint64(0)
	for j := range s.steps {
		prev += uint64(rd.varint())
		s.steps[j] = prev
	}
	s.sideLo = int(rd.uvarint())
	s.side = make([]uint32, rd.uvarint())
	for k := range s.side {
		size := int(rd.uvarint())
		s.side[k] = uint32(rd.k)
		rd.k += size
	}
	return s, nil
}

// holds says whether operation i is the segment's.
func (s *segment) holds(i int64) bool { return i >= s.first && i-s.first < int64(len(s.pos)) }

// op returns operation i's bytes.
func (s *segment) op(i int64) []byte { return s.buf[s.pos[i-s.first]:] }

// step returns operation i's trace step (0 when not recorded).
func (s *segment) step(i int64) uint64 {
	if j := i - s.first; j < int64(len(s.steps)) {
		return s.steps[j]
	}
	return 0
}

// loadSide fills in op from side entry k, as load does from one in
// memory.
func (r *Recorder) loadSide(s *segment, k int, op *Op, scratch *[]Record, spans bool) {
	d := opReader{b: s.buf, k: int(s.side[k-s.sideLo])}
	flags := d.b[d.k]
	d.k++
	var ext *Ext
	if flags&diskRefs != 0 {
		ref := &s.refs[d.uvarint()]
		if ref.records != nil {
			op.Value.Records = ref.records
		}
		ext = ref.ext
	}
	errText := ""
	if flags&diskErr != 0 {
		errText = d.str()
	}
	if flags&diskSpill != 0 {
		op.Type = Type(d.b[d.k])
		d.k++
		op.Value.Key = d.str()
		op.Value.Value = d.str()
	}
	if flags&diskSpanned != 0 && spans {
		op.Value.Records = r.diskRecords(&d, scratch)
	}
	op.Value.Error, op.Value.Ext = errText, ext
}

// diskRecords decodes a poll's records (spannedRecords' counterpart).
func (r *Recorder) diskRecords(d *opReader, scratch *[]Record) []Record {
	n := int(d.uvarint())
	var out []Record
	if scratch != nil && cap(*scratch) >= n {
		out = (*scratch)[:0]
	} else {
		out = make([]Record, 0, n)
		if scratch != nil {
			*scratch = out
		}
	}
	for range n {
		topic := r.spanTopics.names[d.uvarint()]
		partition := int32(d.varint())
		off := d.varint()
		hasKey := d.b[d.k] != 0
		d.k++
		key := d.str()
		value := d.str()
		out = append(out, Record{Topic: topic, Key: key, Value: value, Offset: off, Partition: partition, HasKey: hasKey})
	}
	return out
}

// str reads a length and that many bytes as a string sharing them.
func (r *opReader) str() string {
	n := int(r.uvarint())
	s := text(r.b[r.k:], n)
	r.k += n
	return s
}
