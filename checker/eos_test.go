package checker

import (
	"compress/gzip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"kafkasim/godview"
	"kafkasim/history"
)

// trec is a record of any topic.
type trec struct {
	topic string
	p     int32
	off   int64
	v     string
}

// inputs writes n records to in-0 (offsets 0..n-1), values in:0, in:1, ….
func (h *hb) inputs(n int) {
	for i := range n {
		v := history.NoValue()
		v.Topic, v.Value = "in", "in:"+strconv.Itoa(i)
		h.add("p-0", history.Invoke, history.FSend, v)
		v.Partition, v.Offset = 0, int64(i)
		h.add("p-0", history.OK, history.FSend, v)
	}
}

// output is one output record a processor step writes: the input offset it
// is made from, and where it lands in out-0.
type output struct {
	src, at int64
}

// procSend is a processor's send of the output of in-0@src to out-0@at
// (at < 0: the send fails), at producer epoch (−1: not recorded).
func (h *hb) procSend(process, tid string, epoch int32, src, at int64) history.Send {
	v := history.NoValue()
	v.Topic, v.Value = "out", process+":"+strconv.FormatInt(src, 10)+"@"+strconv.Itoa(len(h.ops))
	x := v.X()
	x.TransactionalID, x.Source = tid, &history.Source{Topic: "in", Partition: 0, Offset: src}
	if epoch >= 0 {
		x.Producer = &history.ProducerEpoch{ID: 7, Epoch: epoch}
	}
	h.add(process, history.Invoke, history.FSend, v)
	if at < 0 {
		h.add(process, history.Fail, history.FSend, v)
		return history.Send{Topic: "out", Value: v.Value, Partition: -1, Offset: -1}
	}
	v.Partition, v.Offset = 0, at
	h.add(process, history.OK, history.FSend, v)
	return history.Send{Topic: "out", Value: v.Value, Partition: 0, Offset: at}
}

// eosTxn is one transaction of an exactly-once processor of group etl: its
// outputs, then its commit with the group's offset of in-0 (commitTo < 0:
// none) ending as outcome (history.Invoke: never ends; history.Fail: an
// abort). It returns the output values.
func (h *hb) eosTxn(process string, epoch int32, outs []output, commitTo int64, outcome history.Type) []string {
	tid := "etl-" + process
	v := history.NoValue()
	v.X().TransactionalID = tid
	h.add(process, history.Invoke, history.FTxnBegin, v)
	h.add(process, history.OK, history.FTxnBegin, v)
	var sends []history.Send
	var vals []string
	for _, o := range outs {
		s := h.procSend(process, tid, epoch, o.src, o.at)
		sends, vals = append(sends, s), append(vals, s.Value)
	}
	f := history.FTxnCommit
	if outcome == history.Fail {
		f, outcome = history.FTxnAbort, history.OK
	}
	c := history.NoValue()
	x := c.X()
	x.TransactionalID, x.Group, x.Generation, x.MemberID = tid, "etl", 1, process+"-m"
	if commitTo >= 0 && f == history.FTxnCommit {
		x.Offsets = map[string]int64{"in-0": commitTo}
	}
	h.add(process, history.Invoke, f, c)
	if outcome == history.Invoke {
		return vals
	}
	c2 := c
	c2.Ext = &history.Ext{}
	*c2.Ext = *x
	c2.Ext.Sends = sends
	h.add(process, outcome, f, c2)
	return vals
}

// finalReads reads in-0 and out-0 to their ends with read_committed final
// polls.
func (h *hb) finalReads(iso string, ends map[string]int64, recs ...trec) {
	v := history.NoValue()
	v.Final, v.Isolation = true, iso
	h.add("final-"+iso, history.Invoke, history.FPoll, v)
	v.HasRecords = true
	x := v.X()
	x.LogStartOffsets = map[string]int64{"in-0": 0, "out-0": 0}
	x.Positions = map[string]int64{}
	x.EndOffsets = ends
	for _, r := range recs {
		v.Records = append(v.Records, history.Record{Topic: r.topic, Partition: r.p, Offset: r.off, Value: r.v})
		x.Positions[r.topic+"-"+strconv.Itoa(int(r.p))] = r.off + 1
	}
	for p, e := range ends {
		x.Positions[p] = max(x.Positions[p], e)
	}
	h.add("final-"+iso, history.OK, history.FPoll, v)
}

func inRecs(n int) []trec {
	var out []trec
	for i := range n {
		out = append(out, trec{"in", 0, int64(i), "in:" + strconv.Itoa(i)})
	}
	return out
}

func outRecs(vals ...string) []trec {
	var out []trec
	for i, v := range vals {
		out = append(out, trec{"out", 0, int64(i), v})
	}
	return out
}

var eosTypes = []string{DuplicateOutput, LostOutput, NonatomicOutput, ZombieWrite, HangingTransaction}

func verdictOf(t *testing.T, r *Report, typ, verdict string) Anomaly {
	t.Helper()
	for _, a := range r.Anomalies {
		if a.Type == typ && a.Verdict == verdict {
			return a
		}
	}
	t.Fatalf("no %s %s\n%s", verdict, typ, r.Summary())
	return Anomaly{}
}

func expectNone(t *testing.T, r *Report, types ...string) {
	t.Helper()
	for _, typ := range types {
		if r.Count(typ) > 0 {
			t.Fatalf("%s reported\n%s", typ, r.Summary())
		}
	}
}

func TestExactlyOnceProcessorCleanRun(t *testing.T) {
	h := &hb{}
	h.inputs(3)
	a := h.eosTxn("e-0", 0, []output{{0, 0}, {1, 1}}, 2, history.OK)
	// An aborted attempt at input 2, then the one that commits: a
	// reprocessing exactly-once permits.
	h.eosTxn("e-0", 1, []output{{2, 2}}, 3, history.Fail)
	b := h.eosTxn("e-0", 2, []output{{2, 3}}, 3, history.OK)
	h.finalReads(rc, map[string]int64{"in-0": 3, "out-0": 5}, append(inRecs(3), trec{"out", 0, 0, a[0]}, trec{"out", 0, 1, a[1]}, trec{"out", 0, 3, b[0]})...)
	r := Check(h.ops, Config{})
	expectNone(t, r, eosTypes...)
	if r.Violations != 0 {
		t.Fatalf("violations\n%s", r.Summary())
	}
	if !strings.Contains(strings.Join(r.Assumed, "\n"), "groups etl: commit mode not configured; judged exactly-once") {
		t.Fatalf("the learned mode is not noted: %q", r.Assumed)
	}
}

func TestDuplicateOutput(t *testing.T) {
	build := func() []history.Op {
		h := &hb{}
		h.inputs(2)
		a := h.eosTxn("e-0", 0, []output{{0, 0}, {1, 1}}, 2, history.OK)
		// Another instance commits input 1's output again.
		b := h.eosTxn("e-1", 0, []output{{1, 2}}, 2, history.OK)
		h.finalReads(rc, map[string]int64{"in-0": 2, "out-0": 3}, append(inRecs(2), outRecs(a[0], a[1], b[0])...)...)
		return h.ops
	}
	r := Check(build(), Config{})
	d := verdictOf(t, r, DuplicateOutput, Violation)
	if d.Example.Partition != "in-0" || d.Example.Offset != 1 || r.Count(DuplicateOutput) != 1 {
		t.Fatalf("example %+v\n%s", d.Example, r.Summary())
	}
	// At-least-once permits it.
	alo := Config{Consumers: []ConsumerGuarantees{{Prefix: "e", Group: "etl", Commit: "after-processing"}}}
	verdictOf(t, Check(build(), alo), DuplicateOutput, Permitted)
	// A loss in __consumer_offsets explains it.
	lost := Config{Happened: godViewLosses(DataLoss{Partition: "__consumer_offsets-0", From: 0, To: 5, Cause: "unclean-election"})}
	verdictOf(t, Check(build(), lost), DuplicateOutput, Permitted)
	// A loss of the input record: its offset reused by another record, or,
	// when a later unclean election made the lost log the log again, the
	// same record read again (fuzz seed 47702). Each says which.
	inputLoss := DataLoss{Kind: godview.Loss, Partition: "in-0", From: 1, To: 2, Records: 1, Cause: "unclean-election"}
	back := DataLoss{Kind: godview.Resurrected, Partition: "in-0", From: 1, To: 2}
	for _, tc := range []struct {
		name      string
		happened  []DataLoss
		want, not string
	}{
		{"reused", []DataLoss{inputLoss}, "the offset was reused", "the same record was read again"},
		{"resurrected", []DataLoss{inputLoss, back}, "the same record was read again", "the offset was reused"},
		{"resurrected elsewhere", []DataLoss{inputLoss, {Kind: godview.Resurrected, Partition: "in-0", From: 0, To: 1}}, "the offset was reused", "the same record was read again"},
	} {
		d := verdictOf(t, Check(build(), Config{Happened: godview.Seen(tc.happened...)}), DuplicateOutput, Permitted)
		if !strings.Contains(d.Because, tc.want) || strings.Contains(d.Because, tc.not) {
			t.Errorf("%s: because %q, want %q", tc.name, d.Because, tc.want)
		}
	}
}

func TestAnAbortedOrUncommittedSecondOutputIsNoDuplicate(t *testing.T) {
	h := &hb{}
	h.inputs(2)
	a := h.eosTxn("e-0", 0, []output{{0, 0}, {1, 1}}, 2, history.OK)
	h.eosTxn("e-1", 0, []output{{1, 2}}, 2, history.Fail)
	h.eosTxn("e-1", 1, []output{{1, 3}}, 2, history.Invoke) // commit of unknown outcome
	// read_uncommitted final reads hold all three; only a's are committed.
	h.finalReads(ru, map[string]int64{"in-0": 2, "out-0": 4}, append(inRecs(2), outRecs(a[0], a[1])...)...)
	r := Check(h.ops, Config{})
	expectNone(t, r, DuplicateOutput, LostOutput, NonatomicOutput)
}

func TestLostOutput(t *testing.T) {
	h := &hb{}
	h.inputs(3)
	// The group commits past input 2, whose output was never sent; input 1's
	// output was sent in a transaction that aborted.
	h.eosTxn("e-0", 0, []output{{1, 0}}, -1, history.Fail)
	a := h.eosTxn("e-0", 1, []output{{0, 2}}, 3, history.OK)
	h.finalReads(rc, map[string]int64{"in-0": 3, "out-0": 4}, append(inRecs(3), trec{"out", 0, 2, a[0]})...)
	r := Check(h.ops, Config{})
	l := verdictOf(t, r, LostOutput, Violation)
	if r.Count(LostOutput) != 2 || l.Example.Offset != 1 || !strings.Contains(l.Example.Detail, "its transaction aborted") {
		t.Fatalf("example %+v\n%s", l.Example, r.Summary())
	}
	expectNone(t, r, DuplicateOutput)
}

func TestOutputNotJudgedWhereFinalReadsDidNotReach(t *testing.T) {
	h := &hb{}
	h.inputs(2)
	h.eosTxn("e-0", 0, []output{{0, 0}, {1, 1}}, 2, history.OK)
	// The final reads read in-0 only: out-0 is not covered.
	v := history.NoValue()
	v.Final, v.Isolation = true, rc
	h.add("final-0", history.Invoke, history.FPoll, v)
	v.HasRecords = true
	v.X().Positions, v.Ext.EndOffsets = map[string]int64{"in-0": 2}, map[string]int64{"in-0": 2}
	for _, r := range inRecs(2) {
		v.Records = append(v.Records, history.Record{Topic: r.topic, Partition: r.p, Offset: r.off, Value: r.v})
	}
	h.add("final-0", history.OK, history.FPoll, v)
	expectNone(t, Check(h.ops, Config{}), eosTypes...)
}

func TestNonatomicOutput(t *testing.T) {
	build := func(commitTo int64) []history.Op {
		h := &hb{}
		h.inputs(2)
		a := h.eosTxn("e-0", 0, []output{{0, 0}, {1, 1}}, commitTo, history.OK)
		b := h.eosTxn("e-0", 1, nil, 2, history.OK)
		_ = b
		h.finalReads(rc, map[string]int64{"in-0": 2, "out-0": 2}, append(inRecs(2), outRecs(a...)...)...)
		return h.ops
	}
	// The transaction committing input 1's output committed the offset only
	// to 1; a later one moved it past.
	r := Check(build(1), Config{})
	n := verdictOf(t, r, NonatomicOutput, Violation)
	if n.Example.Offset != 1 || r.Count(NonatomicOutput) != 1 {
		t.Fatalf("example %+v\n%s", n.Example, r.Summary())
	}
	expectNone(t, Check(build(2), Config{}), eosTypes...)
	// A processor configured at-least-once is not held to it.
	alo := Config{Consumers: []ConsumerGuarantees{{Prefix: "e", Group: "etl", Commit: "after-processing"}}}
	expectNone(t, Check(build(1), alo), NonatomicOutput)
}

// zombie: z-0 writes at epoch 1; z-1, the same transactional id, completes
// an operation at epoch 2; z-0's commit is invoked before (legit) or after
// (a zombie) that.
func zombieHistory(commitFirst bool) []history.Op {
	h := &hb{}
	begin := func(p string) {
		v := history.NoValue()
		v.X().TransactionalID = "pay"
		h.add(p, history.Invoke, history.FTxnBegin, v)
		h.add(p, history.OK, history.FTxnBegin, v)
	}
	send := func(p, val string, epoch int32, off int64) {
		v := history.NoValue()
		v.Topic, v.Value = "t", val
		x := v.X()
		x.TransactionalID, x.Producer = "pay", &history.ProducerEpoch{ID: 7, Epoch: epoch}
		h.add(p, history.Invoke, history.FSend, v)
		v.Partition, v.Offset = 0, off
		h.add(p, history.OK, history.FSend, v)
	}
	commit := func(p string) {
		v := history.NoValue()
		v.X().TransactionalID = "pay"
		h.add(p, history.Invoke, history.FTxnCommit, v)
		h.add(p, history.OK, history.FTxnCommit, v)
	}
	begin("z-0")
	send("z-0", "z-0:1", 1, 0)
	if commitFirst {
		commit("z-0")
	}
	begin("z-1")
	send("z-1", "z-1:1", 2, 1)
	if !commitFirst {
		commit("z-0")
	}
	commit("z-1")
	h.pollIso("c-0", rc, false, rec{0, 0, "z-0:1"}, rec{0, 1, "z-1:1"})
	return h.ops
}

func TestZombieWrite(t *testing.T) {
	r := Check(zombieHistory(false), Config{})
	z := verdictOf(t, r, ZombieWrite, Violation)
	if z.Example.Value != "z-0:1" || r.Count(ZombieWrite) != 1 {
		t.Fatalf("example %+v\n%s", z.Example, r.Summary())
	}
	expectNone(t, Check(zombieHistory(true), Config{}), ZombieWrite)
	lost := Config{Happened: godViewLosses(DataLoss{Partition: "__transaction_state-3", From: 0, To: 5, Cause: "power-loss"})}
	verdictOf(t, Check(zombieHistory(false), lost), ZombieWrite, Permitted)
}

// Transaction version 2 bumps the epoch at every transaction's end: one
// instance's transactions at rising epochs fence nothing.
func TestEpochBumpsAtEachTransactionFenceNothing(t *testing.T) {
	h := &hb{}
	for i := range 3 {
		v := history.NoValue()
		v.X().TransactionalID = "pay"
		h.add("t-0", history.Invoke, history.FTxnBegin, v)
		h.add("t-0", history.OK, history.FTxnBegin, v)
		s := history.NoValue()
		s.Topic, s.Value = "t", "t-0:"+strconv.Itoa(i)
		s.X().TransactionalID, s.Ext.Producer = "pay", &history.ProducerEpoch{ID: 7, Epoch: int32(i)}
		h.add("t-0", history.Invoke, history.FSend, s)
		s.Partition, s.Offset = 0, int64(i)
		h.add("t-0", history.OK, history.FSend, s)
		h.add("t-0", history.Invoke, history.FTxnCommit, v)
		// The commit's answer carries the bumped epoch.
		c := v
		c.Ext = &history.Ext{TransactionalID: "pay", Generation: -1, Producer: &history.ProducerEpoch{ID: 7, Epoch: int32(i + 1)}}
		h.add("t-0", history.OK, history.FTxnCommit, c)
	}
	h.pollIso("c-0", rc, false, rec{0, 0, "t-0:0"}, rec{0, 1, "t-0:1"}, rec{0, 2, "t-0:2"})
	r := Check(h.ops, Config{})
	expectNone(t, r, eosTypes...)
	if r.Violations != 0 {
		t.Fatalf("violations\n%s", r.Summary())
	}
}

// hanging: a transaction writes t-0@1 and its outcome never appears (or its
// commit completes, resolved); the read_committed final read, idle after it,
// ends at 1.
func hangingHistory(resolved bool, idle time.Duration) []history.Op {
	h := &hb{}
	h.send("p-0", "p-0:0", 0, 0, history.OK)
	h.txnBegin("t-0")
	h.tsend("t-0", "t-0:1", 0, 1)
	if resolved {
		h.txnEnd("t-0", history.FTxnCommit, history.OK)
	} else {
		h.crash("t-0")
	}
	h.send("p-0", "p-0:2", 0, 2, history.OK)
	h.t += int64(idle)
	v := history.NoValue()
	v.Final, v.Isolation = true, rc
	h.add("final-0", history.Invoke, history.FPoll, v)
	v.HasRecords = true
	v.X().Positions, v.Ext.EndOffsets = map[string]int64{"t-0": 1}, map[string]int64{"t-0": 1}
	v.Records = []history.Record{{Topic: "t", Partition: 0, Offset: 0, Value: "p-0:0"}}
	h.add("final-0", history.OK, history.FPoll, v)
	return h.ops
}

func TestHangingTransaction(t *testing.T) {
	r := Check(hangingHistory(false, 2*time.Minute), Config{})
	hg := verdictOf(t, r, HangingTransaction, Violation)
	if hg.Example.Partition != "t-0" || hg.Example.Offset != 1 || hg.Example.Value != "t-0:1" {
		t.Fatalf("example %+v\n%s", hg.Example, r.Summary())
	}
	// Within transaction.timeout.ms (+ the abort interval): permitted.
	verdictOf(t, Check(hangingHistory(false, 30*time.Second), Config{}), HangingTransaction, Permitted)
	long := Config{Producers: []ProducerGuarantees{{Prefix: "t", TransactionTimeout: 5 * time.Minute}}}
	verdictOf(t, Check(hangingHistory(false, 2*time.Minute), long), HangingTransaction, Permitted)
	// Committed: markers may be on their way, unless the god view saw it hang.
	verdictOf(t, Check(hangingHistory(true, 2*time.Minute), Config{}), HangingTransaction, Permitted)
	seen := Config{Happened: godview.Seen(godview.Fact{Kind: godview.HangingTransaction, Partition: "t-0", From: 1, Producer: 9, TransactionalID: "tx-t-0"})}
	verdictOf(t, Check(hangingHistory(true, 2*time.Minute), seen), HangingTransaction, Violation)
}

// A hanging transaction whose marker the god view saw a permitted loss take
// (the fact's Cause: KAFKA-20716) is Kafka's own; the same fact without a
// cause stays a violation (fuzz seed 48983).
func TestHangingTransactionWhoseMarkerALossTook(t *testing.T) {
	fact := godview.Fact{Kind: godview.HangingTransaction, Partition: "t-0", From: 1, Producer: 9, TransactionalID: "tx-t-0"}
	verdictOf(t, Check(hangingHistory(true, 2*time.Minute), Config{Happened: godview.Seen(fact)}), HangingTransaction, Violation)
	fact.Cause, fact.ExposedBy = "power-loss", "unclean-election"
	r := Check(hangingHistory(true, 2*time.Minute), Config{Happened: godview.Seen(fact)})
	hg := verdictOf(t, r, HangingTransaction, Permitted)
	if !strings.Contains(hg.Because, "t-0 lost committed data (power-loss, exposed by unclean-election) that held the transaction's COMMIT or ABORT marker") {
		t.Fatalf("because %q", hg.Because)
	}
	// Past its timeout with its outcome unknown: the lost marker explains it too.
	verdictOf(t, Check(hangingHistory(false, 2*time.Minute), Config{Happened: godview.Seen(fact)}), HangingTransaction, Permitted)
}

func TestNoHangingTransactionWhereTheFinalReadReachedTheEnd(t *testing.T) {
	h := &hb{}
	h.txnBegin("t-0")
	h.tsend("t-0", "t-0:0", 0, 0)
	h.txnEnd("t-0", history.FTxnAbort, history.OK)
	h.send("p-0", "p-0:1", 0, 2, history.OK) // the abort marker is at 1
	v := history.NoValue()
	v.Final, v.Isolation = true, rc
	h.add("final-0", history.Invoke, history.FPoll, v)
	v.HasRecords = true
	v.X().Positions, v.Ext.EndOffsets = map[string]int64{"t-0": 3}, map[string]int64{"t-0": 3}
	v.Records = []history.Record{{Topic: "t", Partition: 0, Offset: 2, Value: "p-0:1"}}
	h.add("final-0", history.OK, history.FPoll, v)
	r := Check(h.ops, Config{})
	expectNone(t, r, eosTypes...)
	// The god view's hanging transaction is reported on its own.
	seen := Config{Happened: godview.Seen(godview.Fact{Kind: godview.HangingTransaction, Partition: "u-0", From: 4, Producer: 9, TransactionalID: "x"})}
	verdictOf(t, Check(h.ops, seen), HangingTransaction, Violation)
}

// A TxnOffsetCommit from a fenced member is a zombie-commit like an
// OffsetCommit's.
func TestFencedTxnOffsetCommitIsAZombieCommit(t *testing.T) {
	h := &hb{}
	h.inputs(1)
	assign := func(p string, gen int32) {
		v := history.NoValue()
		x := v.X()
		x.Group, x.Partitions, x.Generation, x.MemberID = "etl", []string{"in-0"}, gen, p+"-m"
		h.add(p, history.Invoke, history.FAssign, v)
		h.add(p, history.OK, history.FAssign, v)
	}
	assign("e-0", 1)
	assign("e-1", 2)
	a := h.eosTxn("e-0", -1, []output{{0, 0}}, 1, history.OK) // generation 1
	h.finalReads(rc, map[string]int64{"in-0": 1, "out-0": 1}, append(inRecs(1), outRecs(a...)...)...)
	verdictOf(t, Check(h.ops, Config{}), ZombieCommit, Violation)
}

// A group whose offsets go in transactions is judged exactly-once when its
// configuration does not say: its records processed twice outside aborted
// transactions are a violation.
func TestReprocessedRecordJudgedExactlyOnceFromTransactionalOffsets(t *testing.T) {
	build := func() []history.Op {
		h := &hb{}
		h.inputs(1)
		for _, p := range []string{"e-0", "e-1"} {
			v := history.NoValue()
			v.X().TransactionalID = "etl-" + p
			h.add(p, history.Invoke, history.FTxnBegin, v)
			pv := history.NoValue()
			pv.Topic, pv.Partition, pv.Offset = "in", 0, 0
			x := pv.X()
			x.Group, x.Generation, x.MemberID = "etl", 1, p+"-m"
			h.add(p, history.Invoke, history.FProcess, pv)
			h.add(p, history.OK, history.FProcess, pv)
			c := history.NoValue()
			cx := c.X()
			cx.TransactionalID, cx.Group, cx.Offsets = "etl-"+p, "etl", map[string]int64{"in-0": 1}
			h.add(p, history.Invoke, history.FTxnCommit, c)
			h.add(p, history.OK, history.FTxnCommit, c)
		}
		return h.ops
	}
	verdictOf(t, Check(build(), Config{}), ReprocessedRecord, Violation)
	alo := Config{Consumers: []ConsumerGuarantees{{Group: "etl", Commit: "after-processing"}}}
	verdictOf(t, Check(build(), alo), ReprocessedRecord, Permitted)
}

// A consumer with commit: transactional (its transactions hold offsets and
// no sends, as model/processor with no output emits them): a record
// processed again after a transaction that committed past it is a
// violation; after one that aborted, permitted.
func TestTransactionalCommitConsumerReprocessing(t *testing.T) {
	build := func(first history.Type) []history.Op {
		h := &hb{}
		h.inputs(1)
		for i, p := range []string{"c-0", "c-1"} {
			v := history.NoValue()
			v.X().TransactionalID = p
			h.add(p, history.Invoke, history.FTxnBegin, v)
			h.add(p, history.OK, history.FTxnBegin, v)
			pv := history.NoValue()
			pv.Topic, pv.Partition, pv.Offset = "in", 0, 0
			x := pv.X()
			x.Group, x.Generation, x.MemberID = "billing", int32(i+1), p+"-m"
			h.add(p, history.Invoke, history.FProcess, pv)
			h.add(p, history.OK, history.FProcess, pv)
			c := history.NoValue()
			cx := c.X()
			cx.TransactionalID, cx.Group, cx.Generation, cx.MemberID, cx.Offsets = p, "billing", int32(i+1), p+"-m", map[string]int64{"in-0": 1}
			h.add(p, history.Invoke, history.FTxnCommit, c)
			outcome := history.OK
			if i == 0 {
				outcome = first
			}
			if outcome == history.Fail {
				c.Error = "CommitFailedException"
			}
			h.add(p, outcome, history.FTxnCommit, c)
		}
		return h.ops
	}
	cfg := Config{Consumers: []ConsumerGuarantees{{Prefix: "c", Group: "billing", Commit: "transactional", Isolation: "read_committed"}}}
	verdictOf(t, Check(build(history.OK), cfg), ReprocessedRecord, Violation)
	verdictOf(t, Check(build(history.Fail), cfg), ReprocessedRecord, Permitted)
}

// A history recorded by a real client: franz-go against kfake, the
// kfakerec recorder's txn workload (testdata/README.md). Its verdict
// classes: aborted reads by the read_uncommitted reader and G0 cycles,
// both permitted; nothing else.
func TestKfakerecTxnHistoryIsClean(t *testing.T) {
	f, err := os.Open("testdata/kfakerec-txn.jsonl.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	r, err := CheckReader(zr, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Violations != 0 {
		t.Fatalf("violations\n%s", r.Summary())
	}
	for _, a := range r.Anomalies {
		if a.Type != AbortedRead && a.Type != G0 {
			t.Fatalf("unexpected %s\n%s", a.Type, r.Summary())
		}
	}
	if r.Stats.TxnCommitted == 0 || r.Stats.TxnAborted == 0 || r.Count(AbortedRead) == 0 {
		t.Fatalf("the history lost its transactions: %+v\n%s", r.Stats, r.Summary())
	}
}

// docs/history.md's processor example is a history the checker reads as
// one exactly-once output with its offset in the same transaction.
func TestHistoryDocProcessorExample(t *testing.T) {
	b, err := os.ReadFile("../docs/history.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "### Processors and transactional producers")
	if i < 0 {
		t.Fatal("docs/history.md lost its processor section")
	}
	block := doc[i:]
	block = block[strings.Index(block, "```\n")+4:]
	block = block[:strings.Index(block, "```")]
	ops, err := history.ReadAll(strings.NewReader(block))
	if err != nil || len(ops) != 6 {
		t.Fatalf("%d ops: %v", len(ops), err)
	}
	// Add the input record's send and final reads of both topics.
	h := &hb{}
	in := history.NoValue()
	in.Topic, in.Value = "orders", "p-0:41"
	h.add("p-0", history.Invoke, history.FSend, in)
	in.Partition, in.Offset = 2, 41
	h.add("p-0", history.OK, history.FSend, in)
	h.ops = append(h.ops, ops...)
	v := history.NoValue()
	v.Final, v.Isolation, v.HasRecords = true, rc, true
	v.Records = []history.Record{{Topic: "orders", Partition: 2, Offset: 41, Value: "p-0:41"}, {Topic: "invoices", Partition: 0, Offset: 9, Value: "etl-0:1"}}
	v.X().EndOffsets = map[string]int64{"orders-2": 42, "invoices-0": 10}
	v.Ext.Positions = v.Ext.EndOffsets
	h.add("final-0", history.Invoke, history.FPoll, v)
	h.add("final-0", history.OK, history.FPoll, v)
	for i := range h.ops {
		h.ops[i].Index = int64(i)
	}
	cfg := Config{}
	a := newAnalyzer(&cfg)
	for i := range h.ops {
		a.add(&h.ops[i])
	}
	r := cfg.report(a)
	if len(a.eos.outputs) != 1 || a.eos.outputs[0].group != "etl" || a.txns[0].epoch != 3 || r.Violations != 0 {
		t.Fatalf("outputs %+v, txn %+v\n%s", a.eos.outputs, a.txns[0], r.Summary())
	}
	expectNone(t, r, eosTypes...)
}

// A transaction its own producer aborted, whose record a read_committed
// poll returned, is an aborted-read, not a zombie's write, though its
// abort's answer carries the bumped epoch.
func TestAnAbortedTransactionsReadIsNoZombieWrite(t *testing.T) {
	h := &hb{}
	v := history.NoValue()
	v.X().TransactionalID = "pay"
	h.add("t-0", history.Invoke, history.FTxnBegin, v)
	h.add("t-0", history.OK, history.FTxnBegin, v)
	s := history.NoValue()
	s.Topic, s.Value = "t", "t-0:0"
	s.X().TransactionalID, s.Ext.Producer = "pay", &history.ProducerEpoch{ID: 7, Epoch: 0}
	h.add("t-0", history.Invoke, history.FSend, s)
	s.Partition, s.Offset = 0, 0
	h.add("t-0", history.OK, history.FSend, s)
	h.add("t-0", history.Invoke, history.FTxnAbort, v)
	c := v
	c.Ext = &history.Ext{TransactionalID: "pay", Generation: -1, Producer: &history.ProducerEpoch{ID: 7, Epoch: 1}}
	h.add("t-0", history.OK, history.FTxnAbort, c)
	h.pollIso("c-0", rc, false, rec{0, 0, "t-0:0"})
	r := Check(h.ops, Config{})
	verdictOf(t, r, AbortedRead, Violation)
	expectNone(t, r, ZombieWrite)
}

// eosHistory is an exactly-once processor's clean history of n inputs in
// transactions of 10, over 4 input partitions, with final reads.
func eosHistory(n int) []history.Op {
	h := &hb{}
	const parts = 4
	var finals []history.Record
	for i := range n {
		v := history.NoValue()
		v.Topic, v.Value = "in", "in:"+strconv.Itoa(i)
		h.add("p-0", history.Invoke, history.FSend, v)
		v.Partition, v.Offset = int32(i%parts), int64(i/parts)
		h.add("p-0", history.OK, history.FSend, v)
		finals = append(finals, history.Record{Topic: "in", Partition: v.Partition, Offset: v.Offset, Value: v.Value})
	}
	outAt := int64(0)
	for lo := 0; lo < n; lo += 10 {
		tid := "etl-e-0"
		v := history.NoValue()
		v.X().TransactionalID = tid
		h.add("e-0", history.Invoke, history.FTxnBegin, v)
		h.add("e-0", history.OK, history.FTxnBegin, v)
		offs := map[string]int64{}
		for i := lo; i < min(lo+10, n); i++ {
			s := history.NoValue()
			s.Topic, s.Value = "out", "e-0:"+strconv.Itoa(i)
			x := s.X()
			x.TransactionalID, x.Source = tid, &history.Source{Topic: "in", Partition: int32(i % parts), Offset: int64(i / parts)}
			x.Producer = &history.ProducerEpoch{ID: 7, Epoch: 0}
			h.add("e-0", history.Invoke, history.FSend, s)
			s.Partition, s.Offset = 0, outAt
			h.add("e-0", history.OK, history.FSend, s)
			finals = append(finals, history.Record{Topic: "out", Partition: 0, Offset: outAt, Value: s.Value})
			outAt++
			offs["in-"+strconv.Itoa(i%parts)] = int64(i/parts) + 1
		}
		outAt++ // the commit marker
		c := history.NoValue()
		cx := c.X()
		cx.TransactionalID, cx.Group, cx.Offsets, cx.Generation = tid, "etl", offs, 1
		h.add("e-0", history.Invoke, history.FTxnCommit, c)
		h.add("e-0", history.OK, history.FTxnCommit, c)
	}
	v := history.NoValue()
	v.Final, v.Isolation, v.HasRecords, v.Records = true, rc, true, finals
	h.add("final-0", history.Invoke, history.FPoll, v)
	h.add("final-0", history.OK, history.FPoll, v)
	return h.ops
}

func TestExactlyOnceHistoryAtScaleIsClean(t *testing.T) {
	r := Check(eosHistory(2000), Config{SkipLinearizability: true})
	expectNone(t, r, eosTypes...)
	if r.Violations != 0 {
		t.Fatalf("violations\n%s", r.Summary())
	}
}

// BenchmarkExactlyOnce checks a processor's history of 100,000 inputs: the
// exactly-once checks index outputs by input and run once over each input
// partition's offsets.
func BenchmarkExactlyOnce(b *testing.B) {
	ops := eosHistory(100_000)
	b.ResetTimer()
	for range b.N {
		Check(ops, Config{SkipLinearizability: true})
	}
}

// After the input partition lost committed data, its offsets are reused: a
// group that had committed past the lost records finds its position out of
// range, auto.offset.reset moves it back, and the record that took an
// offset gets an output whose transaction commits an offset below the
// group's. Only that reason is excused by the loss: an output committed
// with no offset of its input stays a violation.
func TestNonatomicOutputAfterInputOffsetsReused(t *testing.T) {
	build := func() []history.Op {
		h := &hb{}
		h.inputs(3)
		h.eosTxn("e-0", 0, nil, 3, history.OK) // the group passes 0..2
		a := h.eosTxn("e-0", 1, []output{{1, 0}}, 2, history.OK)
		h.finalReads(rc, map[string]int64{"in-0": 3, "out-0": 1}, append(inRecs(3), outRecs(a...)...)...)
		return h.ops
	}
	n := verdictOf(t, Check(build(), Config{}), NonatomicOutput, Violation)
	if !strings.Contains(n.Example.Detail, "had already moved the group's offset") {
		t.Fatalf("example %+v", n.Example)
	}
	lost := Config{Happened: godViewLosses(DataLoss{Partition: "in-0", From: 1, To: 3, Cause: "unclean-election"})}
	p := verdictOf(t, Check(build(), lost), NonatomicOutput, Permitted)
	if !strings.Contains(p.Because, "the offset was reused") {
		t.Fatalf("because %q", p.Because)
	}
	// A transaction that commits no offset of the input: the loss explains
	// nothing.
	h := &hb{}
	h.inputs(2)
	a := h.eosTxn("e-0", 0, []output{{1, 0}}, -1, history.OK)
	h.eosTxn("e-0", 1, nil, 2, history.OK)
	h.finalReads(rc, map[string]int64{"in-0": 2, "out-0": 1}, append(inRecs(2), outRecs(a...)...)...)
	verdictOf(t, Check(h.ops, lost), NonatomicOutput, Violation)
}

// After an exactly-once processor read an input, its partition lost
// committed data (an unclean election whose leader lacked it): the
// consumer's position, past the input, lay beyond the new log's end, and it
// moved back (KIP-320 truncation detection) and read the record that took
// offset 0. The transaction then sent that position (1) to the coordinator
// with the lost input's output: sendOffsetsToTransaction commits positions,
// not the records they came from (fuzz seed 16037). Only a loss at the
// input's offset after the processor held the input and before the commit
// began explains an offset below it.
func TestNonatomicOutputOfAnInputLostBeforeItsTransactionCommitted(t *testing.T) {
	build := func() ([]history.Op, int64, int64, int64) {
		h := &hb{}
		h.inputs(4)
		a := h.eosTxn("e-0", 0, []output{{0, 0}, {1, 1}, {2, 2}}, 3, history.OK)
		before := h.t + 500 // the loss before the processor read in:3
		// txn-begin (2 ops), then the output of in:3 (2 ops): the loss
		// comes after it, before the next output.
		mid := h.t + 4*1000 + 500
		b := h.eosTxn("e-0", 1, []output{{3, 4}, {0, 5}}, 1, history.OK)
		after := h.t + 500 // past the commit
		v := history.NoValue()
		v.Topic, v.Value = "in", "new:0"
		h.add("p-0", history.Invoke, history.FSend, v)
		v.Partition, v.Offset = 0, 0
		h.add("p-0", history.OK, history.FSend, v)
		h.finalReads(rc, map[string]int64{"in-0": 1, "out-0": 7},
			trec{"in", 0, 0, "new:0"}, trec{"out", 0, 0, a[0]}, trec{"out", 0, 1, a[1]}, trec{"out", 0, 2, a[2]},
			trec{"out", 0, 4, b[0]}, trec{"out", 0, 5, b[1]})
		return h.ops, before, mid, after
	}
	ops, before, mid, after := build()
	// A loss before the processor held the input, or after the commit
	// began, does not explain it: the consumer read in:3 in the new log,
	// or committed before its position could move back.
	expectInputLossExplains(t, ops, "power-loss", mid, before, after)
}

// expectInputLossExplains checks a history whose exactly-once transaction
// committed in-0's offset only to 1 with the output of in:3: a violation
// without a loss, permitted as explained by a loss of in-0 (of cause) at
// explains, a violation still with the loss at each time in not.
func expectInputLossExplains(t *testing.T, ops []history.Op, cause string, explains int64, not ...int64) {
	t.Helper()
	loss := func(at int64) Config {
		return Config{Happened: godViewLosses(DataLoss{Partition: "in-0", From: 0, To: 4, Records: 4, Cause: cause, At: at})}
	}
	n := verdictOf(t, Check(ops, Config{}), NonatomicOutput, Violation)
	if n.Example.Offset != 3 || !strings.Contains(n.Example.Detail, "only to 1") {
		t.Fatalf("example %+v", n.Example)
	}
	r := Check(ops, loss(explains))
	if a, ok := r.Anomaly(NonatomicOutput); ok && a.Verdict == Violation {
		t.Fatalf("a loss at %d explains the offset\n%s", explains, r.Summary())
	}
	p := verdictOf(t, r, NonatomicOutput, Permitted)
	if p.Example.Offset != 3 || !strings.Contains(p.Because, "after the processor read the input") {
		t.Fatalf("because %q", p.Because)
	}
	for _, at := range not {
		v := verdictOf(t, Check(ops, loss(at)), NonatomicOutput, Violation)
		if v.Example.Offset != 3 {
			t.Fatalf("loss at %d: example %+v", at, v.Example)
		}
	}
}

// A poll hands out what earlier fetches left in the consumer's fetch
// buffer: an exactly-once processor blocked in commitTransaction while the
// input's only replica lost its disk polled, after the loss, the record it
// had fetched before it (in:3), processed it in its next transaction, then
// moved back to the new log's records (KIP-320 truncation detection) and
// committed that position (1) with in:3's output (fuzz seed 58219). The
// record it processed was in the log only before the loss, so the loss
// came after its fetch although before the poll: it explains the offset
// below the input. A loss before in:3 was written does not (the processor
// read in:3 after it), nor one after the commit began.
func TestNonatomicOutputOfAnInputFetchedBeforeItsLoss(t *testing.T) {
	build := func() ([]history.Op, int64, int64, int64) {
		h := &hb{}
		h.inputs(3)
		beforeWrite := h.t + 500 // in:3 is written after it
		iv := history.NoValue()
		iv.Topic, iv.Value = "in", "in:3"
		h.add("p-0", history.Invoke, history.FSend, iv)
		iv.Partition, iv.Offset = 0, 3
		h.add("p-0", history.OK, history.FSend, iv)
		a := h.eosTxn("e-0", 0, []output{{0, 0}, {1, 1}, {2, 2}}, 3, history.OK)
		beforePoll := h.t + 500 // the loss after the fetch, before the poll
		v := history.NoValue()
		x := v.X()
		x.Group, x.MemberID, x.Generation = "etl", "e-0-m", -1
		h.add("e-0", history.Invoke, history.FPoll, v)
		v.HasRecords = true
		v.Records = []history.Record{{Topic: "in", Partition: 0, Offset: 3, Value: "in:3"}}
		h.add("e-0", history.OK, history.FPoll, v)
		pv := history.NoValue()
		px := pv.X()
		px.Group, px.MemberID, px.Generation = "etl", "e-0-m", 1
		pv.Topic, pv.Partition, pv.Offset = "in", 0, 3
		h.add("e-0", history.Invoke, history.FProcess, pv)
		h.add("e-0", history.OK, history.FProcess, pv)
		b := h.eosTxn("e-0", 1, []output{{3, 4}, {0, 5}}, 1, history.OK)
		after := h.t + 500 // past the commit
		nv := history.NoValue()
		nv.Topic, nv.Value = "in", "new:0"
		h.add("p-0", history.Invoke, history.FSend, nv)
		nv.Partition, nv.Offset = 0, 0
		h.add("p-0", history.OK, history.FSend, nv)
		h.finalReads(rc, map[string]int64{"in-0": 1, "out-0": 7},
			trec{"in", 0, 0, "new:0"}, trec{"out", 0, 0, a[0]}, trec{"out", 0, 1, a[1]}, trec{"out", 0, 2, a[2]},
			trec{"out", 0, 4, b[0]}, trec{"out", 0, 5, b[1]})
		return h.ops, beforeWrite, beforePoll, after
	}
	ops, beforeWrite, beforePoll, after := build()
	expectInputLossExplains(t, ops, "disk-wipe", beforePoll, beforeWrite, after)
}
