package reader_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"kafkasim/history"
	"kafkasim/model/proto"
	"kafkasim/model/reader"
	"kafkasim/sim"
)

// The consumer-protocol (KIP-848) member against the coordinator's own
// state machine (cgBroker).

// A member joins with epoch 0 and the member id it made up; the
// coordinator gives it both partitions at epoch 1; it takes them (assign),
// starts orders-0 at the committed offset 3 (OffsetFetch with its member id
// and epoch) and orders-1, with nothing committed, at auto.offset.reset;
// it acknowledges with the partitions it owns, commits with its epoch, and
// heartbeats at the coordinator's interval.
func TestConsumerMemberJoinsAndStartsAtCommittedOffsets(t *testing.T) {
	b := newCGBroker(2, 5, false)
	b.committed["orders-0"] = proto.OffsetCommitPartition{TopicPartition: proto.TopicPartition{Topic: "orders"}, CommittedOffset: 3, CommittedLeaderEpoch: 0}
	gw := newCGWorld(b, consumerMemberConfig("c-0", reader.CommitAfterProcessing))
	gw.w.Start()
	gw.w.RunUntil(12 * time.Second)

	m := gw.member(0)
	_, _, id, _ := m.Group()
	got := ops(gw.rec, "c-0", history.FAssign, history.FFetchCommitted, history.FProcess, history.FCommit, history.FRevoke)
	want := []string{
		"invoke assign [orders-0 orders-1] gen=1", "ok assign [orders-0 orders-1] gen=1",
		"invoke fetch-committed [orders-0 orders-1]", "ok fetch-committed orders-0=3 orders-1=-1",
		"invoke process gen=1 orders-0@3", "ok process gen=1 orders-0@3", "invoke process gen=1 orders-0@4", "ok process gen=1 orders-0@4",
		"invoke commit orders-0=5 gen=1", "ok commit orders-0=5 gen=1",
	}
	if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
		t.Fatalf("member's operations:\n%s\nwant them to begin:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if c := b.committed["orders-1"]; c.CommittedOffset != 5 {
		t.Fatalf("orders-1 committed %d, want 5", c.CommittedOffset)
	}
	log := from(b.log, "c-0", "")
	head := []string{
		"c-0 ConsumerGroupHeartbeat epoch=0 owned=[] id=" + id,
		"c-0 ConsumerGroupHeartbeat epoch=1 owned=[orders-0 orders-1] id=" + id,
		"c-0 OffsetFetch epoch=1 id=" + id,
		"c-0 OffsetCommit epoch=1 id=" + id,
	}
	if len(log) < len(head) || !slices.Equal(log[:len(head)], head) {
		t.Fatalf("coordinator received:\n%s\nwant it to begin:\n%s", strings.Join(log, "\n"), strings.Join(head, "\n"))
	}
	if n := len(from(b.log, "c-0", "ConsumerGroupHeartbeat epoch=1 owned=- ")); n != 2 {
		t.Fatalf("%d heartbeats after the acknowledgement in 12 s, want 2 (every 5 s, group.consumer.heartbeat.interval.ms)", n)
	}
	if e, ok := m.MemberEpoch(); !ok || e != 1 || !m.Stable() || m.MemberState() != "STABLE" {
		t.Fatalf("member epoch %d (%v), state %s, stable %v: want STABLE at epoch 1", e, ok, m.MemberState(), m.Stable())
	}
}

// When c-1 joins, c-0 must give up two partitions: inside its poll it
// commits what it processed of them (auto-commit has not run yet: the
// interval is long) with its epoch, which the coordinator still accepts
// (the member keeps its epoch until it acknowledges), drops them, and only
// then acknowledges; the coordinator hands them to c-1 after that, which
// starts at the offsets c-0 committed.
func TestConsumerMemberCommitsOnRevokeBeforeItAcknowledges(t *testing.T) {
	c0 := consumerMemberConfig("c-0", reader.CommitAuto)
	c0.Group.AutoCommitInterval = time.Hour
	c1 := consumerMemberConfig("c-1", reader.CommitAuto)
	c1.Start = 20 * time.Second
	b := newCGBroker(4, 5, false)
	gw := newCGWorld(b, c0, c1)
	gw.w.Start()
	gw.w.RunUntil(60 * time.Second)

	got := ops(gw.rec, "c-0", history.FCommit, history.FRevoke, history.FAssign)
	// Kafka runs onPartitionsAssigned after every reconciliation, with
	// what it adds (nothing here): the assign records what c-0 keeps, at
	// the epoch it still has.
	shape := []string{"invoke assign ", "ok assign ", "invoke commit ", "ok commit ", "invoke revoke ", "ok revoke ",
		"invoke assign [orders", "ok assign [orders"}
	ok := len(got) == len(shape) && strings.HasSuffix(got[7], " gen=1")
	for i := range shape {
		ok = ok && strings.HasPrefix(got[i], shape[i])
	}
	if !ok {
		t.Fatalf("c-0's operations:\n%s\nwant assign, then a commit and the revocation, then the assignment it keeps at epoch 1", strings.Join(got, "\n"))
	}
	revoked := gw.rec.Ops()
	var rv history.Op
	for _, op := range revoked {
		if op.Process == "c-0" && op.F == history.FRevoke && op.Type == history.OK {
			rv = op
		}
	}
	if len(rv.Value.Ext.Partitions) != 2 || rv.Value.Ext.Generation != 1 {
		t.Fatalf("c-0 revoked %v at epoch %d, want two partitions at epoch 1", rv.Value.Ext.Partitions, rv.Value.Ext.Generation)
	}
	for _, p := range rv.Value.Ext.Partitions {
		if !strings.Contains(got[2], p+"=5") {
			t.Fatalf("the commit on revoke %q does not commit %s at 5", got[2], p)
		}
	}
	// At the coordinator: the commit, then the acknowledgement.
	log := from(b.log, "c-0", "")
	commit := slices.IndexFunc(log, func(s string) bool { return strings.Contains(s, "OffsetCommit epoch=1") })
	ack := slices.IndexFunc(log, func(s string) bool {
		return strings.Contains(s, "ConsumerGroupHeartbeat epoch=1 owned=[") && !strings.Contains(s, "owned=[orders-0 orders-1 orders-2 orders-3]")
	})
	if commit < 0 || ack < 0 || commit > ack {
		t.Fatalf("c-0 sent:\n%s\nwant the commit on revoke (epoch 1) before the acknowledgement", strings.Join(log, "\n"))
	}
	// c-1 is granted them after the revocation, and starts where c-0
	// committed: it processes nothing.
	c1ops := ops(gw.rec, "c-1", history.FAssign, history.FFetchCommitted, history.FProcess)
	var granted []string
	for _, s := range c1ops {
		if strings.HasPrefix(s, "ok assign [orders") {
			granted = append(granted, s)
		}
	}
	if len(granted) != 1 || !strings.Contains(granted[0], strings.Join(rv.Value.Ext.Partitions, " ")) {
		t.Fatalf("c-1's operations:\n%s\nwant it assigned %v", strings.Join(c1ops, "\n"), rv.Value.Ext.Partitions)
	}
	if len(only(c1ops, "process")) != 0 || len(only(c1ops, "=5")) == 0 {
		t.Fatalf("c-1's operations:\n%s\nwant it to start at the committed offsets (5) and process nothing", strings.Join(c1ops, "\n"))
	}
	assigned := opIndex(gw.rec, "c-1", history.FAssign, "orders")
	if assigned < rv.Index {
		t.Fatalf("c-1 was assigned the partitions (#%d) before c-0 revoked them (#%d)", assigned, rv.Index)
	}
	for i := range 2 {
		if e, _ := gw.member(i).MemberEpoch(); e != 2 || !gw.member(i).Stable() {
			t.Fatalf("member %d at epoch %d, stable %v: want both STABLE at epoch 2", i, e, gw.member(i).Stable())
		}
	}
}

// opIndex is the index of a process's first ok operation f whose
// partitions include a name containing sub (-1: none).
func opIndex(rec *history.Recorder, process, f, sub string) int64 {
	for _, op := range rec.Ops() {
		if op.Process == process && op.F == f && op.Type == history.OK && op.Value.Ext != nil &&
			slices.ContainsFunc(op.Value.Ext.Partitions, func(p string) bool { return strings.Contains(p, sub) }) {
			return op.Index
		}
	}
	return -1
}

// The coordinator fences c-0 (its session expired): c-0's next heartbeat
// is told UNKNOWN_MEMBER_ID; it loses its partitions without committing
// (what it processed since its last commit is not committed), rejoins at
// epoch 0 with the same member id, and is assigned them again at a new
// epoch, from the committed offsets.
func TestConsumerMemberFencedLosesItsPartitionsAndRejoins(t *testing.T) {
	c0 := consumerMemberConfig("c-0", reader.CommitAuto)
	c0.Group.AutoCommitInterval = time.Hour
	b := newCGBroker(2, 5, false)
	gw := newCGWorld(b, c0)
	gw.w.Start()
	gw.w.RunUntil(8 * time.Second)
	b.fenceNext = gw.members[0]
	gw.w.RunUntil(30 * time.Second)

	_, _, id, _ := gw.member(0).Group()
	got := ops(gw.rec, "c-0", history.FAssign, history.FRevoke, history.FCommit, history.FFetchCommitted)
	want := []string{
		"invoke assign [orders-0 orders-1] gen=1", "ok assign [orders-0 orders-1] gen=1",
		"invoke fetch-committed [orders-0 orders-1]", "ok fetch-committed orders-0=-1 orders-1=-1",
		"invoke revoke [orders-0 orders-1] gen=1", "ok revoke [orders-0 orders-1] gen=1",
		"invoke assign [orders-0 orders-1] gen=3", "ok assign [orders-0 orders-1] gen=3",
		"invoke fetch-committed [orders-0 orders-1]", "ok fetch-committed orders-0=-1 orders-1=-1",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("c-0's operations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := len(only(ops(gw.rec, "c-0", history.FProcess), "ok process gen=3")); n != 10 {
		t.Fatalf("c-0 processed %d records at epoch 3, want all 10 again (nothing was committed)", n)
	}
	rejoin := from(b.log, "c-0", "ConsumerGroupHeartbeat epoch=0 owned=[] id="+id)
	if len(rejoin) != 2 {
		t.Fatalf("c-0 sent:\n%s\nwant it to join twice with member id %s", strings.Join(from(b.log, "c-0", ""), "\n"), id)
	}
}

// A batch processed longer than max.poll.interval.ms: the member's poll
// timer expires while it processes; it leaves (epoch -1) at once, and at
// its next poll gives its partition up as lost and rejoins (epoch 0, same
// member id); committing before processing, it resumes past the batch.
func TestConsumerMemberLeavesWhenItsPollTimerExpires(t *testing.T) {
	c0 := consumerMemberConfig("c-0", reader.CommitBeforeProcessing)
	c0.Group.MaxPollInterval = 3 * time.Second
	c0.Group.Processing = sim.Fixed(time.Second)
	b := newCGBroker(1, 8, false)
	gw := newCGWorld(b, c0)
	gw.w.Start()
	gw.w.RunUntil(40 * time.Second)

	_, _, id, _ := gw.member(0).Group()
	got := ops(gw.rec, "c-0", history.FAssign, history.FRevoke, history.FCommit, history.FFetchCommitted)
	want := []string{
		"invoke assign [orders-0] gen=1", "ok assign [orders-0] gen=1",
		"invoke fetch-committed [orders-0]", "ok fetch-committed orders-0=-1",
		"invoke commit orders-0=8 gen=1", "ok commit orders-0=8 gen=1",
		"invoke revoke [orders-0] gen=1", "ok revoke [orders-0] gen=1",
		"invoke assign [orders-0] gen=3", "ok assign [orders-0] gen=3",
		"invoke fetch-committed [orders-0]", "ok fetch-committed orders-0=8",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("c-0's operations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The poll that returned the batch restarted the poll timer; the leave
	// goes 3 s later, mid-batch (8 records of 1 s).
	var pollAt, processStart, leaveAt time.Duration = -1, -1, -1
	for _, op := range gw.rec.Ops() {
		if op.Process != "c-0" || processStart >= 0 {
			continue
		}
		switch {
		case op.F == history.FPoll && op.Type == history.Invoke:
			pollAt = time.Duration(op.Time)
		case op.F == history.FProcess:
			processStart = time.Duration(op.Time)
		}
	}
	for i, l := range b.log {
		if l == "c-0 ConsumerGroupHeartbeat epoch=-1 owned=[] id="+id {
			leaveAt = b.at[i]
		}
	}
	if pollAt < 0 || leaveAt < pollAt+3*time.Second || leaveAt > pollAt+3*time.Second+100*time.Millisecond || leaveAt > processStart+8*time.Second {
		t.Fatalf("leave heartbeat at %v, the batch's poll at %v: want the leave 3 s after the poll\n%s", leaveAt, pollAt,
			strings.Join(from(b.log, "c-0", ""), "\n"))
	}
	if n := len(from(b.log, "c-0", "ConsumerGroupHeartbeat epoch=0 owned=[] id="+id)); n != 2 {
		t.Fatalf("c-0 joined %d times with its member id, want twice", n)
	}
	if n := len(only(ops(gw.rec, "c-0", history.FProcess), "ok process")); n != 8 {
		t.Fatalf("c-0 processed %d records, want the batch's 8 once", n)
	}
}

// A member idle in poll is polling: an empty poll (the broker holds its
// fetch) waits longer (fetch wait plus a tenth of the request timeout) than
// its max.poll.interval.ms, yet
// Kafka's poll loop sends a PollEvent each round (AsyncKafkaConsumer.poll),
// so the poll timer never expires under it. The member stays in the group
// with its partition and commits once, no leave heartbeat (fuzz seed 38).
func TestConsumerMemberIdleInPollKeepsItsPollTimer(t *testing.T) {
	c0 := consumerMemberConfig("c-0", reader.CommitAfterProcessing)
	c0.Group.MaxPollInterval = time.Second
	if wait := c0.FetchMaxWait + c0.RequestTimeout/10; wait <= 2*c0.Group.MaxPollInterval {
		t.Fatalf("an empty poll waits %v: the test needs it well past max.poll.interval.ms", wait)
	}
	b := newCGBroker(1, 3, false)
	b.holdEmptyFetches = true
	gw := newCGWorld(b, c0)
	gw.w.Start()
	gw.w.RunUntil(20 * time.Second)

	_, _, id, _ := gw.member(0).Group()
	if n := len(from(b.log, "c-0", "ConsumerGroupHeartbeat epoch=-1 ")); n != 0 {
		t.Fatalf("c-0 left the group %d times while idle in poll:\n%s", n, strings.Join(from(b.log, "c-0", ""), "\n"))
	}
	if n := len(from(b.log, "c-0", "ConsumerGroupHeartbeat epoch=0 owned=[] id="+id)); n != 1 {
		t.Fatalf("c-0 joined %d times, want once", n)
	}
	got := ops(gw.rec, "c-0", history.FAssign, history.FRevoke, history.FCommit)
	want := []string{"invoke assign [orders-0] gen=1", "ok assign [orders-0] gen=1", "invoke commit orders-0=3 gen=1", "ok commit orders-0=3 gen=1"}
	if !slices.Equal(got, want) {
		t.Fatalf("c-0's operations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
