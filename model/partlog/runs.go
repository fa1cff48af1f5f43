package partlog

import "kafkasim/model/record"

// The log's batches as the memory that holds them, for a reader that must
// know cheaply what changed since it last looked: the audit compares every
// recovered or newly elected replica's log with what was committed, and a
// day-long run's log holds millions of batches.

// EachRun calls f with the log's batches, oldest first, a run at a time,
// until f returns false. A run is one block of a segment's batch index,
// whose slots are written once and never again (index.go: appends go past
// every slot written, a truncation or a compaction moves what it keeps to
// fresh memory, a restart's recovery shares only whole blocks of the
// segments it recalls). A run met again, by the address of its first slot,
// therefore holds the batches it held, and perhaps more after them. f must
// not change a run.
func (l *Log) EachRun(f func(run []*record.Batch) bool) {
	for _, s := range l.segs {
		for k := range s.idx.blocks {
			if b := s.idx.blocks[k].batches; len(b) > 0 && !f(b[:len(b):len(b)]) {
				return
			}
		}
	}
}
