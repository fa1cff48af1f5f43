// Package byteview gives back a slice of bytes from its first byte and its
// length, for the simulation's tables that keep millions of references to
// immutable bytes in less room than a slice takes (24 bytes: pointer,
// length, capacity).
//
// The simulation itself may not import unsafe (sim/forbidden_test.go): a
// pointer turned into a number could reach behaviour. This package only
// rebuilds a slice the caller held before, which depends on no address; it
// never exposes one.
package byteview

import "unsafe"

// Of returns the n bytes starting at p: p must be the first byte of a slice
// of at least n bytes (or nil with n 0). The slice's capacity is n, so an
// append never writes past what the caller held.
func Of(p *byte, n uint32) []byte {
	if p == nil {
		return nil
	}
	return unsafe.Slice(p, n)
}
