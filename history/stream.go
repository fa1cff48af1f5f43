package history

import (
	"encoding/binary"
	"unsafe"
)

// The operation stream holds a recorder's operations, each encoded in a
// few bytes (Recorder.addAs, with an opHead): its flags, then varints — time, process, function,
// isolation, topic, partition, offset, side entry — then its key and value
// bytes. A send takes about 28 bytes where a fixed slot and its text took
// 53, and the stream holds no pointer for the collector to follow.
//
// Bytes are appended and never written again; a string handed out by get
// points into them (unsafe.String), which is sound because nothing ever
// changes a stream byte once written. The stream is chunked so that
// growing it never moves what is written (the first chunk alone grows by
// copying, from a few kilobytes, so that a short history stays small; the
// strings handed out of an outgrown copy keep that copy alive, unchanged).
// An operation never straddles two chunks.

const (
	streamChunkShift = 16 // 64 KiB per chunk
	streamChunkBytes = 1 << streamChunkShift
	streamChunkMask  = streamChunkBytes - 1
	streamFirstBytes = 4 << 10
)

// streamMaxChunks keeps positions within 32 bits: 4 GiB of operations,
// some 150 million (tests lower it, to fill a stream).
var streamMaxChunks = 1 << (32 - streamChunkShift)

type opStream struct {
	// chunks are made at their full length; used says how much of each
	// is written. Lengths kept apart from the chunks' slice headers mean
	// that recording an operation stores no pointer (no write barrier
	// while the collector marks).
	chunks [][]byte
	used   []int
}

// put appends the concatenation of parts (at most streamChunkBytes bytes
// in all) and returns where it starts; ok is false when the stream is full.
func (s *opStream) put(head []byte, key, value string) (pos uint32, ok bool) {
	n := len(head) + len(key) + len(value)
	c := len(s.chunks) - 1
	if c < 0 || s.used[c]+n > streamChunkBytes {
		if c+1 == streamMaxChunks {
			return 0, false
		}
		size := streamChunkBytes
		if c < 0 {
			size = max(streamFirstBytes, n)
		}
		s.chunks, s.used = append(s.chunks, make([]byte, size)), append(s.used, 0)
		c++
	}
	chunk, u := s.chunks[c], s.used[c]
	if u+n > len(chunk) {
		// Only the first chunk grows, by doubling: the strings handed out
		// of the old array keep it, unchanged.
		grown := make([]byte, min(max(2*len(chunk), u+n), streamChunkBytes))
		copy(grown, chunk[:u])
		s.chunks[c], chunk = grown, grown
	}
	k := u + copy(chunk[u:], head)
	k += copy(chunk[k:], key)
	copy(chunk[k:], value)
	s.used[c] = u + n
	return uint32(c<<streamChunkShift | u), true
}

// at returns the stream from pos to the end of its chunk.
func (s *opStream) at(pos uint32) []byte {
	return s.chunks[pos>>streamChunkShift][pos&streamChunkMask:]
}

// text returns the n bytes at b's start as a string sharing them: b must
// never change (the stream's bytes, a record source's).
func text(b []byte, n int) string {
	if n == 0 {
		return ""
	}
	return unsafe.String(&b[0], n)
}

// opHead is an operation's encoding before its key and value: a flags byte
// and up to eight varints and two lengths.
type opHead struct {
	b [1 + 10*binary.MaxVarintLen64]byte
	n int
}

// uvarint and varint append v as encoding/binary does; most fields are
// small numbers (names' ids, partitions, times within their group), one
// byte each, written without binary's loop.
func (h *opHead) uvarint(v uint64) {
	if v < 0x80 && h.n < len(h.b) {
		h.b[h.n] = byte(v)
		h.n++
		return
	}
	h.n += binary.PutUvarint(h.b[h.n:], v)
}

func (h *opHead) varint(v int64) { h.uvarint(uint64(v)<<1 ^ uint64(v>>63)) }

// opReader decodes an operation's fields in the order they were written.
type opReader struct {
	b []byte
	k int
}

// uvarint is binary.Uvarint for the stream's own bytes (well formed, so
// without its checks): small enough to inline, so that decoding a header
// costs no call per field.
func (r *opReader) uvarint() uint64 {
	b, k := r.b, r.k
	if c := b[k]; c < 0x80 {
		r.k = k + 1
		return uint64(c) // most fields: one byte
	}
	v := uint64(b[k] & 0x7f)
	for s := uint(7); ; s += 7 {
		k++
		c := b[k]
		v |= uint64(c&0x7f) << s
		if c < 0x80 {
			r.k = k + 1
			return v
		}
	}
}

// varint reads a zig-zag varint (unzigzag of uvarint: header writes that
// out, so that uvarint inlines there).
func (r *opReader) varint() int64 { return unzigzag(r.uvarint()) }

func unzigzag(u uint64) int64 { return int64(u>>1) ^ -int64(u&1) }

// size is how many bytes the stream spans, its chunks' unused ends
// included.
func (s *opStream) size() int64 {
	if len(s.chunks) == 0 {
		return 0
	}
	c := len(s.chunks) - 1
	return int64(c)<<streamChunkShift + int64(s.used[c])
}
