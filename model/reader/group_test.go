package reader_test

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"kafkasim/history"
	"kafkasim/model/proto"
	"kafkasim/model/reader"
	"kafkasim/sim"
)

// A new dynamic member is told MEMBER_ID_REQUIRED and joins again with the
// id it was given (KIP-394); as the only member it leads and assigns itself
// both partitions; it starts orders-0 at the committed offset 3 and
// orders-1, with nothing committed, at auto.offset.reset (earliest); the
// committed offset's leader epoch is validated first (KIP-320); it
// processes every record once, committing after processing.
func TestMemberJoinsWithTheGivenMemberIDAndStartsAtCommittedOffsets(t *testing.T) {
	gw := newGroupWorld(2, 5, memberConfig("c-0", reader.CommitAfterProcessing))
	gw.b.requireMemberID = true
	gw.b.committed["orders-0"] = proto.OffsetCommitPartition{TopicPartition: proto.TopicPartition{Topic: "orders"}, CommittedOffset: 3, CommittedLeaderEpoch: 0}
	gw.w.Start()
	gw.w.RunUntil(10 * time.Second)

	if len(gw.b.joins) != 2 || gw.b.joins[0].MemberID != "" || gw.b.joins[1].MemberID != "m1" {
		t.Fatalf("joins %+v, want one without a member id, then one as m1", gw.b.joins)
	}
	got := ops(gw.rec, "c-0", history.FAssign, history.FFetchCommitted, history.FProcess, history.FCommit)
	want := []string{
		"invoke assign [orders-0 orders-1] gen=1", "ok assign [orders-0 orders-1] gen=1",
		"invoke fetch-committed [orders-0 orders-1]", "ok fetch-committed orders-0=3 orders-1=-1",
	}
	// orders-1 waits for its reset (ListOffsets), so the first poll
	// returns orders-0's records only; each batch is committed after it is
	// processed.
	for _, off := range []string{"orders-0@3", "orders-0@4"} {
		want = append(want, "invoke process gen=1 "+off, "ok process gen=1 "+off)
	}
	want = append(want, "invoke commit orders-0=5 gen=1", "ok commit orders-0=5 gen=1")
	for _, off := range []string{"orders-1@0", "orders-1@1", "orders-1@2", "orders-1@3", "orders-1@4"} {
		want = append(want, "invoke process gen=1 "+off, "ok process gen=1 "+off)
	}
	want = append(want, "invoke commit orders-0=5 orders-1=5 gen=1", "ok commit orders-0=5 orders-1=5 gen=1")
	if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
		t.Fatalf("member's operations:\n%s\nwant them to begin:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := gw.b.count("OffsetsForLeaderEpoch"); n != 1 {
		t.Fatalf("%d OffsetsForLeaderEpoch, want orders-0's committed epoch validated once (KIP-320)", n)
	}
	if c := gw.b.committed["orders-1"]; c.CommittedOffset != 5 {
		t.Fatalf("orders-1 committed %d, want 5", c.CommittedOffset)
	}
	if n := gw.b.count("Heartbeat"); n < 2 {
		t.Fatalf("%d heartbeats in 10 s, want them every 3 s", n)
	}
}

// only keeps the operations whose string contains sub.
func only(ops []string, sub string) []string {
	return slices.DeleteFunc(slices.Clone(ops), func(s string) bool { return !strings.Contains(s, sub) })
}

// twoMembers starts c-0 at once and c-1 at 20 s, both with assignors, over
// four partitions of five records each.
func twoMembers(assignors ...reader.GroupAssignor) *groupWorld {
	c0 := memberConfig("c-0", reader.CommitAfterProcessing, assignors...)
	c1 := memberConfig("c-1", reader.CommitAfterProcessing, assignors...)
	c1.Start = 20 * time.Second
	gw := newGroupWorld(4, 5, c0, c1)
	gw.w.Start()
	gw.w.RunUntil(40 * time.Second)
	return gw
}

// Eager: when c-1 joins, c-0 learns of the rebalance from a heartbeat,
// commits what it processed and revokes everything before joining again;
// c-1 starts its half at the offsets c-0 committed, so it processes nothing.
func TestEagerMemberRevokesEverythingBeforeItJoins(t *testing.T) {
	gw := twoMembers(rangeAssignor{})
	// The first commit follows the processing; the second is the
	// rebalance listener's, before the revocation.
	all := "ok commit orders-0=5 orders-1=5 orders-2=5 orders-3=5 gen=1"
	want := []string{"ok assign [orders-0 orders-1 orders-2 orders-3] gen=1", all, all,
		"ok revoke [orders-0 orders-1 orders-2 orders-3] gen=1", "ok assign [orders-0 orders-1] gen=2"}
	if got := only(ops(gw.rec, "c-0", history.FAssign, history.FRevoke, history.FCommit), "ok "); !slices.Equal(got, want) {
		t.Fatalf("c-0's operations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := only(ops(gw.rec, "c-1", history.FAssign, history.FFetchCommitted, history.FProcess), "ok "); !slices.Equal(got, []string{
		"ok assign [orders-2 orders-3] gen=2", "ok fetch-committed orders-2=5 orders-3=5"}) {
		t.Fatalf("c-1's operations %v, want its assignment starting at c-0's commits, nothing to process", got)
	}
	// c-0's second JoinGroup went after its revocation: the coordinator saw
	// it join twice and c-1 once.
	if n := gw.b.count("JoinGroup"); n != 3 {
		t.Fatalf("%d JoinGroups, want 3", n)
	}
}

// Cooperative: c-0 keeps orders-0 and orders-1 throughout; the partitions
// moving to c-1 are withheld in generation 2, revoked by c-0 after its sync
// (with a commit), and given to c-1 in the follow-up rebalance.
func TestCooperativeMemberRevokesOnlyWhatMovesThenRejoins(t *testing.T) {
	gw := twoMembers(cooperativeRange{})
	got := only(ops(gw.rec, "c-0", history.FAssign, history.FRevoke), "ok ")
	want := []string{"ok assign [orders-0 orders-1 orders-2 orders-3] gen=1", "ok revoke [orders-2 orders-3] gen=1",
		"ok assign [orders-0 orders-1] gen=2", "ok assign [orders-0 orders-1] gen=3"}
	if !slices.Equal(got, want) {
		t.Fatalf("c-0's assignments %v, want %v", got, want)
	}
	commits := only(ops(gw.rec, "c-0", history.FCommit), "ok ")
	if last := commits[len(commits)-1]; last != "ok commit orders-2=5 orders-3=5 gen=2" {
		t.Fatalf("c-0's last commit %q, want the revoked partitions' in generation 2", last)
	}
	got = only(ops(gw.rec, "c-1", history.FAssign, history.FRevoke), "ok ")
	if !slices.Equal(got, []string{"ok assign [] gen=2", "ok assign [orders-2 orders-3] gen=3"}) {
		t.Fatalf("c-1's assignments %v", got)
	}
}

// slowMember processes each record for a second, five records a poll, with
// a two-second max.poll.interval.ms: the poll timer expires in each batch.
func slowMember(instanceID string) *groupWorld {
	cfg := memberConfig("c-0", reader.CommitAfterProcessing)
	cfg.MaxPollRecords = 5
	cfg.Group.GroupInstanceID = instanceID
	cfg.Group.MaxPollInterval = 2 * time.Second
	cfg.Group.Processing = sim.Fixed(time.Second)
	gw := newGroupWorld(1, 10, cfg)
	gw.w.Start()
	gw.w.RunUntil(8 * time.Second)
	return gw
}

// A dynamic member whose processing outlasts max.poll.interval.ms leaves
// the group (LeaveGroup) from its heartbeat thread; the batch is still
// processed, but its commit is refused before it is sent (the member is
// out of the group); the history names the generation the member held its
// partitions in.
func TestPollTimeoutMakesADynamicMemberLeave(t *testing.T) {
	gw := slowMember("")
	if len(gw.b.leaves) == 0 || gw.b.leaves[0].Members[0].MemberID != "m1" {
		t.Fatalf("LeaveGroups %+v, want m1's", gw.b.leaves)
	}
	commits := ops(gw.rec, "c-0", history.FCommit)
	if len(commits) < 2 || !strings.HasPrefix(commits[1], "fail commit orders-0=5 gen=1 (CommitFailedException") {
		t.Fatalf("commits %v, want the first batch's refused", commits)
	}
	if got := only(ops(gw.rec, "c-0", history.FProcess), "ok "); len(got) < 5 {
		t.Fatalf("processed %v, want the whole first batch", got)
	}
}

// A static member whose poll timer expires sends no LeaveGroup (its session
// expiry removes it), though it drops its generation all the same.
func TestPollTimeoutMakesNoStaticMemberLeave(t *testing.T) {
	gw := slowMember("c-0")
	if len(gw.b.leaves) != 0 {
		t.Fatalf("a static member sent LeaveGroup %+v", gw.b.leaves)
	}
	commits := ops(gw.rec, "c-0", history.FCommit)
	if len(commits) < 2 || !strings.HasPrefix(commits[1], "fail commit orders-0=5 gen=1 (CommitFailedException") {
		t.Fatalf("commits %v, want the first batch's refused", commits)
	}
	if j := gw.b.joins[len(gw.b.joins)-1]; len(gw.b.joins) < 2 || j.GroupInstanceID != "c-0" || j.MemberID != "" {
		t.Fatalf("joins %+v, want a rejoin as c-0 without a member id", gw.b.joins)
	}
}

// The commit modes order commits and processing: before-processing commits
// past a batch before processing it; after-processing processes it, then
// commits; auto commits at a poll once auto.commit.interval.ms passed.
func TestCommitModesOrderCommitsAndProcessing(t *testing.T) {
	for _, tc := range []struct {
		mode reader.CommitMode
		want []string
	}{
		{reader.CommitBeforeProcessing, []string{"invoke commit orders-0=3", "ok commit orders-0=3", "invoke process @0", "ok process @0",
			"invoke process @1", "ok process @1", "invoke process @2", "ok process @2"}},
		{reader.CommitAfterProcessing, []string{"invoke process @0", "ok process @0", "invoke process @1", "ok process @1",
			"invoke process @2", "ok process @2", "invoke commit orders-0=3", "ok commit orders-0=3"}},
		{reader.CommitAuto, []string{"invoke process @0", "ok process @0", "invoke process @1", "ok process @1",
			"invoke process @2", "ok process @2", "invoke commit orders-0=3", "ok commit orders-0=3"}},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			gw := newGroupWorld(1, 3, memberConfig("c-0", tc.mode))
			gw.w.Start()
			gw.w.RunUntil(20 * time.Second)
			var got []string
			var assigned, committed time.Duration // the first commit's
			for _, op := range gw.rec.Ops() {
				switch op.F {
				case history.FAssign:
					assigned = time.Duration(op.Time)
				case history.FCommit:
					if committed == 0 {
						committed = time.Duration(op.Time)
					}
					got = append(got, op.Type.String()+" commit orders-0="+strconv.FormatInt(op.Value.Ext.Offsets["orders-0"], 10))
				case history.FProcess:
					got = append(got, op.Type.String()+" process @"+strconv.FormatInt(op.Value.Offset, 10))
				}
			}
			if len(got) < len(tc.want) || !slices.Equal(got[:len(tc.want)], tc.want) {
				t.Fatalf("operations %v, want them to begin %v", got, tc.want)
			}
			if tc.mode == reader.CommitAuto && committed-assigned < 5*time.Second {
				t.Fatalf("auto-committed %v after the assignment, want auto.commit.interval.ms (5 s) at least", committed-assigned)
			}
		})
	}
}

// A commit the coordinator refuses (ILLEGAL_GENERATION) is recorded fail;
// the member resets its generation, gives its partitions up as lost (the
// listener's commit is refused too, locally; the history names the
// generation the partitions were held in) and joins again, keeping its
// member id.
func TestRefusedCommitIsRecordedFailAndTheMemberRejoins(t *testing.T) {
	gw := newGroupWorld(1, 3, memberConfig("c-0", reader.CommitAfterProcessing))
	gw.b.commitErr = proto.IllegalGeneration
	gw.w.Start()
	gw.w.RunUntil(5 * time.Second)
	got := ops(gw.rec, "c-0", history.FCommit, history.FRevoke)
	want := []string{"invoke commit orders-0=3 gen=1", "fail commit orders-0=3 gen=1 (ILLEGAL_GENERATION)",
		"invoke commit orders-0=3 gen=1", "fail commit orders-0=3 gen=1 (CommitFailedException: the member is not part of an active group)",
		"invoke revoke [orders-0] gen=1", "ok revoke [orders-0] gen=1"}
	if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
		t.Fatalf("operations:\n%s\nwant them to begin:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(gw.b.joins) < 2 || gw.b.joins[1].MemberID != "m1" {
		t.Fatalf("joins %+v, want a rejoin as m1", gw.b.joins)
	}
}

// A heartbeat answered NOT_COORDINATOR marks the coordinator dead: the
// member finds it again and heartbeats on in its generation, no rejoin.
func TestLostCoordinatorIsRediscovered(t *testing.T) {
	gw := newGroupWorld(1, 3, memberConfig("c-0", reader.CommitAfterProcessing))
	gw.b.heartbeatErr = []proto.ErrorCode{proto.NotCoordinator}
	gw.w.Start()
	gw.w.RunUntil(15 * time.Second)
	if n := gw.b.count("FindCoordinator"); n != 2 {
		t.Fatalf("%d FindCoordinators, want 2", n)
	}
	if n := gw.b.count("JoinGroup"); n != 1 {
		t.Fatalf("%d JoinGroups, want 1: the generation survives a coordinator move", n)
	}
	if n := gw.b.count("Heartbeat"); n < 3 {
		t.Fatalf("%d heartbeats, want them to go on", n)
	}
	if !gw.member(0).Stable() {
		t.Fatal("member not stable")
	}
}

// A static member that crashed comes back as a new process and joins with
// its group.instance.id and no member id; the coordinator gives it a new
// member id, and it starts from what it committed.
func TestRestartedStaticMemberRejoinsWithItsInstanceID(t *testing.T) {
	cfg := memberConfig("c-0", reader.CommitAfterProcessing)
	cfg.Group.GroupInstanceID = "c-0"
	gw := newGroupWorld(1, 3, cfg)
	gw.w.Start()
	gw.w.RunUntil(5 * time.Second)
	gw.w.Crash(gw.members[0], false)
	gw.w.RunUntil(6 * time.Second)
	gw.w.Restart(gw.members[0])
	gw.w.RunUntil(12 * time.Second)
	if len(gw.b.joins) != 2 {
		t.Fatalf("%d joins, want 2", len(gw.b.joins))
	}
	if j := gw.b.joins[1]; j.GroupInstanceID != "c-0" || j.MemberID != "" {
		t.Fatalf("rejoin %+v, want instance c-0 without a member id", j)
	}
	got := only(ops(gw.rec, "c-0", history.FAssign, history.FFetchCommitted, history.FProcess), "ok ")
	if last := got[len(got)-2:]; !slices.Equal(last, []string{"ok assign [orders-0] gen=2", "ok fetch-committed orders-0=3"}) {
		t.Fatalf("operations %v, want the restarted member assigned in generation 2 from offset 3, with nothing to process", got)
	}
}

// At-most-once: a commit before processing that the coordinator refuses
// (REBALANCE_IN_PROGRESS) drops the batch unprocessed; the member keeps the
// partition through the rebalance (cooperative) at the position past the
// batch, and no more records come. KafkaConsumer.commitSync's javadoc says
// to complete the rebalance with poll and reconsider the commit then, for
// the partitions still assigned: the next poll commits past the dropped
// records, or the group's committed offset lags its position for good.
func TestAtMostOnceCommitsPastARefusedBatchAgain(t *testing.T) {
	for _, workers := range []int{1, 3} {
		t.Run(strconv.Itoa(workers)+" workers", func(t *testing.T) {
			cfg := memberConfig("c-0", reader.CommitBeforeProcessing, cooperativeRange{})
			cfg.Group.Workers = workers
			gw := newGroupWorld(1, 3, cfg)
			gw.b.commitErrs = []proto.ErrorCode{proto.RebalanceInProgress}
			gw.w.Start()
			gw.w.RunUntil(10 * time.Second)
			got := ops(gw.rec, "c-0", history.FCommit, history.FProcess)
			want := []string{"invoke commit orders-0=3 gen=1", "fail commit orders-0=3 gen=1 (REBALANCE_IN_PROGRESS)",
				"invoke commit orders-0=3 gen=2", "ok commit orders-0=3 gen=2"}
			if !slices.Equal(got, want) {
				t.Fatalf("operations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			if c := gw.b.committed["orders-0"]; c.CommittedOffset != 3 {
				t.Fatalf("committed %d, want 3 (the position past the dropped batch)", c.CommittedOffset)
			}
		})
	}
}

// Auto-commit commits every assigned partition's position
// (SubscriptionState.allConsumed): one reset to latest, with no record
// polled since, is committed at that position too, though the member
// processed nothing there — or the group would never commit it while no
// record comes.
func TestAutoCommitCommitsAPositionResetToLatest(t *testing.T) {
	for _, workers := range []int{1, 2} {
		t.Run(strconv.Itoa(workers)+" workers", func(t *testing.T) {
			cfg := memberConfig("c-0", reader.CommitAuto)
			cfg.AutoOffsetReset = "latest"
			cfg.Group.Workers = workers
			gw := newGroupWorld(1, 3, cfg)
			gw.w.Start()
			gw.w.RunUntil(12 * time.Second)
			if got := only(ops(gw.rec, "c-0", history.FCommit), "ok "); len(got) == 0 || got[0] != "ok commit orders-0=3 gen=1" {
				t.Fatalf("commits %v, want the position reset to latest, 3, committed", got)
			}
			if n := len(ops(gw.rec, "c-0", history.FProcess)); n != 0 {
				t.Fatalf("%d process operations, want none (nothing after the reset)", n)
			}
		})
	}
}

// A position that falls out of range mid-session (retention deleted the
// records the member had not read yet) and is reset to latest, with no
// record after it, is auto-committed once what was polled before is
// finished: Kafka's auto-commit commits every position
// (SubscriptionState.allConsumed). Committing only processed records left
// the group's committed offset behind for good (fuzz seed 20211 with
// --groups).
func TestAutoCommitCommitsAPositionResetMidSession(t *testing.T) {
	for _, workers := range []int{1, 2} {
		t.Run(strconv.Itoa(workers)+" workers", func(t *testing.T) {
			cfg := memberConfig("c-0", reader.CommitAuto)
			cfg.AutoOffsetReset = "latest"
			cfg.Group.Workers = workers
			cfg.Group.AutoCommitInterval = time.Second
			gw := newGroupWorld(1, 0, cfg)
			gw.w.Start()
			gw.w.RunUntil(5 * time.Second)
			gw.b.appendRecords(0, 5)
			gw.w.RunUntil(10 * time.Second)
			gw.b.appendRecords(0, 5)
			gw.b.logStart = []int64{8}
			gw.w.RunUntil(20 * time.Second)
			commits := only(ops(gw.rec, "c-0", history.FCommit), "ok ")
			if !slices.Contains(commits, "ok commit orders-0=5 gen=1") {
				t.Fatalf("commits %v, want the five records processed committed first", commits)
			}
			if last := commits[len(commits)-1]; last != "ok commit orders-0=10 gen=1" {
				t.Fatalf("commits %v, want the position reset to latest, 10, committed last", commits)
			}
			if n := len(only(ops(gw.rec, "c-0", history.FProcess), "ok ")); n != 5 {
				t.Fatalf("%d records processed, want the 5 before the reset", n)
			}
		})
	}
}

// An auto-commit whose request is lost gets no answer until its request
// times out, while the commits after it are answered: the member completes
// them in the order it made them (KafkaConsumer.commitAsync: callbacks run
// in the order of the commits), the lost one first, with an unknown
// outcome; each completion is then its process's oldest open commit's, as
// the history pairs them.
func TestAsyncCommitsCompleteInTheOrderTheyWereMade(t *testing.T) {
	cfg := memberConfig("c-0", reader.CommitAuto)
	cfg.Group.AutoCommitInterval = time.Second
	cfg.Group.RequestTimeout = 10 * time.Second
	gw := newGroupWorld(1, 3, cfg)
	gw.b.dropCommits = 1
	gw.w.Start()
	gw.w.RunUntil(20 * time.Second)
	var open []int64 // invocation times of the commits not yet completed
	completed, answered := 0, 0
	for _, op := range gw.rec.Ops() {
		if op.Process != "c-0" || op.F != history.FCommit {
			continue
		}
		if op.Type == history.Invoke {
			open = append(open, op.Time)
			continue
		}
		if len(open) == 0 {
			t.Fatalf("%s with no commit open", opString(op))
		}
		if completed == 0 && (op.Type != history.Info || open[0] > int64(2*time.Second)) {
			t.Fatalf("first completion %s of the commit made at %v, want the lost first commit's, info", opString(op), time.Duration(open[0]))
		}
		if op.Type == history.OK {
			answered++
		}
		open, completed = open[1:], completed+1
	}
	if completed < 5 || answered < completed-1 {
		t.Fatalf("%d commits completed, %d ok; want the ones after the lost one answered", completed, answered)
	}
}

// positionAuditor records the positions a member tells the group audit it
// moved.
type positionAuditor struct{ moves []string }

func (a *positionAuditor) PartitionsAssigned(sim.NodeID, string, string, int32, bool, []proto.TopicPartition) {
}
func (a *positionAuditor) PartitionsRevoked(sim.NodeID, string, []proto.TopicPartition) {}
func (a *positionAuditor) PositionReset(_ sim.NodeID, _ string, tp proto.TopicPartition) {
	a.moves = append(a.moves, "reset "+tp.String())
}
func (a *positionAuditor) PositionTruncated(_ sim.NodeID, _ string, tp proto.TopicPartition) {
	a.moves = append(a.moves, "truncated "+tp.String())
}

// A committed offset past the leader's log end for its epoch — records the
// previous owner read and committed before they were lost — is validated
// (KIP-320) and the member seeks back to where the log diverges
// (SubscriptionState.maybeCompleteValidation); it tells the group audit,
// whose commit-not-below-owner takes a truncation after a loss as what
// explains a commit below the previous owner's. A partition with nothing
// committed is reset instead.
func TestMemberTellsTheAuditOfATruncationUnderItsCommittedOffset(t *testing.T) {
	cfg := memberConfig("c-0", reader.CommitAfterProcessing)
	aud := &positionAuditor{}
	cfg.Group.Audit = aud
	gw := newGroupWorld(2, 3, cfg)
	gw.b.committed["orders-0"] = proto.OffsetCommitPartition{TopicPartition: proto.TopicPartition{Topic: "orders"}, CommittedOffset: 6, CommittedLeaderEpoch: 0}
	gw.w.Start()
	gw.w.RunUntil(10 * time.Second)
	slices.Sort(aud.moves)
	if want := []string{"reset orders-1", "truncated orders-0"}; !slices.Equal(aud.moves, want) {
		t.Fatalf("positions moved %v, want %v", aud.moves, want)
	}
	if got := only(ops(gw.rec, "c-0", history.FProcess), "orders-0"); len(got) != 0 {
		t.Fatalf("processed %v of orders-0, want nothing (its log ends at 3, where the member sought back to)", got)
	}
}

// An auto-commit member read and committed orders-0 to 10 when a new leader
// truncated the log to 6: KIP-320's validation seeks it back to 6, and its
// next auto-commit commits that position, as Kafka's commits
// SubscriptionState.allConsumed — not the 10 it processed, past the log's
// end, where a member that takes the partition over would skip the records
// written at 6..9 next. Once they come, it reads and commits them.
func TestAutoCommitCommitsThePositionATruncationSoughtBackTo(t *testing.T) {
	cfg := memberConfig("c-0", reader.CommitAuto)
	cfg.Group.AutoCommitInterval = time.Second
	gw := newGroupWorld(1, 10, cfg)
	gw.w.Start()
	gw.w.RunUntil(10 * time.Second)
	if c := gw.b.committed["orders-0"]; c.CommittedOffset != 10 {
		t.Fatalf("committed %d before the truncation, want 10", c.CommittedOffset)
	}
	gw.b.truncateTo(0, 6)
	gw.w.RunUntil(20 * time.Second)
	if r := gw.member(0); r.Position("orders", 0) != 6 || !r.TruncatedUnconsumed("orders", 0) {
		t.Fatalf("position %d, truncated-unconsumed %v, want 6 after KIP-320's validation", r.Position("orders", 0), r.TruncatedUnconsumed("orders", 0))
	}
	if c := gw.b.committed["orders-0"]; c.CommittedOffset != 6 {
		t.Fatalf("auto-committed %d after the truncation, want the position 6", c.CommittedOffset)
	}
	gw.b.appendRecords(0, 3)
	gw.w.RunUntil(30 * time.Second)
	if c := gw.b.committed["orders-0"]; c.CommittedOffset != 9 || c.CommittedLeaderEpoch != 1 {
		t.Fatalf("committed %d (leader epoch %d) after the new records, want 9 in epoch 1", c.CommittedOffset, c.CommittedLeaderEpoch)
	}
}

// A member asks for stable offsets whatever its isolation level: Kafka 4's
// consumers always set requireStable (ConsumerCoordinator.
// sendOffsetFetchRequest, CommitRequestManager), so a coordinator answers
// from its latest state once it is committed, never from the committed
// view of a new leader whose high watermark has not yet passed a commit
// the previous leader acknowledged.
func TestMemberFetchesStableOffsetsWhateverItsIsolation(t *testing.T) {
	for _, isolation := range []string{"read_uncommitted", "read_committed"} {
		cfg := memberConfig("c-0", reader.CommitAfterProcessing)
		cfg.Isolation = isolation
		gw := newGroupWorld(2, 5, cfg)
		gw.w.Start()
		gw.w.RunUntil(10 * time.Second)
		if len(gw.b.fetches) == 0 {
			t.Fatalf("%s: no OffsetFetch", isolation)
		}
		for _, f := range gw.b.fetches {
			if !f.RequireStable {
				t.Errorf("%s: an OffsetFetch without requireStable: %+v", isolation, f)
			}
		}
	}
}

// A static member that crashed while its JoinGroup was parked comes back
// as a new process; its rejoin replaces the old member id, whose parked
// JoinGroup the coordinator answers FENCED_INSTANCE_ID. In Kafka that
// answer goes out on the dead process's connection and never reaches the
// new one (NetworkClient matches a response to a request on the
// connection it came on): the new process joins, it is not fenced.
func TestRestartedStaticMemberIsNotFencedByItsOldJoin(t *testing.T) {
	cfg := memberConfig("c-0", reader.CommitAfterProcessing)
	cfg.Group.GroupInstanceID = "c-0"
	gw := newGroupWorld(1, 3, cfg)
	gw.b.fenceReplacedStatic = true
	// A member that never rejoins keeps c-0's JoinGroup parked.
	gw.b.members = []string{"absent"}
	gw.w.Start()
	gw.w.RunUntil(5 * time.Second)
	if len(gw.b.joins) != 1 || len(gw.b.pending) != 1 {
		t.Fatalf("%d joins, %d parked, want c-0's first JoinGroup parked", len(gw.b.joins), len(gw.b.pending))
	}
	gw.w.Crash(gw.members[0], false)
	gw.w.RunUntil(6 * time.Second)
	gw.w.Restart(gw.members[0])
	gw.w.RunUntil(7 * time.Second)
	if len(gw.b.joins) != 2 || gw.b.joins[1].MemberID != "" {
		t.Fatalf("joins %+v, want the new process's rejoin without a member id", gw.b.joins)
	}
	if f := gw.member(0).Fatal(); f != "" {
		t.Fatalf("the restarted member failed: %s, on the answer to its previous process's JoinGroup", f)
	}
	gw.b.remove("absent")
	gw.w.RunUntil(12 * time.Second)
	if f := gw.member(0).Fatal(); f != "" || !gw.member(0).Stable() {
		t.Fatalf("restarted member: fatal %q, stable %v; want it in the group", f, gw.member(0).Stable())
	}
}

// An auto-committing member's first auto-commit comes
// auto.commit.interval.ms after its partitions are assigned
// (ConsumerCoordinator.onJoinComplete restarts the timer), and again after
// every later assignment: FirstAutoCommitDue says how long is left until it
// has had it, and nothing once it has, or for a member that commits itself.
func TestFirstAutoCommitDueRestartsAtEveryAssignment(t *testing.T) {
	c0 := memberConfig("c-0", reader.CommitAuto)
	c1 := memberConfig("c-1", reader.CommitAfterProcessing)
	c1.Start = 20 * time.Second
	for _, c := range []*reader.Config{&c0, &c1} {
		c.Group.AutoCommitInterval = 5 * time.Second
	}
	gw := newGroupWorld(2, 5, c0, c1)
	gw.w.Start()
	assignedAt := func(process string) []time.Duration {
		var out []time.Duration
		for _, op := range gw.rec.Ops() {
			if op.Process == process && op.F == history.FAssign && op.Type == history.OK && len(op.Value.Ext.Partitions) > 0 {
				out = append(out, time.Duration(op.Time))
			}
		}
		return out
	}
	for len(assignedAt("c-0")) == 0 && gw.w.Now() < 5*time.Second {
		gw.w.RunUntil(gw.w.Now() + time.Millisecond)
		if _, ok := gw.member(0).FirstAutoCommitDue(); ok && len(assignedAt("c-0")) == 0 {
			t.Fatalf("c-0 has a first auto-commit due at %v, before it owns a partition", gw.w.Now())
		}
	}
	gw.w.RunUntil(5 * time.Second)
	gw.w.RunUntil(5 * time.Second)
	at := assignedAt("c-0")
	if len(at) != 1 {
		t.Fatalf("c-0 assigned at %v, want once by 5s", at)
	}
	if due, ok := gw.member(0).FirstAutoCommitDue(); !ok || due != at[0]+5*time.Second-gw.w.Now() {
		t.Fatalf("c-0's first auto-commit due in %v (%v), want %v: 5s after its assignment at %v", due, ok, at[0]+5*time.Second-gw.w.Now(), at[0])
	}
	gw.w.RunUntil(at[0] + 6*time.Second)
	if got := only(ops(gw.rec, "c-0", history.FCommit), "ok "); len(got) == 0 {
		t.Fatalf("c-0 made no auto-commit in the 6s after its assignment")
	}
	if due, ok := gw.member(0).FirstAutoCommitDue(); ok {
		t.Fatalf("c-0's first auto-commit still due in %v after it auto-committed", due)
	}
	// c-1 joins: c-0 is assigned again, and its timer restarts.
	for len(assignedAt("c-0")) < 2 && gw.w.Now() < 40*time.Second {
		gw.w.RunUntil(gw.w.Now() + 10*time.Millisecond)
	}
	at = assignedAt("c-0")
	if len(at) < 2 || at[1] < 20*time.Second {
		t.Fatalf("c-0 assigned at %v, want again after c-1 joined at 20s", at)
	}
	if due, ok := gw.member(0).FirstAutoCommitDue(); !ok || due != at[1]+5*time.Second-gw.w.Now() {
		t.Fatalf("c-0 reassigned at %v: first auto-commit due in %v (%v), want %v", at[1], due, ok, at[1]+5*time.Second-gw.w.Now())
	}
	gw.w.RunUntil(at[1] + 6*time.Second)
	if due, ok := gw.member(1).FirstAutoCommitDue(); ok {
		t.Fatalf("c-1, committing after processing, has an auto-commit due in %v", due)
	}
}

// A FindCoordinator the broker's machine refuses (its process killed: the
// connection is reset) fails at once, as Kafka's NetworkClient fails every
// request in flight on a lost connection: the member looks again after
// retry.backoff.ms, and finds the coordinator as soon as the broker is back,
// not request.timeout.ms (30s) after it asked (fuzz seed 26763).
func TestFindCoordinatorRefusedIsRetriedAfterTheBackoff(t *testing.T) {
	gw := newGroupWorld(1, 5, memberConfig("c-0", reader.CommitAfterProcessing))
	bid, _ := gw.w.Lookup("broker-1")
	gw.w.Start()
	gw.w.RunUntil(time.Microsecond) // booted; the member's first requests on their way
	if !gw.w.Crash(bid, false) {
		t.Fatal("broker-1 did not crash")
	}
	gw.w.RunUntil(time.Second)
	if n := gw.b.count("FindCoordinator"); n != 0 {
		t.Fatalf("%d FindCoordinator reached broker-1 while it was down", n)
	}
	gw.w.Restart(bid)
	gw.w.RunUntil(3 * time.Second)
	if n := gw.b.count("FindCoordinator"); n == 0 {
		t.Fatalf("no FindCoordinator 2s after broker-1 restarted: the refused one was waited for its request timeout")
	}
	got := ops(gw.rec, "c-0", history.FAssign)
	if !slices.ContainsFunc(got, func(op string) bool { return strings.HasPrefix(op, "ok assign ") && strings.HasSuffix(op, " gen=1") }) {
		t.Fatalf("member's assignments %v by 3s, want it in generation 1", got)
	}
}
