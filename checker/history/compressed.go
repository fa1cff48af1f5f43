package history

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	"github.com/klauspost/compress/gzip"
)

// A history is read compressed or plain, whatever its name: a run store
// holds history.jsonl.gz, a recorder writes history.jsonl, and either may
// come through a pipe. gzip streams are told by their first two bytes
// (RFC 1952), which no JSON line begins with.
var gzipMagic = []byte{0x1f, 0x8b}

// uncompressed returns r's text: r's bytes, or what they decompress to when
// they are a gzip stream (several streams one after another, as cat writes
// them, read as one).
func uncompressed(r io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	head, err := br.Peek(len(gzipMagic))
	if err != nil && err != io.EOF {
		return nil, err
	}
	if !bytes.Equal(head, gzipMagic) {
		return br, nil
	}
	z, err := gzip.NewReader(br)
	if err != nil {
		return nil, &gzipError{err}
	}
	return gunzipper{z}, nil
}

// gzipError is the compressed stream being malformed (truncated, a wrong
// checksum), as opposed to the reader under it failing.
type gzipError struct{ err error }

func (e *gzipError) Error() string {
	if errors.Is(e.err, io.ErrUnexpectedEOF) {
		return "gzip: the stream is cut short (unexpected EOF)"
	}
	return "gzip: " + e.err.Error()
}
func (e *gzipError) Unwrap() error { return e.err }

type gunzipper struct{ z *gzip.Reader }

func (g gunzipper) Read(p []byte) (int, error) {
	n, err := g.z.Read(p)
	if err != nil && err != io.EOF {
		var pe *gzipError
		if !errors.As(err, &pe) {
			err = &gzipError{err}
		}
	}
	return n, err
}
