package history

import "unsafe"

// The text arena holds the keys and values of a recorder's operations, so
// that a slot refers to them by position instead of holding two strings:
// a history of millions of operations then has no pointer for the
// collector to follow, and a send's completion shares its invocation's
// bytes instead of copying them.
//
// Bytes are appended and never written again; a string handed out by get
// points into them (unsafe.String), which is sound because nothing ever
// changes an arena byte once written. The arena is chunked so that growing
// it never moves what is written (the first chunk alone grows by copying,
// from a few kilobytes, so that a short history stays small; the strings
// handed out of an outgrown copy keep that copy alive, unchanged).

const (
	textChunkShift = 20 // 1 MiB per chunk
	textChunkBytes = 1 << textChunkShift
	textChunkMask  = textChunkBytes - 1
	textFirstBytes = 4 << 10
	// textRecentShift: the arena remembers 16,384 recent texts to share
	// (a cluster's producers have thousands of sends in flight).
	textRecentShift = 14
)

// textMaxChunks keeps positions within 32 bits (tests lower it, to fill an
// arena).
var textMaxChunks = 1 << (32 - textChunkShift)

type textArena struct {
	chunks [][]byte
	// recent remembers, by a hash of the value, where a recent key and
	// value were written: a send's completion finds its invocation's
	// bytes there. A miss only costs a copy.
	recent []textRef
}

// textRef is a key and value in the arena; len 0 means none remembered.
type textRef struct {
	pos              uint32
	keyLen, valueLen uint16
}

// put stores key and value and returns where. It returns keyLen textSpilled
// when they cannot be held (a length past a slot's field, or the arena is
// full): the caller keeps them in the side entry.
func (a *textArena) put(key, value string) (pos uint32, keyLen, valueLen uint16) {
	n := len(key) + len(value)
	if n == 0 {
		return 0, 0, 0
	}
	if len(key) >= textSpilled || len(value) >= textSpilled {
		return 0, textSpilled, 0
	}
	if a.recent == nil {
		a.recent = make([]textRef, 1<<textRecentShift)
	}
	// Each hash has a pair of entries, the most recent first.
	h := textHash(key, value) &^ 1
	for _, ref := range a.recent[h : h+2] {
		// An empty entry cannot match: n > 0.
		if ref.keyLen == uint16(len(key)) && ref.valueLen == uint16(len(value)) {
			if k, v := a.get(ref.pos, ref.keyLen, ref.valueLen); k == key && v == value {
				return ref.pos, ref.keyLen, ref.valueLen
			}
		}
	}
	c := len(a.chunks) - 1
	if c < 0 || len(a.chunks[c])+n > textChunkBytes {
		if c+1 == textMaxChunks {
			return 0, textSpilled, 0
		}
		size := textChunkBytes
		if c < 0 {
			size = max(textFirstBytes, n)
		}
		a.chunks = append(a.chunks, make([]byte, 0, size))
		c++
	}
	chunk := a.chunks[c]
	pos = uint32(c<<textChunkShift | len(chunk))
	chunk = append(chunk, key...) // only the first chunk ever grows
	a.chunks[c] = append(chunk, value...)
	ref := textRef{pos: pos, keyLen: uint16(len(key)), valueLen: uint16(len(value))}
	a.recent[h+1], a.recent[h] = a.recent[h], ref
	return pos, ref.keyLen, ref.valueLen
}

// get returns the key and value stored at pos.
func (a *textArena) get(pos uint32, keyLen, valueLen uint16) (key, value string) {
	if keyLen == 0 && valueLen == 0 {
		return "", ""
	}
	b := a.chunks[pos>>textChunkShift][pos&textChunkMask:]
	if keyLen > 0 {
		key = unsafe.String(&b[0], int(keyLen))
	}
	if valueLen > 0 {
		value = unsafe.String(&b[keyLen], int(valueLen))
	}
	return key, value
}

// textHash picks the recent entry of a key and value: FNV-1a over the
// value's last 16 bytes (a workload's values differ at their end) and the
// lengths.
func textHash(key, value string) uint32 {
	h := uint32(2166136261)
	tail := value
	if len(tail) > 16 {
		tail = tail[len(tail)-16:]
	}
	for i := 0; i < len(tail); i++ {
		h = (h ^ uint32(tail[i])) * 16777619
	}
	h = (h ^ uint32(len(key))) * 16777619
	h = (h ^ uint32(len(value))) * 16777619
	return (h ^ h>>textRecentShift) & (1<<textRecentShift - 1)
}
