package reader_test

import (
	"testing"
	"time"

	"kafkasim/history"
	"kafkasim/model/reader"
	"kafkasim/sim"
)

// poolConfig is a member with a pool of workers and a processing range.
func poolConfig(name string, commit reader.CommitMode, workers int, processing sim.Range, assignors ...reader.GroupAssignor) reader.Config {
	cfg := memberConfig(name, commit, assignors...)
	cfg.Group.Workers = workers
	cfg.Group.Processing = processing
	return cfg
}

// processing is a record's processing as the history shows it.
type processing struct {
	partition      int32
	offset         int64
	start, end     int64 // end -1: never finished
	process        string
	okEnd, infoEnd bool
}

// processings lists the member's processings, in the order they started:
// a completion is paired with the open processing of the same record.
func processings(rec *history.Recorder) []processing {
	var out []processing
	for _, op := range rec.Ops() {
		if op.F != history.FProcess {
			continue
		}
		if op.Type == history.Invoke {
			out = append(out, processing{partition: op.Value.Partition, offset: op.Value.Offset, start: op.Index, end: -1, process: op.Process})
			continue
		}
		for i := range out {
			p := &out[i]
			if p.process == op.Process && p.partition == op.Value.Partition && p.offset == op.Value.Offset && p.end < 0 {
				p.end, p.okEnd, p.infoEnd = op.Index, op.Type == history.OK, op.Type == history.Info
				break
			}
		}
	}
	return out
}

// commitsOf lists a process's commits that completed ok, with their
// invocation's index.
func commitsOf(rec *history.Recorder, process string) []history.Op {
	var open []history.Op
	var out []history.Op
	for _, op := range rec.Ops() {
		if op.F != history.FCommit || op.Process != process {
			continue
		}
		if op.Type == history.Invoke {
			open = append(open, op)
			continue
		}
		inv := open[0]
		open = open[1:]
		if op.Type == history.OK {
			out = append(out, inv)
		}
	}
	return out
}

// unfinishedAt is, per partition, the offsets of the process's records in
// processing when operation i happened (started, not ended).
func unfinishedAt(ps []processing, process string, i int64) map[int32][]int64 {
	out := map[int32][]int64{}
	for _, p := range ps {
		if p.process == process && p.start < i && (p.end < 0 || p.end > i) {
			out[p.partition] = append(out[p.partition], p.offset)
		}
	}
	return out
}

// With four workers, records of one partition are processed concurrently
// and finish out of order; every commit stops at the lowest record still
// in processing (its contiguous completed prefix), and some commit is held
// back by a record slower than those above it.
func TestPoolCommitsOnlyTheContiguousCompletedPrefix(t *testing.T) {
	gw := newGroupWorld(2, 60, poolConfig("c-0", reader.CommitAfterProcessing, 4, sim.Range{Min: time.Millisecond, Max: 40 * time.Millisecond}))
	gw.w.Start()
	gw.w.RunUntil(20 * time.Second)
	ps := processings(gw.rec)
	overlap, heldBack := false, false
	for i, p := range ps {
		if !p.okEnd {
			t.Fatalf("processing %+v did not finish ok", p)
		}
		for _, q := range ps[i+1:] {
			if q.partition == p.partition && q.start < p.end {
				overlap = true
			}
		}
	}
	commits := commitsOf(gw.rec, "c-0")
	for _, c := range commits {
		open := unfinishedAt(ps, "c-0", c.Index)
		for tp, off := range c.Value.Ext.Offsets { // kafkasim:orderless: each checked alone
			part := int32(tp[len("orders-")] - '0')
			for _, o := range open[part] {
				if off > o {
					t.Fatalf("commit #%d of %s=%d passes record %d still in processing", c.Index, tp, off, o)
				}
				heldBack = true
			}
			// Every record below the committed offset finished before the commit.
			for _, p := range ps {
				if p.partition == part && p.offset < off && p.end > c.Index {
					t.Fatalf("commit #%d of %s=%d before record %d finished", c.Index, tp, off, p.offset)
				}
			}
		}
	}
	if !overlap {
		t.Fatal("no two records of a partition were processed at once")
	}
	if !heldBack {
		t.Fatal("no commit was made with a record of its partition in processing: the test shows nothing")
	}
	if len(ps) != 120 {
		t.Fatalf("%d processings, want every record once (120)", len(ps))
	}
	if c := gw.b.committed["orders-0"]; c.CommittedOffset != 60 {
		t.Fatalf("orders-0 committed %d, want 60", c.CommittedOffset)
	}
	// At most four records in processing at once.
	for _, p := range ps {
		n := 0
		for _, offs := range unfinishedAt(ps, "c-0", p.start+1) { // kafkasim:orderless: a count
			n += len(offs)
		}
		if n > 4 {
			t.Fatalf("%d records in processing at #%d, want at most the 4 workers", n, p.start)
		}
	}
}

// CommitHighestFinished, the application bug: a commit passes a record
// still in processing.
func TestCommitHighestFinishedCommitsPastAnUnfinishedRecord(t *testing.T) {
	cfg := poolConfig("c-0", reader.CommitAfterProcessing, 4, sim.Range{Min: time.Millisecond, Max: 40 * time.Millisecond})
	cfg.Group.CommitHighestFinished = true
	gw := newGroupWorld(2, 60, cfg)
	gw.w.Start()
	gw.w.RunUntil(20 * time.Second)
	ps := processings(gw.rec)
	passed := false
	for _, c := range commitsOf(gw.rec, "c-0") {
		open := unfinishedAt(ps, "c-0", c.Index)
		for tp, off := range c.Value.Ext.Offsets { // kafkasim:orderless: any will do
			for _, o := range open[int32(tp[len("orders-")]-'0')] {
				passed = passed || off > o
			}
		}
	}
	if !passed {
		t.Fatal("no commit passed a record in processing")
	}
}

