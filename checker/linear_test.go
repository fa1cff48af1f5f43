package checker

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"kafkasim/history"
)

func onlyAnomaly(t *testing.T, r *Report, typ string) {
	t.Helper()
	for _, a := range r.Anomalies {
		if a.Type != typ {
			t.Fatalf("only %s expected, got %s\n%s", typ, a.Type, r.Summary())
		}
	}
}

// A poll returned a record before anyone had sent it: no other check sees
// it, the log's linearizability does.
func TestNonlinearizableReadFromTheFuture(t *testing.T) {
	build := func(future bool) *hb {
		h := &hb{}
		if future {
			h.poll("c-0", false, rec{0, 0, "a"})
			h.send("p-0", "a", 0, 0, history.OK)
		} else {
			h.send("p-0", "a", 0, 0, history.OK)
			h.poll("c-0", false, rec{0, 0, "a"})
		}
		return h
	}
	r := Check(build(true).ops, strict)
	expectCount(t, r, Nonlinearizable, 1)
	expectVerdict(t, r, Nonlinearizable, Violation)
	onlyAnomaly(t, r, Nonlinearizable)
	expectOps(t, r, Nonlinearizable, 0, 1, 2, 3) // the poll, and the send
	if !slices.Equal(r.Linearizability.Failed, []string{"t-0"}) || len(r.Visualizations) != 1 || r.Visualizations[0].Partition != "t-0" {
		t.Fatalf("failed %v, %d visualisations", r.Linearizability.Failed, len(r.Visualizations))
	}
	if html := r.Visualizations[0].HTML; !bytes.Contains(html, []byte("<html")) || !bytes.Contains(html, []byte("poll")) {
		t.Fatalf("the visualisation is porcupine's page with the operations")
	}
	r = Check(build(false).ops, strict)
	expectCount(t, r, Nonlinearizable, 0)
	if r.Linearizability.Checked != 1 || len(r.Visualizations) != 0 {
		t.Fatalf("%+v", r.Linearizability)
	}
}

// An offset below one already acknowledged, given to a send that began
// after that acknowledgement: the log is not one sequence in real time.
func TestNonlinearizableOffsetOrder(t *testing.T) {
	build := func(concurrent bool) *hb {
		h := &hb{}
		av := history.NoValue()
		av.Topic, av.Value = "t", "a"
		bv := history.NoValue()
		bv.Topic, bv.Value = "t", "b"
		h.add("p-0", history.Invoke, history.FSend, av)
		if concurrent {
			h.add("p-1", history.Invoke, history.FSend, bv)
		}
		av.Partition, av.Offset = 0, 5
		h.add("p-0", history.OK, history.FSend, av)
		if !concurrent {
			h.add("p-1", history.Invoke, history.FSend, bv)
		}
		bv.Partition, bv.Offset = 0, 3
		h.add("p-1", history.OK, history.FSend, bv)
		return h
	}
	r := Check(build(false).ops, strict)
	expectCount(t, r, Nonlinearizable, 1)
	if r.Violations != 1 {
		t.Fatalf("only the log's order broke\n%s", r.Summary())
	}
	expectOps(t, r, Nonlinearizable, 0, 1, 2, 3) // both sends
	if a, _ := r.Anomaly(Nonlinearizable); a.Example.Value != "b" || a.Example.Offset != 3 || len(r.Visualizations) != 1 {
		t.Fatalf("culprit %s, %d visualisations", a.Example, len(r.Visualizations))
	}
	// acks=1 acknowledges before the record is committed: permitted.
	acks1 := strict
	acks1.Producers = []ProducerGuarantees{{Prefix: "p", Acks: "1"}}
	expectVerdict(t, Check(build(false).ops, acks1), Nonlinearizable, Permitted)
	expectCount(t, Check(build(true).ops, strict), Nonlinearizable, 0)
}

func TestLinearizableLogsWithUnknownSendsTransactionsAndCompaction(t *testing.T) {
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.send("p-0", "b", 0, -1, history.Info) // took effect at 1: a poll saw it
	h.send("p-0", "c", 0, -1, history.Info) // never seen: left out
	h.send("p-0", "d", 0, 2, history.OK)
	h.txnBegin("p-1")
	h.tsend("p-1", "x", 0, 3)
	h.txnEnd("p-1", history.FTxnAbort, history.OK)
	h.send("p-0", "e", 0, 5, history.OK)
	h.pollIso("c-0", ru, false, rec{0, 0, "a"}, rec{0, 1, "b"}, rec{0, 2, "d"}, rec{0, 3, "x"}, rec{0, 5, "e"})
	h.pollIso("c-1", rc, false, rec{0, 0, "a"}, rec{0, 1, "b"}, rec{0, 2, "d"}, rec{0, 5, "e"}) // passes over the aborted x
	r := Check(h.ops, strict)
	expectCount(t, r, Nonlinearizable, 0)
	if r.Linearizability.Checked != 1 {
		t.Fatalf("%+v\n%s", r.Linearizability, r.Summary())
	}
	// A read_uncommitted reader may not pass over it.
	h.pollIso("c-2", ru, false, rec{0, 2, "d"}, rec{0, 5, "e"})
	r = Check(h.ops, strict)
	expectCount(t, r, Nonlinearizable, 1)
	expectOps(t, r, Nonlinearizable, 10, 11, 20, 21) // x's send, the poll that passed over it
	// In a compacted topic any reader may.
	compacted := strict
	compacted.Topics = []TopicGuarantees{{Name: "t", ReplicationFactor: 3, MinInsyncReplicas: 2, Compact: true}}
	expectCount(t, Check(h.ops, compacted), Nonlinearizable, 0)
}

func TestNonlinearizableCommittedOffset(t *testing.T) {
	off := func(n int64) map[string]int64 { return map[string]int64{"t-0": n} }
	// A fetch saw the indeterminate commit of 50 take effect; a later fetch
	// sees 42 again. The simple stale-fetch rule lets both through (42 was
	// the last acknowledged commit); the register does not.
	build := func(second int64) *hb {
		h := &hb{}
		h.commit("c-0", "g", off(42), history.OK)
		h.commit("c-0", "g", off(50), history.Info)
		h.fetch("c-1", "g", off(50))
		h.fetch("c-1", "g", off(second))
		return h
	}
	r := Check(build(42).ops, strict)
	expectCount(t, r, StaleOffsetFetch, 0)
	expectCount(t, r, Nonlinearizable, 1)
	expectVerdict(t, r, Nonlinearizable, Violation)
	expectOps(t, r, Nonlinearizable, 6, 7)
	if !slices.Equal(r.Linearizability.Failed, []string{"g/t-0"}) || len(r.Visualizations) != 1 || r.Visualizations[0].Partition != "g/t-0" {
		t.Fatalf("%+v, %d visualisations", r.Linearizability, len(r.Visualizations))
	}
	r = Check(build(50).ops, strict)
	expectCount(t, r, Nonlinearizable, 0)
	if r.Linearizability.Checked != 1 {
		t.Fatalf("%+v", r.Linearizability)
	}
}

// A partition's log is decided at any length and in any time (the direct
// check); porcupine's limits apply to committed-offset registers, where a
// register too long is skipped and one out of time is unknown, never a pass.
func TestLinearizabilityLimits(t *testing.T) {
	h := &hb{} // a read from the future
	h.poll("c-0", false, rec{0, 0, "a"})
	h.send("p-0", "a", 0, 0, history.OK)
	clean := &hb{}
	clean.send("p-0", "a", 0, 0, history.OK)
	clean.poll("c-0", false, rec{0, 0, "a"})
	for _, limit := range []func(*Config){
		func(c *Config) { c.LinearizabilityOpsMax = 1 },
		func(c *Config) { c.LinearizabilityBudget = time.Nanosecond },
	} {
		cfg := strict
		limit(&cfg)
		if r := Check(clean.ops, cfg); r.Linearizability.Checked != 1 || len(r.Linearizability.Skipped)+len(r.Linearizability.Unknown) != 0 {
			t.Fatalf("a log is decided whatever porcupine's limits: %+v", r.Linearizability)
		}
		r := Check(h.ops, cfg)
		expectCount(t, r, Nonlinearizable, 1)
		if !slices.Equal(r.Linearizability.Failed, []string{"t-0"}) {
			t.Fatalf("%+v", r.Linearizability)
		}
	}
	off := map[string]int64{"t-0": 7}
	reg := &hb{}
	reg.commit("c-0", "g", off, history.OK)
	reg.fetch("c-1", "g", off)
	// Too many operations for porcupine: skipped, and said so...
	cfg := strict
	cfg.LinearizabilityOpsMax = 1
	if r := Check(reg.ops, cfg); !slices.Equal(r.Linearizability.Skipped, []string{"g/t-0"}) || r.Linearizability.Note == "" || r.Linearizability.Checked != 0 {
		t.Fatalf("skipped registers are named: %+v", r.Linearizability)
	}
	// ...and out of time is unknown, never a pass.
	cfg = strict
	cfg.LinearizabilityBudget = time.Nanosecond
	if r := Check(reg.ops, cfg); !slices.Equal(r.Linearizability.Unknown, []string{"g/t-0"}) || r.Linearizability.Checked != 0 || r.Linearizability.Note == "" {
		t.Fatalf("%+v", r.Linearizability)
	}
	cfg = strict
	if r := Check(reg.ops, cfg); r.Linearizability.Checked != 1 {
		t.Fatalf("%+v", r.Linearizability)
	}
	cfg.SkipLinearizability = true
	if r := Check(h.ops, cfg); !r.Linearizability.Disabled || r.Count(Nonlinearizable) != 0 {
		t.Fatalf("%+v", r.Linearizability)
	}
}

func TestLogModelFindsOffsets(t *testing.T) {
	// The jump pointers find every offset of a long log.
	l := newLog()
	for i := int64(0); i < 1000; i++ {
		l = l.push(2*i, int32(i), false)
	}
	for hi := int64(-1); hi < 2001; hi++ {
		n := l.find(hi)
		want := hi
		if hi%2 != 0 {
			want = hi - 1
		}
		if hi >= 1999 {
			want = 1998
		}
		if n.off != max(want, -1) {
			t.Fatalf("find(%d) = %d, want %d", hi, n.off, want)
		}
	}
}

// The direct scan and porcupine agree on the log model, both ways: the
// scan alone decides a partition's log (linJob.run), so this is what holds
// it to porcupine's search. Small histories with short intervals, and
// larger ones with long, overlapping intervals.
func TestLogScanAgreesWithPorcupine(t *testing.T) {
	for _, size := range []struct{ appendsMax, readsMax, spanMax int }{{5, 4, 8}, {9, 7, 30}} {
		t.Run(fmt.Sprintf("appends<=%d", size.appendsMax), func(t *testing.T) {
			logScanAgreesWithPorcupine(t, size.appendsMax, size.readsMax, size.spanMax)
		})
	}
}

func logScanAgreesWithPorcupine(t *testing.T, appendsMax, readsMax, spanMax int) {
	rng := rand.New(rand.NewPCG(7, uint64(11+appendsMax)))
	names := []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"}
	illegal := 0
	for iter := 0; iter < 3000; iter++ {
		var log []logOp
		nApp := 1 + rng.IntN(appendsMax)
		offs := rng.Perm(12)[:nApp]
		if rng.IntN(6) == 0 && nApp > 1 {
			offs[1] = offs[0] // an offset taken twice
		}
		interval := func() (int64, int64) {
			c := int64(rng.IntN(20))
			return c, c + 1 + int64(rng.IntN(spanMax))
		}
		byOff := map[int64]int32{}
		for i, o := range offs {
			c, r := interval()
			byOff[int64(o)] = int32(i)
			log = append(log, logOp{off: int64(o), val: int32(i), txn: rng.IntN(3) == 0, call: c, ret: r})
		}
		sorted := make([]int64, 0, len(byOff))
		for o := range byOff {
			sorted = append(sorted, o)
		}
		slices.Sort(sorted)
		for range 1 + rng.IntN(readsMax) {
			lo := rng.IntN(len(sorted))
			hi := lo + rng.IntN(len(sorted)-lo)
			var recs []linRec
			for k := hi; k >= lo; k-- {
				if rng.IntN(8) == 0 {
					continue // a record passed over
				}
				v := byOff[sorted[k]]
				if rng.IntN(10) == 0 {
					v = int32(rng.IntN(nApp)) // a wrong value
				}
				recs = append(recs, linRec{off: sorted[k], val: v})
			}
			if len(recs) == 0 {
				continue
			}
			c, r := interval()
			log = append(log, logOp{read: true, recs: recs, rc: rng.IntN(2) == 0, call: c, ret: r})
		}
		m := logModel{names: func(v int32) string { return names[v] }, skipAll: rng.IntN(8) == 0}
		model := m.withLog(log, newLog())
		want := porcupine.CheckOperations(model.porcupine(), porcupineOps(log))
		_, bad := model.scan(log)
		if want == bad {
			t.Fatalf("iteration %d: porcupine says linearizable=%v, the scan says %v", iter, want, !bad)
		}
		if !want {
			illegal++
		}
	}
	if illegal < 300 || illegal > 2700 {
		t.Fatalf("%d of 3000 histories illegal: the generator tests too little", illegal)
	}
}

// A log that fails because of a loss the configuration permits is a
// permitted failure, and says which loss.
func TestNonlinearizableFollowsFromPermittedLoss(t *testing.T) {
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.send("p-0", "b", 0, 0, history.OK) // the new leader reused the offset
	h.poll("c-0", true, rec{0, 0, "b"})
	acks1 := strict
	acks1.Producers = []ProducerGuarantees{{Prefix: "p", Acks: "1"}}
	r := Check(h.ops, acks1)
	expectVerdict(t, r, LostAckedWrite, Permitted)
	expectVerdict(t, r, Nonlinearizable, Permitted)
	expectOps(t, r, Nonlinearizable, 0, 1, 2, 3) // both sends took offset 0
	if a, _ := r.Anomaly(Nonlinearizable); !containsWord(a.Because, "lost-acked-write") {
		t.Fatalf("the reason names the loss: %q", a.Because)
	}
	// With acks=all and no loss the simulator saw, both are violations.
	r = Check(h.ops, strict)
	expectVerdict(t, r, LostAckedWrite, Violation)
	expectVerdict(t, r, Nonlinearizable, Violation)
}
