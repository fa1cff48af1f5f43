package checker

import (
	"os"
	"slices"
	"strings"
	"testing"

	"kafkasim/godview"
	"kafkasim/history"
)

// member writes a group member's operations for tests.
type member struct {
	h     *hb
	proc  string
	group string
	id    string
}

func (h *hb) member(process, group string) *member {
	return &member{h: h, proc: process, group: group, id: process + "-id"}
}

func (m *member) ext(v *history.Value, gen int32) *history.Ext {
	x := v.X()
	x.Group, x.MemberID, x.Generation = m.group, m.id, gen
	return x
}

func (m *member) rebalance(f string, gen int32, parts ...string) int64 {
	v := history.NoValue()
	x := m.ext(&v, gen)
	x.Partitions = append([]string{}, parts...)
	m.h.add(m.proc, history.Invoke, f, v)
	m.h.add(m.proc, history.OK, f, v)
	return int64(len(m.h.ops) - 1)
}

func (m *member) assign(gen int32, parts ...string) int64 {
	return m.rebalance(history.FAssign, gen, parts...)
}
func (m *member) revoke(gen int32, parts ...string) int64 {
	return m.rebalance(history.FRevoke, gen, parts...)
}

// begin invokes a process operation of t-part@off.
func (m *member) begin(gen int32, part int32, off int64) int64 {
	v := history.NoValue()
	m.ext(&v, gen)
	v.Topic, v.Partition, v.Offset = "t", part, off
	m.h.add(m.proc, history.Invoke, history.FProcess, v)
	return int64(len(m.h.ops) - 1)
}

func (m *member) end(gen int32, part int32, off int64, typ history.Type) int64 {
	v := history.NoValue()
	m.ext(&v, gen)
	v.Topic, v.Partition, v.Offset = "t", part, off
	m.h.add(m.proc, typ, history.FProcess, v)
	return int64(len(m.h.ops) - 1)
}

// process processes records of partition 0 one after the other.
func (m *member) process(gen int32, offs ...int64) {
	for _, off := range offs {
		m.begin(gen, 0, off)
		m.end(gen, 0, off, history.OK)
	}
}

func (m *member) commit(gen int32, offsets map[string]int64, outcome history.Type) (int64, int64) {
	v := history.NoValue()
	m.ext(&v, gen).Offsets = offsets
	at := int64(len(m.h.ops))
	m.h.add(m.proc, history.Invoke, history.FCommit, v)
	if outcome == history.Invoke {
		return at, -1
	}
	m.h.add(m.proc, outcome, history.FCommit, v)
	return at, at + 1
}

func (m *member) effect(part int32, off int64) {
	v := history.NoValue()
	m.ext(&v, -1)
	v.Topic, v.Partition, v.Offset, v.Key = "t", part, off, "store-"+itoa(off)
	m.h.add(m.proc, history.Invoke, history.FSideEffect, v)
	m.h.add(m.proc, history.OK, history.FSideEffect, v)
}

// answeredEffect is a side effect whose ok carries the store's answer:
// whether it applied the effect.
func (m *member) answeredEffect(part int32, off int64, applied bool) {
	v := history.NoValue()
	m.ext(&v, -1)
	v.Topic, v.Partition, v.Offset, v.Key = "t", part, off, "store-"+itoa(off)
	m.h.add(m.proc, history.Invoke, history.FSideEffect, v)
	v.Ext = &history.Ext{Group: m.group, MemberID: m.id, Generation: -1, HasApplied: true, Applied: applied}
	m.h.add(m.proc, history.OK, history.FSideEffect, v)
}

func (h *hb) crash(process string) {
	v := history.NoValue()
	v.Error = "process died: killed"
	h.add(process, history.Invoke, history.FCrash, v)
	h.add(process, history.OK, history.FCrash, v)
}

// withGroup is strict plus a consumer group g's settings.
func withGroup(commit string, mod ...func(*ConsumerGuarantees)) Config {
	c := strict
	g := ConsumerGuarantees{Prefix: "c", Group: "g", Commit: commit}
	for _, f := range mod {
		f(&g)
	}
	c.Consumers = []ConsumerGuarantees{g}
	return c
}

func TestDoubleOwnerWhenTwoMembersOfOneGenerationOverlap(t *testing.T) {
	build := func(gen2 int32, overlap bool, sameMember bool) *Report {
		h := &hb{}
		h.sendsTo(0, "a0", "a1", "a2")
		c1, c2 := h.member("c-1", "g"), h.member("c-2", "g")
		if sameMember {
			c2 = &member{h: h, proc: "c-1", group: "g", id: "c-1-id"} // a second worker of c-1
		}
		c1.begin(4, 0, 0)
		if !overlap {
			c1.end(4, 0, 0, history.OK)
		}
		c2.begin(gen2, 0, 1)
		if overlap {
			c1.end(4, 0, 0, history.OK)
		}
		c2.end(gen2, 0, 1, history.OK)
		return Check(h.ops, withGroup("after-processing"))
	}
	r := build(4, true, false)
	expectCount(t, r, DoubleOwner, 1)
	expectVerdict(t, r, DoubleOwner, Violation)
	a, _ := r.Anomaly(DoubleOwner)
	if d := a.Example.Detail; !strings.Contains(d, "c-1 (member c-1-id, generation 4) and c-2 (member c-2-id, generation 4) both processed t-0") || a.Example.Partition != "t-0" {
		t.Fatalf("example %+v", a.Example)
	}
	// A zombie of generation 4 processing beside generation 5's owner:
	// Kafka fences its commits, not its processing.
	expectCount(t, build(5, true, false), DoubleOwner, 0)
	// One after the other in one generation: ownership moved.
	expectCount(t, build(4, false, false), DoubleOwner, 0)
	// Two workers of one member.
	expectCount(t, build(4, true, true), DoubleOwner, 0)
}

func TestDoubleOwnerProcessingRunsToTheCrash(t *testing.T) {
	build := func(crashFirst bool) *Report {
		h := &hb{}
		h.sendsTo(0, "a0", "a1")
		c1, c2 := h.member("c-1", "g"), h.member("c-2", "g")
		c1.begin(3, 0, 0) // never completes
		if crashFirst {
			h.crash("c-1")
		}
		c2.process(3, 1)
		return Check(h.ops, withGroup("after-processing"))
	}
	expectCount(t, build(true), DoubleOwner, 0)
	r := build(false) // c-1's processing runs to the end of the history
	expectCount(t, r, DoubleOwner, 1)
}

func TestDoubleOwnerAfterARevoke(t *testing.T) {
	cases := []struct {
		name string
		then func(c *member)
		want int
	}{
		{"revoked, then processed", func(c *member) { c.revoke(2, "t-0") }, 1},
		{"taken away by an assign that does not list it", func(c *member) { c.assign(3, "t-1") }, 1},
		{"revoked and assigned again", func(c *member) { c.revoke(2, "t-0"); c.assign(3, "t-0") }, 0},
		{"another partition revoked", func(c *member) { c.revoke(2, "t-1") }, 0},
		{"crashed and restarted", func(c *member) { c.revoke(2, "t-0"); c.h.crash(c.proc) }, 0},
	}
	for _, tc := range cases {
		h := &hb{}
		h.sendsTo(0, "a0", "a1", "a2")
		c := h.member("c-1", "g")
		c.assign(2, "t-0", "t-1")
		c.process(2, 0)
		tc.then(c)
		c.process(3, 1, 2)
		r := Check(h.ops, withGroup("after-processing"))
		if got := r.Count(DoubleOwner); got != tc.want {
			t.Errorf("%s: %d double-owner, want %d\n%s", tc.name, got, tc.want, r.Summary())
		}
		if tc.want > 0 {
			expectVerdict(t, r, DoubleOwner, Violation)
		}
	}
}

func TestZombieCommit(t *testing.T) {
	offs := map[string]int64{"t-0": 1}
	cases := []struct {
		name     string
		protocol string
		run      func(c1, c2 *member)
		want     int
	}{
		{"classic: the group moved on before the commit began", "", func(c1, c2 *member) {
			c1.assign(4, "t-0")
			c2.assign(5, "t-1")
			c1.commit(4, offs, history.OK)
		}, 1},
		{"classic: refused", "", func(c1, c2 *member) {
			c1.assign(4, "t-0")
			c2.assign(5, "t-1")
			c1.commit(4, offs, history.Fail)
		}, 0},
		{"classic: the commit began before the group moved on", "", func(c1, c2 *member) {
			c1.assign(4, "t-0")
			at, _ := c1.commit(4, offs, history.Invoke)
			c2.assign(5, "t-1")
			c1.h.add(c1.proc, history.OK, history.FCommit, c1.h.ops[at].Value)
		}, 0},
		{"classic: at the current generation", "", func(c1, c2 *member) {
			c1.assign(4, "t-0")
			c2.assign(5, "t-1")
			c1.assign(5, "t-0")
			c1.commit(5, offs, history.OK)
		}, 0},
		{"a simple commit (generation -1)", "", func(c1, c2 *member) {
			c2.assign(5, "t-1")
			c1.commit(-1, offs, history.OK)
		}, 0},
		{"consumer: another member's higher epoch fences nobody else", "consumer", func(c1, c2 *member) {
			c1.assign(5, "t-0")
			c2.assign(7, "t-1")
			c1.commit(5, offs, history.OK)
		}, 0},
		{"consumer: the member's own epoch had moved on", "consumer", func(c1, c2 *member) {
			c1.assign(5, "t-0")
			c1.assign(6, "t-0")
			c1.commit(5, offs, history.OK)
		}, 1},
		{"consumer: after a revoke, at its current epoch (KIP-848 keeps it until the revocation is acknowledged)", "consumer", func(c1, c2 *member) {
			c1.assign(5, "t-0")
			c1.revoke(5, "t-0")
			c1.commit(5, offs, history.OK)
		}, 0},
	}
	for _, tc := range cases {
		h := &hb{}
		c1, c2 := h.member("c-1", "g"), h.member("c-2", "g")
		tc.run(c1, c2)
		r := Check(h.ops, withGroup("after-processing", func(g *ConsumerGuarantees) { g.GroupProtocol = tc.protocol }))
		if got := r.Count(ZombieCommit); got != tc.want {
			t.Errorf("%s: %d zombie-commit, want %d\n%s", tc.name, got, tc.want, r.Summary())
			continue
		}
		if tc.want > 0 {
			expectVerdict(t, r, ZombieCommit, Violation)
			if a, _ := r.Anomaly(ZombieCommit); a.Example.Partition != "t-0" || a.Example.Offset != 1 || len(a.Example.Ops) != 3 {
				t.Errorf("%s: example %+v", tc.name, a.Example)
			}
		}
	}
	// The god view's hook: a coordinator that lost __consumer_offsets may
	// have reloaded the group at an older generation.
	h := &hb{}
	c1, c2 := h.member("c-1", "g"), h.member("c-2", "g")
	c1.assign(4, "t-0")
	c2.assign(5, "t-1")
	c1.commit(4, offs, history.OK)
	cfg := withGroup("after-processing")
	cfg.Happened = godViewLosses(DataLoss{Partition: "__consumer_offsets-3", From: 0, Cause: "unclean-election"})
	expectVerdict(t, Check(h.ops, cfg), ZombieCommit, Permitted)
	// g's records live in __consumer_offsets-3 of 50 partitions: that loss
	// explains the zombie, one in __consumer_offsets-9 does not.
	cfg.OffsetsTopicPartitions = 50
	expectVerdict(t, Check(h.ops, cfg), ZombieCommit, Permitted)
	cfg.Happened = godViewLosses(DataLoss{Partition: "__consumer_offsets-9", From: 0, Cause: "unclean-election"})
	expectVerdict(t, Check(h.ops, cfg), ZombieCommit, Violation)
}

// skipHistory: five records in t-0; c-1 processes those listed, then
// commits offset 5.
func skipHistory(processed ...int64) (*hb, *member) {
	h := &hb{}
	h.sendsTo(0, "a0", "a1", "a2", "a3", "a4")
	c := h.member("c-1", "g")
	c.assign(1, "t-0")
	c.process(1, processed...)
	c.commit(1, map[string]int64{"t-0": 5}, history.OK)
	return h, c
}

func TestSkippedRecordByCommitMode(t *testing.T) {
	h, _ := skipHistory(0, 1, 3, 4)
	for _, tc := range []struct{ mode, verdict string }{
		{"before-processing", Permitted}, {"after-processing", Violation}, {"auto", Violation}, {"transactional", Violation},
	} {
		r := Check(h.ops, withGroup(tc.mode))
		expectCount(t, r, SkippedRecord, 1)
		expectVerdict(t, r, SkippedRecord, tc.verdict)
		if a, _ := r.Anomaly(SkippedRecord); a.Example.Offset != 2 || a.Example.Value != "a2" {
			t.Fatalf("example %+v", a.Example)
		}
	}
	// No configuration: Kafka's default, auto-commit, at-least-once.
	r := Check(h.ops, strict)
	expectVerdict(t, r, SkippedRecord, Violation)
	if !strings.Contains(strings.Join(r.Assumed, "\n"), "groups g: not configured; assumed commit: auto") {
		t.Fatalf("assumed %q", r.Assumed)
	}
	if r := Check(h.ops, withGroup("auto")); strings.Contains(strings.Join(r.Assumed, "\n"), "groups g") {
		t.Fatalf("a configured group assumes nothing: %q", r.Assumed)
	}
	h, _ = skipHistory(0, 1, 2, 3, 4)
	expectCount(t, Check(h.ops, withGroup("after-processing")), SkippedRecord, 0)
	// A record the member began processing but never finished (the
	// process died, or it was still at it when the history ended) was not
	// processed: its work died with the process. Skipped.
	h, c := skipHistory(0, 1, 3, 4)
	c.begin(1, 0, 2)
	expectCount(t, Check(h.ops, withGroup("after-processing")), SkippedRecord, 1)
	// Unless its effect reached, or may have reached, the external store.
	for _, typ := range []history.Type{history.OK, history.Info} {
		h, c = skipHistory(0, 1, 3, 4)
		c.begin(1, 0, 2)
		v := history.NoValue()
		c.ext(&v, -1)
		v.Topic, v.Partition, v.Offset, v.Key = "t", 0, 2, "store-2"
		h.add(c.proc, history.Invoke, history.FSideEffect, v)
		h.add(c.proc, typ, history.FSideEffect, v)
		expectCount(t, Check(h.ops, withGroup("after-processing")), SkippedRecord, 0)
	}
}

func TestSkippedRecordCountsOnlyRecordsThatWereThere(t *testing.T) {
	// Lost: the final reads do not hold offset 2 (lost-acked-write says so).
	h, _ := skipHistory(0, 1, 3, 4)
	h.poll("f-0", true, rec{0, 0, "a0"}, rec{0, 1, "a1"}, rec{0, 3, "a3"}, rec{0, 4, "a4"})
	r := Check(h.ops, withGroup("after-processing"))
	expectCount(t, r, LostAckedWrite, 1)
	expectCount(t, r, SkippedRecord, 0)

	// Deleted by retention before the group reached it.
	h = &hb{}
	h.sendsTo(0, "a0", "a1", "a2", "a3", "a4")
	c := h.member("c-1", "g")
	c.assign(1, "t-0")
	c.process(1, 3, 4)
	c.commit(1, map[string]int64{"t-0": 5}, history.OK)
	v := history.NoValue()
	v.Final = true
	h.add("f-0", history.Invoke, history.FPoll, v)
	v.HasRecords = true
	v.Records = []history.Record{{Topic: "t", Partition: 0, Offset: 3, Value: "a3"}, {Topic: "t", Partition: 0, Offset: 4, Value: "a4"}}
	v.X().LogStartOffsets = map[string]int64{"t-0": 3}
	h.add("f-0", history.OK, history.FPoll, v)
	expectCount(t, Check(h.ops, withGroup("after-processing")), SkippedRecord, 0)

	// A group whose members record no processing is not judged.
	h = &hb{}
	h.sendsTo(0, "a0", "a1")
	h.member("c-1", "g").commit(1, map[string]int64{"t-0": 2}, history.OK)
	expectCount(t, Check(h.ops, withGroup("after-processing")), SkippedRecord, 0)
}

func TestSkippedRecordOfAbortedTransactionsIsNotCounted(t *testing.T) {
	h := &hb{}
	h.sendsTo(0, "a0")
	h.txnBegin("p-1")
	h.tsend("p-1", "x1", 0, 1)
	h.txnEnd("p-1", history.FTxnAbort, history.OK)
	h.send("p-0", "a2", 0, 3, history.OK) // 2: the abort marker
	c := h.member("c-1", "g")
	c.assign(1, "t-0")
	c.process(1, 0, 3)
	c.commit(1, map[string]int64{"t-0": 4}, history.OK)
	expectCount(t, Check(h.ops, withGroup("after-processing")), SkippedRecord, 0)
}

func TestSkippedRecordAndAutoOffsetResetLatest(t *testing.T) {
	build := func(committedFirst bool) []history.Op {
		h := &hb{}
		h.sendsTo(0, "a0", "a1", "a2", "a3", "a4")
		c := h.member("c-1", "g")
		if committedFirst {
			h.member("c-0", "g").commit(1, map[string]int64{"t-0": 0}, history.OK)
		}
		c.assign(1, "t-0")
		c.process(1, 3, 4) // started at the end, as latest does with nothing committed
		c.commit(1, map[string]int64{"t-0": 5}, history.OK)
		return h.ops
	}
	latest := func(g *ConsumerGuarantees) { g.AutoOffsetReset = "latest" }
	expectCount(t, Check(build(false), withGroup("after-processing", latest)), SkippedRecord, 0)
	// earliest starts from the log start: 0..2 were skipped.
	expectCount(t, Check(build(false), withGroup("after-processing")), SkippedRecord, 3)
	// latest resets only without a committed offset in range: the member
	// should have started from the committed 0.
	expectCount(t, Check(build(true), withGroup("after-processing", latest)), SkippedRecord, 3)
}

// Kafka commits positions (SubscriptionState.allConsumed): a member that
// auto.offset.reset=latest moved to the end commits that position before
// it consumes a record there — the producers have stopped, say. Its commit
// is the evidence of the reset, as a first record processed above the
// committed offset is; the next owner starts from it (fuzz --groups seeds
// 20065, 40108, 40181).
func TestSkippedRecordAndACommitOfAPositionResetToLatest(t *testing.T) {
	// held: c-1 polls 5 and 6 after its reset and commits 7 before it
	// processes them.
	build := func(committedFirst, held bool) []history.Op {
		h := &hb{}
		h.sendsTo(0, "a0", "a1", "a2", "a3", "a4")
		if committedFirst {
			h.member("c-0", "g").commit(1, map[string]int64{"t-0": 0}, history.OK)
		}
		c1 := h.member("c-1", "g")
		c1.assign(1, "t-0")
		end := int64(5) // reset to the end, nothing consumed
		if held {
			h.send("p-0", "a5", 0, 5, history.OK)
			h.send("p-0", "a6", 0, 6, history.OK)
			h.poll("c-1", false, rec{0, 5, "a5"}, rec{0, 6, "a6"})
			end = 7
		}
		c1.commit(1, map[string]int64{"t-0": end}, history.OK)
		c1.revoke(1, "t-0")
		if !held {
			h.send("p-0", "a5", 0, 5, history.OK)
			h.send("p-0", "a6", 0, 6, history.OK)
		}
		h.send("p-0", "a7", 0, 7, history.OK)
		c2 := h.member("c-2", "g")
		c2.assign(2, "t-0")
		for off := end; off < 8; off++ {
			c2.process(2, off)
		}
		c2.commit(2, map[string]int64{"t-0": 8}, history.OK)
		return h.ops
	}
	latest := func(g *ConsumerGuarantees) { g.AutoOffsetReset = "latest" }
	expectCount(t, Check(build(false, false), withGroup("auto", latest)), SkippedRecord, 0)
	// earliest would have started c-1 at the log start: 0..4 were skipped.
	r := Check(build(false, false), withGroup("auto"))
	expectCount(t, r, SkippedRecord, 5)
	expectVerdict(t, r, SkippedRecord, Violation)
	// With 0 committed, in range, no reset moves c-1: its commit of 5
	// passed over records it never processed.
	r = Check(build(true, false), withGroup("auto", latest))
	expectCount(t, r, SkippedRecord, 5)
	expectVerdict(t, r, SkippedRecord, Violation)
	// The reset moved c-1 to 5 at most (it polled 5 from there); 5 and 6,
	// which it held and committed unprocessed, were skipped.
	r = Check(build(false, true), withGroup("auto", latest))
	expectCount(t, r, SkippedRecord, 2)
	expectVerdict(t, r, SkippedRecord, Violation)
}

// The same mid-session: the member processed 0 and 1, retention deleted
// past its position, auto.offset.reset=latest moved it to the end, and it
// committed there before consuming anything new; the next owner starts
// from that commit.
func TestSkippedRecordAndACommitAfterAMidSessionResetToLatest(t *testing.T) {
	build := func(logStart int64) []history.Op {
		h := &hb{}
		h.sendsTo(0, "a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7")
		c := h.member("c-1", "g")
		c.assign(1, "t-0")
		c.process(1, 0, 1)
		c.commit(1, map[string]int64{"t-0": 2}, history.OK)
		c.commit(1, map[string]int64{"t-0": 6}, history.OK) // reset to the end, 6 at the time
		c.revoke(1, "t-0")
		c2 := h.member("c-2", "g")
		c2.assign(2, "t-0")
		c2.process(2, 6, 7)
		c2.commit(2, map[string]int64{"t-0": 8}, history.OK)
		h.finalOfT0(logStart, 8)
		return h.ops
	}
	latest := func(g *ConsumerGuarantees) { g.AutoOffsetReset = "latest" }
	expectCount(t, Check(build(4), withGroup("auto", latest)), SkippedRecord, 0)
	r := Check(build(4), withGroup("auto"))
	expectCount(t, r, SkippedRecord, 2) // earliest would have gone to 4
	expectVerdict(t, r, SkippedRecord, Violation)
	// Nothing deleted: its position 2 was in range, no reset moves it.
	r = Check(build(0), withGroup("auto", latest))
	expectCount(t, r, SkippedRecord, 4)
	expectVerdict(t, r, SkippedRecord, Violation)
}

func TestSkippedRecordJudgesTheFinalCommittedOffset(t *testing.T) {
	h, _ := skipHistory(0, 1)
	// A later fetch says 2 is committed (an indeterminate commit moved it
	// back, say): records 2..4 are not below it.
	h.fetch("admin", "g", map[string]int64{"t-0": 2})
	expectCount(t, Check(h.ops, withGroup("after-processing")), SkippedRecord, 0)
	// A commit of unknown outcome after the last acknowledged one may have
	// taken effect: the lower offset counts.
	h, c := skipHistory(0, 1)
	c.commit(1, map[string]int64{"t-0": 2}, history.Info)
	expectCount(t, Check(h.ops, withGroup("after-processing")), SkippedRecord, 0)
}

func TestReprocessedRecord(t *testing.T) {
	build := func(second history.Type) []history.Op {
		h := &hb{}
		h.sendsTo(0, "a0", "a1")
		c1, c2 := h.member("c-1", "g"), h.member("c-2", "g")
		c1.process(1, 0, 1)
		c2.begin(2, 0, 1)
		c2.end(2, 0, 1, second)
		return h.ops
	}
	for _, tc := range []struct{ mode, verdict string }{
		{"before-processing", Violation}, {"after-processing", Permitted}, {"auto", Permitted}, {"transactional", Violation},
	} {
		r := Check(build(history.OK), withGroup(tc.mode))
		expectCount(t, r, ReprocessedRecord, 1)
		expectVerdict(t, r, ReprocessedRecord, tc.verdict)
		if a, _ := r.Anomaly(ReprocessedRecord); a.Example.Offset != 1 || a.Example.Process != "c-2" || !strings.Contains(a.Example.Detail, "2 times: c-1 (#") {
			t.Fatalf("example %+v", a.Example)
		}
	}
	expectCount(t, Check(build(history.Fail), withGroup("before-processing")), ReprocessedRecord, 0)
	expectCount(t, Check(build(history.Info), withGroup("before-processing")), ReprocessedRecord, 0)
}

func TestReprocessedRecordInAbortedTransactions(t *testing.T) {
	build := func(firstEnds string) []history.Op {
		h := &hb{}
		h.sendsTo(0, "a0")
		c := h.member("c-1", "g")
		h.txnBegin("c-1")
		c.process(1, 0)
		h.txnEnd("c-1", firstEnds, history.OK)
		h.txnBegin("c-1")
		c.process(1, 0)
		h.txnEnd("c-1", history.FTxnCommit, history.OK)
		return h.ops
	}
	r := Check(build(history.FTxnAbort), withGroup("transactional"))
	expectCount(t, r, ReprocessedRecord, 1)
	expectVerdict(t, r, ReprocessedRecord, Permitted)
	expectVerdict(t, Check(build(history.FTxnCommit), withGroup("transactional")), ReprocessedRecord, Violation)
}

func TestDuplicateSideEffect(t *testing.T) {
	build := func(times int) []history.Op {
		h := &hb{}
		h.sendsTo(0, "a0", "a1")
		c1, c2 := h.member("c-1", "g"), h.member("c-2", "g")
		c1.effect(0, 0)
		for range times {
			c2.effect(0, 1)
		}
		return h.ops
	}
	idem := func(g *ConsumerGuarantees) { g.SideEffects = "idempotent" }
	for _, tc := range []struct {
		mode    string
		mod     []func(*ConsumerGuarantees)
		n       int
		verdict string
	}{
		{"after-processing", nil, 1, Permitted},
		{"auto", nil, 1, Permitted},
		{"before-processing", nil, 1, Violation},
		{"after-processing", []func(*ConsumerGuarantees){idem}, 0, ""},
		{"before-processing", []func(*ConsumerGuarantees){idem}, 0, ""},
	} {
		r := Check(build(2), withGroup(tc.mode, tc.mod...))
		expectCount(t, r, DuplicateSideEffect, tc.n)
		if tc.n > 0 {
			expectVerdict(t, r, DuplicateSideEffect, tc.verdict)
		}
	}
	expectCount(t, Check(build(1), withGroup("before-processing")), DuplicateSideEffect, 0)
}

// When the history carries the store's answers (applied on each ok), they
// decide, whatever the configuration says: an effect the store did not
// apply is no duplicate, and an "idempotent" store that applied a key twice
// broke its promise.
func TestDuplicateSideEffectFromTheStoresAnswers(t *testing.T) {
	build := func(applied ...bool) []history.Op {
		h := &hb{}
		h.sendsTo(0, "a0", "a1")
		c1, c2 := h.member("c-1", "g"), h.member("c-2", "g")
		c1.answeredEffect(0, 1, true)
		for _, a := range applied {
			c2.answeredEffect(0, 1, a)
		}
		return h.ops
	}
	idem := func(g *ConsumerGuarantees) { g.SideEffects = "idempotent" }
	for _, tc := range []struct {
		name    string
		applied []bool
		cfg     Config
		n       int
		verdict string
	}{
		{"idempotent store deduplicated", []bool{false, false}, withGroup("after-processing", idem), 0, ""},
		{"idempotent store applied twice", []bool{true}, withGroup("after-processing", idem), 1, Violation},
		{"idempotent store applied twice, at-most-once", []bool{false, true}, withGroup("before-processing", idem), 1, Violation},
		{"plain store applied twice", []bool{true}, withGroup("after-processing"), 1, Permitted},
		{"plain store answered not applied", []bool{false}, withGroup("after-processing"), 0, ""},
	} {
		r := Check(build(tc.applied...), tc.cfg)
		if r.Count(DuplicateSideEffect) != tc.n {
			t.Errorf("%s: %d duplicate-side-effect, want %d\n%s", tc.name, r.Count(DuplicateSideEffect), tc.n, r.Summary())
			continue
		}
		if tc.n > 0 {
			expectVerdict(t, r, DuplicateSideEffect, tc.verdict)
		}
	}
}

func TestGroupVerdictsFollowTheConfiguration(t *testing.T) {
	loss := &DataLoss{Cause: "power-loss"}
	cases := []struct {
		typ     string
		f       Facts
		verdict string
		why     string
	}{
		{DoubleOwner, Facts{}, Violation, "one member owns a partition at a time"},
		{DoubleOwner, Facts{CommitMode: "before-processing"}, Violation, "one member owns"},
		{DoubleOwner, Facts{OffsetsLost: loss}, Permitted, "power-loss"},
		{ZombieCommit, Facts{CommitMode: "auto"}, Violation, "ILLEGAL_GENERATION"},
		{ZombieCommit, Facts{OffsetsLost: loss}, Permitted, "older generation"},
		{SkippedRecord, Facts{CommitMode: "before-processing"}, Permitted, "at-most-once"},
		{SkippedRecord, Facts{CommitMode: "after-processing"}, Violation, "at-least-once"},
		{SkippedRecord, Facts{CommitMode: "auto"}, Violation, "at-least-once"},
		{SkippedRecord, Facts{CommitMode: "transactional"}, Violation, "exactly-once"},
		{SkippedRecord, Facts{CommitMode: "auto", AutoOffsetReset: "latest", Loss: loss}, Permitted, "auto.offset.reset=latest"},
		{SkippedRecord, Facts{CommitMode: "auto", Loss: loss}, Violation, "at-least-once"},
		{ReprocessedRecord, Facts{CommitMode: "before-processing"}, Violation, "at-most-once"},
		{ReprocessedRecord, Facts{CommitMode: "after-processing"}, Permitted, "at-least-once"},
		{ReprocessedRecord, Facts{CommitMode: "auto"}, Permitted, "at-least-once"},
		{ReprocessedRecord, Facts{CommitMode: "transactional", CommittedAttempts: 1}, Permitted, "aborted"},
		{ReprocessedRecord, Facts{CommitMode: "transactional", CommittedAttempts: 2}, Violation, "only attempts in aborted transactions"},
		{DuplicateSideEffect, Facts{CommitMode: "before-processing"}, Violation, "at-most-once"},
		{DuplicateSideEffect, Facts{CommitMode: "before-processing", LostThenResurrected: true}, Permitted, "later unclean election"},
		{DuplicateSideEffect, Facts{CommitMode: "before-processing", SideEffects: "idempotent", LostThenResurrected: true}, Violation, "idempotent store keeps one effect per key"},
		{DuplicateSideEffect, Facts{CommitMode: "after-processing", SideEffects: "idempotent"}, Violation, "idempotent store keeps one effect per key"},
		{DuplicateSideEffect, Facts{CommitMode: "after-processing"}, Permitted, "plain external store"},
		{DuplicateSideEffect, Facts{CommitMode: "transactional"}, Permitted, "outside Kafka's transactions"},
	}
	for _, c := range cases {
		v, why := decide(c.typ, &c.f)
		if v != c.verdict || !strings.Contains(why, c.why) {
			t.Errorf("%s %+v: %s %q, want %s (%q)", c.typ, c.f, v, why, c.verdict, c.why)
		}
	}
}

func TestGroupSettingsByGroupThenByProcess(t *testing.T) {
	c := Config{Consumers: []ConsumerGuarantees{
		{Prefix: "c", Commit: "after-processing"},
		{Prefix: "d", Group: "ledger", Commit: "before-processing", SideEffects: "idempotent"},
		{Prefix: "e", Group: "ledger", Commit: "transactional", GroupProtocol: "consumer"},
	}}
	cases := []struct {
		group, process          string
		commit, effects, protoc string
	}{
		{"billing", "c-1", "after-processing", "plain", "classic"},
		{"ledger", "c-1", "before-processing", "idempotent", "classic"}, // the group's entry wins over c's
		{"ledger", "e-0", "transactional", "plain", "consumer"},         // the group's entry matching the process
		{"other", "x-0", "auto", "plain", "classic"},                    // Kafka's defaults
	}
	for _, tc := range cases {
		g := c.consumerOf(tc.group, tc.process)
		if g.Commit != tc.commit || g.SideEffects != tc.effects || g.GroupProtocol != tc.protoc {
			t.Errorf("%s %s: %+v", tc.group, tc.process, g)
		}
	}
	_ = godview.Seen
}

// Histories recorded from franz-go against kfake (testdata/README.md): a
// correct coordinator's commits across rebalances are not zombie commits,
// in a classic group and in a KIP-848 group judged as one. The KIP-848
// group judged as classic shows why group.protocol matters: its members'
// epochs differ, and a lower epoch than another member's is not stale.
func TestRecordedGroupHistories(t *testing.T) {
	for _, tc := range []struct {
		file, protocol string
		zombies        bool
	}{
		{"kfakerec-group-classic.jsonl", "classic", false},
		{"kfakerec-group-consumer.jsonl", "consumer", false},
		{"kfakerec-group-consumer.jsonl", "classic", true},
	} {
		f, err := os.Open("testdata/" + tc.file)
		if err != nil {
			t.Fatal(err)
		}
		cfg := Config{Consumers: []ConsumerGuarantees{{Group: "billing", Commit: "after-processing", GroupProtocol: tc.protocol}}}
		r, err := CheckReader(f, cfg)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if r.Stats.Commits == 0 {
			t.Fatalf("%s: no commits", tc.file)
		}
		if got := r.Count(ZombieCommit) > 0; got != tc.zombies || (!tc.zombies && r.Violations != 0) {
			t.Errorf("%s as %s: zombie commits %v, want %v\n%s", tc.file, tc.protocol, got, tc.zombies, r.Summary())
		}
	}
}

// The consumer protocol's double owner: members' epochs are their own, so
// the old owner (c-1, epoch 2) and the new one (c-2, epoch 3) of t-0 are
// never at one epoch. c-1's commit of t-0, accepted at its epoch after c-2
// began processing t-0, shows that c-1 still held it.
func TestUnreleasedPartitionIsADoubleOwner(t *testing.T) {
	consumer := func(g *ConsumerGuarantees) { g.GroupProtocol = "consumer" }
	build := func(commitAfterGrant bool) *hb {
		h := &hb{}
		h.sendsTo(0, "a0", "a1", "a2", "a3", "a4", "a5")
		c1, c2 := h.member("c-1", "g"), h.member("c-2", "g")
		c1.assign(2, "t-0")
		c1.process(2, 0, 1, 2)
		if !commitAfterGrant {
			// Kafka: the owner commits what it processed, then
			// acknowledges the revocation; only then is t-0 granted.
			c1.commit(2, map[string]int64{"t-0": 3}, history.OK)
			c1.revoke(2, "t-0")
		}
		c2.assign(3, "t-0")
		c2.process(3, 3, 4)
		if commitAfterGrant {
			c1.commit(2, map[string]int64{"t-0": 3}, history.OK)
			c1.revoke(2, "t-0")
		}
		c2.process(3, 5)
		c2.commit(3, map[string]int64{"t-0": 6}, history.OK)
		return h
	}
	r := Check(build(true).ops, withGroup("after-processing", consumer))
	expectCount(t, r, DoubleOwner, 1)
	expectVerdict(t, r, DoubleOwner, Violation)
	expectCount(t, Check(build(false).ops, withGroup("after-processing", consumer)), DoubleOwner, 0)
	// A refused commit (a fenced zombie's) shows nothing: the coordinator
	// did not take the old owner as holding the partition.
	h := &hb{}
	h.sendsTo(0, "a0", "a1", "a2", "a3")
	c1, c2 := h.member("c-1", "g"), h.member("c-2", "g")
	c1.assign(2, "t-0")
	c1.process(2, 0, 1)
	c2.assign(3, "t-0")
	c2.process(3, 2, 3)
	c1.commit(2, map[string]int64{"t-0": 2}, history.Fail)
	c2.commit(3, map[string]int64{"t-0": 4}, history.OK)
	expectCount(t, Check(h.ops, withGroup("after-processing", consumer)), DoubleOwner, 0)
}

// poll writes a member's poll of records of t.
func (m *member) poll(recs ...rec) {
	v := history.NoValue()
	m.ext(&v, -1)
	m.h.add(m.proc, history.Invoke, history.FPoll, v)
	v.HasRecords = true
	for _, r := range recs {
		v.Records = append(v.Records, history.Record{Topic: "t", Partition: r.p, Offset: r.off, Value: r.v})
	}
	m.h.add(m.proc, history.OK, history.FPoll, v)
}

// processedA0A1: member c-1 of group g polled a0, a1 at offsets 0, 1 of
// t-0 and processed both, a1 with a side effect.
func processedA0A1() (*hb, *member) {
	h := &hb{}
	h.sendsTo(0, "a0", "a1")
	c := h.member("c-1", "g")
	c.poll(rec{0, 0, "a0"}, rec{0, 1, "a1"})
	c.begin(1, 0, 0)
	c.end(1, 0, 0, history.OK)
	c.begin(1, 0, 1)
	c.effect(0, 1)
	c.end(1, 0, 1, history.OK)
	return h, c
}

// After committed data is lost the new leader gives its offsets to new
// records: a member that reads offset 1 again then (KIP-320's truncation
// detection moved its position back) and processes what it holds processes
// another record, not the same one twice. The same record read and
// processed twice is still reprocessing.
func TestReprocessedRecordIsTheRecordNotTheOffset(t *testing.T) {
	build := func(second string) []history.Op {
		h, c := processedA0A1()
		h.send("p-0", "b1", 0, 1, history.OK) // offset 1 reused after a loss
		c.poll(rec{0, 1, second})
		c.begin(1, 0, 1)
		c.effect(0, 1)
		c.end(1, 0, 1, history.OK)
		return h.ops
	}
	cfg := withGroup("before-processing")
	cfg.Happened = godViewLosses(DataLoss{Partition: "t-0", From: 1, To: 2, Records: 1, Cause: "unclean-election"})
	r := Check(build("b1"), cfg)
	expectCount(t, r, ReprocessedRecord, 0)
	expectCount(t, r, DuplicateSideEffect, 0)
	r = Check(build("a1"), withGroup("before-processing"))
	expectCount(t, r, ReprocessedRecord, 1)
	expectVerdict(t, r, ReprocessedRecord, Violation)
	expectCount(t, r, DuplicateSideEffect, 1)
	expectVerdict(t, r, DuplicateSideEffect, Violation)
}

// An unclean election loses a record an at-most-once member processed; its
// KIP-320 validation moves it back to the new leader's log end, below the
// record; a later unclean election makes the old log, still holding the
// record, the log again, and the member reads and processes the same record
// at its offset again. Kafka permits both the reprocessing and the second
// effect in a plain store; only the god view's loss and resurrection of the
// offset excuse them (fuzz --groups seed 247999).
func TestAtMostOnceRecordLostThenResurrected(t *testing.T) {
	build := func() []history.Op {
		h, c := processedA0A1()
		c.poll(rec{0, 1, "a1"}) // the old log, with a1 at 1, is the log again
		c.begin(1, 0, 1)
		c.effect(0, 1)
		c.end(1, 0, 1, history.OK)
		return h.ops
	}
	lost := DataLoss{Kind: godview.Loss, Partition: "t-0", From: 1, To: 2, Records: 1, Cause: "unclean-election"}
	back := DataLoss{Kind: godview.Resurrected, Partition: "t-0", From: 1, To: 2}
	for _, tc := range []struct {
		name    string
		facts   []DataLoss
		verdict string
	}{
		{"lost, then the old log again", []DataLoss{lost, back}, Permitted},
		{"lost, never back", []DataLoss{lost}, Violation},
		{"back, never lost", []DataLoss{back}, Violation},
		{"elsewhere", []DataLoss{{Kind: godview.Loss, Partition: "t-0", From: 2, To: 3, Records: 1, Cause: "unclean-election"}, {Kind: godview.Resurrected, Partition: "t-0", From: 2, To: 3}}, Violation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := withGroup("before-processing")
			cfg.Happened = godview.Seen(tc.facts...)
			r := Check(build(), cfg)
			expectCount(t, r, ReprocessedRecord, 1)
			expectVerdict(t, r, ReprocessedRecord, tc.verdict)
			expectCount(t, r, DuplicateSideEffect, 1)
			expectVerdict(t, r, DuplicateSideEffect, tc.verdict)
		})
	}
}

// An unclean election loses records an exactly-once member processed and
// committed (output and offsets past them, in one transaction); KIP-320
// validation moves the member back to the new leader's log end, it
// processes the record that leader put at offset 0 and commits offset 1; a
// later unclean election makes the old log, still holding a1 at 1, the log
// again, and the member reads and processes a1 again from its position.
// Kafka permits it (fuzz seed 47702), but only a return between the two
// reads, after the loss, explains it: the first read may follow the loss
// (a poll hands out what a fetch from the deposed leader buffered before
// it), not the return; a return after the second read, or before the loss,
// or of another offset, explains nothing.
func TestExactlyOnceRecordLostThenResurrected(t *testing.T) {
	var sent, first, between, second int64 // times: before the first reads, after them, between the losses, after the second read
	build := func() []history.Op {
		h := &hb{}
		h.sendsTo(0, "a0", "a1")
		c := h.member("c-1", "g")
		c.assign(1, "t-0")
		sent = h.t
		txn := func(next int64, recs ...rec) {
			h.txnBegin("c-1")
			c.poll(recs...)
			for _, r := range recs {
				c.process(1, r.off)
			}
			v := history.NoValue()
			x := c.ext(&v, 1)
			x.TransactionalID, x.Offsets = "tx-c-1", map[string]int64{"t-0": next}
			h.add("c-1", history.Invoke, history.FTxnCommit, v)
			h.add("c-1", history.OK, history.FTxnCommit, v)
		}
		txn(2, rec{0, 0, "a0"}, rec{0, 1, "a1"})
		first = h.t
		h.send("p-0", "b0", 0, 0, history.OK) // the unclean leader's log took offset 0
		txn(1, rec{0, 0, "b0"})
		between = h.t
		txn(2, rec{0, 1, "a1"}) // the old log is the log again
		second = h.t
		return h.ops
	}
	build() // the times
	lost := func(at int64) DataLoss {
		return DataLoss{Kind: godview.Loss, Partition: "t-0", From: 0, To: 2, Records: 2, Cause: "unclean-election", At: at}
	}
	back := func(at int64) DataLoss {
		return DataLoss{Kind: godview.Resurrected, Partition: "t-0", From: 0, To: 2, At: at}
	}
	for _, tc := range []struct {
		name    string
		facts   []DataLoss
		verdict string
	}{
		{"lost after the first read, back before the second", []DataLoss{lost(first + 500), back(between + 500)}, Permitted},
		{"first read after the loss (a fetch buffered before it), back before the second", []DataLoss{lost(sent + 500), back(between + 500)}, Permitted},
		{"times unknown", []DataLoss{lost(0), back(0)}, Permitted},
		{"never back", []DataLoss{lost(first + 500)}, Violation},
		{"back, never lost", []DataLoss{back(between + 500)}, Violation},
		{"back before the first read", []DataLoss{lost(1), back(2)}, Violation},
		{"back after the second read", []DataLoss{lost(first + 500), back(second + 500)}, Violation},
		{"back before the loss", []DataLoss{back(first + 200), lost(between + 500)}, Violation},
		{"elsewhere", []DataLoss{{Kind: godview.Loss, Partition: "t-0", From: 2, To: 3, Records: 1, Cause: "unclean-election", At: first + 500},
			{Kind: godview.Resurrected, Partition: "t-0", From: 2, To: 3, At: between + 500}}, Violation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := withGroup("transactional")
			cfg.Happened = godview.Seen(tc.facts...)
			r := Check(build(), cfg)
			expectCount(t, r, ReprocessedRecord, 1)
			expectVerdict(t, r, ReprocessedRecord, tc.verdict)
			if a, _ := r.Anomaly(ReprocessedRecord); a.Example.Offset != 1 || !strings.Contains(a.Because, map[string]string{Permitted: "later unclean election", Violation: "only attempts in aborted transactions"}[tc.verdict]) {
				t.Fatalf("offset %d because %q", a.Example.Offset, a.Because)
			}
		})
	}
}

// A processing whose side effect the store never acknowledged fails (info),
// and the member starts the same record over without polling it again
// (model/reader's processAgain): the retry processes the record it held.
// When a loss later gives the offset to another record, which the member
// polls and processes, that is no reprocessing (fuzz --groups seed 104559);
// polling and processing the same record again is.
func TestReprocessedRecordRetriedAfterItFailed(t *testing.T) {
	build := func(second string) []history.Op {
		h := &hb{}
		h.sendsTo(0, "a0")
		c := h.member("c-1", "g")
		c.assign(1, "t-0")
		c.poll(rec{0, 0, "a0"})
		c.commit(1, map[string]int64{"t-0": 1}, history.OK)
		c.begin(1, 0, 0)
		c.end(1, 0, 0, history.Info) // the store never answered
		c.begin(1, 0, 0)             // the retry
		c.end(1, 0, 0, history.OK)
		h.send("p-0", "b0", 0, 0, history.OK) // offset 0 reused after a loss
		c.poll(rec{0, 0, second})
		c.commit(1, map[string]int64{"t-0": 1}, history.OK)
		c.begin(1, 0, 0)
		c.end(1, 0, 0, history.OK)
		return h.ops
	}
	cfg := withGroup("before-processing")
	cfg.Happened = godViewLosses(DataLoss{Partition: "t-0", From: 0, To: 1, Records: 1, Cause: "unclean-election"})
	expectCount(t, Check(build("b0"), cfg), ReprocessedRecord, 0)
	r := Check(build("a0"), withGroup("before-processing"))
	expectCount(t, r, ReprocessedRecord, 1)
	expectVerdict(t, r, ReprocessedRecord, Violation)
}

// A pool's records wait in its queue: when KIP-320's truncation detection
// moves the position back after a loss, the member polls new records at
// offsets whose old records it has yet to process, and it processes them
// in the order polled — the old record, then the new one: two records, not
// one twice (fuzz --groups seeds 107630, 109047). The same record polled
// twice and processed twice is reprocessing.
func TestReprocessedRecordPolledAgainWhileQueued(t *testing.T) {
	build := func(second string) []history.Op {
		h := &hb{}
		h.sendsTo(0, "a0", "a1")
		c := h.member("c-1", "g")
		c.assign(1, "t-0")
		c.poll(rec{0, 0, "a0"}, rec{0, 1, "a1"})
		c.commit(1, map[string]int64{"t-0": 2}, history.OK)
		h.send("p-0", "b0", 0, 0, history.OK) // offsets reused after a loss
		h.send("p-0", "b1", 0, 1, history.OK)
		c.begin(1, 0, 0)
		c.end(1, 0, 0, history.OK)
		c.poll(rec{0, 0, "b0"}, rec{0, 1, second})
		c.commit(1, map[string]int64{"t-0": 2}, history.OK)
		for _, off := range []int64{1, 0, 1} {
			c.begin(1, 0, off)
			c.end(1, 0, off, history.OK)
		}
		return h.ops
	}
	cfg := withGroup("before-processing")
	cfg.Happened = godViewLosses(DataLoss{Partition: "t-0", From: 0, To: 2, Records: 2, Cause: "unclean-election"})
	expectCount(t, Check(build("b1"), cfg), ReprocessedRecord, 0)
	r := Check(build("a1"), cfg)
	expectCount(t, r, ReprocessedRecord, 1)
	if a, _ := r.Anomaly(ReprocessedRecord); a.Example.Offset != 1 {
		t.Fatalf("example %+v", a.Example)
	}
}

// A record a member polled and never began, before it began one of a later
// poll of the partition, was dropped (a commit refused): records begin in
// the order polled. Its offset's next processing is of the record polled
// there since, which another member processing it again reprocesses.
func TestReprocessedRecordNotTheDroppedOne(t *testing.T) {
	h := &hb{}
	h.sendsTo(0, "a0", "a1")
	c := h.member("c-1", "g")
	c.assign(1, "t-0")
	c.poll(rec{0, 0, "a0"})
	c.commit(1, map[string]int64{"t-0": 1}, history.Fail) // a0 dropped unprocessed
	c.poll(rec{0, 1, "a1"})
	c.commit(1, map[string]int64{"t-0": 2}, history.OK)
	c.begin(1, 0, 1)
	c.end(1, 0, 1, history.OK)
	h.send("p-0", "b0", 0, 0, history.OK) // offset 0 reused after a loss
	c.poll(rec{0, 0, "b0"})
	c.commit(1, map[string]int64{"t-0": 1}, history.OK)
	c.begin(1, 0, 0)
	c.end(1, 0, 0, history.OK)
	c.revoke(1, "t-0")
	c2 := h.member("c-2", "g")
	c2.assign(2, "t-0")
	c2.poll(rec{0, 0, "b0"})
	c2.commit(2, map[string]int64{"t-0": 1}, history.OK)
	c2.begin(2, 0, 0)
	c2.end(2, 0, 0, history.OK)
	cfg := withGroup("before-processing")
	cfg.Happened = godViewLosses(DataLoss{Partition: "t-0", From: 0, To: 2, Records: 2, Cause: "unclean-election"})
	r := Check(h.ops, cfg)
	expectCount(t, r, ReprocessedRecord, 1)
	if a, _ := r.Anomaly(ReprocessedRecord); a.Example.Offset != 0 || a.Example.Process != "c-2" {
		t.Fatalf("example %+v", a.Example)
	}
}

// A member that gives a partition up drops the records it polled there and
// had not begun: when it is granted the partition again and polls another
// record at the offset (a loss gave it away), it processes that one, and a
// later owner processing it again reprocesses it.
func TestReprocessedRecordNotOneDroppedOnRevoke(t *testing.T) {
	h := &hb{}
	h.sendsTo(0, "a0")
	c := h.member("c-1", "g")
	c.assign(1, "t-0")
	c.poll(rec{0, 0, "a0"})
	c.commit(1, map[string]int64{"t-0": 1}, history.Fail)
	c.revoke(1, "t-0")                    // a0 dropped unprocessed
	h.send("p-0", "b0", 0, 0, history.OK) // offset 0 reused after a loss
	c.assign(2, "t-0")
	c.poll(rec{0, 0, "b0"})
	c.commit(2, map[string]int64{"t-0": 1}, history.OK)
	c.begin(2, 0, 0)
	c.end(2, 0, 0, history.OK)
	c.revoke(2, "t-0")
	c2 := h.member("c-2", "g")
	c2.assign(3, "t-0")
	c2.poll(rec{0, 0, "b0"})
	c2.commit(3, map[string]int64{"t-0": 1}, history.OK)
	c2.begin(3, 0, 0)
	c2.end(3, 0, 0, history.OK)
	cfg := withGroup("before-processing")
	cfg.Happened = godViewLosses(DataLoss{Partition: "t-0", From: 0, To: 1, Records: 1, Cause: "unclean-election"})
	expectCount(t, Check(h.ops, cfg), ReprocessedRecord, 1)
}

func TestByValue(t *testing.T) {
	vals := map[int32]int32{0: 5, 1: 7, 2: 5, 3: -1, 4: 7, 5: 9}
	val := func(i int32) int32 { return vals[i] }
	for _, tc := range []struct {
		run  []int32
		want [][]int32
	}{
		{[]int32{0}, nil},
		{[]int32{0, 2}, [][]int32{{0, 2}}},
		{[]int32{0, 1}, nil},
		{[]int32{0, 1, 2, 4, 5}, [][]int32{{0, 2}, {1, 4}}},
		{[]int32{2, 0, 1}, [][]int32{{2, 0}}},    // order within a record kept
		{[]int32{0, 1, 3}, [][]int32{{0, 1, 3}}}, // an unknown record: the offset stands for it
	} {
		got := byValue(tc.run, val)
		if len(got) != len(tc.want) {
			t.Fatalf("byValue(%v) = %v, want %v", tc.run, got, tc.want)
		}
		for i := range got {
			if !slices.Equal(got[i], tc.want[i]) {
				t.Fatalf("byValue(%v) = %v, want %v", tc.run, got, tc.want)
			}
		}
	}
}

// In a compacted topic the log cleaner may remove a record whose key a
// later record has, before a lagging member reaches it: Kafka promises every
// record only to a consumer caught up within the head of the log (Kafka's
// documentation, "Log Compaction"; min.compaction.lag.ms, 0 by default,
// bounds it), so a member that processed only the later record of the key
// skipped nothing it was owed (fuzz seed 258: a paused member came back
// past 98 records the cleaner had removed). The last record of a key, which
// the cleaner keeps, is still owed.
func TestSkippedRecordExcusesWhatTheLogCleanerMayHaveRemoved(t *testing.T) {
	build := func(keys ...string) []history.Op {
		h := &hb{}
		for i, k := range keys {
			h.sendKeyed("a"+itoa(int64(i)), k, int64(i))
		}
		c := h.member("c-1", "g")
		c.assign(1, "t-0")
		c.process(1, 0, 3)
		c.commit(1, map[string]int64{"t-0": 4}, history.OK)
		return h.ops
	}
	// 1 and 2 have keys that 3 has too: the cleaner may have removed them.
	ops := build("x", "k", "k", "k")
	expectCount(t, Check(ops, compacted(withGroup("after-processing"))), SkippedRecord, 0)
	// Not compacted: the records stay, the member skipped them.
	expectCount(t, Check(ops, withGroup("after-processing")), SkippedRecord, 2)
	// 2 is its key's last record: the cleaner keeps it.
	expectCount(t, Check(build("x", "k", "j", "k"), compacted(withGroup("after-processing"))), SkippedRecord, 1)
}

// A member whose position fell below the log start mid-session (retention
// deleted what it had not read yet) is moved by auto.offset.reset=latest to
// the end, past records still in the log: permitted with latest, as where
// a session starts. The same jump with earliest, or with the member's
// position still inside the log, skipped records.
func TestSkippedRecordAndAMidSessionResetToLatest(t *testing.T) {
	build := func(logStart int64) []history.Op {
		h := &hb{}
		h.sendsTo(0, "a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7")
		c := h.member("c-1", "g")
		c.assign(1, "t-0")
		c.process(1, 0, 1)
		c.commit(1, map[string]int64{"t-0": 2}, history.OK)
		c.process(1, 6, 7) // reset to the end, 6 at the time
		c.commit(1, map[string]int64{"t-0": 8}, history.OK)
		h.finalOfT0(logStart, 8)
		return h.ops
	}
	latest := func(g *ConsumerGuarantees) { g.AutoOffsetReset = "latest" }
	// Retention moved the log start to 4, past the member's position 2:
	// 2 and 3 were deleted, 4 and 5 passed over by the reset.
	expectCount(t, Check(build(4), withGroup("after-processing", latest)), SkippedRecord, 0)
	r := Check(build(4), withGroup("after-processing"))
	expectCount(t, r, SkippedRecord, 2) // earliest would have gone to 4
	expectVerdict(t, r, SkippedRecord, Violation)
	// Nothing deleted: its position 2 was in range, no reset moves it.
	r = Check(build(0), withGroup("after-processing", latest))
	expectCount(t, r, SkippedRecord, 4)
	expectVerdict(t, r, SkippedRecord, Violation)
}

// At-most-once: c-1 commits 3 and processes t-0's records 0..2; later c-2
// fetches the committed offset, finds none (auto.offset.reset), commits 2
// and processes 0..1 again, with their effects. When the god view saw
// __consumer_offsets lose committed data between the two (the coordinator
// reloaded the group without c-1's commit), Kafka permits all of it (fuzz
// --groups seeds 20198, 20224, 20290); a loss before c-1's commit, or none,
// explains nothing. A loss after c-1's commit and before its processing (a
// member paused with its batch polled and committed processes it once it
// resumes, after the coordinator lost the commit) takes the commit all the
// same (fuzz --groups seeds 105488, 107236).
func TestAtMostOnceGoingBackAfterTheCommittedOffsetsWereLost(t *testing.T) {
	build := func(lossBetween, lossBefore, lossBeforeProcessing bool, lossIn string, offsetsPartitions int) *Report {
		h := &hb{}
		h.sendsTo(0, "a0", "a1", "a2")
		var lossAt int64
		if lossBefore {
			lossAt = h.t + 500
		}
		c1 := h.member("c-1", "g")
		c1.assign(1, "t-0")
		c1.commit(1, map[string]int64{"t-0": 3}, history.OK)
		if lossBeforeProcessing {
			lossAt = h.t + 500
		}
		for _, off := range []int64{0, 1, 2} {
			c1.begin(1, 0, off)
			c1.effect(0, off)
			c1.end(1, 0, off, history.OK)
		}
		c1.revoke(1, "t-0")
		if lossBetween {
			lossAt = h.t + 500
		}
		c2 := h.member("c-2", "g")
		c2.assign(2, "t-0")
		h.fetch("c-2", "g", map[string]int64{"t-0": -1})
		c2.commit(2, map[string]int64{"t-0": 2}, history.OK)
		for _, off := range []int64{0, 1} {
			c2.begin(2, 0, off)
			c2.effect(0, off)
			c2.end(2, 0, off, history.OK)
		}
		cfg := withGroup("before-processing")
		cfg.OffsetsTopicPartitions = offsetsPartitions
		if lossAt > 0 {
			cfg.Happened = godViewLosses(DataLoss{Partition: lossIn, From: 0, To: 5, Cause: "power-loss", At: lossAt})
		}
		return Check(h.ops, cfg)
	}
	// With 50 partitions, group g lives in __consumer_offsets-3
	// (abs("g".hashCode()) % 50 = 103 % 50): a loss in another partition
	// took none of its commits.
	for _, tc := range []struct {
		name                                          string
		lossBetween, lossBefore, lossBeforeProcessing bool
		lossIn                                        string
		offsetsPartitions                             int
		verdict                                       string
	}{
		{"lost in between", true, false, false, "__consumer_offsets-9", 0, Permitted},
		{"lost in between, in the group's partition", true, false, false, "__consumer_offsets-3", 50, Permitted},
		{"lost in between, in another group's partition", true, false, false, "__consumer_offsets-9", 50, Violation},
		{"lost after the commit, before the processing", false, false, true, "__consumer_offsets-9", 0, Permitted},
		{"lost before the first commit", false, true, false, "__consumer_offsets-9", 0, Violation},
		{"nothing lost", false, false, false, "", 0, Violation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := build(tc.lossBetween, tc.lossBefore, tc.lossBeforeProcessing, tc.lossIn, tc.offsetsPartitions)
			for _, typ := range []string{NonmonotonicCommit, ReprocessedRecord, DuplicateSideEffect} {
				if r.Count(typ) == 0 {
					t.Fatalf("no %s\n%s", typ, r.Summary())
				}
				expectVerdict(t, r, typ, tc.verdict)
			}
			if (r.Violations == 0) != (tc.verdict == Permitted) {
				t.Fatalf("%d violations\n%s", r.Violations, r.Summary())
			}
			if a, _ := r.Anomaly(NonmonotonicCommit); tc.verdict == Permitted && !strings.Contains(a.Because, "__consumer_offsets lost committed data (power-loss)") {
				t.Fatalf("because %q, want the loss named", a.Because)
			}
		})
	}
}

// At-most-once: c-1's commit past t-0's records 0..2 is refused, and it
// processes them all the same; __consumer_offsets then loses data, and c-2
// processes 0..1 again. The loss took no commit past the records unless one
// was made before it — here c-0's, acknowledged before c-1 joined — so only
// then does it explain c-2's start below them.
func TestAtMostOnceALossExplainsReprocessingOnlyIfItTookACommitPastTheRecord(t *testing.T) {
	build := func(earlierCommit bool) *Report {
		h := &hb{}
		h.sendsTo(0, "a0", "a1", "a2")
		if earlierCommit {
			c0 := h.member("c-0", "g")
			c0.assign(1, "t-0")
			c0.commit(1, map[string]int64{"t-0": 3}, history.OK)
			c0.revoke(1, "t-0")
		}
		c1 := h.member("c-1", "g")
		c1.assign(2, "t-0")
		c1.commit(2, map[string]int64{"t-0": 3}, history.Fail)
		for _, off := range []int64{0, 1, 2} {
			c1.begin(2, 0, off)
			c1.end(2, 0, off, history.OK)
		}
		c1.revoke(2, "t-0")
		lossAt := h.t + 500
		c2 := h.member("c-2", "g")
		c2.assign(3, "t-0")
		h.fetch("c-2", "g", map[string]int64{"t-0": -1})
		c2.commit(3, map[string]int64{"t-0": 2}, history.OK)
		for _, off := range []int64{0, 1} {
			c2.begin(3, 0, off)
			c2.end(3, 0, off, history.OK)
		}
		cfg := withGroup("before-processing")
		cfg.Happened = godViewLosses(DataLoss{Partition: "__consumer_offsets-9", From: 0, To: 5, Cause: "power-loss", At: lossAt})
		return Check(h.ops, cfg)
	}
	for _, tc := range []struct {
		name          string
		earlierCommit bool
		verdict       string
	}{
		{"an acknowledged commit past the records before the loss", true, Permitted},
		{"no commit past them but the refused one", false, Violation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := build(tc.earlierCommit)
			expectCount(t, r, ReprocessedRecord, 2)
			expectVerdict(t, r, ReprocessedRecord, tc.verdict)
		})
	}
}

// At-most-once, the other way round: c-1 commits 2 past t-0's records 0..1
// and begins 0, which takes long (its side-effect store unreachable); the
// coordinator loses c-1's commit and its membership, c-2 joins, finds no
// committed offset (auto.offset.reset) and processes 1; c-1 then finishes 0
// and processes 1, the record it polled and committed past before c-2 began,
// as Kafka's consumer hands the application a poll's records whatever
// happens to the group after. The first processing of 1 is c-2's, but the
// commit the loss must take is c-1's, made before it: a loss between that
// commit and c-2's processing permits it (fuzz --groups seeds 204792,
// 206398); one before c-1's commit, or in another group's partition, does
// not.
func TestAtMostOnceAHolderProcessesWhatItCommittedPastAfterTheCommitWasLost(t *testing.T) {
	build := func(lossBeforeSecondMember, lossBeforeCommit bool, lossIn string, offsetsPartitions int) *Report {
		h := &hb{}
		h.sendsTo(0, "a0", "a1")
		var lossAt int64
		if lossBeforeCommit {
			lossAt = h.t + 500
		}
		c1 := h.member("c-1", "g")
		c1.assign(1, "t-0")
		c1.commit(1, map[string]int64{"t-0": 2}, history.OK)
		c1.begin(1, 0, 0)
		if lossBeforeSecondMember {
			lossAt = h.t + 500
		}
		c2 := h.member("c-2", "g")
		c2.assign(1, "t-0")
		h.fetch("c-2", "g", map[string]int64{"t-0": -1})
		c2.begin(1, 0, 1)
		c2.effect(0, 1)
		c2.end(1, 0, 1, history.OK)
		c1.effect(0, 0)
		c1.end(1, 0, 0, history.OK)
		c1.begin(1, 0, 1)
		c1.effect(0, 1)
		c1.end(1, 0, 1, history.OK)
		cfg := withGroup("before-processing")
		cfg.OffsetsTopicPartitions = offsetsPartitions
		if lossAt > 0 {
			cfg.Happened = godViewLosses(DataLoss{Partition: lossIn, From: 0, To: 5, Cause: "unclean-election", At: lossAt})
		}
		return Check(h.ops, cfg)
	}
	// Group g lives in __consumer_offsets-3 of 50 (see above).
	for _, tc := range []struct {
		name                                     string
		lossBeforeSecondMember, lossBeforeCommit bool
		lossIn                                   string
		verdict                                  string
	}{
		{"lost before the second member started", true, false, "__consumer_offsets-3", Permitted},
		{"lost before, in another group's partition", true, false, "__consumer_offsets-9", Violation},
		{"lost before the commit", false, true, "__consumer_offsets-3", Violation},
		{"nothing lost", false, false, "", Violation},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := build(tc.lossBeforeSecondMember, tc.lossBeforeCommit, tc.lossIn, 50)
			for _, typ := range []string{ReprocessedRecord, DuplicateSideEffect} {
				expectCount(t, r, typ, 1)
				expectVerdict(t, r, typ, tc.verdict)
			}
			if a, _ := r.Anomaly(ReprocessedRecord); !strings.Contains(a.Examples[0].Detail, "c-2 (#") {
				t.Fatalf("example %q, want c-2's processing first", a.Examples[0].Detail)
			}
		})
	}
}

// An offset reused after a loss holds two known records (acks=1: the first
// was lost with its leader); whichever the log holds, the cleaner may have
// removed it if both keys come again, and a member that never processed it
// skipped nothing; if one key never comes again, it skipped a record (fuzz
// --groups seed 20244).
func TestSkippedRecordAtAnOffsetTwoRecordsTook(t *testing.T) {
	build := func(laterKey string) *Report {
		cfg := compacted(withGroup("after-processing"))
		cfg.Producers = []ProducerGuarantees{{Prefix: "p", Acks: "1"}}
		h := &hb{}
		h.sendKeyed("v0", "k0", 0)
		h.sendKeyed("lost", "k1", 1)
		h.sendKeyed("v1", "k2", 1) // lost's leader failed before its followers copied it
		h.sendKeyed("v2", "k1", 2)
		h.sendKeyed("v3", laterKey, 3)
		c := h.member("c-1", "g")
		c.assign(1, "t-0")
		c.process(1, 0, 2, 3)
		c.commit(1, map[string]int64{"t-0": 4}, history.OK)
		return Check(h.ops, cfg)
	}
	expectCount(t, build("k2"), SkippedRecord, 0)
	r := build("k9")
	expectCount(t, r, SkippedRecord, 1)
	expectVerdict(t, r, SkippedRecord, Violation)
}

// A record read at an offset and then taken by a loss the god view saw
// (a disk wipe, then the election of a replica without it) was not there
// for a group that came to the offset only after the loss: the group owed
// the record the log held there then, which the cleaner of a compacted
// topic may have removed (fuzz --groups seed 221530: the group formed after
// the loss began at the new log's start, and the reused offset's new
// record had its key again later). A group that had gone past the offset
// before the loss, without processing the record, skipped it.
func TestSkippedRecordLostBeforeTheGroupCameToIt(t *testing.T) {
	build := func(passedBeforeLoss, readAfterLoss, loss bool) *Report {
		cfg := compacted(withGroup("auto"))
		h := &hb{}
		h.sendKeyed("o0", "k0", 0)
		h.sendKeyed("old", "k1", 1) // never again: the cleaner keeps it
		h.poll("r-0", false, rec{0, 0, "o0"}, rec{0, 1, "old"})
		c := h.member("c-1", "g")
		if passedBeforeLoss {
			c.assign(1, "t-0")
			c.process(1, 0)
			c.commit(1, map[string]int64{"t-0": 2}, history.OK)
		}
		lossAt := h.t + 500
		if readAfterLoss {
			h.poll("r-0", false, rec{0, 1, "old"})
		}
		// The new leader's log: 1's new record has its key again at 2.
		h.sendKeyed("n0", "k0", 0)
		h.sendKeyed("n1", "k2", 1)
		h.sendKeyed("n2", "k2", 2)
		c.assign(2, "t-0")
		c.process(2, 0, 2)
		c.commit(2, map[string]int64{"t-0": 3}, history.OK)
		if loss {
			cfg.Happened = godViewLosses(DataLoss{Partition: "t-0", From: 0, To: 2, Cause: "disk-wipe", ExposedBy: "unclean-election", At: lossAt})
		}
		return Check(h.ops, cfg)
	}
	expectCount(t, build(false, false, true), SkippedRecord, 0)
	r := build(true, false, true)
	expectCount(t, r, SkippedRecord, 1)
	expectVerdict(t, r, SkippedRecord, Violation)
	if a, _ := r.Anomaly(SkippedRecord); a.Example.Offset != 1 || a.Example.Value != "old" {
		t.Fatalf("example %+v", a.Example)
	}
	// Read at 1 after the loss too: the loss did not take it.
	expectCount(t, build(false, true, true), SkippedRecord, 1)
	// Without the god view's loss, the record seen at 1 is owed.
	expectCount(t, build(false, false, false), SkippedRecord, 1)
}

// A record sent after a loss the god view saw, into an offset the new log
// reused below the group's committed offset, was never below an offset the
// group committed when it committed it: the group committed past the offset
// when the log held another record there (here one the cleaner had
// removed), and committed nothing after the new record was sent (fuzz
// --groups seed 286975: the settle's probe records took offsets 0..8 again
// after a disk wipe and an unclean election, long after the group's last
// commit). A commit past the offset invoked after the send claims the new
// record too; without the loss, nothing explains a record sent after the
// commit below it.
func TestSkippedRecordSentIntoAnOffsetReusedAfterTheGroupCommitted(t *testing.T) {
	build := func(loss, commitAfterSend bool) *Report {
		cfg := compacted(withGroup("auto"))
		h := &hb{}
		h.sendKeyed("a", "k1", 0) // the cleaner removes it: b has its key
		h.sendKeyed("b", "k1", 1)
		c := h.member("c-1", "g")
		c.assign(1, "t-0")
		c.process(1, 1)
		c.commit(1, map[string]int64{"t-0": 2}, history.OK)
		lossAt := h.t + 500
		// The new leader's log is empty: n0 takes offset 0 again.
		h.sendKeyed("n0", "k2", 0)
		if commitAfterSend {
			c.commit(1, map[string]int64{"t-0": 2}, history.Info)
		}
		h.poll("r-0", true, rec{0, 0, "n0"})
		if loss {
			cfg.Happened = godViewLosses(DataLoss{Partition: "t-0", From: 0, To: 2, Records: 2, Cause: "disk-wipe", ExposedBy: "unclean-election", At: lossAt})
		}
		return Check(h.ops, cfg)
	}
	expectCount(t, build(true, false), SkippedRecord, 0)
	for _, tc := range []struct {
		name                  string
		loss, commitAfterSend bool
	}{{"a commit past it after the send", true, true}, {"no loss", false, false}} {
		r := build(tc.loss, tc.commitAfterSend)
		expectCount(t, r, SkippedRecord, 1)
		expectVerdict(t, r, SkippedRecord, Violation)
		if a, _ := r.Anomaly(SkippedRecord); a.Example.Offset != 0 || a.Example.Value != "n0" {
			t.Fatalf("%s: example %+v", tc.name, a.Example)
		}
	}
}

// A record whose send was invoked before the group's last commit but
// acknowledged only after a loss the god view saw, at an offset the new log
// reused below that commit, came to the log after the commit: the commit
// claimed the log before the loss, where offset 1 held something the
// member had no record to process of (a control record). Fuzz seed 37714
// with processors and groups: sends invoked while orders-0 was leaderless
// landed after KIP-966's election of the last known leader, below the
// offset the group had committed before it; the member's one commit after
// the loss was refused (GROUP_ID_NOT_FOUND: __consumer_offsets lost the
// group too). A commit of that offset after the loss, not refused, claims
// the new record; so does one after the record was seen at its offset
// before the loss, and without the loss nothing explains it.
func TestSkippedRecordSentBeforeTheCommitLandedAfterALoss(t *testing.T) {
	build := func(loss, readBeforeLoss bool, afterLoss history.Type) *Report {
		cfg := withGroup("auto")
		h := &hb{}
		h.send("p-0", "a", 0, 0, history.OK)
		h.send("p-0", "c", 0, 2, history.OK) // 1: a transaction marker
		v := history.NoValue()
		v.Topic, v.Value = "t", "n1"
		h.add("p-0", history.Invoke, history.FSend, v) // the partition is leaderless
		if readBeforeLoss {
			h.poll("r-0", false, rec{0, 1, "n1"})
		}
		c := h.member("c-1", "g")
		c.assign(1, "t-0")
		c.process(1, 0, 2)
		c.commit(1, map[string]int64{"t-0": 3}, history.OK)
		lossAt := h.t + 500
		h.t += 1000
		v.Partition, v.Offset = 0, 1
		h.add("p-0", history.OK, history.FSend, v)
		if afterLoss != history.Invoke {
			c.commit(1, map[string]int64{"t-0": 3}, afterLoss)
		}
		h.poll("r-0", true, rec{0, 1, "n1"})
		if loss {
			cfg.Happened = godViewLosses(DataLoss{Partition: "t-0", From: 0, To: 3, Records: 2, Cause: "power-loss", ExposedBy: "unclean-election", At: lossAt})
		}
		return Check(h.ops, cfg)
	}
	expectCount(t, build(true, false, history.Invoke), SkippedRecord, 0)
	expectCount(t, build(true, false, history.Fail), SkippedRecord, 0)
	for _, tc := range []struct {
		name             string
		loss, readBefore bool
		afterLoss        history.Type
	}{
		{"a commit of the offset after the loss, of unknown outcome", true, false, history.Info},
		{"a commit of the offset after the loss, acknowledged", true, false, history.OK},
		{"the record read at its offset before the loss", true, true, history.Invoke},
		{"no loss", false, false, history.Invoke},
	} {
		r := build(tc.loss, tc.readBefore, tc.afterLoss)
		expectCount(t, r, SkippedRecord, 1)
		expectVerdict(t, r, SkippedRecord, Violation)
		if a, _ := r.Anomaly(SkippedRecord); a.Example.Offset != 1 || a.Example.Value != "n1" {
			t.Fatalf("%s: example %+v", tc.name, a.Example)
		}
	}
}

// A member's position was out of range at the leader it fetched from
// (retention had deleted offset 2 there) and auto.offset.reset moved it to
// 3; a replica that still held offset 2 led later (fuzz seed 364903). The
// god view's record of that member's reset over offset 2 excuses the skip;
// another process's, or one over other offsets, does not.
func TestSkippedRecordPastAnOutOfRangeResetIsNoSkip(t *testing.T) {
	h, _ := skipHistory(0, 1, 3, 4)
	reset := func(proc string, from, to int64) godview.Fact {
		return godview.Fact{Kind: godview.OutOfRangeReset, Partition: "t-0", From: from, To: to, Process: proc}
	}
	for _, c := range []struct {
		name string
		fact godview.Fact
		want int
	}{
		{"the member's reset", reset("c-1", 2, 3), 0},
		{"another process's", reset("c-2", 2, 3), 1},
		{"over other offsets", reset("c-1", 3, 4), 1},
	} {
		cfg := withGroup("after-processing")
		cfg.Happened = godview.Seen(c.fact)
		if got := Check(h.ops, cfg).Count(SkippedRecord); got != c.want {
			t.Errorf("%s: %d skipped-record, want %d", c.name, got, c.want)
		}
	}
}
