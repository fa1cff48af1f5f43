package jsonstr

import (
	"encoding/json"
	"strings"
	"testing"

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
