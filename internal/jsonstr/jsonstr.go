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
