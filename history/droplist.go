package history

// dropList is a list kept in blocks that never move (as chunked.List),
// whose entries below a point can be let go: a recorder that keeps its
// older operations on disk (spill.go) drops their side entries and poll
// spans, and with the spans the record batches they point into.
type dropList[T any] struct {
	blocks [][]T
	n      int
	// cleared is how many entries from the start are let go: their
	// blocks are nil, or zeroed up to cleared.
	cleared int
}

const (
	dropBlockShift = 12
	dropBlockLen   = 1 << dropBlockShift
	dropBlockMask  = dropBlockLen - 1
)

// Len is the number of entries, those let go included.
func (l *dropList[T]) Len() int { return l.n }

// At returns entry i (cleared <= i < Len).
func (l *dropList[T]) At(i int) *T {
	if i < l.cleared || i >= l.n {
		panic("history: list index out of range")
	}
	return &l.blocks[i>>dropBlockShift][i&dropBlockMask]
}

// Append adds v at the end.
func (l *dropList[T]) Append(v T) {
	b := l.n >> dropBlockShift
	if b == len(l.blocks) {
		size := dropBlockLen
		if b == 0 {
			size = 16
		}
		l.blocks = append(l.blocks, make([]T, 0, size))
	}
	l.blocks[b] = append(l.blocks[b], v) // only the first block ever grows
	l.n++
}

// dropBelow lets entries below n go: whole blocks are freed, the entries
// of a block partly kept zeroed (so that what they point to is freed).
func (l *dropList[T]) dropBelow(n int) {
	n = min(n, l.n)
	var zero T
	for l.cleared < n {
		b := l.cleared >> dropBlockShift
		if (b+1)<<dropBlockShift <= n {
			l.blocks[b] = nil
			l.cleared = (b + 1) << dropBlockShift
			continue
		}
		l.blocks[b][l.cleared&dropBlockMask] = zero
		l.cleared++
	}
}
