package checker

import (
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
