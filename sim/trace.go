package sim

import (
	"math/bits"
	"time"
)

// TraceHash folds a run's events into 64 bits. Two runs that executed the same
// events in the same order at the same times end with the same hash; any
// difference in order, timing or content changes it with overwhelming
// probability. The mixing step is a 128-bit multiply folded to 64 bits (as in
// wyhash), cheap enough to run on every event.
type TraceHash struct{ h uint64 }

const (
	traceSeed  = 0x243f6a8885a308d3 // digits of pi: nothing up the sleeve
	traceMulA  = 0xa0761d6478bd642f
	traceMulB  = 0xe7037ed1a0b428db
	fnvOffset  = 14695981039346656037
	fnvPrime64 = 1099511628211
)

func newTraceHash() TraceHash { return TraceHash{h: traceSeed} }

// Fold mixes one word into the hash.
func (t *TraceHash) Fold(x uint64) {
	hi, lo := bits.Mul64(t.h^traceMulA, x^traceMulB)
	t.h = hi ^ lo
}

// FoldString mixes a string into the hash.
func (t *TraceHash) FoldString(s string) { t.Fold(hashString(s)) }

// FoldEvent mixes the header of an executed event into the hash.
func (t *TraceHash) FoldEvent(e *Event) {
	t.Fold(uint64(e.At))
	t.Fold(uint64(e.Kind) | uint64(uint32(e.Node))<<8 | uint64(uint32(e.From))<<40)
	t.Fold(e.Arg)
}

// Sum returns the hash so far.
func (t TraceHash) Sum() uint64 { return t.h }

// nameHashes remembers the hashes of the last message names folded, by
// length: every delivery folds its message's name, one of a few constant
// strings, and comparing a name with the one remembered is a pointer
// comparison when they are the same constant.
type nameHashes [16]struct {
	name string
	hash uint64
}

func (c *nameHashes) hash(name string) uint64 {
	e := &c[len(name)&15]
	if e.name != name || e.hash == 0 {
		e.name, e.hash = name, hashString(name)
	}
	return e.hash
}

// hashString is FNV-1a: stable across processes, unlike Go's map hash.
func hashString(s string) uint64 {
	h := uint64(fnvOffset)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= fnvPrime64
	}
	return h
}

// TraceRecord is one line of the compact trace: an executed event, a fault, or
// a note from a node (an election, an ISR change).
type TraceRecord struct {
	Step uint64        // number of events executed when it was recorded
	At   time.Duration // virtual time
	Kind string        // event kind, "fault", or the note's kind
	Node string        // the node it concerns
	From string        // the sender of a message, when there is one
	// Detail says what happened: a message's description, a fault's targets.
	Detail string
}

// TraceSink receives trace records when a run is traced. The world calls it
// only when one is set, so an untraced run pays nothing for descriptions.
type TraceSink interface {
	Record(r TraceRecord)
}

// TraceBuffer is a TraceSink that keeps every record in memory, up to a limit
// (records past it are counted, not kept).
type TraceBuffer struct {
	Records    []TraceRecord
	RecordsMax int
	Dropped    int
}

// Record keeps r unless the buffer is full.
func (b *TraceBuffer) Record(r TraceRecord) {
	if b.RecordsMax > 0 && len(b.Records) >= b.RecordsMax {
		b.Dropped++
		return
	}
	b.Records = append(b.Records, r)
}
