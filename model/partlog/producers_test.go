package partlog

import (
	"slices"
	"testing"

	"pgregory.net/rapid"

	"kafkasim/model/record"
)

// TestProducerStateKeepsTheLastFiveBatches holds the state's window of each
// producer's batches to a plain list cut to its last five, across epoch
// bumps, snapshot restores, long runs of appends (the window's array slides
// back every few dozen) and many producers (the state indexes them).
func TestProducerStateKeepsTheLastFiveBatches(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		state := NewProducerState()
		type model struct {
			epoch   int16
			batches []BatchMeta
		}
		want := map[int64]*model{}
		offset := int64(0)
		// Two producers slide their windows often; forty make the state
		// index them.
		producers := rapid.SampledFrom([]int64{2, 40}).Draw(t, "producers")
		for step := range rapid.IntRange(1, 400).Draw(t, "steps") {
			pid := rapid.Int64Range(0, producers-1).Draw(t, "pid")
			m := want[pid]
			if m == nil {
				m = &model{}
				want[pid] = m
			}
			switch rapid.IntRange(0, 99).Draw(t, "action") {
			case 0: // a new epoch starts over
				m.epoch++
				m.batches = nil
			case 1: // a restore from a snapshot keeps each last batch
				restored, err := decodeSnapshot(state.encodeSnapshot())
				if err != nil {
					t.Fatalf("step %d: %v", step, err)
				}
				state = restored
				for pid, m := range want {
					if n := len(m.batches); n > 0 {
						m.batches = m.batches[n-1:]
					} else {
						delete(want, pid)
					}
				}
				continue
			}
			if m = want[pid]; m == nil {
				m = &model{}
				want[pid] = m
			}
			seq := int32(0)
			if n := len(m.batches); n > 0 {
				seq = m.batches[n-1].LastSeq + 1
			}
			count := rapid.IntRange(1, 3).Draw(t, "records")
			records := make([]record.Record, count)
			b := record.New(records, record.Producer{ID: pid, Epoch: m.epoch, BaseSequence: seq}, false, record.CompressionNone).Stamped(offset, 0)
			offset += int64(count)
			state.Update(b)
			m.batches = append(m.batches, BatchMeta{FirstSeq: seq, LastSeq: b.LastSequence(), FirstOffset: b.BaseOffset, LastOffset: b.LastOffset()})
			if len(m.batches) > BatchMetadataRetained {
				m.batches = m.batches[len(m.batches)-BatchMetadataRetained:]
			}
			for pid, m := range want {
				e := state.Entry(pid)
				if e == nil {
					t.Fatalf("step %d: producer %d has no state", step, pid)
				}
				if state.Len() != len(want) {
					t.Fatalf("step %d: state of %d producers, want %d", step, state.Len(), len(want))
				}
				if !slices.Equal(e.Batches, m.batches) {
					t.Fatalf("step %d: producer %d remembers %v, want %v", step, pid, e.Batches, m.batches)
				}
			}
		}
	})
}

// An entry copied over another keeps its window to itself when the window
// sits in the copy's one-batch slot: the copy's next append after an
// epoch bump (the window emptied, its capacity kept) writes into its own
// slot, not the source's.
func TestProducerEntryAssignKeepsItsWindow(t *testing.T) {
	var src ProducerEntry
	src.appendBatch(BatchMeta{FirstSeq: 0, LastSeq: 4, FirstOffset: 10, LastOffset: 14})
	var dst ProducerEntry
	dst.assign(&src)
	if !slices.Equal(dst.Batches, src.Batches) {
		t.Fatalf("copy's window %v, want %v", dst.Batches, src.Batches)
	}
	dst.Batches = dst.Batches[:0]
	dst.appendBatch(BatchMeta{FirstSeq: 0, LastSeq: 0, FirstOffset: 99, LastOffset: 99})
	if got := src.Batches; len(got) != 1 || got[0].FirstOffset != 10 {
		t.Fatalf("the source's window changed with the copy's append: %v", got)
	}
	if got := dst.Batches; len(got) != 1 || got[0].FirstOffset != 99 {
		t.Fatalf("copy's window %v, want the one batch at 99", got)
	}
}
