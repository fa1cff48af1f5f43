package history

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

func gzipped(t *testing.T, text string) []byte {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	if _, err := w.Write([]byte(text)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const twoSends = `{"index":0,"time":1,"process":"p-0","type":"invoke","f":"send","value":{"topic":"t","value":"a"}}
{"index":1,"time":2,"process":"p-0","type":"ok","f":"send","value":{"topic":"t","partition":0,"value":"a","offset":0}}
`

const twoPolls = `{"index":2,"time":3,"process":"c-0","type":"invoke","f":"poll","value":{}}
{"index":3,"time":4,"process":"c-0","type":"ok","f":"poll","value":{"records":[{"topic":"t","partition":0,"offset":0,"value":"a"}]}}
`

// A history reads the same compressed or plain, told apart by its first
// bytes whatever the file is called; streams written one after another (cat
// a.gz b.gz) read as one.
func TestCompressedHistoriesReadAsPlainOnes(t *testing.T) {
	plain, err := ReadAll(strings.NewReader(twoSends + twoPolls))
	if err != nil || len(plain) != 4 {
		t.Fatalf("plain: %d operations, %v", len(plain), err)
	}
	for name, in := range map[string][]byte{
		"one stream":  gzipped(t, twoSends+twoPolls),
		"two streams": append(gzipped(t, twoSends), gzipped(t, twoPolls)...),
	} {
		ops, err := ReadAll(bytes.NewReader(in))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var a, b bytes.Buffer
		Write(&a, plain)
		Write(&b, ops)
		if a.String() != b.String() {
			t.Fatalf("%s reads as\n%s\nnot\n%s", name, b.String(), a.String())
		}
	}
	if ops, err := ReadAll(bytes.NewReader(nil)); err != nil || len(ops) != 0 {
		t.Fatalf("an empty input: %d operations, %v", len(ops), err)
	}
}

// A malformed compressed stream is malformed input: a *ParseError naming
// the line reading stopped at.
func TestMalformedCompressedHistoriesNameTheLine(t *testing.T) {
	whole := gzipped(t, twoSends+twoPolls)
	bad := bytes.Clone(whole)
	bad[len(bad)-6] ^= 0xff // the checksum
	for _, c := range []struct {
		name string
		in   []byte
		want string
	}{
		{"cut short", whole[:len(whole)-10], "line 4: gzip: the stream is cut short"},
		{"cut in its header", whole[:5], "line 1: gzip: the stream is cut short"},
		{"a wrong checksum", bad, "line 5: gzip: "},
		{"no header after the magic bytes", []byte{0x1f, 0x8b, 'x'}, "line 1: gzip: "},
		{"trailing bytes that are no stream", append(bytes.Clone(whole), "{}\n"...), "line 5: gzip: "},
	} {
		_, err := ReadAll(bytes.NewReader(c.in))
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want a parse error containing %q", c.name, err, c.want)
		}
	}
}

// A malformed line is reported as such even when the stream breaks further
// on (the scanner has read past it).
func TestAMalformedLineBeforeABrokenStreamIsTheError(t *testing.T) {
	text := twoSends + "{oops\n" + strings.Repeat(twoPolls, 100)
	whole := gzipped(t, text)
	_, err := ReadAll(bytes.NewReader(whole[:len(whole)-100]))
	if err == nil || !strings.Contains(err.Error(), "line 3: invalid JSON") {
		t.Fatalf("got %v, want line 3's invalid JSON", err)
	}
}

// failingReader hands out its bytes, then fails as a disk would.
type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

// A compressed history whose file cannot be read to its end is an error
// reading it, not a malformed stream: the reader's own error comes back as
// it was, not as gzip's.
func TestAReadErrorUnderACompressedHistoryIsNotTheStreams(t *testing.T) {
	whole := gzipped(t, twoSends+twoPolls)
	ioErr := errors.New("input/output error")
	for _, cut := range []int{5, len(whole) / 2} {
		_, err := ReadAll(&failingReader{data: whole[:cut], err: ioErr})
		var pe *ParseError
		if !errors.Is(err, ioErr) || errors.As(err, &pe) || strings.Contains(err.Error(), "gzip") {
			t.Errorf("cut at %d: got %v, want the reader's own error", cut, err)
		}
	}
}
