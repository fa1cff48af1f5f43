package partlog

import (
	"fmt"
	"math"

	"kafkasim/model/record"
	"kafkasim/sim"
)

// A segment: one file of the log, from its base offset, and the index of
// the batches in it.

type segment struct {
	base  int64
	file  string
	size  int64
	idx   batchIndex  // its batches, where each starts, and their last offsets
	dirty bool        // written since its last fsync
	ref   sim.FileRef // appends go through it: no name lookup per batch (sim.OwnedWriter)
	// aborted is the segment's transaction index (txn.go): the aborted
	// transactions whose abort marker it holds, in marker order.
	aborted []AbortedTxn
	// digest: what recovery's walks over the batches took from them, or
	// nil (digest.go).
	digest *segmentDigest
}

func (s *segment) next() int64 {
	if s.idx.len() == 0 {
		return s.base
	}
	return s.idx.next
}

func (s *segment) add(b *record.Batch, pos int64) {
	if pos > math.MaxUint32 {
		panic(fmt.Sprintf("partlog: %s: a batch at position %d, past what segment.bytes allows", s.file, pos))
	}
	s.idx.add(b, uint32(pos))
}

// end is where batch i ends in the file.
func (s *segment) end(i int) int64 {
	if i+1 < s.idx.len() {
		return s.idx.position(i + 1)
	}
	return s.idx.position(i) + int64(s.idx.batch(i).SizeBytes())
}

// cut keeps the first n batches (views Read handed out stay as they were:
// batchIndex.cut).
func (s *segment) cut(n int) {
	s.idx.cut(n)
	if s.digest != nil {
		// Not needed for soundness (Log.digest checks), but the digest
		// would otherwise hold the batches cut.
		s.digest = s.digest.prefix(n)
	}
}
