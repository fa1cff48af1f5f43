// Package jsonstr appends a string as a JSON string literal. The run store
// writes a line per event (the trace) and per operation (the history), so
// this is on the path of every record: strings that need no escape, nearly
// all of them, are copied whole.
//
// Escapes: '"' and '\' are backslashed, a newline is \n, every other control
// character (and DEL) is \u00XX, and bytes that are not UTF-8 become \ufffd
// as encoding/json writes them. Everything else, non-ASCII text included,
// is copied as it is.
package jsonstr

import "unicode/utf8"

const hex = "0123456789abcdef"

// Append appends s, a string or bytes, to b as a JSON string literal.
func Append[S ~string | ~[]byte](b []byte, s S) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		for i+8 <= len(s) && plain8(load8(s[i:i+8])) {
			i += 8 // eight bytes copied as they are, found in one test
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			i++
			continue
		}
		if c >= 0x80 {
			r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
			if r != utf8.RuneError || size != 1 {
				i += size
				continue
			}
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// load8 reads the eight bytes of t as one word, a byte a lane.
func load8[S ~string | ~[]byte](t S) uint64 {
	_ = t[7]
	return uint64(t[0]) | uint64(t[1])<<8 | uint64(t[2])<<16 | uint64(t[3])<<24 |
		uint64(t[4])<<32 | uint64(t[5])<<40 | uint64(t[6])<<48 | uint64(t[7])<<56
}

// plain8 reports whether all eight bytes of w are ones Append copies as
// they are (0x20 to 0x7e, but '"' and '\\'): the byte loop's first test, eight
// at once. A trace line's detail is mostly such text, and testing it a
// byte at a time was 8 % of the instructions of a run of
// big-cluster-3000.yaml. Each term is exact about whether some lane holds
// such a byte (v - ones &^ v has a lane's high bit set where v's lane is
// zero, or below it when a lower lane is), which is all that is asked.
func plain8(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q, bs, del := w^'"'*ones, w^'\\'*ones, w^0x7f*ones
	return (w|(w-0x20*ones)&^w|(q-ones)&^q|(bs-ones)&^bs|(del-ones)&^del)&highs == 0
}
