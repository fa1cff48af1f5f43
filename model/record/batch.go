// Package record is Kafka's record batch (magic v2): the unit producers
// send, leaders append, followers copy and readers fetch. Batches are
// immutable once built and shared by pointer between nodes, as the bytes on
// the wire would be; the encoded form is real (varint records, optional gzip
// compression of the records section, CRC32C over attributes to the end), so
// byte counts on the wire and on disk are Kafka's.
//
// A batch keeps only that encoded form and its header's fields: its records
// are decoded from it when asked (Records, PolledRecords), as a Kafka
// consumer decodes what it fetched. Nearly every batch is only appended,
// copied and counted, and a run keeps every one, so holding each record
// decoded beside its bytes would double what the logs keep.
package record

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"

	"kafkasim/internal/byteview"
	"kafkasim/model/storage"
)

// Compression is a batch's compression codec.
type Compression int8

// Codecs (attributes bits 0–2).
const (
	CompressionNone Compression = 0
	CompressionGzip Compression = 1
)

// ParseCompression maps compression.type to a codec.
func ParseCompression(s string) (Compression, error) {
	switch s {
	case "", "none":
		return CompressionNone, nil
	case "gzip":
		return CompressionGzip, nil
	}
	return 0, fmt.Errorf("compression.type %q: supported are none and gzip", s)
}

// String is compression.type's spelling.
func (c Compression) String() string {
	if c == CompressionGzip {
		return "gzip"
	}
	return "none"
}

// Record is one record of a batch.
//
// The fields are ordered largest first, so that a record takes 48 bytes, not
// 56: a producer holds its records until they are acknowledged.
type Record struct {
	// Key and Value are the record's bytes (kept as strings: immutable and
	// shared, as the batches themselves are).
	Key   string
	Value string
	// Timestamp is the producer's CreateTime, in milliseconds.
	Timestamp int64
	// OffsetDelta is the record's offset within its batch: its index, except
	// in batches compaction has thinned.
	OffsetDelta int32
	// HasKey is false for a null key; Tombstone marks a null value.
	HasKey    bool
	Tombstone bool
}

// HeaderBytes is the size of a v2 batch header (baseOffset to recordCount).
const HeaderBytes = 61

// Batch is a record batch.
//
// A run keeps every batch any replica holds (two million in an hour of the
// reference load), so a batch takes 48 bytes: the fields are ordered largest
// first, what only the wire form's readers need (timestamps, CRC, record
// count) is read from the wire form when asked, and the wire form is kept
// as its first byte and length, not as a slice (24 bytes).
type Batch struct {
	BaseOffset int64
	ProducerID int64
	// wireData and wireLen are the encoded batch (wire): the header, then
	// from attributes to the end the body, which the header's CRC covers.
	// Replicas write these very bytes to their disks (nobody changes
	// them), so appending costs no encoding.
	wireData             *byte
	wireLen              uint32
	LastOffsetDelta      int32
	PartitionLeaderEpoch int32
	BaseSequence         int32
	ProducerEpoch        int16
	Transactional        bool
	Control              bool
	Compression          Compression
	// stamped: a leader took the batch into its log (Stamp), so it may not
	// change again.
	stamped bool
}

// The header is 21 bytes (baseOffset, batchLength, partitionLeaderEpoch,
// magic, crc); the leader epoch sits at byte 12.
const (
	wireHeaderBytes = 21
	headerEpochAt   = 12
	headerCRCAt     = 17
)

// Where the body (from attributes on) holds the fields read from it.
const (
	bodyBaseTimestampAt = 6
	bodyMaxTimestampAt  = 14
	bodyRecordCountAt   = 36
)

func (b *Batch) body() []byte { return b.wire()[wireHeaderBytes:] }

// wire is the encoded batch.
func (b *Batch) wire() []byte { return byteview.Of(b.wireData, b.wireLen) }

// setWire makes w the encoded batch.
func (b *Batch) setWire(w []byte) {
	if len(w) > math.MaxUint32 {
		panic(fmt.Sprintf("record: a batch of %d bytes", len(w)))
	}
	b.wireData, b.wireLen = firstByte(w), uint32(len(w))
}

// firstByte is w's first byte, nil for none.
func firstByte(w []byte) *byte {
	if len(w) == 0 {
		return nil
	}
	return &w[0]
}

// putHeader writes the header fields into wire[:21] (or a copy of it),
// the CRC as wire holds it.
func (b *Batch) putHeader(h []byte) {
	crc := b.CRC()
	binary.BigEndian.PutUint64(h[0:], uint64(b.BaseOffset))
	binary.BigEndian.PutUint32(h[8:], b.wireLen-12) // batchLength: bytes after this field
	binary.BigEndian.PutUint32(h[headerEpochAt:], uint32(b.PartitionLeaderEpoch))
	h[16] = 2 // magic
	binary.BigEndian.PutUint32(h[headerCRCAt:], crc)
}

// seal writes the body's CRC and the header into wire.
func (b *Batch) seal() {
	binary.BigEndian.PutUint32(b.wire()[headerCRCAt:], storage.Checksum(b.body()))
	b.putHeader(b.wire())
}

// headerCurrent reports whether wire's header still says what the fields do
// (they are exported; a caller may have set them).
func (b *Batch) headerCurrent() bool {
	w := b.wire()
	return int64(binary.BigEndian.Uint64(w[0:])) == b.BaseOffset &&
		int32(binary.BigEndian.Uint32(w[headerEpochAt:])) == b.PartitionLeaderEpoch
}

// NoProducer marks a batch from a producer without idempotence.
const NoProducer = -1

// Producer identifies an idempotent or transactional producer's batch.
type Producer struct {
	ID           int64
	Epoch        int16
	BaseSequence int32
}

// New builds a batch of records (offsets 0..n-1, relative) from a producer
// (pass Producer{ID: NoProducer} for none), compressed with codec. It
// numbers the records (OffsetDelta) and keeps none of them: the caller may
// reuse the slice.
func New(records []Record, p Producer, transactional bool, codec Compression) *Batch {
	return (*Arena)(nil).New(records, p, transactional, codec)
}

// Compacted returns a batch at the same offsets holding only the records keep
// selects (by offset and key; the key's bytes are the batch's, not to be
// kept or changed): offsets stay, gaps appear (log compaction never
// renumbers). It returns nil if no record is kept, and b itself if all are,
// without decoding a record into strings.
func (b *Batch) Compacted(keep func(offset int64, key []byte, hasKey bool) bool) *Batch {
	drop := make([]bool, b.RecordCount())
	dropped := 0
	b.EachRecord(func(i int, offset int64, key []byte, hasKey bool, _ []byte) {
		if !keep(offset, key, hasKey) {
			drop[i] = true
			dropped++
		}
	})
	if dropped == 0 {
		return b
	}
	if dropped == len(drop) {
		return nil
	}
	all := b.Records()
	kept := all[:0]
	for i, r := range all {
		if !drop[i] {
			kept = append(kept, r)
		}
	}
	c := (*Arena)(nil).build(kept, b.LastOffsetDelta, Producer{ID: b.ProducerID, Epoch: b.ProducerEpoch, BaseSequence: b.BaseSequence}, b.Transactional, b.Compression)
	c.BaseOffset, c.PartitionLeaderEpoch = b.BaseOffset, b.PartitionLeaderEpoch
	c.putHeader(c.wire())
	return c
}

func (a *Arena) build(records []Record, lastOffsetDelta int32, p Producer, transactional bool, codec Compression) *Batch {
	if p.ID == NoProducer {
		p.Epoch, p.BaseSequence = -1, -1
	}
	// A null key or value has no bytes: the fields say what decoding the
	// wire form gives back, so a decoded copy equals the original.
	for i := range records {
		if !records[i].HasKey {
			records[i].Key = ""
		}
		if records[i].Tombstone {
			records[i].Value = ""
		}
	}
	b := a.batch()
	*b = Batch{LastOffsetDelta: lastOffsetDelta, PartitionLeaderEpoch: -1, ProducerID: p.ID,
		ProducerEpoch: p.Epoch, BaseSequence: p.BaseSequence, Transactional: transactional, Compression: codec}
	var baseTimestamp, maxTimestamp int64
	if len(records) > 0 {
		baseTimestamp = records[0].Timestamp
		for _, r := range records {
			maxTimestamp = max(maxTimestamp, r.Timestamp)
		}
	}
	b.setWire(b.encodeWire(a, records, baseTimestamp, maxTimestamp))
	b.seal()
	return b
}

// Stamped returns a copy with the offsets and leader epoch a leader assigns.
// The CRC does not cover them: the body is the same, only the header changes.
func (b *Batch) Stamped(baseOffset int64, leaderEpoch int32) *Batch {
	c := *b
	c.BaseOffset = baseOffset
	c.PartitionLeaderEpoch = leaderEpoch
	c.setWire(append([]byte(nil), b.wire()...))
	c.putHeader(c.wire())
	return &c
}

// Stamp gives a produced batch the offsets and leader epoch its leader
// assigns, for the leader's log: in place the first time, as Kafka's leader
// assigns offsets in the request's own buffer and appends that buffer; a
// copy when a log holds the batch already (a retry, after a leader change
// or without idempotence), so that a batch in a log never changes. The
// producer keeps its pointer but reads only what a stamp leaves alone: the
// records, the producer fields, the sizes and the CRC.
func (b *Batch) Stamp(baseOffset int64, leaderEpoch int32) *Batch {
	if b.stamped {
		c := b.Stamped(baseOffset, leaderEpoch)
		c.stamped = true
		return c
	}
	b.stamped = true
	b.BaseOffset = baseOffset
	b.PartitionLeaderEpoch = leaderEpoch
	b.putHeader(b.wire())
	return b
}

// RecordCount is the number of records the batch holds (the header's
// recordCount): Count, unless compaction thinned it.
func (b *Batch) RecordCount() int {
	return int(binary.BigEndian.Uint32(b.body()[bodyRecordCountAt:]))
}

// BaseTimestamp is the first record's timestamp (ms), the base of the
// records' timestamp deltas.
func (b *Batch) BaseTimestamp() int64 {
	return int64(binary.BigEndian.Uint64(b.body()[bodyBaseTimestampAt:]))
}

// MaxTimestamp is the largest of the records' timestamps (ms).
func (b *Batch) MaxTimestamp() int64 {
	return int64(binary.BigEndian.Uint64(b.body()[bodyMaxTimestampAt:]))
}

// Thinned reports whether compaction removed records from the batch, so
// that its records' offsets are no longer BaseOffset plus their index.
func (b *Batch) Thinned() bool { return b.RecordCount() < b.Count() }

// Records decodes the batch's records (a new slice each call; keys and
// values share one string).
func (b *Batch) Records() []Record {
	section := b.section()
	// One string for the whole section: the records' keys and values are
	// substrings of it.
	text := string(section)
	n, baseTimestamp := b.RecordCount(), b.BaseTimestamp()
	out := make([]Record, 0, n)
	b.walk(section, n, func(_ int, raw rawRecord) { out = append(out, raw.record(text, baseTimestamp)) })
	return out
}

// EachRecord calls fn with each record's index, offset, key and value,
// decoded in place: the bytes are the batch's own (or decompressed for this
// call), which nobody ever changes; fn must not change them either.
func (b *Batch) EachRecord(fn func(i int, offset int64, key []byte, hasKey bool, value []byte)) {
	section := b.section()
	b.walk(section, b.RecordCount(), func(i int, raw rawRecord) {
		fn(i, b.BaseOffset+raw.offsetDelta, section[raw.keyAt:raw.keyEnd], raw.hasKey, section[raw.valueAt:raw.valueEnd])
	})
}

// PolledRecords calls yield with the offset, key and value of records
// [lo, hi), in order: a batch is what a reader's poll returns records from,
// and the history keeps a reference to it (history.RecordSource) rather
// than a copy of each record. The key and value are the batch's own bytes
// (or, compressed, bytes decompressed for this call), which nobody ever
// changes: yield must not change them either.
//
// It is walk written out, without its callback: the history's reader
// decodes here every record every poll returned.
func (b *Batch) PolledRecords(lo, hi int, yield func(offset int64, key []byte, hasKey bool, value []byte)) {
	section := b.section()
	at := 0
	for i := range hi {
		rest := section[at:]
		raw, size, ok := decodeSmallRecord(rest)
		if !ok {
			var err error
			if raw, size, err = decodeAnyRecord(rest); err != nil {
				panic(fmt.Sprintf("record: batch at %d: %v", b.BaseOffset, err))
			}
		}
		if i >= lo {
			yield(b.BaseOffset+raw.offsetDelta, rest[raw.keyAt:raw.keyEnd], raw.hasKey, rest[raw.valueAt:raw.valueEnd])
		}
		at += size
	}
}

// section is the records section, decompressed. The batch's bytes were
// checked when it was built or decoded, so damage here is the simulator's
// bug.
func (b *Batch) section() []byte {
	section, err := b.recordsSection()
	if err != nil {
		panic(fmt.Sprintf("record: batch at %d: %v", b.BaseOffset, err))
	}
	return section
}

// walk decodes the section's first n records (see section).
func (b *Batch) walk(section []byte, n int, fn func(i int, raw rawRecord)) {
	if err := walkRecords(section, n, fn); err != nil {
		panic(fmt.Sprintf("record: batch at %d: %v", b.BaseOffset, err))
	}
}

// recordsSection is the records as encoded, decompressed.
func (b *Batch) recordsSection() ([]byte, error) {
	recs := b.wire()[HeaderBytes:]
	if b.Compression != CompressionGzip {
		return recs, nil
	}
	r, err := gzip.NewReader(bytes.NewReader(recs))
	if err != nil {
		return nil, ErrCorrupt
	}
	out, err := io.ReadAll(r)
	if err != nil {
		return nil, ErrCorrupt
	}
	return out, nil
}

// LastOffset is the offset of the batch's last record.
func (b *Batch) LastOffset() int64 { return b.BaseOffset + int64(b.LastOffsetDelta) }

// NextOffset is the offset after the batch.
func (b *Batch) NextOffset() int64 { return b.LastOffset() + 1 }

// Count is the number of records the batch spans (compaction may have
// removed some; len(Records) is what is left).
func (b *Batch) Count() int { return int(b.LastOffsetDelta) + 1 }

// LastSequence is the sequence of the batch's last record.
func (b *Batch) LastSequence() int32 {
	if b.BaseSequence < 0 {
		return -1
	}
	return int32((int64(b.BaseSequence) + int64(b.LastOffsetDelta)) % (1 << 31))
}

// SizeBytes is the batch's encoded size: header plus records section.
func (b *Batch) SizeBytes() int { return int(b.wireLen) }

// RecordsBytes is the size of the (possibly compressed) records section.
func (b *Batch) RecordsBytes() int { return int(b.wireLen) - HeaderBytes }

// CRC is the batch's CRC32C.
func (b *Batch) CRC() uint32 { return binary.BigEndian.Uint32(b.wire()[headerCRCAt:]) }

func (b *Batch) attributes() uint16 {
	a := uint16(b.Compression) & 7
	if b.Transactional {
		a |= 1 << 4
	}
	if b.Control {
		a |= 1 << 5
	}
	return a
}

// encodeWire lays out the batch: room for the header, then attributes ..
// end, compressing the records section.
func (b *Batch) encodeWire(a *Arena, records []Record, baseTimestamp, maxTimestamp int64) []byte {
	size := 0
	if b.Compression != CompressionGzip {
		for _, r := range records {
			size += recordSize(r, int64(r.OffsetDelta), r.Timestamp-baseTimestamp)
		}
	}
	if b.Compression == CompressionGzip {
		a = nil // the compressed records are appended: no room to carve ahead
	}
	out := a.wire(HeaderBytes, size)
	body := out[wireHeaderBytes:]
	binary.BigEndian.PutUint16(body[0:], b.attributes())
	binary.BigEndian.PutUint32(body[2:], uint32(b.LastOffsetDelta))
	binary.BigEndian.PutUint64(body[bodyBaseTimestampAt:], uint64(baseTimestamp))
	binary.BigEndian.PutUint64(body[bodyMaxTimestampAt:], uint64(maxTimestamp))
	binary.BigEndian.PutUint64(body[22:], uint64(b.ProducerID))
	binary.BigEndian.PutUint16(body[30:], uint16(b.ProducerEpoch))
	binary.BigEndian.PutUint32(body[32:], uint32(b.BaseSequence))
	binary.BigEndian.PutUint32(body[bodyRecordCountAt:], uint32(len(records)))
	if b.Compression == CompressionGzip {
		var recs []byte
		for _, r := range records {
			recs = appendRecord(recs, r, int64(r.OffsetDelta), r.Timestamp-baseTimestamp)
		}
		return append(out, gzipBytes(recs)...)
	}
	for _, r := range records {
		out = appendRecord(out, r, int64(r.OffsetDelta), r.Timestamp-baseTimestamp)
	}
	return out
}

// recordBodySize is the size of a record after its length varint.
func recordBodySize(r Record, offsetDelta, timestampDelta int64) int {
	n := 1 + varintSize(timestampDelta) + varintSize(offsetDelta) + 1 // attributes, deltas, no headers
	n += fieldSize(r.Key, r.HasKey) + fieldSize(r.Value, !r.Tombstone)
	return n
}

func recordSize(r Record, offsetDelta, timestampDelta int64) int {
	n := recordBodySize(r, offsetDelta, timestampDelta)
	return varintSize(int64(n)) + n
}

func fieldSize(s string, present bool) int {
	if !present {
		return varintSize(-1)
	}
	return varintSize(int64(len(s))) + len(s)
}

// varintSize is the length of v's zig-zag varint (binary.PutVarint's).
func varintSize(v int64) int {
	u := uint64(v<<1) ^ uint64(v>>63)
	return max(1, (bits.Len64(u)+6)/7)
}

func appendRecord(buf []byte, r Record, offsetDelta, timestampDelta int64) []byte {
	buf = binary.AppendVarint(buf, int64(recordBodySize(r, offsetDelta, timestampDelta)))
	buf = append(buf, 0) // attributes
	buf = binary.AppendVarint(buf, timestampDelta)
	buf = binary.AppendVarint(buf, offsetDelta)
	buf = appendField(buf, r.Key, r.HasKey)
	buf = appendField(buf, r.Value, !r.Tombstone)
	return binary.AppendUvarint(buf, 0) // no headers
}

func appendField(buf []byte, s string, present bool) []byte {
	if !present {
		return binary.AppendVarint(buf, -1)
	}
	buf = binary.AppendVarint(buf, int64(len(s)))
	return append(buf, s...)
}

func gzipBytes(b []byte) []byte {
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

// Encode appends the batch's full v2 bytes, header then body, to buf.
func (b *Batch) Encode(buf []byte) []byte {
	if !b.headerCurrent() {
		var h [wireHeaderBytes]byte
		b.putHeader(h[:])
		return append(append(buf, h[:]...), b.body()...)
	}
	return append(buf, b.wire()...)
}

// Wire is the batch's full v2 bytes, shared: the caller must not change them.
func (b *Batch) Wire() []byte {
	if !b.headerCurrent() {
		return b.Encode(nil)
	}
	return b.wire()
}

// Decoding errors.
var (
	ErrTruncated = errors.New("record batch truncated")
	ErrCorrupt   = errors.New("record batch failed its CRC")
)

// Decode reads one batch from the start of data and returns it and its size.
// A short batch is ErrTruncated; a checksum mismatch ErrCorrupt (Kafka's
// CorruptRecordException, found on recovery or read).
func Decode(data []byte) (*Batch, int, error) {
	if len(data) < HeaderBytes {
		return nil, 0, ErrTruncated
	}
	length := int(binary.BigEndian.Uint32(data[8:]))
	size := 12 + length
	if length < HeaderBytes-12 || size > len(data) {
		return nil, 0, ErrTruncated
	}
	if data[16] != 2 {
		return nil, 0, ErrCorrupt
	}
	crc := binary.BigEndian.Uint32(data[headerCRCAt:])
	if storage.Checksum(data[wireHeaderBytes:size]) != crc {
		return nil, 0, ErrCorrupt
	}
	b := &Batch{
		BaseOffset:           int64(binary.BigEndian.Uint64(data[0:])),
		PartitionLeaderEpoch: int32(binary.BigEndian.Uint32(data[headerEpochAt:])),
	}
	b.setWire(append([]byte(nil), data[:size]...))
	body := b.body()
	attrs := binary.BigEndian.Uint16(body[0:])
	b.Compression = Compression(attrs & 7)
	b.Transactional = attrs&(1<<4) != 0
	b.Control = attrs&(1<<5) != 0
	b.LastOffsetDelta = int32(binary.BigEndian.Uint32(body[2:]))
	b.ProducerID = int64(binary.BigEndian.Uint64(body[22:]))
	b.ProducerEpoch = int16(binary.BigEndian.Uint16(body[30:]))
	b.BaseSequence = int32(binary.BigEndian.Uint32(body[32:]))
	count := int(int32(binary.BigEndian.Uint32(body[bodyRecordCountAt:])))
	recs, err := b.recordsSection()
	if err != nil {
		return nil, 0, err
	}
	if count < 0 || count > len(recs) {
		return nil, 0, ErrCorrupt
	}
	// The records are checked here, once, and decoded again when asked.
	n := 0
	if err := walkRecords(recs, count, func(int, rawRecord) { n++ }); err != nil || n != count {
		return nil, 0, ErrCorrupt
	}
	return b, size, nil
}

// varint is binary.Varint, a one-byte value (most of a record's: lengths,
// deltas) decoded inline.
func varint(b []byte) (int64, int) {
	if len(b) > 0 && b[0] < 0x80 {
		return int64(b[0]>>1) ^ -int64(b[0]&1), 1
	}
	return binary.Varint(b)
}

// rawRecord is a decoded record whose key and value are still positions
// in the records section.
type rawRecord struct {
	timestampDelta, offsetDelta int64
	keyAt, keyEnd               int
	valueAt, valueEnd           int
	hasKey, hasValue            bool
}

// record is the Record, its key and value cut from text (the section as a
// string).
func (r rawRecord) record(text string, baseTimestamp int64) Record {
	return Record{OffsetDelta: int32(r.offsetDelta), Key: text[r.keyAt:r.keyEnd], HasKey: r.hasKey,
		Value: text[r.valueAt:r.valueEnd], Tombstone: !r.hasValue, Timestamp: baseTimestamp + r.timestampDelta}
}

// field decodes the length-prefixed field at pos of rec: where its bytes
// are (a negative length is a null field, present false, at its end) and
// whether it fits.
func field(rec []byte, pos int) (at, end int, present, ok bool) {
	l, k := varint(rec[pos:])
	if k <= 0 {
		return 0, 0, false, false
	}
	at = pos + k
	if l < 0 {
		return at, at, false, true
	}
	if int64(len(rec)-at) < l {
		return 0, 0, false, false
	}
	return at, at + int(l), true, true
}

// walkRecords decodes the first n records of a records section and calls
// fn with each and its index.
func walkRecords(section []byte, n int, fn func(i int, r rawRecord)) error {
	at := 0
	for i := range n {
		r, size, err := decodeRecord(section[at:])
		if err != nil {
			return err
		}
		r.keyAt, r.keyEnd = r.keyAt+at, r.keyEnd+at
		r.valueAt, r.valueEnd = r.valueAt+at, r.valueEnd+at
		fn(i, r)
		at += size
	}
	return nil
}

// decodeRecord decodes the record at the start of data: positions are
// relative to data.
func decodeRecord(data []byte) (rawRecord, int, error) {
	if r, end, ok := decodeSmallRecord(data); ok {
		return r, end, nil
	}
	return decodeAnyRecord(data)
}

// decodeSmallRecord decodes a record shorter than 64 bytes (its length a
// one-byte varint) whose other varints (deltas, key and value lengths) take
// one or two bytes, as nearly all of a run's do, without a call per field;
// ok is false for any other (decodeAnyRecord decodes it, or finds it
// corrupt), and its result then means nothing.
func decodeSmallRecord(data []byte) (r rawRecord, end int, ok bool) {
	if len(data) == 0 || data[0] >= 0x80 || data[0]&1 != 0 {
		return r, 0, false
	}
	end = 1 + int(data[0]>>1)
	if end > len(data) {
		return r, 0, false
	}
	rec := data[:end]
	pos := 2 // past the length and the attributes
	var l int64
	if r.timestampDelta, pos, ok = shortVarint(rec, pos); !ok {
		return r, 0, false
	}
	if r.offsetDelta, pos, ok = shortVarint(rec, pos); !ok {
		return r, 0, false
	}
	if l, pos, ok = shortVarint(rec, pos); !ok {
		return r, 0, false
	}
	r.keyAt, r.keyEnd = pos, pos
	if l >= 0 {
		if int64(end-pos) < l {
			return r, 0, false
		}
		r.keyEnd, r.hasKey = pos+int(l), true
	}
	if l, pos, ok = shortVarint(rec, r.keyEnd); !ok {
		return r, 0, false
	}
	r.valueAt, r.valueEnd = pos, pos
	if l >= 0 {
		if int64(end-pos) < l {
			return r, 0, false
		}
		r.valueEnd, r.hasValue = pos+int(l), true
	}
	return r, end, true
}

// shortVarint is binary.Varint of b[pos:] when it takes one or two bytes,
// with the position after it; ok is false otherwise.
func shortVarint(b []byte, pos int) (v int64, next int, ok bool) {
	if pos >= len(b) {
		return 0, pos, false
	}
	u := uint64(b[pos])
	if u >= 0x80 {
		if pos+1 >= len(b) || b[pos+1] >= 0x80 {
			return 0, pos, false
		}
		u = u&0x7f | uint64(b[pos+1])<<7
		pos++
	}
	return int64(u>>1) ^ -int64(u&1), pos + 1, true
}

// decodeAnyRecord is decodeRecord for any bytes.
func decodeAnyRecord(data []byte) (rawRecord, int, error) {
	length, n := varint(data)
	if n <= 0 || length < 0 || int(length) > len(data)-n {
		return rawRecord{}, 0, ErrCorrupt
	}
	end := n + int(length)
	rec := data[:end]
	pos := min(n+1, end) // past the attributes
	// Written out, not as closures: every record a run reads is decoded
	// here, by the checker, the history's writer and the report.
	var r rawRecord
	var k int
	if r.timestampDelta, k = varint(rec[pos:]); k <= 0 {
		return rawRecord{}, 0, ErrCorrupt
	}
	pos += k
	if r.offsetDelta, k = varint(rec[pos:]); k <= 0 {
		return rawRecord{}, 0, ErrCorrupt
	}
	pos += k
	var ok bool
	if r.keyAt, r.keyEnd, r.hasKey, ok = field(rec, pos); !ok {
		return rawRecord{}, 0, ErrCorrupt
	}
	if r.valueAt, r.valueEnd, r.hasValue, ok = field(rec, r.keyEnd); !ok {
		return rawRecord{}, 0, ErrCorrupt
	}
	return r, end, nil
}
