package membership

import (
	"slices"
	"testing"
	"time"

	"kafkasim/model/proto"
)

func TestValidTransitions(t *testing.T) {
	cases := []struct {
		from, to MemberState
		want     bool
	}{
		{Unsubscribed, Joining, true},
		{Joining, Reconciling, true},
		{Reconciling, Acknowledging, true},
		{Acknowledging, Stable, true},
		{Acknowledging, Reconciling, true},
		{Stable, Acknowledging, false},
		{Joining, Acknowledging, false},
		{Stable, Fenced, true},
		{Fenced, Joining, true},
		{Fenced, Stable, false},
		{Stable, PrepareLeaving, true},
		{PrepareLeaving, Leaving, true},
		{Stable, Leaving, false},
		{Leaving, Stale, true},
		{Stable, Stale, false},
		{Stale, Joining, true},
		{Stale, Fenced, false},
		{Unsubscribed, Fatal, true},
		{Fenced, Fatal, false},
		{Fatal, Joining, false},
		{Stable, Stable, true},
	}
	for _, c := range cases {
		if got := validTransition(c.from, c.to); got != c.want {
			t.Errorf("%v -> %v: %v, want %v", c.from, c.to, got, c.want)
		}
	}
}

func TestMemberIDIsKeptAndWellFormed(t *testing.T) {
	m := newTestManager(testConfig())
	id := m.MemberID()
	if len(id) != 22 || id[0] == '-' {
		t.Fatalf("member id %q: want 22 base64 characters not starting with '-'", id)
	}
	if other := newTestManager(testConfig()).MemberID(); other != id {
		t.Fatalf("same seed, different ids %q %q", id, other)
	}
	m.Subscribe([]string{"t"})
	m.Poll(0)
	req := mustSend(t, m, 0)
	if req.MemberID != id {
		t.Fatalf("join sent member id %q, want %q", req.MemberID, id)
	}
	m.OnResponse(0, req, errResp(proto.UnknownMemberID))
	if req := mustSend(t, m, 0); req.MemberID != id || req.MemberEpoch != 0 {
		t.Fatalf("rejoin %+v: want member id %q at epoch 0", req, id)
	}
}

func TestJoinReconcileAcknowledge(t *testing.T) {
	m := newTestManager(testConfig())
	m.Subscribe([]string{"t", "u", "t"})
	if req, wait := m.Heartbeat(0, true); req != nil || wait != Never {
		t.Fatalf("before poll: %+v %v", req, wait)
	}
	m.Poll(0)
	wantState(t, m, Joining)
	join := mustSend(t, m, 0)
	if join.MemberEpoch != 0 || join.RebalanceTimeout != time.Minute || !slices.Equal(join.SubscribedTopicNames, []string{"t", "u"}) ||
		!join.OwnedSent || len(join.OwnedPartitions) != 0 || join.GroupID != "g" {
		t.Fatalf("join %+v", join)
	}
	// One heartbeat in flight at a time, even when joining.
	mustNotSend(t, m, time.Millisecond)
	m.OnResponse(time.Millisecond, join, ok(join, 3, tp("t", 1), tp("t", 0)))
	wantState(t, m, Reconciling)
	if m.MemberEpoch() != 3 {
		t.Fatalf("epoch %d", m.MemberEpoch())
	}
	a := oneAction(t, m, AssignPartitions, tps(tp("t", 0), tp("t", 1)))
	if !slices.Equal(a.Assignment, tps(tp("t", 0), tp("t", 1))) {
		t.Fatalf("assignment %v", a.Assignment)
	}
	// Until the application took them, nothing is acknowledged.
	mustNotSend(t, m, 2*time.Millisecond)
	if len(m.Owned()) != 0 {
		t.Fatal("owned before the assignment was done")
	}
	done(t, m, a)
	wantState(t, m, Acknowledging)
	ack := mustSend(t, m, 2*time.Millisecond)
	if ack.MemberEpoch != 3 || !ack.OwnedSent || !slices.Equal(ack.OwnedPartitions, tps(tp("t", 0), tp("t", 1))) ||
		ack.RebalanceTimeout != -1 || ack.SubscribedTopicNames != nil {
		t.Fatalf("acknowledgement %+v", ack)
	}
	wantState(t, m, Stable)
	m.OnResponse(3*time.Millisecond, ack, ok(ack, 3))
	// Then heartbeats at the interval, leaving out what did not change.
	if wait := mustNotSend(t, m, time.Second); wait != 5*time.Second+2*time.Millisecond-time.Second {
		t.Fatalf("wait %v", wait)
	}
	hb := mustSend(t, m, 5*time.Second+2*time.Millisecond)
	if hb.OwnedSent || hb.SubscribedTopicNames != nil || hb.RebalanceTimeout != -1 || hb.MemberEpoch != 3 {
		t.Fatalf("steady heartbeat %+v", hb)
	}
}

func TestJoinWithEmptyAssignmentStillAcknowledges(t *testing.T) {
	m := stableWith(t, testConfig())
	if d := m.Describe(); d.MemberEpoch != 1 || len(d.Owned) != 0 || d.State != Stable {
		t.Fatalf("%+v", d)
	}
}

func TestRevokeBeforeAssign(t *testing.T) {
	m := stableWith(t, testConfig(), tp("t", 0), tp("t", 1))
	hb := mustSend(t, m, 5*time.Second)
	m.OnResponse(5*time.Second, hb, ok(hb, 2, tp("t", 1), tp("t", 2)))
	wantState(t, m, Reconciling)
	rv := oneAction(t, m, RevokePartitions, tps(tp("t", 0)))
	// While the application revokes, heartbeats go on at the interval and
	// still report the old assignment (left out: unchanged).
	hb = mustSend(t, m, 10*time.Second)
	if hb.OwnedSent {
		t.Fatalf("heartbeat during revocation reported %v", hb.OwnedPartitions)
	}
	m.OnResponse(10*time.Second, hb, ok(hb, 2))
	done(t, m, rv)
	if !slices.Equal(m.Owned(), tps(tp("t", 1))) {
		t.Fatalf("owned after revoke %v", m.Owned())
	}
	as := oneAction(t, m, AssignPartitions, tps(tp("t", 2)))
	if !slices.Equal(as.Assignment, tps(tp("t", 1), tp("t", 2))) {
		t.Fatalf("assignment %v", as.Assignment)
	}
	done(t, m, as)
	ack := mustSend(t, m, 10*time.Second+time.Millisecond)
	if !ack.OwnedSent || !slices.Equal(ack.OwnedPartitions, tps(tp("t", 1), tp("t", 2))) {
		t.Fatalf("ack %+v", ack)
	}
}

func TestAcknowledgementWaitsForHeartbeatInFlight(t *testing.T) {
	m := stableWith(t, testConfig(), tp("t", 0))
	hb := mustSend(t, m, 5*time.Second)
	m.OnResponse(5*time.Second, hb, ok(hb, 2, tp("t", 0), tp("t", 1)))
	as := oneAction(t, m, AssignPartitions, tps(tp("t", 1)))
	hb2 := mustSend(t, m, 10*time.Second) // the interval passed while assigning
	done(t, m, as)
	wantState(t, m, Acknowledging)
	if wait := mustNotSend(t, m, 10*time.Second); wait == 0 {
		t.Fatal("wait 0 with a heartbeat in flight")
	}
	m.OnResponse(10*time.Second+time.Millisecond, hb2, ok(hb2, 2))
	ack := mustSend(t, m, 10*time.Second+time.Millisecond)
	if !ack.OwnedSent || len(ack.OwnedPartitions) != 2 {
		t.Fatalf("ack %+v", ack)
	}
}

func TestAssignmentWhileReconcilingWaits(t *testing.T) {
	m := stableWith(t, testConfig(), tp("t", 0))
	hb := mustSend(t, m, 5*time.Second)
	m.OnResponse(5*time.Second, hb, ok(hb, 2, tp("t", 1)))
	rv := oneAction(t, m, RevokePartitions, tps(tp("t", 0)))
	hb = mustSend(t, m, 10*time.Second)
	m.OnResponse(10*time.Second, hb, ok(hb, 3, tp("t", 2)))
	if as := m.Actions(); len(as) != 0 {
		t.Fatalf("a second reconciliation started while one runs: %+v", as)
	}
	done(t, m, rv)
	// The first reconciliation finishes with what it started with.
	as := oneAction(t, m, AssignPartitions, tps(tp("t", 1)))
	done(t, m, as)
	wantState(t, m, Acknowledging)
	ack := mustSend(t, m, 10*time.Second+time.Millisecond)
	if !slices.Equal(ack.OwnedPartitions, tps(tp("t", 1))) {
		t.Fatalf("ack %+v", ack)
	}
	// Then the newer one.
	wantState(t, m, Reconciling)
	rv = oneAction(t, m, RevokePartitions, tps(tp("t", 1)))
	done(t, m, rv)
	done(t, m, oneAction(t, m, AssignPartitions, tps(tp("t", 2))))
	m.OnResponse(10*time.Second+2*time.Millisecond, ack, ok(ack, 3))
	ack = mustSend(t, m, 10*time.Second+2*time.Millisecond)
	if !slices.Equal(ack.OwnedPartitions, tps(tp("t", 2))) || m.State() != Stable {
		t.Fatalf("second ack %+v state %v", ack, m.State())
	}
}

func TestFencedLosesThenRejoins(t *testing.T) {
	for _, code := range []proto.ErrorCode{proto.FencedMemberEpoch, proto.UnknownMemberID} {
		m := stableWith(t, testConfig(), tp("t", 0), tp("t", 1))
		hb := mustSend(t, m, 5*time.Second)
		if out := m.OnResponse(5*time.Second, hb, errResp(code)); out.Rediscover {
			t.Fatalf("%v: rediscover", code)
		}
		wantState(t, m, Fenced)
		if m.MemberEpoch() != 0 {
			t.Fatalf("%v: epoch %d", code, m.MemberEpoch())
		}
		lost := oneAction(t, m, LosePartitions, tps(tp("t", 0), tp("t", 1)))
		mustNotSend(t, m, 5*time.Second)
		done(t, m, lost)
		wantState(t, m, Joining)
		join := mustSend(t, m, 5*time.Second) // no backoff
		if join.MemberEpoch != 0 || !join.OwnedSent || len(join.OwnedPartitions) != 0 || join.SubscribedTopicNames == nil || join.RebalanceTimeout < 0 {
			t.Fatalf("%v: rejoin %+v", code, join)
		}
		if len(m.Owned()) != 0 {
			t.Fatalf("%v: owned %v after loss", code, m.Owned())
		}
	}
}

func TestFencedWhileReconcilingAbortsAndLosesEverything(t *testing.T) {
	m := stableWith(t, testConfig(), tp("t", 0))
	hb := mustSend(t, m, 5*time.Second)
	m.OnResponse(5*time.Second, hb, ok(hb, 2, tp("t", 0), tp("t", 1)))
	as := oneAction(t, m, AssignPartitions, tps(tp("t", 1)))
	hb = mustSend(t, m, 10*time.Second)
	m.OnResponse(10*time.Second, hb, errResp(proto.FencedMemberEpoch))
	// The loss covers what the application will own once it assigned.
	lost := oneAction(t, m, LosePartitions, tps(tp("t", 0), tp("t", 1)))
	if err := m.ActionDone(lost.Seq); err == nil {
		t.Fatal("an action completed out of order")
	}
	done(t, m, as)
	wantState(t, m, Fenced) // the aborted reconciliation does not acknowledge
	done(t, m, lost)
	wantState(t, m, Joining)
	if len(m.Owned()) != 0 || m.Describe().Assignment != nil {
		t.Fatalf("after loss: %+v", m.Describe())
	}
}

func TestFencedOwningNothingRejoinsAtOnce(t *testing.T) {
	m := stableWith(t, testConfig())
	hb := mustSend(t, m, 5*time.Second)
	m.OnResponse(5*time.Second, hb, errResp(proto.UnknownMemberID))
	if as := m.Actions(); len(as) != 0 {
		t.Fatalf("actions %+v", as)
	}
	wantState(t, m, Joining)
}

func TestPollTimerExpiryLeavesGoesStaleAndRejoinsOnPoll(t *testing.T) {
	for _, static := range []bool{false, true} {
		cfg := testConfig()
		want := proto.LeaveGroupMemberEpoch
		if static {
			cfg.InstanceID, want = "i-1", proto.LeaveGroupStaticMemberEpoch
		}
		m := stableWith(t, cfg, tp("t", 0))
		// The wait tells the caller to come back at the poll deadline.
		hb, _ := m.Heartbeat(58*time.Second, true)
		m.OnResponse(58*time.Second, hb, ok(hb, 1))
		if w := mustNotSend(t, m, 58*time.Second); w != 2*time.Second {
			t.Fatalf("static %v: wait %v, want the poll deadline in 2s", static, w)
		}
		leave := mustSend(t, m, time.Minute)
		if leave.MemberEpoch != want || leave.InstanceID != cfg.InstanceID || leave.MemberID != m.MemberID() {
			t.Fatalf("static %v: leave %+v", static, leave)
		}
		wantState(t, m, Stale)
		lost := oneAction(t, m, LosePartitions, tps(tp("t", 0)))
		if req, w := m.Heartbeat(time.Minute+time.Second, true); req != nil || w != Never {
			t.Fatalf("stale member heartbeats: %+v %v", req, w)
		}
		// The leave's answer is ignored.
		m.OnResponse(time.Minute+time.Millisecond, leave, ok(leave, want))
		wantState(t, m, Stale)
		// A poll before the partitions are released waits for them.
		m.Poll(2 * time.Minute)
		wantState(t, m, Stale)
		done(t, m, lost)
		wantState(t, m, Joining)
		join := mustSend(t, m, 2*time.Minute)
		if join.MemberEpoch != 0 || join.MemberID != m.MemberID() || join.InstanceID != cfg.InstanceID || len(join.OwnedPartitions) != 0 {
			t.Fatalf("static %v: rejoin %+v", static, join)
		}
	}
}

// A machine whose clock is set back after its member went stale: the
// poll timer stays expired (Kafka's Timer.update ignores an earlier time),
// so the next poll, read at the earlier time, brings the member back. A
// timer that followed the clock back would find the poll on time and
// leave the member stale for good while its application polls (fuzz seed
// 33277: a processor's clock set back 8.9 s).
func TestStaleRejoinsOnPollAfterTheClockWentBack(t *testing.T) {
	m := stableWith(t, testConfig(), tp("t", 0))
	mustSend(t, m, time.Minute)
	lost := oneAction(t, m, LosePartitions, tps(tp("t", 0)))
	done(t, m, lost)
	wantState(t, m, Stale)
	m.Poll(time.Minute - 9*time.Second)
	wantState(t, m, Joining)
}

func TestStaleRejoinsOnPollAfterRelease(t *testing.T) {
	m := stableWith(t, testConfig(), tp("t", 0))
	mustSend(t, m, time.Minute)
	lost := oneAction(t, m, LosePartitions, tps(tp("t", 0)))
	done(t, m, lost)
	wantState(t, m, Stale)
	m.Poll(time.Minute + time.Second)
	wantState(t, m, Joining)
	// A poll within the interval does not disturb a member in the group.
	m.Poll(time.Minute + 2*time.Second)
	wantState(t, m, Joining)
}

// A stale member whose application unsubscribes stays out of the group,
// even if the application goes on calling Poll before its partitions are
// released: Kafka's poll throws on a consumer with no subscription before
// the PollEvent that would bring the member back (AsyncKafkaConsumer.poll).
// Found by TestPropertyInterop: the member rejoined with no subscription
// and sat STABLE owning nothing.
func TestStaleUnsubscribedDoesNotRejoin(t *testing.T) {
	m := stableWith(t, testConfig(), tp("t", 0))
	mustSend(t, m, time.Minute)
	wantState(t, m, Stale)
	lost := oneAction(t, m, LosePartitions, tps(tp("t", 0)))
	m.Unsubscribe()
	m.Poll(2 * time.Minute)
	done(t, m, lost)
	wantState(t, m, Stale)
	mustNotSend(t, m, 2*time.Minute)
	// Subscribing again brings it back at the next poll.
	m.Subscribe([]string{"t"})
	m.Poll(2*time.Minute + time.Second)
	wantState(t, m, Joining)
	if join := mustSend(t, m, 2*time.Minute+time.Second); join.MemberEpoch != 0 || !slices.Equal(join.SubscribedTopicNames, []string{"t"}) {
		t.Fatalf("rejoin %+v", join)
	}
}

// A stale member whose poll asked it to rejoin, and whose application
// unsubscribes before the partitions are released, does not rejoin with
// no subscription. In Kafka the release runs inside that very poll, so
// the member rejoins before the unsubscribe and the unsubscribe then
// leaves; here the two meet in the other order and the rejoin is dropped:
// the member ends out of the group either way.
func TestStaleRejoinDroppedByUnsubscribe(t *testing.T) {
	m := stableWith(t, testConfig(), tp("t", 0))
	mustSend(t, m, time.Minute)
	lost := oneAction(t, m, LosePartitions, tps(tp("t", 0)))
	m.Poll(2 * time.Minute)
	m.Unsubscribe()
	done(t, m, lost)
	wantState(t, m, Stale)
	mustNotSend(t, m, 2*time.Minute)
}

// A member that left does not join again on a subscription it changed
// just before unsubscribing: with no subscription, poll does nothing
// (AsyncKafkaConsumer.poll throws before onConsumerPoll).
func TestUnsubscribedDoesNotJoinOnEarlierSubscriptionChange(t *testing.T) {
	m := stableWith(t, testConfig(), tp("t", 0))
	m.Subscribe([]string{"t", "u"})
	m.Unsubscribe()
	done(t, m, oneAction(t, m, RevokePartitions, tps(tp("t", 0))))
	leave := mustSend(t, m, time.Second)
	m.OnResponse(time.Second, leave, ok(leave, proto.LeaveGroupMemberEpoch))
	wantState(t, m, Unsubscribed)
	m.Poll(2 * time.Second)
	wantState(t, m, Unsubscribed)
	mustNotSend(t, m, 2*time.Second)
}

// A leave aborts the reconciliation under way: the assignment its
// onPartitionsAssigned completes is never acknowledged, and heartbeats
// report the reconciled assignment only (AbstractMembershipManager's
// maybeAbortReconciliation leaves currentAssignment alone); a full
// heartbeat after a failure reports owning none of the new partitions.
func TestLeaveAbortsReconciliation(t *testing.T) {
	m := newTestManager(testConfig())
	m.Subscribe([]string{"t"})
	m.Poll(0)
	join := mustSend(t, m, 0)
	m.OnResponse(0, join, okAssign(join, 1, tps(tp("t", 0))))
	assign := oneAction(t, m, AssignPartitions, tps(tp("t", 0)))
	m.Unsubscribe()
	wantState(t, m, PrepareLeaving)
	revoke := oneAction(t, m, RevokePartitions, tps(tp("t", 0)))
	done(t, m, assign)
	wantState(t, m, PrepareLeaving)
	if d := m.Describe(); !slices.Equal(d.Owned, tps(tp("t", 0))) || len(d.Assignment) != 0 {
		t.Fatalf("after the aborted assignment: %+v", d)
	}
	hb := mustSend(t, m, 5*time.Second)
	if hb.OwnedSent {
		t.Fatalf("owned partitions sent again unchanged: %+v", hb)
	}
	m.OnFailure(6*time.Second, hb)
	full := mustSend(t, m, 8*time.Second)
	if !full.OwnedSent || len(full.OwnedPartitions) != 0 || full.MemberEpoch != 1 {
		t.Fatalf("heartbeat after a failure: %+v", full)
	}
	done(t, m, revoke)
	if leave := mustSend(t, m, 8*time.Second); leave.MemberEpoch != proto.LeaveGroupMemberEpoch {
		t.Fatalf("leave %+v", leave)
	}
}

func TestLeaveEpochs(t *testing.T) {
	for _, static := range []bool{false, true} {
		cfg := testConfig()
		want := proto.LeaveGroupMemberEpoch
		if static {
			cfg.InstanceID, want = "i-1", proto.LeaveGroupStaticMemberEpoch
		}
		m := stableWith(t, cfg, tp("t", 0))
		m.Unsubscribe()
		wantState(t, m, PrepareLeaving)
		rv := oneAction(t, m, RevokePartitions, tps(tp("t", 0)))
		mustNotSend(t, m, time.Second)
		done(t, m, rv)
		wantState(t, m, Leaving)
		leave := mustSend(t, m, time.Second)
		if leave.MemberEpoch != want || leave.InstanceID != cfg.InstanceID {
			t.Fatalf("static %v: leave %+v", static, leave)
		}
		wantState(t, m, Unsubscribed)
		m.OnResponse(time.Second, leave, ok(leave, want))
		if m.leaveInProgress {
			t.Fatal("leave still in progress after its answer")
		}
		if req, _ := m.Heartbeat(10*time.Second, true); req != nil {
			t.Fatalf("heartbeat after leaving %+v", req)
		}
		// Subscribing again joins at the next poll with the same member id.
		m.Subscribe([]string{"t"})
		m.Poll(11 * time.Second)
		if join := mustSend(t, m, 11*time.Second); join.MemberEpoch != 0 || join.MemberID != m.MemberID() {
			t.Fatalf("rejoin %+v", join)
		}
	}
}

func TestLeaveWithoutCoordinatorGivesUp(t *testing.T) {
	m := stableWith(t, testConfig())
	m.Unsubscribe()
	wantState(t, m, Leaving) // nothing to revoke
	if req, _ := m.Heartbeat(time.Second, false); req != nil {
		t.Fatal("sent without a coordinator")
	}
	wantState(t, m, Unsubscribed)
}

func TestFatalErrors(t *testing.T) {
	for _, code := range []proto.ErrorCode{proto.InvalidRequest, proto.GroupMaxSizeReached, proto.UnsupportedAssignor,
		proto.UnreleasedInstanceID, proto.FencedInstanceID, proto.GroupIDNotFound, proto.UnknownServerError} {
		m := stableWith(t, testConfig(), tp("t", 0))
		hb := mustSend(t, m, 5*time.Second)
		m.OnResponse(5*time.Second, hb, &proto.ConsumerGroupHeartbeatResponse{Error: code, ErrorMessage: "why"})
		wantState(t, m, Fatal)
		as := m.Actions()
		if len(as) != 2 || as[0].Kind != FatalError || as[0].Error != code || as[0].Message != "why" ||
			as[1].Kind != LosePartitions || !slices.Equal(as[1].Partitions, tps(tp("t", 0))) {
			t.Fatalf("%v: actions %+v", code, as)
		}
		done(t, m, as[1])
		if got, _ := m.Err(); got != code {
			t.Fatalf("Err %v", got)
		}
		if req, w := m.Heartbeat(time.Hour, true); req != nil || w != Never {
			t.Fatalf("%v: fatal member heartbeats", code)
		}
		m.Poll(time.Hour)
		m.Subscribe([]string{"u"})
		m.Poll(time.Hour)
		wantState(t, m, Fatal)
	}
}

func TestRetriesAndBackoff(t *testing.T) {
	cases := []struct {
		name       string
		code       proto.ErrorCode // None: a request failure
		rediscover bool
		backoff    bool
	}{
		{"load in progress", proto.CoordinatorLoadInProgress, false, true},
		{"not coordinator", proto.NotCoordinator, true, false},
		{"coordinator not available", proto.CoordinatorNotAvailable, true, false},
		{"timeout", proto.None, true, true},
	}
	for _, c := range cases {
		m := stableWith(t, testConfig(), tp("t", 0))
		now := 5 * time.Second
		for attempt := 1; attempt <= 5; attempt++ {
			hb := mustSend(t, m, now)
			if attempt > 1 && (!hb.OwnedSent || hb.SubscribedTopicNames == nil || hb.RebalanceTimeout < 0) {
				t.Fatalf("%s: the request after a failure is not full: %+v", c.name, hb)
			}
			var out Outcome
			if c.code == proto.None {
				out = m.OnFailure(now, hb)
			} else {
				out = m.OnResponse(now, hb, errResp(c.code))
			}
			if out.Rediscover != c.rediscover {
				t.Fatalf("%s: rediscover %v", c.name, out.Rediscover)
			}
			wantState(t, m, Stable)
			if !c.backoff {
				mustSend(t, m, now) // at once
				break
			}
			// 100ms·2^attempt, ±20%, at most 1s.
			base := min(100*time.Millisecond<<attempt, time.Second)
			w := mustNotSend(t, m, now)
			if w < base*8/10 || w > min(base*12/10, time.Second) {
				t.Fatalf("%s attempt %d: backoff %v, want about %v", c.name, attempt, w, base)
			}
			now += w
		}
	}
}

func TestSentFields(t *testing.T) {
	cfg := testConfig()
	cfg.ServerAssignor, cfg.RackID = "range", "r1"
	m := newTestManager(cfg)
	m.Subscribe([]string{"t"})
	m.Poll(0)
	join := mustSend(t, m, 0)
	if join.ServerAssignor != "range" || join.RackID != "r1" {
		t.Fatalf("join %+v", join)
	}
	m.OnResponse(0, join, okAssign(join, 1, nil))
	done(t, m, oneAction(t, m, AssignPartitions, nil))
	ack := mustSend(t, m, 0)
	if !ack.OwnedSent || ack.OwnedPartitions == nil || len(ack.OwnedPartitions) != 0 || ack.ServerAssignor != "" || ack.SubscribedTopicNames != nil {
		t.Fatalf("ack of an empty assignment %+v", ack)
	}
	m.OnResponse(0, ack, ok(ack, 1))
	// A new subscription goes with the next heartbeat, alone.
	m.Subscribe([]string{"u", "t"})
	hb := mustSend(t, m, 5*time.Second)
	if !slices.Equal(hb.SubscribedTopicNames, []string{"t", "u"}) || hb.OwnedSent || hb.RebalanceTimeout != -1 || hb.ServerAssignor != "" {
		t.Fatalf("resubscribe %+v", hb)
	}
	m.OnResponse(5*time.Second, hb, ok(hb, 2))
	if hb := mustSend(t, m, 10*time.Second); hb.SubscribedTopicNames != nil {
		t.Fatalf("subscription sent twice %+v", hb)
	} else {
		// After an error, everything again.
		m.OnResponse(10*time.Second, hb, errResp(proto.CoordinatorLoadInProgress))
	}
	full := mustSend(t, m, 11*time.Second)
	if full.SubscribedTopicNames == nil || full.RebalanceTimeout != time.Minute || full.ServerAssignor != "range" || !full.OwnedSent {
		t.Fatalf("request after an error %+v", full)
	}
}

func TestLateResponsesAreIgnored(t *testing.T) {
	m := stableWith(t, testConfig(), tp("t", 0))
	hb := mustSend(t, m, 5*time.Second)
	m.OnFailure(6*time.Second, hb)
	// The response of a request given up on must not move the member.
	m.OnResponse(6*time.Second, hb, ok(hb, 9, tp("t", 5)))
	if m.MemberEpoch() != 1 || m.State() != Stable {
		t.Fatalf("late response applied: %+v", m.Describe())
	}
}

// A member whose clock is set back just short of its heartbeat: its time
// stands at the latest it saw (Timer.update), so the heartbeat stays 1 ns
// away until the clock catches up. Kafka waits in whole milliseconds; a
// 1 ns wait re-armed each time took the reader 2·10⁹ timer events to get
// past a 2.3 s regression (fuzz seed 54977).
func TestHeartbeatWaitAfterTheClockWentBackIsAtLeastAMillisecond(t *testing.T) {
	m := stableWith(t, testConfig(), tp("t", 0))
	deadline := 5 * time.Second // the heartbeat interval ok gives, from 0
	if w := mustNotSend(t, m, deadline-time.Nanosecond); w != time.Millisecond {
		t.Fatalf("wait 1 ns before the heartbeat: %v, want 1ms", w)
	}
	// The clock goes back 2 s; the member is driven as the reader drives
	// it, calling Heartbeat again when the wait it gave runs out.
	now := deadline - time.Nanosecond - 2*time.Second
	for calls := 1; ; calls++ {
		req, wait := m.Heartbeat(now, true)
		if req != nil {
			if calls > 2100 {
				t.Fatalf("heartbeat sent after %d calls, want about one a millisecond of regression", calls)
			}
			return
		}
		if wait < time.Millisecond {
			t.Fatalf("call %d at %v: wait %v, want at least 1ms", calls, now, wait)
		}
		if calls > 1_000_000 {
			t.Fatalf("no heartbeat after %d calls", calls)
		}
		now += wait
	}
}
