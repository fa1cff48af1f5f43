package history

import "unsafe"

// The text arena holds the keys and values of a recorder's operations, so
// that a slot refers to them by position instead of holding two strings:
// a history of millions of operations then has no pointer for the
// collector to follow. A send's completion copies its invocation's bytes
// again: finding them (a table of recent texts) cost a cache miss per
// operation, more than the 15 or so bytes it saved.
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
)

// textMaxChunks keeps positions within 32 bits (tests lower it, to fill an
// arena).
var textMaxChunks = 1 << (32 - textChunkShift)

type textArena struct {
	// chunks are made at their full length; used says how much of each
	// is written. Lengths kept apart from the chunks' slice headers mean
	// that recording an operation stores no pointer (no write barrier
	// while the collector marks).
	chunks [][]byte
	used   []int
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
	c := len(a.chunks) - 1
	if c < 0 || a.used[c]+n > textChunkBytes {
		if c+1 == textMaxChunks {
			return 0, textSpilled, 0
		}
		size := textChunkBytes
		if c < 0 {
			size = max(textFirstBytes, n)
		}
		a.chunks, a.used = append(a.chunks, make([]byte, size)), append(a.used, 0)
		c++
	}
	chunk, u := a.chunks[c], a.used[c]
	if u+n > len(chunk) {
		// Only the first chunk grows, by doubling: the strings handed out
		// of the old array keep it, unchanged.
		grown := make([]byte, min(max(2*len(chunk), u+n), textChunkBytes))
		copy(grown, chunk[:u])
		a.chunks[c], chunk = grown, grown
	}
	copy(chunk[u:], key)
	copy(chunk[u+len(key):], value)
	a.used[c] = u + n
	return uint32(c<<textChunkShift | u), uint16(len(key)), uint16(len(value))
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
