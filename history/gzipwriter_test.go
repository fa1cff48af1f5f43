package history

import (
	"bytes"
	stdgzip "compress/gzip"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
)

// compressedBy writes text through a CompressedWriter on procs processors,
// in pieces of random sizes.
func compressedBy(t *testing.T, text []byte, procs int, seed uint64) []byte {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
	var out bytes.Buffer
	w := NewCompressedWriter(&out)
	rng := rand.New(rand.NewPCG(seed, 1))
	for p := text; len(p) > 0; {
		n := min(len(p), 1+rng.IntN(300_000))
		if _, err := w.Write(p[:n]); err != nil {
			t.Fatal(err)
		}
		p = p[n:]
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// The stream reads back (with the standard library's reader) as the text,
// and is the same bytes however the text was handed over and on however
// many processors: a seed's history is one file everywhere.
func TestCompressedWriterIsGzipAndTheSameEverywhere(t *testing.T) {
	var text []byte
	for i := 0; len(text) < 3*compressedBlockBytes+12345; i++ {
		text = append(text, `{"index":`...)
		text = strconv.AppendInt(text, int64(i), 10)
		text = append(text, `,"process":"p-0","type":"invoke","f":"send","value":{"topic":"t","value":"p-0:`...)
		text = strconv.AppendInt(text, int64(i), 10)
		text = append(text, "\"}}\n"...)
	}
	one := compressedBy(t, text, 1, 1)
	if four := compressedBy(t, text, 4, 2); !bytes.Equal(one, four) {
		t.Fatalf("1 processor wrote %d bytes, 4 wrote %d other bytes", len(one), len(four))
	}
	r, err := stdgzip.NewReader(bytes.NewReader(one))
	if err != nil {
		t.Fatal(err)
	}
	back, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(back, text) {
		t.Fatalf("read back %d bytes of %d (%v)", len(back), len(text), err)
	}
	if len(one) > len(text)/4 {
		t.Fatalf("%d bytes compressed to %d", len(text), len(one))
	}
	ops, err := ReadAll(bytes.NewReader(one))
	if err != nil || len(ops) != bytes.Count(text, []byte("\n")) {
		t.Fatalf("decoded %d operations: %v", len(ops), err)
	}
	// No text is an empty gzip stream, not an empty file.
	empty := compressedBy(t, nil, 2, 3)
	if r, err := stdgzip.NewReader(bytes.NewReader(empty)); err != nil {
		t.Fatalf("an empty text: %v", err)
	} else if b, err := io.ReadAll(r); err != nil || len(b) != 0 {
		t.Fatalf("an empty text reads as %q, %v", b, err)
	}
}

type failingWriter struct{ left int }

var errDiskFull = errors.New("disk full")

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.left {
		return 0, errDiskFull
	}
	f.left -= len(p)
	return len(p), nil
}

// An error writing the stream is returned, by Close at the latest.
func TestCompressedWriterReturnsWriteErrors(t *testing.T) {
	w := NewCompressedWriter(&failingWriter{left: 100})
	rng := rand.New(rand.NewPCG(1, 2))
	block := make([]byte, compressedBlockBytes)
	for i := range block {
		block[i] = byte(rng.IntN(256)) // incompressible: the first member is too large
	}
	for range 4 {
		w.Write(block)
	}
	if err := w.Close(); !errors.Is(err, errDiskFull) {
		t.Fatalf("Close: %v, want the write's error", err)
	}
}
