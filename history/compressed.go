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
	src := &source{r: r}
	br := bufio.NewReaderSize(src, 1<<16)
	head, err := br.Peek(len(gzipMagic))
	if err != nil && err != io.EOF {
		return nil, err
	}
	if !bytes.Equal(head, gzipMagic) {
		return br, nil
	}
	z, err := gzip.NewReader(br)
	if err != nil {
		return nil, src.label(err)
	}
	return gunzipper{z, src}, nil
}

// source remembers the error its reader failed with, so that the same
// error coming back through the decompressor is told to be the reader's (a
// disk that cannot be read), not the stream's.
type source struct {
	r   io.Reader
	err error
}

func (s *source) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF {
		s.err = err
	}
	return n, err
}

// label marks an error of the decompressor as the stream's, unless it is
// the reader's own.
func (s *source) label(err error) error {
	var ge *gzipError
	if err == nil || err == io.EOF || errors.As(err, &ge) || (s.err != nil && errors.Is(err, s.err)) {
		return err
	}
	return &gzipError{err}
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

type gunzipper struct {
	z   *gzip.Reader
	src *source
}

func (g gunzipper) Read(p []byte) (int, error) {
	n, err := g.z.Read(p)
	return n, g.src.label(err)
}
