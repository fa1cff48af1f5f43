// Package corrlist holds a client's requests in flight by correlation id.
//
// A client numbers its requests in the order it sends them and has a few
// dozen in flight at most; answers mostly come oldest first. So the requests
// sit in a list in send order — which is id order, with no sort needed to
// walk them deterministically — and a scan from the oldest finds one sooner
// than a map's hashing would.
package corrlist

import (
	"fmt"
	"iter"
)

// List is the requests in flight, each with a V.
type List[V any] struct {
	entries []entry[V]
}

type entry[V any] struct {
	corr uint64
	v    V
}

// Len is the number of requests held.
func (l *List[V]) Len() int { return len(l.entries) }

// Add records request corr, which must come after every request held.
func (l *List[V]) Add(corr uint64, v V) {
	if n := len(l.entries); n > 0 && l.entries[n-1].corr >= corr {
		panic(fmt.Sprintf("corrlist: request %d added after request %d", corr, l.entries[n-1].corr))
	}
	l.entries = append(l.entries, entry[V]{corr, v})
}

// Get returns request corr's V, and whether it is held.
func (l *List[V]) Get(corr uint64) (V, bool) {
	for _, e := range l.entries {
		if e.corr == corr {
			return e.v, true
		}
	}
	var zero V
	return zero, false
}

// Remove drops request corr and returns its V, and whether it was held.
func (l *List[V]) Remove(corr uint64) (V, bool) {
	for i, e := range l.entries {
		if e.corr == corr {
			copy(l.entries[i:], l.entries[i+1:])
			l.entries[len(l.entries)-1] = entry[V]{} // nothing kept alive
			l.entries = l.entries[:len(l.entries)-1]
			return e.v, true
		}
	}
	var zero V
	return zero, false
}

// All yields the requests held, oldest first.
func (l *List[V]) All() iter.Seq2[uint64, V] {
	return func(yield func(uint64, V) bool) {
		for _, e := range l.entries {
			if !yield(e.corr, e.v) {
				return
			}
		}
	}
}
