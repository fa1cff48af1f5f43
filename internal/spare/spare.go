// Package spare keeps finished objects for new ones to reuse, up to a
// bound: a producer's settled batches and answered requests, a broker's
// answered produces and fetch answers. Each owner decides when an object is
// finished (nothing else refers to it) and resets what it takes back.
package spare

// List holds spare objects, the last put the first got.
type List[T any] struct {
	items []*T
}

// Get takes a spare object, or returns nil when there is none.
func (l *List[T]) Get() *T {
	n := len(l.items)
	if n == 0 {
		return nil
	}
	x := l.items[n-1]
	l.items[n-1] = nil
	l.items = l.items[:n-1]
	return x
}

// Put keeps x for reuse unless max are kept already (then x is left to the
// collector).
func (l *List[T]) Put(x *T, max int) {
	if len(l.items) < max {
		l.items = append(l.items, x)
	}
}
