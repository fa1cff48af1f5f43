package checker

import (
	"strings"
	"testing"

	"kafkasim/history"
)

// unknownCommitHistory: e-0 processes in-0@0 in a transaction whose commit
// (offsets in-0: 1) has no known outcome (the process is killed while
// committing); e-1 then takes in-0, fetches its committed offset (when
// fetched: none, below the transaction's), and processes in-0@0 again in a
// transaction that commits.
func unknownCommitHistory(fetched bool) []history.Op {
	h := &hb{}
	h.inputs(1)
	member := func(process string, gen int32, f string) history.Value {
		v := history.NoValue()
		x := v.X()
		x.Group, x.Generation, x.MemberID = "etl", gen, process+"-m"
		if f == history.FAssign {
			x.Partitions = []string{"in-0"}
		}
		return v
	}
	process := func(name string, gen int32) {
		v := member(name, gen, history.FProcess)
		v.Topic, v.Partition, v.Offset = "in", 0, 0
		h.add(name, history.Invoke, history.FProcess, v)
		h.add(name, history.OK, history.FProcess, v)
	}
	txn := func(name string, gen int32, at int64, outcome history.Type) {
		tid := "etl-" + name
		v := history.NoValue()
		v.X().TransactionalID = tid
		h.add(name, history.Invoke, history.FTxnBegin, v)
		h.add(name, history.OK, history.FTxnBegin, v)
		process(name, gen)
		s := h.procSend(name, tid, 0, 0, at)
		c := member(name, gen, history.FTxnCommit)
		c.Ext.TransactionalID, c.Ext.Offsets = tid, map[string]int64{"in-0": 1}
		h.add(name, history.Invoke, history.FTxnCommit, c)
		done := c
		done.Ext = &history.Ext{}
		*done.Ext = *c.Ext
		done.Ext.Sends = []history.Send{s}
		if outcome != history.OK {
			done.Error = "process died: killed"
		}
		h.add(name, outcome, history.FTxnCommit, done)
	}
	a := member("e-0", 1, history.FAssign)
	h.add("e-0", history.Invoke, history.FAssign, a)
	h.add("e-0", history.OK, history.FAssign, a)
	txn("e-0", 1, 0, history.Info)
	crash := history.NoValue()
	h.add("e-0", history.Invoke, history.FCrash, crash)
	h.add("e-0", history.OK, history.FCrash, crash)
	b := member("e-1", 2, history.FAssign)
	h.add("e-1", history.Invoke, history.FAssign, b)
	h.add("e-1", history.OK, history.FAssign, b)
	if fetched {
		f := history.NoValue()
		f.X().Group, f.X().Partitions = "etl", []string{"in-0"}
		h.add("e-1", history.Invoke, history.FFetchCommitted, f)
		g := history.NoValue()
		g.X().Group, g.X().Offsets = "etl", map[string]int64{"in-0": -1} // none committed
		h.add("e-1", history.OK, history.FFetchCommitted, g)
	}
	txn("e-1", 2, 1, history.OK)
	h.finalReads(rc, map[string]int64{"in-0": 1, "out-0": 2}, append(inRecs(1), trec{"out", 0, 1, h.ops[len(h.ops)-1].Value.Ext.Sends[0].Value})...)
	return h.ops
}

// A transaction whose commit's outcome is unknown is aborted once its
// group's committed offset is found below its offsets: the record it
// processed may be processed again exactly-once. Without that evidence the
// outcome stays unknown, and the second processing is a violation.
func TestUnknownCommitResolvedByTheGroupsCommittedOffset(t *testing.T) {
	eos := Config{Consumers: []ConsumerGuarantees{{Prefix: "e", Group: "etl", Commit: "transactional"}}}
	r := Check(unknownCommitHistory(true), eos)
	if r.Violations != 0 {
		t.Fatalf("violations with the committed offset as evidence\n%s", r.Summary())
	}
	verdictOf(t, r, ReprocessedRecord, Permitted)
	verdictOf(t, Check(unknownCommitHistory(false), eos), ReprocessedRecord, Violation)
}

// fencedCommitHistory is fuzz seed 12469's story: e-0 processes in-0@0 in a
// transaction whose commit (offsets in-0: 1, generation 1) hangs (e-0 is cut
// off from the group coordinator); the group moves on without it, e-1 is
// assigned in-0 at generation gen, fetches the group's committed offset
// (none, below the transaction's: it had nothing pending), processes
// in-0@0 again and commits; only then is e-0 killed, its commit's outcome
// unknown. between puts another commit of in-0 between the transaction's
// and the fetch: e-2's commit of unknown outcome (betweenUnknown), or
// (betweenFailed, fuzz seed 20177) e-2's transaction of in-0@0 under the
// generation before e-0's, a zombie whose commit failed (the group
// coordinator answered its TxnOffsetCommit UNKNOWN_MEMBER_ID). The final
// reads are read_uncommitted: they hold every output, and say nothing of
// which transaction committed.
func fencedCommitHistory(gen int32, between betweenCommit) []history.Op {
	h := &hb{}
	h.inputs(1)
	assign := func(process string, gen int32) { h.assignIn0(process, gen) }
	open := h.openEtlTxn
	if between == betweenFailed {
		assign("e-2", 0)
	}
	assign("e-0", 1)
	zombie := open("e-0", 1, 0)
	next := int64(1) // e-1's output offset
	outs := []trec{{"out", 0, 0, zombie.Ext.Sends[0].Value}}
	switch between {
	case betweenUnknown:
		h.commit("e-2", "etl", map[string]int64{"in-0": 0}, history.Info)
	case betweenFailed:
		failed := open("e-2", 0, next)
		failed.Error = "CommitFailedException: UNKNOWN_MEMBER_ID"
		h.add("e-2", history.Fail, history.FTxnCommit, failed)
		outs = append(outs, trec{"out", 0, next, failed.Ext.Sends[0].Value})
		next++
	}
	assign("e-1", gen)
	h.fetch("e-1", "etl", map[string]int64{"in-0": -1})
	ok := open("e-1", gen, next)
	h.add("e-1", history.OK, history.FTxnCommit, ok)
	zombie.Error = "process died: killed"
	h.add("e-0", history.Info, history.FTxnCommit, zombie)
	crash := history.NoValue()
	h.add("e-0", history.Invoke, history.FCrash, crash)
	h.add("e-0", history.OK, history.FCrash, crash)
	outs = append(outs, trec{"out", 0, next, ok.Ext.Sends[0].Value})
	h.finalReads("read_uncommitted", map[string]int64{"in-0": 1, "out-0": next + 1}, append(inRecs(1), outs...)...)
	return h.ops
}

// betweenCommit: what fencedCommitHistory puts between the transaction's
// commit and the later generation's fetch.
type betweenCommit uint8

const (
	betweenNone    betweenCommit = iota
	betweenUnknown               // a commit of in-0 of unknown outcome
	betweenFailed                // a zombie's transaction of in-0 whose commit failed
)

// A transaction whose commit's outcome is unknown did not commit when a
// member that owned the partition under a later generation fetched the
// group's committed offset below the transaction's before the outcome was
// known: the coordinator refuses the transaction's TxnOffsetCommit from then
// on (KIP-447), and the fetch would have waited for it (require_stable) had
// the coordinator taken it earlier. A fetch under the transaction's own
// generation, or one with another commit of the partition in between that
// may have happened, is no such evidence: the second processing stays a
// violation. A commit in between that failed never happened (fuzz seed
// 20177: a zombie's transaction whose TxnOffsetCommit the coordinator
// refused): the fetch is still evidence.
func TestUnknownCommitResolvedByALaterGenerationsFetch(t *testing.T) {
	eos := Config{Consumers: []ConsumerGuarantees{{Prefix: "e", Group: "etl", Commit: "transactional"}}}
	for _, between := range []betweenCommit{betweenNone, betweenFailed} {
		r := Check(fencedCommitHistory(2, between), eos)
		if r.Violations != 0 {
			t.Fatalf("between %d: violations with a later generation's fetch as evidence\n%s", between, r.Summary())
		}
		verdictOf(t, r, ReprocessedRecord, Permitted)
	}
	verdictOf(t, Check(fencedCommitHistory(1, betweenNone), eos), ReprocessedRecord, Violation)
	verdictOf(t, Check(fencedCommitHistory(1, betweenFailed), eos), ReprocessedRecord, Violation)
	verdictOf(t, Check(fencedCommitHistory(2, betweenUnknown), eos), ReprocessedRecord, Violation)
}

// abortedThenLostHistory is fuzz seed 21252's story: e-0 processes in-0@0
// in a transaction whose TxnOffsetCommit is refused (UNKNOWN_MEMBER_ID: its
// membership expired while a broker was paused), so it aborts; e-0 rejoins,
// fetches the group's committed offset (none), processes in-0@0 again and
// commits. __consumer_offsets then loses the group's records (lossAt:
// "between" the committed attempts, "before" the committed one, or
// nowhere: ""), and e-1, finding no committed offset, processes in-0@0 a
// third time and commits.
func abortedThenLostHistory(lossAt string) ([]history.Op, int64) {
	h := &hb{}
	h.inputs(1)
	assign := func(process string, gen int32) { h.assignIn0(process, gen) }
	var outs []trec
	txn := func(name string, gen int32, at int64, outcome history.Type) {
		done := h.openEtlTxn(name, gen, at)
		outs = append(outs, trec{"out", 0, at, done.Ext.Sends[0].Value})
		if outcome == history.Fail {
			done.Error = "CommitFailedException: UNKNOWN_MEMBER_ID"
		}
		h.add(name, outcome, history.FTxnCommit, done)
	}
	var lost int64
	assign("e-0", 1)
	txn("e-0", 1, 0, history.Fail)
	if lossAt == "before" {
		lost = h.t + 500
	}
	assign("e-0", 2)
	h.fetch("e-0", "etl", map[string]int64{"in-0": -1})
	txn("e-0", 2, 1, history.OK)
	if lossAt == "between" {
		lost = h.t + 500
	}
	assign("e-1", 1)
	h.fetch("e-1", "etl", map[string]int64{"in-0": -1})
	txn("e-1", 1, 2, history.OK)
	h.finalReads("read_uncommitted", map[string]int64{"in-0": 1, "out-0": 3}, append(inRecs(1), outs...)...)
	return h.ops, lost
}

// A loss of __consumer_offsets explains a record processed again only
// between the attempts whose offsets may have committed: an attempt in an
// aborted transaction repeats nothing, so the loss is looked for between
// the first two of the others, not between the first two attempts (fuzz
// seed 21252: an aborted attempt, a committed one, then a loss and a third).
func TestReprocessedAfterAnAbortedAttemptJudgesTheCommittedOnes(t *testing.T) {
	for _, tc := range []struct {
		lossAt, verdict string
	}{
		{"between", Permitted},
		{"before", Violation},
		{"", Violation},
	} {
		t.Run("loss "+tc.lossAt, func(t *testing.T) {
			ops, lost := abortedThenLostHistory(tc.lossAt)
			cfg := Config{Consumers: []ConsumerGuarantees{{Prefix: "e", Group: "etl", Commit: "transactional"}}}
			if lost > 0 {
				cfg.Happened = godViewLosses(DataLoss{Partition: "__consumer_offsets-9", From: 0, To: 5, Cause: "unclean-election", At: lost})
			}
			r := Check(ops, cfg)
			expectCount(t, r, ReprocessedRecord, 1)
			expectVerdict(t, r, ReprocessedRecord, tc.verdict)
			if a, _ := r.Anomaly(ReprocessedRecord); tc.verdict == Permitted && !strings.Contains(a.Because, "__consumer_offsets lost committed data") {
				t.Fatalf("because %q, want the loss named", a.Because)
			}
		})
	}
}

// etlMember is a value naming process's member of group etl in gen.
func etlMember(process string, gen int32) history.Value {
	v := history.NoValue()
	x := v.X()
	x.Group, x.Generation, x.MemberID = "etl", gen, process+"-m"
	return v
}

// assignIn0 records process assigned in-0 in group etl's generation gen.
func (h *hb) assignIn0(process string, gen int32) {
	v := etlMember(process, gen)
	v.Ext.Partitions = []string{"in-0"}
	h.add(process, history.Invoke, history.FAssign, v)
	h.add(process, history.OK, history.FAssign, v)
}

// openEtlTxn has name begin a transaction in group etl's generation gen,
// process in-0@0, send its output to out-0@at and invoke the commit (offsets
// in-0: 1); it returns the commit's completion value, holding the send.
func (h *hb) openEtlTxn(name string, gen int32, at int64) history.Value {
	tid := "etl-" + name
	v := history.NoValue()
	v.X().TransactionalID = tid
	h.add(name, history.Invoke, history.FTxnBegin, v)
	h.add(name, history.OK, history.FTxnBegin, v)
	p := etlMember(name, gen)
	p.Topic, p.Partition, p.Offset = "in", 0, 0
	h.add(name, history.Invoke, history.FProcess, p)
	h.add(name, history.OK, history.FProcess, p)
	s := h.procSend(name, tid, -1, 0, at)
	c := etlMember(name, gen)
	c.Ext.TransactionalID, c.Ext.Offsets = tid, map[string]int64{"in-0": 1}
	h.add(name, history.Invoke, history.FTxnCommit, c)
	done := c
	done.Ext = &history.Ext{}
	*done.Ext = *c.Ext
	done.Ext.Sends = []history.Send{s}
	return done
}
