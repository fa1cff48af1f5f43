package checker

import (
	"testing"

	"kafkasim/history"
)

func (h *hb) rebalance(process, f, group string, parts ...string) {
	v := history.NoValue()
	x := v.X()
	x.Group, x.Partitions, x.Generation, x.MemberID = group, parts, 1, process+"-member"
	h.add(process, history.Invoke, f, v)
	h.add(process, history.OK, f, v)
}

// commit commits offsets for a group; it returns the invocation's and the
// completion's indexes (the completion is left out for history.Invoke).
func (h *hb) commit(process, group string, offsets map[string]int64, outcome history.Type) (int64, int64) {
	v := history.NoValue()
	v.X().Group, v.Ext.Offsets = group, offsets
	at := int64(len(h.ops))
	h.add(process, history.Invoke, history.FCommit, v)
	if outcome == history.Invoke {
		return at, -1
	}
	h.add(process, outcome, history.FCommit, v)
	return at, at + 1
}

func (h *hb) invokeCommit(process, group string, offsets map[string]int64) int64 {
	at, _ := h.commit(process, group, offsets, history.Invoke)
	return at
}

func (h *hb) completeCommit(process, group string, offsets map[string]int64, outcome history.Type) int64 {
	v := history.NoValue()
	v.X().Group, v.Ext.Offsets = group, offsets
	h.add(process, outcome, history.FCommit, v)
	return int64(len(h.ops) - 1)
}

// fetch reads a group's committed offsets; it returns both indexes.
func (h *hb) fetch(process, group string, got map[string]int64) (int64, int64) {
	v := history.NoValue()
	x := v.X()
	x.Group = group
	for p := range got {
		x.Partitions = append(x.Partitions, p)
	}
	at := int64(len(h.ops))
	h.add(process, history.Invoke, history.FFetchCommitted, v)
	v.Ext.Offsets = got
	h.add(process, history.OK, history.FFetchCommitted, v)
	return at, at + 1
}

func (h *hb) sendsTo(p int32, values ...string) {
	for i, v := range values {
		h.send("p-0", v, p, int64(i), history.OK)
	}
}

func TestAssignStartsNewSessions(t *testing.T) {
	build := func(resumed ...rec) (*Report, int64) {
		h := &hb{}
		h.sendsTo(0, "a0", "a1", "a2", "a3", "a4", "a5")
		h.sendsTo(1, "b0", "b1", "b2", "b3", "b4", "b5")
		h.rebalance("c-0", history.FAssign, "g", "t-0", "t-1")
		h.poll("c-0", false, rec{0, 0, "a0"}, rec{0, 1, "a1"}, rec{1, 0, "b0"}, rec{1, 1, "b1"})
		// A rebalance recorded as an assign alone (the eager protocol
		// revokes first; a recorder need not say so): the member starts
		// again from the group's committed offsets, t-0 included, which it
		// kept. docs/history.md: the position may jump at an assign.
		h.rebalance("c-0", history.FAssign, "g", "t-0", "t-1")
		h.poll("c-0", false, resumed...)
		at := int64(len(h.ops) - 1)
		h.poll("c-1", false, rec{0, 2, "a2"}, rec{1, 2, "b2"}, rec{1, 3, "b3"}) // another member read the rest meanwhile
		return Check(h.ops, strict), at
	}
	r, _ := build(rec{1, 4, "b4"}, rec{1, 5, "b5"}, rec{0, 3, "a3"}, rec{0, 4, "a4"}, rec{0, 5, "a5"})
	if len(r.Anomalies) != 0 {
		t.Fatalf("the jumps at the assign are legitimate\n%s", r.Summary())
	}
	r, _ = build(rec{0, 1, "a1"}, rec{0, 2, "a2"}, rec{0, 3, "a3"}, rec{0, 4, "a4"}, rec{0, 5, "a5"}, rec{1, 2, "b2"}, rec{1, 3, "b3"}, rec{1, 4, "b4"}, rec{1, 5, "b5"})
	if len(r.Anomalies) != 0 {
		t.Fatalf("going back to the committed offset at an assign is legitimate\n%s", r.Summary())
	}
	// Within the new session the member must still read without gaps.
	r, poll := build(rec{0, 3, "a3"}, rec{0, 5, "a5"}, rec{1, 2, "b2"}, rec{1, 3, "b3"}, rec{1, 4, "b4"}, rec{1, 5, "b5"})
	expectCount(t, r, IntPollSkip, 1)
	expectVerdict(t, r, IntPollSkip, Violation)
	expectOps(t, r, IntPollSkip, poll)
	if a, _ := r.Anomaly(IntPollSkip); a.Example.Partition != "t-0" || a.Example.Offset != 4 {
		t.Fatalf("skipped %s@%d, want t-0@4", a.Example.Partition, a.Example.Offset)
	}
}

func TestRevokedPartitionsAreForgotten(t *testing.T) {
	build := func(between func(h *hb)) (*Report, int64) {
		h := &hb{}
		h.sendsTo(0, "a0", "a1", "a2")
		h.sendsTo(1, "b0")
		h.rebalance("c-0", history.FAssign, "g", "t-0", "t-1")
		h.poll("c-0", false, rec{0, 0, "a0"}, rec{0, 1, "a1"}, rec{0, 2, "a2"})
		between(h)
		// Read again from the committed offset 1 (the member never committed
		// 3): a legitimate step back only if t-0 changed hands.
		h.poll("c-0", false, rec{0, 1, "a1"})
		return Check(h.ops, strict), int64(len(h.ops) - 1)
	}
	r, poll := build(func(h *hb) {})
	expectCount(t, r, NonmonotonicPoll, 1)
	expectOps(t, r, NonmonotonicPoll, poll)
	r, _ = build(func(h *hb) {
		h.rebalance("c-0", history.FRevoke, "g", "t-0")
		h.rebalance("c-0", history.FAssign, "g", "t-0")
	})
	expectCount(t, r, NonmonotonicPoll, 0)
	// An assign that no longer lists t-0 took it away.
	r, _ = build(func(h *hb) {
		h.rebalance("c-0", history.FAssign, "g", "t-1")
		h.rebalance("c-0", history.FAssign, "g", "t-0", "t-1")
	})
	expectCount(t, r, NonmonotonicPoll, 0)
	// Revoking another partition changes nothing for t-0.
	r, _ = build(func(h *hb) { h.rebalance("c-0", history.FRevoke, "g", "t-1") })
	expectCount(t, r, NonmonotonicPoll, 1)
}

func TestGroupMemberCoverageRunsFromAssignToRevoke(t *testing.T) {
	build := func(sameSession bool) *Report {
		h := &hb{}
		h.sendsTo(0, "a0", "a1", "a2", "a3", "a4", "a5")
		h.rebalance("c-0", history.FAssign, "g", "t-0")
		h.poll("c-0", false, rec{0, 0, "a0"}, rec{0, 1, "a1"})
		if !sameSession {
			// Another member had t-0 meanwhile and read 2 and 3.
			h.rebalance("c-0", history.FRevoke, "g", "t-0")
			h.rebalance("c-0", history.FAssign, "g", "t-0")
		}
		h.poll("c-0", false, rec{0, 4, "a4"}, rec{0, 5, "a5"})
		h.poll("final-0", true, rec{0, 0, "a0"}, rec{0, 1, "a1"}, rec{0, 2, "a2"}, rec{0, 3, "a3"}, rec{0, 4, "a4"}, rec{0, 5, "a5"})
		return Check(h.ops, strict)
	}
	r := build(false)
	if len(r.Anomalies) != 0 {
		t.Fatalf("two sessions, each read without gaps\n%s", r.Summary())
	}
	r = build(true)
	// One session that jumped over 2 and 3: one skip (the step, naming the
	// first record the final reads hold that the session never read).
	expectCount(t, r, PollSkip, 1)
	expectVerdict(t, r, PollSkip, Violation)
}

func TestNonmonotonicCommit(t *testing.T) {
	off := func(n int64) map[string]int64 { return map[string]int64{"t-0": n} }
	build := func() (*hb, []int64) {
		h := &hb{}
		i1, c1 := h.commit("c-0", "g", off(42), history.OK)
		i2, c2 := h.commit("c-1", "g", off(40), history.OK)
		return h, []int64{i1, c1, i2, c2}
	}
	h, ops := build()
	r := Check(h.ops, strict)
	expectCount(t, r, NonmonotonicCommit, 1)
	expectOps(t, r, NonmonotonicCommit, ops...)
	// Kafka's default, auto-commit, is at-least-once: going back re-delivers
	// records, duplicates it accepts.
	expectVerdict(t, r, NonmonotonicCommit, Permitted)
	amo := strict
	amo.Consumers = []ConsumerGuarantees{{Prefix: "c", Commit: "before-processing"}}
	expectVerdict(t, Check(h.ops, amo), NonmonotonicCommit, Violation)
	eos := strict
	eos.Consumers = []ConsumerGuarantees{{Prefix: "c", Commit: "transactional"}}
	expectVerdict(t, Check(h.ops, eos), NonmonotonicCommit, Violation)

	// Not after an acknowledged commit: concurrent commits, failed ones,
	// other partitions and other groups.
	for name, f := range map[string]func(h *hb){
		"concurrent": func(h *hb) {
			h.invokeCommit("c-0", "g", off(42))
			h.invokeCommit("c-1", "g", off(40))
			h.completeCommit("c-0", "g", off(42), history.OK)
			h.completeCommit("c-1", "g", off(40), history.OK)
		},
		"failed": func(h *hb) {
			h.commit("c-0", "g", off(42), history.OK)
			h.commit("c-1", "g", off(40), history.Fail)
		},
		"other group": func(h *hb) {
			h.commit("c-0", "g", off(42), history.OK)
			h.commit("c-1", "h", off(40), history.OK)
		},
		"forward": func(h *hb) {
			h.commit("c-0", "g", off(40), history.OK)
			h.commit("c-1", "g", off(42), history.OK)
		},
	} {
		h := &hb{}
		f(h)
		if r := Check(h.ops, amo); r.Count(NonmonotonicCommit) != 0 {
			t.Fatalf("%s: %s", name, r.Summary())
		}
	}
}

func TestNonmonotonicCommitInTransactions(t *testing.T) {
	h := &hb{}
	commit := func(n int64) {
		v := history.NoValue()
		v.X().Group, v.Ext.Offsets, v.Ext.TransactionalID = "g", map[string]int64{"t-0": n}, "tx-p-0"
		h.add("p-0", history.Invoke, history.FTxnCommit, v)
		h.add("p-0", history.OK, history.FTxnCommit, v)
	}
	h.txnBegin("p-0")
	commit(42)
	h.txnBegin("p-0")
	commit(40)
	r := Check(h.ops, strict)
	expectCount(t, r, NonmonotonicCommit, 1)
	expectOps(t, r, NonmonotonicCommit, 2, 3, 6, 7)
	// Offsets committed in a transaction are exactly-once's.
	expectVerdict(t, r, NonmonotonicCommit, Violation)
	// An aborted transaction's offsets are never committed.
	h.ops[7].Type = history.Fail
	expectCount(t, Check(h.ops, strict), NonmonotonicCommit, 0)
}

func TestStaleOffsetFetch(t *testing.T) {
	off := func(n int64) map[string]int64 { return map[string]int64{"t-0": n} }
	h := &hb{}
	h.commit("c-0", "g", off(40), history.OK)
	i42, c42 := h.commit("c-0", "g", off(42), history.OK)
	fi, fc := h.fetch("c-1", "g", off(40)) // 40 was overwritten before the fetch began
	r := Check(h.ops, strict)
	expectCount(t, r, StaleOffsetFetch, 1)
	expectVerdict(t, r, StaleOffsetFetch, Violation)
	expectOps(t, r, StaleOffsetFetch, i42, c42, fi, fc)

	// Nothing committed, after an acknowledged commit: stale too.
	h2 := &hb{}
	h2.commit("c-0", "g", off(40), history.OK)
	h2.fetch("c-1", "g", off(-1))
	expectCount(t, Check(h2.ops, strict), StaleOffsetFetch, 1)

	for name, f := range map[string]func(h *hb){
		"latest": func(h *hb) {
			h.commit("c-0", "g", off(40), history.OK)
			h.commit("c-0", "g", off(42), history.OK)
			h.fetch("c-1", "g", off(42))
		},
		"concurrent commit": func(h *hb) {
			h.commit("c-0", "g", off(42), history.OK)
			h.invokeCommit("c-0", "g", off(50))
			h.fetch("c-1", "g", off(50))
			h.completeCommit("c-0", "g", off(50), history.OK)
		},
		"concurrent commit not yet visible": func(h *hb) {
			h.commit("c-0", "g", off(42), history.OK)
			h.invokeCommit("c-0", "g", off(50))
			h.fetch("c-1", "g", off(42))
			h.completeCommit("c-0", "g", off(50), history.OK)
		},
		"indeterminate commit": func(h *hb) {
			h.commit("c-0", "g", off(42), history.OK)
			h.commit("c-0", "g", off(50), history.Info)
			h.fetch("c-1", "g", off(50))
			h.fetch("c-1", "g", off(42))
		},
		"nothing committed yet": func(h *hb) {
			h.fetch("c-1", "g", off(-1))
			h.commit("c-0", "g", off(42), history.OK)
		},
	} {
		h := &hb{}
		f(h)
		if r := Check(h.ops, strict); r.Count(StaleOffsetFetch) != 0 {
			t.Fatalf("%s: %s", name, r.Summary())
		}
	}
}
