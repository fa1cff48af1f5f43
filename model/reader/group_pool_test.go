package reader_test

import (
	"slices"
	"testing"
	"time"

	"kafkasim/history"
	"kafkasim/model/proto"
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

// partOf is the partition of a "orders-N" key.
func partOf(tp string) int32 { return int32(tp[len("orders-")] - '0') }

// Eager, with a pool: when c-1 joins, c-0's listener drops its queued
// records, waits for those in processing to finish, and only then commits
// their partitions' prefixes and revokes them; c-1 goes on from those
// commits. Every record is processed exactly once.
func TestPoolRevocationDrainsInFlightRecordsBeforeItCommits(t *testing.T) {
	slow := sim.Range{Min: 100 * time.Millisecond, Max: 300 * time.Millisecond}
	c0 := poolConfig("c-0", reader.CommitAfterProcessing, 4, slow, rangeAssignor{})
	c1 := poolConfig("c-1", reader.CommitAfterProcessing, 4, slow, rangeAssignor{})
	c1.Start = 2 * time.Second
	c0.MaxPollRecords, c1.MaxPollRecords = 10, 10
	gw := newGroupWorld(4, 40, c0, c1)
	gw.w.Start()
	gw.w.RunUntil(40 * time.Second)

	ps := processings(gw.rec)
	var revoke, listenerCommit history.Op
	for _, op := range gw.rec.Ops() {
		if op.Process != "c-0" {
			continue
		}
		if op.F == history.FRevoke && op.Type == history.OK && revoke.F == "" {
			revoke = op
		}
		if revoke.F == "" && op.F == history.FCommit && op.Type == history.Invoke {
			listenerCommit = op
		}
	}
	if revoke.F == "" || !slices.Equal(revoke.Value.Ext.Partitions, []string{"orders-0", "orders-1", "orders-2", "orders-3"}) {
		t.Fatalf("c-0's revoke %v, want all four partitions revoked", revoke)
	}
	for _, p := range ps {
		if p.process == "c-0" && p.start < listenerCommit.Index && (p.end < 0 || p.end > listenerCommit.Index) {
			t.Fatalf("c-0 committed on revoke (#%d) with orders-%d@%d in processing", listenerCommit.Index, p.partition, p.offset)
		}
	}
	// The listener waited: it committed as c-0's last record in processing
	// finished, in the same step.
	if before := gw.rec.Op(listenerCommit.Index - 1); before.Process != "c-0" || before.F != history.FProcess || before.Type != history.OK || before.Time != listenerCommit.Time {
		t.Fatalf("c-0's listener committed (#%d) after %v, want it to follow the end of its last record in processing", listenerCommit.Index, before)
	}
	for tp, off := range listenerCommit.Value.Ext.Offsets { // kafkasim:orderless: each checked alone
		for _, p := range ps {
			if p.process == "c-0" && p.partition == partOf(tp) && p.offset < off && !p.okEnd {
				t.Fatalf("the listener committed %s=%d past unfinished record %d", tp, off, p.offset)
			}
		}
	}
	done := map[[2]int64]int{}
	for _, p := range ps {
		if p.okEnd {
			done[[2]int64{int64(p.partition), p.offset}]++
		}
	}
	for part := range int64(4) {
		for off := range int64(40) {
			if n := done[[2]int64{part, off}]; n != 1 {
				t.Fatalf("orders-%d@%d processed %d times, want once", part, off, n)
			}
		}
	}
}

// A member fenced while its workers run (UNKNOWN_MEMBER_ID from a
// heartbeat) gives its partitions up as lost at the next poll: its pool
// drops their queued records and commits nothing (the poll loop processing
// records itself has its listener try, and be refused, in the same step);
// the records in processing still finish.
func TestPoolLosingPartitionsCommitsNothing(t *testing.T) {
	for _, workers := range []int{1, 4} {
		cfg := poolConfig("c-0", reader.CommitAfterProcessing, workers, sim.Range{Min: 100 * time.Millisecond, Max: 300 * time.Millisecond})
		cfg.MaxPollRecords = 5
		gw := newGroupWorld(2, 100, cfg)
		gw.b.heartbeatErr = []proto.ErrorCode{proto.None, proto.UnknownMemberID}
		gw.w.Start()
		gw.w.RunUntil(12 * time.Second)
		var revoke history.Op
		listenerCommit := false
		for _, op := range gw.rec.Ops() {
			if op.F == history.FRevoke && op.Type == history.OK {
				revoke = op
				break
			}
		}
		if revoke.F == "" {
			t.Fatalf("workers %d: no revocation", workers)
		}
		for _, op := range gw.rec.Ops() {
			listenerCommit = listenerCommit || (op.F == history.FCommit && op.Time == revoke.Time)
		}
		if listenerCommit != (workers == 1) {
			t.Fatalf("workers %d: the listener committed %v as the partitions were lost", workers, listenerCommit)
		}
		if workers == 1 {
			continue
		}
		finishedAfter := false
		for _, p := range processings(gw.rec) {
			if p.start < revoke.Index && p.end > revoke.Index && p.okEnd {
				finishedAfter = true
			}
		}
		if !finishedAfter {
			t.Fatal("no record in processing at the loss finished after it")
		}
	}
}

// The poll loop hands records to the pool and polls on while the workers
// run: records of a second each, four a poll, do not make a member with
// four workers outlast a two-second max.poll.interval.ms (with one worker,
// five a poll, it leaves the group: TestPollTimeoutMakesADynamicMemberLeave);
// a pool saturated longer than that, its loop waiting to hand a record
// over, does.
func TestPoolKeepsPollingWhileWorkersRun(t *testing.T) {
	for _, tc := range []struct {
		processing time.Duration
		leaves     bool
	}{{time.Second, false}, {3 * time.Second, true}} {
		cfg := poolConfig("c-0", reader.CommitAfterProcessing, 4, sim.Fixed(tc.processing))
		cfg.MaxPollRecords = 4
		cfg.Group.MaxPollInterval = 2 * time.Second
		gw := newGroupWorld(1, 40, cfg)
		gw.w.Start()
		gw.w.RunUntil(9 * time.Second)
		if left := len(gw.b.leaves) > 0; left != tc.leaves {
			t.Fatalf("processing %v: left the group %v, want %v", tc.processing, left, tc.leaves)
		}
		if n := len(only(ops(gw.rec, "c-0", history.FProcess), "ok ")); n < 8 {
			t.Fatalf("processing %v: %d records processed in 9 s, want the pool busy", tc.processing, n)
		}
	}
}

// crashAt runs a static member with four workers over one partition,
// crashes it at the first millisecond when (with find) the coordinator
// holds a committed offset past a record the member still processes, or
// at the given time, restarts it, and returns the world and the crash time.
func crashAt(highestFinished, find bool, at time.Duration) (*groupWorld, time.Duration) {
	cfg := poolConfig("c-0", reader.CommitAfterProcessing, 4, sim.Range{Min: time.Millisecond, Max: 40 * time.Millisecond})
	cfg.Group.GroupInstanceID = "c-0"
	cfg.Group.CommitHighestFinished = highestFinished
	cfg.MaxPollRecords = 5
	gw := newGroupWorld(1, 60, cfg)
	gw.w.Start()
	seen := int64(-1)
	for now := time.Duration(0); now < 5*time.Second; now += time.Millisecond {
		gw.w.RunUntil(now)
		if !find && now >= at {
			break
		}
		if c, ok := gw.b.committed["orders-0"]; find && ok && c.CommittedOffset != seen {
			seen = c.CommittedOffset
			if slices.ContainsFunc(unfinishedAt(processings(gw.rec), "c-0", int64(gw.rec.Len()))[0], func(o int64) bool { return o < c.CommittedOffset }) {
				at = now
				break
			}
		}
	}
	gw.w.Crash(gw.members[0], false)
	gw.w.RunUntil(gw.w.Now() + 100*time.Millisecond)
	gw.w.Restart(gw.members[0])
	gw.w.RunUntil(gw.w.Now() + 10*time.Second)
	return gw, at
}

// skipped lists the records below the committed offset never processed.
func skipped(gw *groupWorld) []int64 {
	done := map[int64]bool{}
	for _, p := range processings(gw.rec) {
		if p.okEnd {
			done[p.offset] = true
		}
	}
	var out []int64
	for o := range gw.b.committed["orders-0"].CommittedOffset {
		if !done[o] {
			out = append(out, o)
		}
	}
	return out
}

// With CommitHighestFinished, a member that crashes after committing past a
// record still in processing restarts above it: the record is skipped.
// Crashed at the same moment, the member committing its contiguous
// completed prefix skips nothing.
func TestCommitHighestFinishedSkipsRecordsAtACrash(t *testing.T) {
	gw, at := crashAt(true, true, 0)
	if at == 0 {
		t.Fatal("the member never committed past a record in processing")
	}
	if s := skipped(gw); len(s) == 0 {
		t.Fatalf("crashed at %v: nothing skipped", at)
	}
	if c := gw.b.committed["orders-0"]; c.CommittedOffset != 60 {
		t.Fatalf("committed %d after the restart, want 60", c.CommittedOffset)
	}
	gw, _ = crashAt(false, false, at)
	if s := skipped(gw); len(s) != 0 {
		t.Fatalf("the contiguous prefix skipped %v", s)
	}
}

// An at-most-once pool committed past its records before handing them
// over: its listener commits nothing at a revocation, so the group's
// committed offsets never go back below records it dropped.
func TestPoolBeforeProcessingNeverCommitsBack(t *testing.T) {
	slow := sim.Range{Min: 100 * time.Millisecond, Max: 300 * time.Millisecond}
	c0 := poolConfig("c-0", reader.CommitBeforeProcessing, 4, slow, rangeAssignor{})
	c1 := poolConfig("c-1", reader.CommitBeforeProcessing, 4, slow, rangeAssignor{})
	c1.Start = 2 * time.Second
	c0.MaxPollRecords, c1.MaxPollRecords = 10, 10
	gw := newGroupWorld(4, 40, c0, c1)
	gw.w.Start()
	gw.w.RunUntil(40 * time.Second)
	last := map[string]int64{}
	for _, name := range []string{"c-0", "c-1"} {
		for _, c := range commitsOf(gw.rec, name) {
			for tp, off := range c.Value.Ext.Offsets { // kafkasim:orderless: each checked alone
				if off < last[tp] {
					t.Fatalf("%s committed %s=%d after %d", name, tp, off, last[tp])
				}
				last[tp] = off
			}
		}
	}
	if n := len(only(ops(gw.rec, "c-0", history.FRevoke), "ok ")); n == 0 {
		t.Fatal("c-0 revoked nothing: the test shows nothing")
	}
}
