package reader_test

import (
	"maps"
	"slices"
	"testing"
	"time"

	"kafkasim/history"
	"kafkasim/model/reader"
	"kafkasim/model/record"
)

// addPartition gives the fake broker's topic one more partition, empty.
func (b *groupBroker) addPartition() { b.logs = append(b.logs, []*record.Batch(nil)) }

// staticLeaderRejoin starts static member c-0 alone in a group whose
// coordinator tells a returning static leader to skip the assignment
// (KIP-814); it crashes at 5 s and comes back at 6 s. addAt adds a
// partition to orders at that time.
func staticLeaderRejoin(t *testing.T, addAt time.Duration) *groupWorld {
	t.Helper()
	cfg := memberConfig("c-0", reader.CommitAfterProcessing)
	cfg.Group.GroupInstanceID = "c-0"
	cfg.MetadataMaxAge = time.Second
	gw := newGroupWorld(1, 3, cfg)
	gw.b.skipStaticRejoin = true
	gw.w.Start()
	steps := []struct {
		at time.Duration
		do func()
	}{
		{5 * time.Second, func() { gw.w.Crash(gw.members[0], false) }},
		{6 * time.Second, func() { gw.w.Restart(gw.members[0]) }},
		{addAt, gw.b.addPartition},
	}
	slices.SortStableFunc(steps, func(a, b struct {
		at time.Duration
		do func()
	}) int {
		return int(a.at - b.at)
	})
	for _, s := range steps {
		gw.w.RunUntil(s.at)
		s.do()
	}
	gw.w.RunUntil(15 * time.Second)
	if len(gw.b.joins) < 2 || gw.b.joins[1].MemberID != "" {
		t.Fatalf("joins %+v, want a rejoin as c-0 without a member id", gw.b.joins)
	}
	return gw
}

// A static leader that kept the group's assignment on its rejoin is still
// the leader (ConsumerCoordinator.onLeaderElected sets isLeader and
// assignmentSnapshot with skipAssignment): a partition added after it
// rejoined calls for a rebalance that assigns it, as Kafka's
// testStaticConsumerDetectsNewPartitionCreatedAfterRestart.
func TestReturningStaticLeaderWatchesPartitionCounts(t *testing.T) {
	gw := staticLeaderRejoin(t, 9*time.Second)
	if len(gw.b.joins) != 3 || gw.b.joins[2].MemberID == "" {
		t.Fatalf("%d joins %+v, want a third, with its member id, for the added partition", len(gw.b.joins), gw.b.joins)
	}
	got := only(ops(gw.rec, "c-0", history.FAssign), "ok ")
	if want := []string{"ok assign [orders-0] gen=1", "ok assign [orders-0] gen=1", "ok assign [orders-0 orders-1] gen=2"}; !slices.Equal(got, want) {
		t.Fatalf("assignments %v, want %v", got, want)
	}
	if _, ok := gw.member(0).SkippedAssignmentSnapshot(); ok {
		t.Fatal("the leader that assigned generation 2 says it skipped the assignment")
	}
}

// A partition added while the static leader was away is in the metadata
// its skipped assignment snapshots, so nothing calls for a rebalance:
// Kafka's onLeaderElected takes metadataSnapshot as it is at the rejoin.
// The member says what it watches, for the god view.
func TestReturningStaticLeaderMissesAPartitionAddedWhileAway(t *testing.T) {
	gw := staticLeaderRejoin(t, 5500*time.Millisecond)
	if len(gw.b.joins) != 2 {
		t.Fatalf("%d joins %+v, want no rebalance after the rejoin", len(gw.b.joins), gw.b.joins)
	}
	if got := gw.member(0).Owned(); !slices.Equal(got, []string{"orders-0"}) {
		t.Fatalf("owned %v, want the kept assignment [orders-0]", got)
	}
	counts, ok := gw.member(0).SkippedAssignmentSnapshot()
	if want := map[string]int32{"orders": 2}; !ok || !maps.Equal(counts, want) {
		t.Fatalf("SkippedAssignmentSnapshot %v %v, want %v true", counts, ok, want)
	}
}
