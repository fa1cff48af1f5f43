package jsonstr

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"pgregory.net/rapid"
)

// Whatever the bytes, the literal is JSON that decodes to the string, with
// invalid UTF-8 replaced as encoding/json replaces it.
func TestAppendIsJSONThatDecodesToTheString(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.OneOf(
			rapid.String(),
			rapid.StringMatching(`[ -~]{0,40}`),
			rapid.Map(rapid.SliceOf(rapid.Byte()), func(b []byte) string { return string(b) }),
		).Draw(t, "s")
		lit := Append([]byte("x"), s)
		if fromBytes := Append([]byte("x"), []byte(s)); string(fromBytes) != string(lit) {
			t.Fatalf("%q as bytes gave %s, as a string %s", s, fromBytes, lit)
		}
		if lit[0] != 'x' {
			t.Fatalf("the buffer's start was overwritten")
		}
		var got string
		if err := json.Unmarshal(lit[1:], &got); err != nil {
			t.Fatalf("%q gave %s, not JSON: %v", s, lit[1:], err)
		}
		if got != validPerByte(s) {
			t.Fatalf("%q gave %s, which decodes to %q", s, lit[1:], got)
		}
	})
}

// validPerByte replaces each byte that is not UTF-8 by U+FFFD, as
// encoding/json does.
func validPerByte(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r)
	}
	return b.String()
}

func TestAppendCopiesPlainTextAsItIs(t *testing.T) {
	for _, s := range []string{"", "orders-3", "p-0:12345 payload", "brøker ✓", `a"b\c`, "line\nnext", "tab\there\x01"} {
		want := map[string]string{
			`a"b\c`:         `"a\"b\\c"`,
			"line\nnext":    `"line\nnext"`,
			"tab\there\x01": `"tab\u0009here\u0001"`,
		}[s]
		if want == "" {
			want = `"` + s + `"`
		}
		if got := string(Append(nil, s)); got != want {
			t.Errorf("Append(%q) = %s, want %s", s, got, want)
		}
	}
}

// The eight-byte test skips exactly what the byte loop copies as it is:
// whatever bytes fall on either side of an eight-byte boundary, the
// literal is the one a byte at a time makes.
func TestAppendAsTheByteLoopWrites(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		alphabet := []byte("ab ~}\"\\\x00\x1f\x20\x7f\x80\xc3\xa9\xe2\x9c\x93\xff\n")
		b := rapid.SliceOfN(rapid.SampledFrom(alphabet), 0, 40).Draw(t, "b")
		pad := rapid.IntRange(0, 9).Draw(t, "pad")
		s := strings.Repeat("p", pad) + string(b) + strings.Repeat("q", rapid.IntRange(0, 9).Draw(t, "tail"))
		if got, want := string(Append(nil, s)), string(appendByteByByte(nil, s)); got != want {
			t.Fatalf("%q: %s, want %s", s, got, want)
		}
	})
	for c := range 256 { // every byte, in every lane
		for lane := range 8 {
			s := []byte("abcdefghijklmnop")
			s[lane+4] = byte(c)
			if got, want := string(Append(nil, s)), string(appendByteByByte(nil, string(s))); got != want {
				t.Fatalf("byte %#x in lane %d: %s, want %s", c, lane, got, want)
			}
		}
	}
}

// appendByteByByte is Append without the eight-byte test.
func appendByteByByte(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			i++
			continue
		}
		if c >= 0x80 {
			r, size := utf8.DecodeRuneInString(s[i:min(i+utf8.UTFMax, len(s))])
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
