// Package chunked keeps a list that lives for a whole run and grows to
// millions of entries (the audit's committed batches, the history's side
// entries and poll spans) in blocks that never
// move: each entry is allocated once, where a doubling slice allocates
// about twice the final size, half of it garbage the collector meets only
// at its next cycle.
package chunked

import "sort"

const (
	blockShift = 12
	blockLen   = 1 << blockShift // entries per block
	blockMask  = blockLen - 1
)

// List is a list of T kept in blocks of 4,096 (the first grows to that by
// doubling, so that a short list stays small). The zero List is empty and
// ready to use. A pointer At returns is good until the list is cut below
// it.
type List[T any] struct {
	blocks [][]T
	n      int
}

// Len is the number of entries.
func (l *List[T]) Len() int { return l.n }

// At returns entry i (0 <= i < Len).
func (l *List[T]) At(i int) *T {
	if i < 0 || i >= l.n {
		panic("chunked: index out of range")
	}
	return &l.blocks[i>>blockShift][i&blockMask]
}

// Last returns the last entry (the list must not be empty).
func (l *List[T]) Last() *T { return l.At(l.n - 1) }

// Append adds v at the end.
func (l *List[T]) Append(v T) {
	b := l.n >> blockShift
	if b == len(l.blocks) {
		size := blockLen
		if b == 0 {
			size = 16
		}
		l.blocks = append(l.blocks, make([]T, 0, size))
	}
	l.blocks[b] = append(l.blocks[b], v) // only the first block ever grows
	l.n++
}

// Truncate keeps the first n entries (n <= Len).
func (l *List[T]) Truncate(n int) {
	if n < 0 || n > l.n {
		panic("chunked: truncate past the end")
	}
	var zero T
	for i := n; i < l.n; i++ {
		*l.At(i) = zero // let the collector have what they point to
	}
	keep := (n + blockMask) >> blockShift
	for b := keep; b < len(l.blocks); b++ {
		l.blocks[b] = l.blocks[b][:0]
	}
	if keep > 0 {
		l.blocks[keep-1] = l.blocks[keep-1][:n-(keep-1)<<blockShift]
	}
	l.n = n
}

// Search is sort.Search over the entries: the first i for which f(At(i))
// is true, given that f is false then true along the list.
func (l *List[T]) Search(f func(*T) bool) int {
	// The block first, by its last entry, then within it. Blocks past a
	// cut are empty and end the list: the search stops at the first of
	// them as if it held everything past, and answers Len.
	k := sort.Search(len(l.blocks), func(k int) bool {
		b := l.blocks[k]
		return len(b) == 0 || f(&b[len(b)-1])
	})
	if k == len(l.blocks) || len(l.blocks[k]) == 0 {
		return l.n
	}
	b := l.blocks[k]
	return k<<blockShift + sort.Search(len(b), func(i int) bool { return f(&b[i]) })
}
