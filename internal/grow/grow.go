// Package grow appends to slices that grow large and are used as one
// slice (the scheduler's event slab, the far queue's buckets, the disk's
// pending operations; a list only ever indexed is better kept in
// internal/chunked). Go's append grows a large slice by a quarter at a
// time, so such a slice allocates about five times its final size on the
// way; doubling allocates twice it, and copies less.
package grow

// Append appends vs to s, doubling the capacity when it runs out.
func Append[T any](s []T, vs ...T) []T {
	if need := len(s) + len(vs); need > cap(s) {
		n := make([]T, len(s), max(need, 2*cap(s), 8))
		copy(n, s)
		s = n
	}
	if len(vs) == 1 {
		// One value, the usual case: a store, not a call to copy memory.
		return append(s, vs[0])
	}
	return append(s, vs...)
}
