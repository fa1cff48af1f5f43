package audit

import (
	"slices"
	"testing"
	"time"

	"kafkasim/godview"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// newGroupsAudit is an audit of a world of three member processes (c1, c2, c3:
// nodes 0, 1, 2) whose group coordinator holds the members in members.
func newGroupsAudit(t *testing.T, members map[string][]string) (*Audit, *sim.World) {
	t.Helper()
	a, w := newAudit(t)
	a.SetGroupMembers(func(g string) ([]string, bool) {
		m, ok := members[g]
		return m, ok
	})
	return a, w
}

var (
	coordOld = Coordinator{Broker: 1, Partition: 7, LeaderEpoch: 3}
	coordNew = Coordinator{Broker: 2, Partition: 7, LeaderEpoch: 4}
	orders0  = proto.TopicPartition{Topic: "orders", Partition: 0}
	orders1  = proto.TopicPartition{Topic: "orders", Partition: 1}
)

func generationCommitted(a *Audit, c Coordinator, group string, gen int32) {
	a.GroupGenerationCommitted(c.Broker, c.Partition, c.LeaderEpoch, group, gen, 0)
}

func TestGroupInvariantsListedOnlyWithGroups(t *testing.T) {
	a, _ := newAudit(t)
	if got := a.GroupInvariants(); got != nil {
		t.Fatalf("an audit without groups lists %v", got)
	}
	// Without groups the hooks are no-ops.
	a.PartitionsAssigned(0, "g", "m", 1, false, []proto.TopicPartition{orders0})
	a.PartitionsAssigned(1, "g", "n", 1, false, []proto.TopicPartition{orders0})
	if a.Total() != 0 {
		t.Fatalf("violations without groups: %v", a.Violations())
	}
	a.SetGroupMembers(func(string) ([]string, bool) { return nil, false })
	if got := a.GroupInvariants(); !slices.Equal(got, []string{GroupGenerationSingleCoordinator, GroupPartitionSingleOwner, GroupCommitNotBelowOwner}) {
		t.Fatalf("group invariants %v", got)
	}
}

func TestGenerationSingleCoordinator(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(a *Audit)
		want int
	}{
		{"one coordinator advances", func(a *Audit) {
			generationCommitted(a, coordOld, "g", 1)
			generationCommitted(a, coordOld, "g", 2)
			generationCommitted(a, coordOld, "g", 2) // a static member's replacement rewrites it
		}, 0},
		{"the new coordinator loaded it and goes on", func(a *Audit) {
			generationCommitted(a, coordOld, "g", 2)
			a.GroupLoaded(coordNew.Broker, coordNew.Partition, coordNew.LeaderEpoch, "g", 2, nil, nil)
			generationCommitted(a, coordNew, "g", 2)
			generationCommitted(a, coordNew, "g", 3)
		}, 0},
		{"another group's generations are its own", func(a *Audit) {
			generationCommitted(a, coordOld, "g", 2)
			generationCommitted(a, coordNew, "h", 2)
		}, 0},
		{"a deposed coordinator's write of the same generation commits", func(a *Audit) {
			generationCommitted(a, coordOld, "g", 2)
			a.GroupLoaded(coordNew.Broker, coordNew.Partition, coordNew.LeaderEpoch, "g", 2, nil, nil)
			generationCommitted(a, coordNew, "g", 3)
			old := Coordinator{Broker: 1, Partition: 7, LeaderEpoch: 3}
			generationCommitted(a, old, "g", 3)
		}, 1},
		{"a coordinator that never loaded the group begins an older generation", func(a *Audit) {
			generationCommitted(a, coordOld, "g", 5)
			generationCommitted(a, coordNew, "g", 4)
		}, 1},
		{"a loss of the partition explains it", func(a *Audit) {
			generationCommitted(a, coordOld, "g", 5)
			a.facts = append(a.facts, godview.Fact{Kind: godview.Loss, Partition: "__consumer_offsets-7"})
			generationCommitted(a, coordNew, "g", 5)
		}, 0},
		{"a loss elsewhere does not", func(a *Audit) {
			generationCommitted(a, coordOld, "g", 5)
			a.facts = append(a.facts, godview.Fact{Kind: godview.Loss, Partition: "__consumer_offsets-8"})
			generationCommitted(a, coordNew, "g", 5)
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := newGroupsAudit(t, nil)
			tc.run(a)
			expect(t, a, GroupGenerationSingleCoordinator, tc.want)
		})
	}
}

func TestPartitionSingleOwner(t *testing.T) {
	tps := []proto.TopicPartition{orders0, orders1}
	// Z claims generation 15 of a coordinator that lost the group and
	// began 15 again, after A's claim of the new 15.
	reusedThenClaimed := func(a *Audit, w *sim.World) {
		generationCommitted(a, coordOld, "g", 15)
		w.RunUntil(time.Second)
		offsetsLost(a, "__consumer_offsets-7", int64(time.Second))
		generationCommitted(a, coordNew, "g", 15)
		a.PartitionsAssigned(0, "g", "A", 15, true, tps)
		a.PartitionsAssigned(1, "g", "Z", 15, true, tps)
	}
	for _, tc := range []struct {
		name    string
		members []string
		run     func(a *Audit, w *sim.World)
		want    int
	}{
		{"revoked before granted", []string{"A", "B"}, func(a *Audit, w *sim.World) {
			a.PartitionsAssigned(0, "g", "A", 1, false, tps)
			a.PartitionsRevoked(0, "g", []proto.TopicPartition{orders1})
			a.PartitionsAssigned(1, "g", "B", 2, false, []proto.TopicPartition{orders1})
		}, 0},
		{"granted while its owner still has it", []string{"A", "B"}, func(a *Audit, w *sim.World) {
			a.PartitionsAssigned(0, "g", "A", 1, false, tps)
			a.PartitionsAssigned(1, "g", "B", 2, false, []proto.TopicPartition{orders1})
		}, 1},
		{"the owner was removed from the group (a zombie)", []string{"B"}, func(a *Audit, w *sim.World) {
			a.PartitionsAssigned(0, "g", "A", 1, false, tps)
			a.PartitionsAssigned(1, "g", "B", 2, false, tps)
		}, 0},
		{"a fenced member applies an answer written before its fencing (a zombie)", []string{"B"}, func(a *Audit, w *sim.World) {
			// A's rebalance timeout fenced it and gave its partitions to
			// B; the answer A's heartbeat was waiting for (revoke
			// orders-1, keep orders-0) arrives after.
			a.PartitionsAssigned(0, "g", "A", 1, false, tps)
			a.PartitionsAssigned(1, "g", "B", 3, false, tps)
			a.PartitionsAssigned(0, "g", "A", 1, false, []proto.TopicPartition{orders0})
		}, 0},
		{"a member that left and rejoined applies the answer it waited for before leaving", []string{"A", "B"}, func(a *Audit, w *sim.World) {
			// A's poll timer expired while its heartbeat (granted
			// orders-1 at epoch 3) waited on the commit; its leave
			// removed it at epoch 3, its rejoin brought it back under
			// the same member id, and B was given orders-1. The answer
			// reaches A, JOINING, which applies it.
			a.ConsumerMemberRemoved(coordOld.Broker, coordOld.Partition, coordOld.LeaderEpoch, "g", "A", 3)
			a.PartitionsAssigned(0, "g", "A", 3, false, []proto.TopicPartition{orders1})
			a.PartitionsAssigned(1, "g", "B", 7, false, tps)
		}, 0},
		{"the same, B granted first", []string{"A", "B"}, func(a *Audit, w *sim.World) {
			a.ConsumerMemberRemoved(coordOld.Broker, coordOld.Partition, coordOld.LeaderEpoch, "g", "A", 3)
			a.PartitionsAssigned(1, "g", "B", 7, false, tps)
			a.PartitionsAssigned(0, "g", "A", 3, false, []proto.TopicPartition{orders1})
		}, 0},
		{"a member that rejoined owns at its new epoch", []string{"A", "B"}, func(a *Audit, w *sim.World) {
			// Removed at epoch 3, A is back at epoch 5 with orders-1:
			// that membership has not ended.
			a.ConsumerMemberRemoved(coordOld.Broker, coordOld.Partition, coordOld.LeaderEpoch, "g", "A", 3)
			a.PartitionsAssigned(0, "g", "A", 5, false, []proto.TopicPartition{orders1})
			a.PartitionsAssigned(1, "g", "B", 7, false, tps)
		}, 1},
		{"another member's removal excuses nothing", []string{"A", "B"}, func(a *Audit, w *sim.World) {
			a.ConsumerMemberRemoved(coordOld.Broker, coordOld.Partition, coordOld.LeaderEpoch, "g", "C", 9)
			a.PartitionsAssigned(0, "g", "A", 3, false, []proto.TopicPartition{orders1})
			a.PartitionsAssigned(1, "g", "B", 7, false, tps)
		}, 1},
		{"classic: a consumer-protocol removal does not apply", []string{"A", "B"}, func(a *Audit, w *sim.World) {
			a.ConsumerMemberRemoved(coordOld.Broker, coordOld.Partition, coordOld.LeaderEpoch, "g", "A", 3)
			a.PartitionsAssigned(0, "g", "A", 3, true, tps)
			a.PartitionsAssigned(1, "g", "B", 3, true, []proto.TopicPartition{orders1})
		}, 1},
		{"a member still in the group keeps what another was given", []string{"A", "B"}, func(a *Audit, w *sim.World) {
			a.PartitionsAssigned(1, "g", "B", 3, false, tps)
			a.PartitionsAssigned(0, "g", "A", 1, false, []proto.TopicPartition{orders0})
		}, 1},
		{"the owner's process died", []string{"A", "B"}, func(a *Audit, w *sim.World) {
			a.PartitionsAssigned(0, "g", "A", 1, false, tps)
			w.Crash(0, false)
			a.PartitionsAssigned(1, "g", "B", 2, false, tps)
		}, 0},
		{"the owner's process restarted", []string{"A", "B"}, func(a *Audit, w *sim.World) {
			a.PartitionsAssigned(0, "g", "A", 1, false, tps)
			w.Crash(0, false)
			w.Restart(0)
			a.PartitionsAssigned(1, "g", "B", 2, false, tps)
		}, 0},
		// A coordinator that loaded the group from a log missing the
		// records that granted the owner its partition (fuzz seed 249566).
		{"the owner's grant was lost with __consumer_offsets and the reload forgot it", []string{"A", "B"}, func(a *Audit, w *sim.World) {
			a.PartitionsAssigned(0, "g", "A", 3, false, tps)
			offsetsLost(a, "__consumer_offsets-7", 0)
			loaded(a, map[string][]proto.TopicPartition{"A": {orders0}, "B": nil})
			a.PartitionsAssigned(1, "g", "B", 4, false, []proto.TopicPartition{orders1})
		}, 0},
		{"classic: the owner's grant was lost with __consumer_offsets and the reload forgot it", []string{"A", "B"}, func(a *Audit, w *sim.World) {
			a.PartitionsAssigned(0, "g", "A", 3, true, tps)
			offsetsLost(a, "__consumer_offsets-7", 0)
			loaded(a, map[string][]proto.TopicPartition{"A": nil})
			a.PartitionsAssigned(1, "g", "B", 3, true, []proto.TopicPartition{orders1})
		}, 0},
		{"the reload after the loss still has the owner's partition (pending revocation)", []string{"A", "B"}, func(a *Audit, w *sim.World) {
			a.PartitionsAssigned(0, "g", "A", 3, false, tps)
			offsetsLost(a, "__consumer_offsets-7", 0)
			loaded(a, map[string][]proto.TopicPartition{"A": tps, "B": nil})
			a.PartitionsAssigned(1, "g", "B", 4, false, []proto.TopicPartition{orders1})
		}, 1},
		{"another __consumer_offsets partition lost data", []string{"A", "B"}, func(a *Audit, w *sim.World) {
			a.PartitionsAssigned(0, "g", "A", 3, false, tps)
			offsetsLost(a, "__consumer_offsets-8", 0)
			loaded(a, map[string][]proto.TopicPartition{"A": {orders0}, "B": nil})
			a.PartitionsAssigned(1, "g", "B", 4, false, []proto.TopicPartition{orders1})
		}, 1},
		{"the loss came before the owner's claim", []string{"A", "B"}, func(a *Audit, w *sim.World) {
			offsetsLost(a, "__consumer_offsets-7", 0)
			loaded(a, map[string][]proto.TopicPartition{"A": nil, "B": nil})
			a.PartitionsAssigned(0, "g", "A", 3, false, tps)
			a.PartitionsAssigned(1, "g", "B", 4, false, []proto.TopicPartition{orders1})
		}, 1},
		{"the load that forgot it came before the loss", []string{"A", "B"}, func(a *Audit, w *sim.World) {
			a.PartitionsAssigned(0, "g", "A", 3, false, tps)
			loaded(a, map[string][]proto.TopicPartition{"A": nil, "B": nil})
			offsetsLost(a, "__consumer_offsets-7", 1)
			a.PartitionsAssigned(1, "g", "B", 4, false, []proto.TopicPartition{orders1})
		}, 1},
		{"a paused owner still owns", []string{"A", "B"}, func(a *Audit, w *sim.World) {
			a.PartitionsAssigned(0, "g", "A", 1, false, tps)
			w.Pause(0)
			a.PartitionsAssigned(1, "g", "B", 2, false, []proto.TopicPartition{orders0})
		}, 1},
		{"the same process again, under a new member id", []string{"A2"}, func(a *Audit, w *sim.World) {
			a.PartitionsAssigned(0, "g", "A", 1, false, tps)
			a.PartitionsAssigned(0, "g", "A2", 2, false, tps)
		}, 0},
		{"another group's partition", []string{"A", "B"}, func(a *Audit, w *sim.World) {
			a.PartitionsAssigned(0, "g", "A", 1, false, tps)
			a.PartitionsAssigned(1, "h", "B", 1, false, tps)
		}, 0},
		{"each later grant of a doubly owned partition fires", []string{"A", "B", "C"}, func(a *Audit, w *sim.World) {
			a.PartitionsAssigned(0, "g", "A", 1, false, []proto.TopicPartition{orders0})
			a.PartitionsAssigned(1, "g", "B", 2, false, []proto.TopicPartition{orders0})
			a.PartitionsRevoked(0, "g", []proto.TopicPartition{orders0})
			a.PartitionsAssigned(2, "g", "C", 3, false, []proto.TopicPartition{orders0}) // B still owns it
		}, 2},
		// The classic protocol: who rejoined a generation owns only what
		// it was given in it.
		{"classic: a static member that did not rejoin keeps its older generation's", []string{"A", "B"}, func(a *Audit, w *sim.World) {
			a.PartitionsAssigned(0, "g", "A", 1, true, tps)
			a.PartitionsAssigned(1, "g", "B", 2, true, tps)
		}, 0},
		{"classic: two members given one partition in one generation", []string{"A", "B"}, func(a *Audit, w *sim.World) {
			a.PartitionsAssigned(0, "g", "A", 2, true, tps)
			a.PartitionsAssigned(1, "g", "B", 2, true, []proto.TopicPartition{orders1})
		}, 1},
		{"classic: a cooperative member keeps into the generation another was given it in", []string{"A", "B"}, func(a *Audit, w *sim.World) {
			a.PartitionsAssigned(0, "g", "A", 1, true, tps)
			a.PartitionsAssigned(1, "g", "B", 2, true, []proto.TopicPartition{orders1})
			a.PartitionsAssigned(0, "g", "A", 2, true, tps)
		}, 1},
		// A dynamic member paused after its SyncGroup applies the older
		// generation's answer once it runs again, after the coordinator
		// removed it and gave its partitions away in a newer generation.
		{"classic: a removed member applies an older generation's late SyncGroup answer", []string{"A", "B"}, func(a *Audit, w *sim.World) {
			a.PartitionsAssigned(0, "g", "A", 15, true, tps)
			a.PartitionsAssigned(1, "g", "Z", 13, true, tps)
		}, 0},
		{"classic: a member still in the group applies an older generation's answer", []string{"A", "Z"}, func(a *Audit, w *sim.World) {
			a.PartitionsAssigned(0, "g", "A", 15, true, tps)
			a.PartitionsAssigned(1, "g", "Z", 13, true, tps)
		}, 2},
		{"classic: a removed member's claim in the owner's own generation", []string{"A", "B"}, func(a *Audit, w *sim.World) {
			a.PartitionsAssigned(0, "g", "A", 15, true, tps)
			a.PartitionsAssigned(1, "g", "Z", 15, true, tps)
		}, 2},
		// The group's __consumer_offsets partition lost the records that
		// began generation 15 (and Z's membership in it); the reloaded
		// group began 15 again, giving A the partitions; Z, a zombie of
		// the first 15, applies its late SyncGroup answer (fuzz with
		// processors, seed 9).
		{"classic: a removed member's claim of a generation number begun again after __consumer_offsets lost the group", []string{"A", "B"}, reusedThenClaimed, 0},
		{"classic: the same, by a member still in the group", []string{"A", "Z"}, reusedThenClaimed, 2},
		{"classic: the loss came before the generation was first begun", []string{"A", "B"}, func(a *Audit, w *sim.World) {
			offsetsLost(a, "__consumer_offsets-7", 0)
			w.RunUntil(time.Second)
			generationCommitted(a, coordOld, "g", 15)
			generationCommitted(a, coordNew, "g", 15)
			a.PartitionsAssigned(0, "g", "A", 15, true, tps)
			a.PartitionsAssigned(1, "g", "Z", 15, true, tps)
		}, 2},
		{"classic: another __consumer_offsets partition lost data", []string{"A", "B"}, func(a *Audit, w *sim.World) {
			generationCommitted(a, coordOld, "g", 15)
			offsetsLost(a, "__consumer_offsets-8", 0)
			generationCommitted(a, coordNew, "g", 15)
			a.PartitionsAssigned(0, "g", "A", 15, true, tps)
			a.PartitionsAssigned(1, "g", "Z", 15, true, tps)
		}, 2},
		{"classic: another generation number was begun again", []string{"A", "B"}, func(a *Audit, w *sim.World) {
			generationCommitted(a, coordOld, "g", 15)
			offsetsLost(a, "__consumer_offsets-7", 0)
			generationCommitted(a, coordNew, "g", 14)
			generationCommitted(a, coordNew, "g", 16)
			a.PartitionsAssigned(0, "g", "A", 16, true, tps)
			a.PartitionsAssigned(1, "g", "Z", 16, true, tps)
		}, 2},
		{"classic: a cooperative member keeps what it alone owns", []string{"A", "B"}, func(a *Audit, w *sim.World) {
			a.PartitionsAssigned(0, "g", "A", 1, true, tps)
			a.PartitionsAssigned(0, "g", "A", 2, true, []proto.TopicPartition{orders0})
			a.PartitionsRevoked(0, "g", []proto.TopicPartition{orders1})
			a.PartitionsAssigned(1, "g", "B", 3, true, []proto.TopicPartition{orders1})
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, w := newGroupsAudit(t, map[string][]string{"g": tc.members, "h": {"B"}})
			tc.run(a, w)
			expect(t, a, GroupPartitionSingleOwner, tc.want)
		})
	}
}

// offsetsLost is the god view's loss of committed data of partition, at
// virtual nanosecond at.
func offsetsLost(a *Audit, partition string, at int64) {
	a.facts = append(a.facts, godview.Fact{Kind: godview.Loss, Partition: partition, From: 10, To: 20, At: at})
}

// loaded is coordNew's load of group g, with what each member owns by its
// account.
func loaded(a *Audit, owned map[string][]proto.TopicPartition) {
	a.GroupLoaded(coordNew.Broker, coordNew.Partition, coordNew.LeaderEpoch, "g", 3, nil, owned)
}

func TestPartitionSingleOwnerCoordinatorNotLoaded(t *testing.T) {
	// While the group's coordinator does not hold the group, who is still a
	// member cannot be told: nothing is reported.
	a, _ := newGroupsAudit(t, map[string][]string{})
	a.PartitionsAssigned(0, "g", "A", 1, false, []proto.TopicPartition{orders0})
	a.PartitionsAssigned(1, "g", "B", 2, false, []proto.TopicPartition{orders0})
	expect(t, a, GroupPartitionSingleOwner, 0)
}

// offsetCommitted acknowledges a commit whose record is at offset 5 of the
// coordinator's __consumer_offsets partition.
func offsetCommitted(a *Audit, member string, gen int32, tp proto.TopicPartition, offset int64) {
	offsetCommittedAt(a, member, gen, tp, offset, 5)
}

func offsetCommittedAt(a *Audit, member string, gen int32, tp proto.TopicPartition, offset, record int64) {
	a.GroupOffsetCommitted(coordOld.Broker, coordOld.Partition, coordOld.LeaderEpoch, "g", member, gen, tp, offset, record)
}

func TestCommitNotBelowOwner(t *testing.T) {
	for _, tc := range []struct {
		name string
		run  func(a *Audit)
		want int
	}{
		{"commits advance", func(a *Audit) {
			offsetCommitted(a, "A", 1, orders0, 10)
			offsetCommitted(a, "A", 1, orders0, 10)
			offsetCommitted(a, "B", 2, orders0, 20)
		}, 0},
		{"a stale generation's commit goes below the new owner's", func(a *Audit) {
			offsetCommitted(a, "B", 2, orders0, 20)
			offsetCommitted(a, "A", 1, orders0, 15)
		}, 1},
		{"another member of the same generation goes below", func(a *Audit) {
			offsetCommitted(a, "B", 2, orders0, 20)
			offsetCommitted(a, "A", 2, orders0, 15)
		}, 1},
		{"the owner lowers its own (the history judges it)", func(a *Audit) {
			offsetCommitted(a, "A", 1, orders0, 20)
			offsetCommitted(a, "A", 1, orders0, 15)
		}, 0},
		{"a stale commit above is not this invariant's", func(a *Audit) {
			offsetCommitted(a, "B", 2, orders0, 20)
			offsetCommitted(a, "A", 1, orders0, 25)
		}, 0},
		{"a newer owner goes below with nothing to explain it", func(a *Audit) {
			offsetCommitted(a, "A", 1, orders0, 20)
			a.PartitionsAssigned(1, "g", "B", 2, false, []proto.TopicPartition{orders0})
			offsetCommitted(a, "B", 2, orders0, 5)
		}, 1},
		{"a newer owner that reset its position", func(a *Audit) {
			offsetCommitted(a, "A", 1, orders0, 20)
			a.PartitionsAssigned(1, "g", "B", 2, false, []proto.TopicPartition{orders0})
			a.PositionReset(1, "g", orders0)
			offsetCommitted(a, "B", 2, orders0, 5)
		}, 0},
		{"a reset of another partition does not explain it", func(a *Audit) {
			offsetCommitted(a, "A", 1, orders0, 20)
			a.PartitionsAssigned(1, "g", "B", 2, false, []proto.TopicPartition{orders0, orders1})
			a.PositionReset(1, "g", orders1)
			offsetCommitted(a, "B", 2, orders0, 5)
		}, 1},
		{"the same member, moved to a newer generation, finds its own commit's records lost (fuzz seed 40100)", func(a *Audit) {
			// The loss comes before the commit of 6 — records A read
			// before it — which the coordinator accepts; fetching 6 in
			// generation 2, A's KIP-320 validation seeks back to 0.
			a.PartitionsAssigned(1, "g", "A", 1, true, []proto.TopicPartition{orders0})
			a.facts = append(a.facts, godview.Fact{Kind: godview.Loss, Partition: "orders-0", From: 0, To: 6})
			offsetCommitted(a, "A", 1, orders0, 6)
			a.PartitionsRevoked(1, "g", []proto.TopicPartition{orders0})
			a.PartitionsAssigned(1, "g", "A", 2, true, []proto.TopicPartition{orders0})
			a.PositionTruncated(1, "g", orders0)
			offsetCommitted(a, "A", 2, orders0, 1)
		}, 0},
		{"consumer protocol: a later grant at the same member epoch that reset its position (fuzz seed 262089)", func(a *Audit) {
			// A owns orders-0 at epoch 4; __consumer_offsets-7 and
			// orders-0 lose committed data; the coordinator, loading the
			// group without A's claim, grants orders-0 to B at epoch 5, B
			// finds no committed offset and resets. A, moved to epoch 5
			// by its heartbeat before it hears it lost orders-0, commits
			// 224 (records it read before the loss), B then 65.
			a.PartitionsAssigned(0, "g", "A", 4, false, []proto.TopicPartition{orders0})
			a.facts = append(a.facts, godview.Fact{Kind: godview.Loss, Partition: "__consumer_offsets-7", From: 29, To: 46},
				godview.Fact{Kind: godview.Loss, Partition: "orders-0", From: 65, To: 224})
			a.PartitionsAssigned(1, "g", "B", 5, false, []proto.TopicPartition{orders0})
			a.PositionReset(1, "g", orders0)
			a.PartitionsAssigned(0, "g", "A", 5, false, []proto.TopicPartition{orders0})
			offsetCommitted(a, "A", 5, orders0, 224)
			offsetCommitted(a, "B", 5, orders0, 65)
		}, 0},
		{"consumer protocol: a later grant at the same member epoch goes below with nothing to explain it", func(a *Audit) {
			a.PartitionsAssigned(0, "g", "A", 4, false, []proto.TopicPartition{orders0})
			a.PartitionsAssigned(1, "g", "B", 5, false, []proto.TopicPartition{orders0})
			a.PartitionsAssigned(0, "g", "A", 5, false, []proto.TopicPartition{orders0})
			offsetCommitted(a, "A", 5, orders0, 224)
			offsetCommitted(a, "B", 5, orders0, 65)
		}, 1},
		{"consumer protocol: an earlier grant at the same member epoch may not go below the later one's", func(a *Audit) {
			a.PartitionsAssigned(0, "g", "A", 4, false, []proto.TopicPartition{orders0})
			a.PositionReset(0, "g", orders0)
			a.PartitionsAssigned(1, "g", "B", 5, false, []proto.TopicPartition{orders0})
			a.PartitionsAssigned(0, "g", "A", 5, false, []proto.TopicPartition{orders0})
			offsetCommitted(a, "B", 5, orders0, 224)
			offsetCommitted(a, "A", 5, orders0, 65)
		}, 1},
		{"classic protocol: another member of the same generation that reset its position still may not go below", func(a *Audit) {
			a.PartitionsAssigned(0, "g", "A", 5, true, []proto.TopicPartition{orders0})
			a.PartitionsAssigned(1, "g", "B", 5, true, []proto.TopicPartition{orders0})
			a.PositionReset(1, "g", orders0)
			offsetCommitted(a, "A", 5, orders0, 224)
			offsetCommitted(a, "B", 5, orders0, 65)
		}, 1},
		{"a static member's next incarnation, in the same generation, finds its previous incarnation's commit's records lost (fuzz seed 204745)", func(a *Audit) {
			// c1 (node 0) commits 82 as member A after the partition lost
			// 0..82; restarted, it rejoins the Stable group as B in the
			// same generation, fetches 82, and its KIP-320 validation
			// seeks back to 0.
			a.PartitionsAssigned(0, "g", "A", 1, true, []proto.TopicPartition{orders0})
			a.facts = append(a.facts, godview.Fact{Kind: godview.Loss, Partition: "orders-0", From: 0, To: 82})
			offsetCommitted(a, "A", 1, orders0, 82)
			a.w.Crash(0, false)
			a.w.Restart(0)
			a.PartitionsAssigned(0, "g", "B", 1, true, []proto.TopicPartition{orders0})
			a.PositionTruncated(0, "g", orders0)
			offsetCommitted(a, "B", 1, orders0, 60)
		}, 0},
		{"a static member's next incarnation, in the same generation, that reset its position", func(a *Audit) {
			a.PartitionsAssigned(0, "g", "A", 1, true, []proto.TopicPartition{orders0})
			offsetCommitted(a, "A", 1, orders0, 82)
			a.w.Crash(0, false)
			a.w.Restart(0)
			a.PartitionsAssigned(0, "g", "B", 1, true, []proto.TopicPartition{orders0})
			a.PositionReset(0, "g", orders0)
			offsetCommitted(a, "B", 1, orders0, 60)
		}, 0},
		{"a static member's next incarnation, in the same generation, goes below with nothing to explain it", func(a *Audit) {
			a.PartitionsAssigned(0, "g", "A", 1, true, []proto.TopicPartition{orders0})
			offsetCommitted(a, "A", 1, orders0, 82)
			a.w.Crash(0, false)
			a.w.Restart(0)
			a.PartitionsAssigned(0, "g", "B", 1, true, []proto.TopicPartition{orders0})
			offsetCommitted(a, "B", 1, orders0, 60)
		}, 1},
		{"a static member's next incarnation, in the same generation, truncated with no loss below the commit", func(a *Audit) {
			a.PartitionsAssigned(0, "g", "A", 1, true, []proto.TopicPartition{orders0})
			a.facts = append(a.facts, godview.Fact{Kind: godview.Loss, Partition: "orders-0", From: 82, To: 90})
			offsetCommitted(a, "A", 1, orders0, 82)
			a.w.Crash(0, false)
			a.w.Restart(0)
			a.PartitionsAssigned(0, "g", "B", 1, true, []proto.TopicPartition{orders0})
			a.PositionTruncated(0, "g", orders0)
			offsetCommitted(a, "B", 1, orders0, 60)
		}, 1},
		{"another process of the same generation that found the log truncated still may not go below", func(a *Audit) {
			a.PartitionsAssigned(0, "g", "A", 1, true, []proto.TopicPartition{orders0})
			a.facts = append(a.facts, godview.Fact{Kind: godview.Loss, Partition: "orders-0", From: 0, To: 82})
			offsetCommitted(a, "A", 1, orders0, 82)
			a.w.Crash(0, false)
			a.PartitionsAssigned(1, "g", "B", 1, true, []proto.TopicPartition{orders0})
			a.PositionTruncated(1, "g", orders0)
			offsetCommitted(a, "B", 1, orders0, 60)
		}, 1},
		{"the same process's other member id, with no restart, may not go below", func(a *Audit) {
			a.PartitionsAssigned(0, "g", "A", 1, true, []proto.TopicPartition{orders0})
			a.facts = append(a.facts, godview.Fact{Kind: godview.Loss, Partition: "orders-0", From: 0, To: 82})
			offsetCommitted(a, "A", 1, orders0, 82)
			a.PartitionsAssigned(0, "g", "B", 1, true, []proto.TopicPartition{orders0})
			a.PositionTruncated(0, "g", orders0)
			offsetCommitted(a, "B", 1, orders0, 60)
		}, 1},
		{"a previous commit by a member that did not own the partition is no incarnation's", func(a *Audit) {
			a.facts = append(a.facts, godview.Fact{Kind: godview.Loss, Partition: "orders-0", From: 0, To: 82})
			offsetCommitted(a, "A", 1, orders0, 82)
			a.w.Crash(0, false)
			a.w.Restart(0)
			a.PartitionsAssigned(0, "g", "B", 1, true, []proto.TopicPartition{orders0})
			a.PositionTruncated(0, "g", orders0)
			offsetCommitted(a, "B", 1, orders0, 60)
		}, 1},
		{"a newer owner that found the log truncated after a loss below the commit", func(a *Audit) {
			a.facts = append(a.facts, godview.Fact{Kind: godview.Loss, Partition: "orders-0", From: 4, To: 30})
			offsetCommitted(a, "A", 1, orders0, 20)
			a.PartitionsAssigned(1, "g", "B", 2, false, []proto.TopicPartition{orders0})
			a.PositionTruncated(1, "g", orders0)
			offsetCommitted(a, "B", 2, orders0, 5)
		}, 0},
		{"a truncation with no loss does not explain it", func(a *Audit) {
			offsetCommitted(a, "A", 1, orders0, 20)
			a.PartitionsAssigned(1, "g", "B", 2, false, []proto.TopicPartition{orders0})
			a.PositionTruncated(1, "g", orders0)
			offsetCommitted(a, "B", 2, orders0, 5)
		}, 1},
		{"a truncation after a loss at or above the commit does not explain it", func(a *Audit) {
			a.facts = append(a.facts, godview.Fact{Kind: godview.Loss, Partition: "orders-0", From: 20, To: 30})
			offsetCommitted(a, "A", 1, orders0, 20)
			a.PartitionsAssigned(1, "g", "B", 2, false, []proto.TopicPartition{orders0})
			a.PositionTruncated(1, "g", orders0)
			offsetCommitted(a, "B", 2, orders0, 5)
		}, 1},
		{"a truncation after another partition's loss does not explain it", func(a *Audit) {
			a.facts = append(a.facts, godview.Fact{Kind: godview.Loss, Partition: "orders-1", From: 0, To: 30})
			offsetCommitted(a, "A", 1, orders0, 20)
			a.PartitionsAssigned(1, "g", "B", 2, false, []proto.TopicPartition{orders0})
			a.PositionTruncated(1, "g", orders0)
			offsetCommitted(a, "B", 2, orders0, 5)
		}, 1},
		{"a truncation of another partition does not explain it", func(a *Audit) {
			a.facts = append(a.facts, godview.Fact{Kind: godview.Loss, Partition: "orders-0", From: 0, To: 30})
			offsetCommitted(a, "A", 1, orders0, 20)
			a.PartitionsAssigned(1, "g", "B", 2, false, []proto.TopicPartition{orders0, orders1})
			a.PositionTruncated(1, "g", orders1)
			offsetCommitted(a, "B", 2, orders0, 5)
		}, 1},
		{"another member's truncation does not explain it", func(a *Audit) {
			a.facts = append(a.facts, godview.Fact{Kind: godview.Loss, Partition: "orders-0", From: 0, To: 30})
			a.PartitionsAssigned(0, "g", "A", 1, false, []proto.TopicPartition{orders0})
			a.PositionTruncated(0, "g", orders0)
			offsetCommitted(a, "A", 1, orders0, 20)
			a.PartitionsRevoked(0, "g", []proto.TopicPartition{orders0})
			a.PartitionsAssigned(1, "g", "B", 2, false, []proto.TopicPartition{orders0})
			offsetCommitted(a, "B", 2, orders0, 5)
		}, 1},
		{"the partition lost data since", func(a *Audit) {
			offsetCommitted(a, "B", 2, orders0, 20)
			a.facts = append(a.facts, godview.Fact{Kind: godview.Loss, Partition: "orders-0"})
			offsetCommitted(a, "A", 1, orders0, 15)
		}, 0},
		{"the group's __consumer_offsets partition lost data since", func(a *Audit) {
			offsetCommitted(a, "A", 1, orders0, 20)
			a.facts = append(a.facts, godview.Fact{Kind: godview.Loss, Partition: "__consumer_offsets-7"})
			offsetCommitted(a, "B", 2, orders0, 5)
		}, 0},
		{"a loss before the commit it goes below does not explain it", func(a *Audit) {
			a.facts = append(a.facts, godview.Fact{Kind: godview.Loss, Partition: "orders-0"})
			offsetCommitted(a, "B", 2, orders0, 20)
			offsetCommitted(a, "A", 1, orders0, 15)
		}, 1},
		{"commits of no generation are not an owner's", func(a *Audit) {
			offsetCommitted(a, "B", 2, orders0, 20)
			offsetCommitted(a, "", -1, orders0, 3)
		}, 0},
		{"partitions are apart", func(a *Audit) {
			offsetCommitted(a, "B", 2, orders0, 20)
			offsetCommitted(a, "A", 1, orders1, 3)
		}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := newGroupsAudit(t, map[string][]string{"g": {"A", "B"}})
			tc.run(a)
			expect(t, a, GroupCommitNotBelowOwner, tc.want)
		})
	}
}

// LastGroupLoad finds, of a group's loads, the last by the broker asked
// at or before the time asked, with the static members it held.
func TestLastGroupLoad(t *testing.T) {
	a, w := newGroupsAudit(t, nil)
	if _, ok := a.LastGroupLoad("g", 2, time.Hour); ok {
		t.Fatal("a load found before any")
	}
	a.GroupLoaded(coordNew.Broker, coordNew.Partition, coordNew.LeaderEpoch, "g", 2, map[string]string{"b-0": "m1"}, nil)
	w.RunUntil(10 * time.Second)
	a.GroupLoaded(coordOld.Broker, coordOld.Partition, coordOld.LeaderEpoch, "g", 3, nil, nil)
	a.GroupLoaded(coordNew.Broker, coordNew.Partition, coordNew.LeaderEpoch+1, "h", 7, nil, nil)
	w.RunUntil(20 * time.Second)
	a.GroupLoaded(coordNew.Broker, coordNew.Partition, coordNew.LeaderEpoch+1, "g", 4, map[string]string{"b-0": "m2"}, nil)
	for _, tc := range []struct {
		group  string
		broker int32
		at     time.Duration
		gen    int32
		member string
		ok     bool
	}{
		{"g", 2, 5 * time.Second, 2, "m1", true},
		{"g", 2, 19 * time.Second, 2, "m1", true},
		{"g", 2, 20 * time.Second, 4, "m2", true},
		{"g", 1, time.Hour, 3, "", true},
		{"h", 2, 15 * time.Second, 7, "", true},
		{"h", 1, time.Hour, 0, "", false},
		{"g", 3, time.Hour, 0, "", false},
	} {
		l, ok := a.LastGroupLoad(tc.group, tc.broker, tc.at)
		if ok != tc.ok || l.Generation != tc.gen || l.StaticMembers["b-0"] != tc.member || (ok && l.Coordinator.Broker != tc.broker) {
			t.Errorf("LastGroupLoad(%s, %d, %v) = %+v, %v; want generation %d, b-0 as %q, %v", tc.group, tc.broker, tc.at, l, ok, tc.gen, tc.member, tc.ok)
		}
	}
}

// StaticMemberReverts keeps each group's reverts apart, in time order,
// stamped with when and by whom.
func TestStaticMemberReverts(t *testing.T) {
	a, w := newGroupsAudit(t, nil)
	if r := a.StaticMemberReverts("g"); r != nil {
		t.Fatalf("reverts before any: %+v", r)
	}
	w.RunUntil(5 * time.Second)
	a.StaticMemberReverted(coordNew.Broker, coordNew.Partition, coordNew.LeaderEpoch, "g", "b-0", "m2", "m1")
	a.StaticMemberReverted(coordOld.Broker, coordOld.Partition, coordOld.LeaderEpoch, "h", "c-0", "n2", "n1")
	w.RunUntil(9 * time.Second)
	a.StaticMemberReverted(coordNew.Broker, coordNew.Partition, coordNew.LeaderEpoch, "g", "b-1", "m4", "m3")
	want := []StaticRevert{
		{At: 5 * time.Second, Coordinator: coordNew, InstanceID: "b-0", Reverted: "m2", Restored: "m1"},
		{At: 9 * time.Second, Coordinator: coordNew, InstanceID: "b-1", Reverted: "m4", Restored: "m3"},
	}
	if got := a.StaticMemberReverts("g"); !slices.Equal(got, want) {
		t.Errorf("StaticMemberReverts(g) = %+v, want %+v", got, want)
	}
	if got := a.StaticMemberReverts("h"); len(got) != 1 || got[0].Coordinator != coordOld || got[0].Reverted != "n2" {
		t.Errorf("StaticMemberReverts(h) = %+v", got)
	}
}
