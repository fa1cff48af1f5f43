package metadata

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func part(replicas, isr, elr []int32, leader int32) *Partition {
	return &Partition{TopicPartition: TopicPartition{"t", 0}, Replicas: replicas, ISR: isr, ELR: elr, Leader: leader, LeaderEpoch: 5, PartitionEpoch: 9}
}

func activeExcept(down ...int32) func(int32) bool {
	return func(r int32) bool { return !slices.Contains(down, r) }
}

// apply merges a change into a copy of p, as the image does.
func apply(p *Partition, rec *PartitionChange) *Partition {
	q := p.Clone()
	if rec == nil {
		return q
	}
	im := NewImage("", nil)
	im.Topics["t"] = &Topic{Name: "t", Partitions: []*Partition{q}}
	if err := im.apply(0, Record{PartitionChange: rec}); err != nil {
		panic(err)
	}
	return q
}

func TestFencingTheLeaderElectsFromTheISR(t *testing.T) {
	p := part([]int32{1, 2, 3}, []int32{1, 2, 3}, nil, 1)
	b := NewChangeBuilder(p, activeExcept(1), true, ElectionOnline, 2)
	b.TargetISR = []int32{2, 3}
	rec, res := b.Build()
	q := apply(p, rec)
	if q.Leader != 2 || !slices.Equal(q.ISR, []int32{2, 3}) || len(q.ELR) != 0 || res.Unclean {
		t.Fatalf("got %s", q)
	}
	if q.LeaderEpoch != 6 || q.PartitionEpoch != 10 {
		t.Fatalf("a leader change bumps both epochs: %s", q)
	}
}

func TestISRShrinkBumpsOnlyThePartitionEpoch(t *testing.T) {
	p := part([]int32{1, 2, 3}, []int32{1, 2, 3}, nil, 1)
	b := NewChangeBuilder(p, activeExcept(), true, ElectionOnline, 2)
	b.TargetISR = []int32{1, 2}
	rec, _ := b.Build()
	q := apply(p, rec)
	if q.Leader != 1 || q.LeaderEpoch != 5 || q.PartitionEpoch != 10 {
		t.Fatalf("got %s", q)
	}
}

func TestELRLifecycle(t *testing.T) {
	// min ISR 2. ISR [1 2]: fencing leader 1 drops the ISR below min ISR,
	// so 1 becomes eligible (it holds everything committed).
	p := part([]int32{1, 2, 3}, []int32{1, 2}, nil, 1)
	b := NewChangeBuilder(p, activeExcept(1, 3), true, ElectionOnline, 2)
	b.TargetISR = []int32{2}
	rec, _ := b.Build()
	p = apply(p, rec)
	if p.Leader != 2 || !slices.Equal(p.ISR, []int32{2}) || !slices.Equal(p.ELR, []int32{1}) {
		t.Fatalf("step 1: %s", p)
	}
	// Fencing 2 too empties the ISR: both are eligible, nobody leads, 2 is
	// remembered as the last leader.
	b = NewChangeBuilder(p, activeExcept(1, 2, 3), true, ElectionOnline, 2)
	b.TargetISR = []int32{}
	rec, _ = b.Build()
	p = apply(p, rec)
	if p.Leader != NoLeader || len(p.ISR) != 0 || !slices.Equal(p.ELR, []int32{1, 2}) || !slices.Equal(p.LastKnownELR, []int32{2}) {
		t.Fatalf("step 2: %s", p)
	}
	// 2 restarts uncleanly: it leaves the ELR.
	b = NewChangeBuilder(p, activeExcept(1, 2, 3), true, ElectionOnline, 2)
	b.UncleanShutdown = []int32{2}
	rec, _ = b.Build()
	p = apply(p, rec)
	if p.Leader != NoLeader || !slices.Equal(p.ELR, []int32{1}) {
		t.Fatalf("step 3: %s", p)
	}
	// 1 comes back: elected from the ELR, cleanly, into an ISR of itself.
	b = NewChangeBuilder(p, activeExcept(2, 3), true, ElectionOnline, 2)
	rec, res := b.Build()
	p = apply(p, rec)
	if p.Leader != 1 || !res.FromELR || res.Unclean || !slices.Equal(p.ISR, []int32{1}) || len(p.ELR) != 0 || len(p.LastKnownELR) != 0 {
		t.Fatalf("step 4: %s (%+v)", p, res)
	}
}

func TestWithoutELRTheLastISRMemberStays(t *testing.T) {
	p := part([]int32{1, 2, 3}, []int32{1}, nil, 1)
	b := NewChangeBuilder(p, activeExcept(1), false, ElectionOnline, 2)
	b.TargetISR = []int32{}
	rec, _ := b.Build()
	p = apply(p, rec)
	if p.Leader != NoLeader || !slices.Equal(p.ISR, []int32{1}) {
		t.Fatalf("the last ISR member stays in the ISR with no leader: %s", p)
	}
	// 2 and 3 are alive but out of sync: no clean election.
	rec, _ = NewChangeBuilder(p, activeExcept(1), false, ElectionOnline, 2).Build()
	if rec != nil {
		t.Fatalf("nobody in the ISR is alive: no change, got %+v", rec)
	}
	// 1 returns (even after losing its disk: without ELR nobody checks).
	rec, res := NewChangeBuilder(p, activeExcept(), false, ElectionOnline, 2).Build()
	p = apply(p, rec)
	if p.Leader != 1 || res.Unclean {
		t.Fatalf("the last replica standing is re-elected: %s", p)
	}
}

func TestUncleanElectionOnlyWhenAllowed(t *testing.T) {
	p := part([]int32{1, 2, 3}, []int32{1}, nil, NoLeader)
	if rec, _ := NewChangeBuilder(p, activeExcept(1), false, ElectionOnline, 1).Build(); rec != nil {
		t.Fatalf("unclean election is off: no leader, got %+v", rec)
	}
	rec, res := NewChangeBuilder(p, activeExcept(1), false, ElectionUnclean, 1).Build()
	q := apply(p, rec)
	if q.Leader != 2 || !res.Unclean || !slices.Equal(q.ISR, []int32{2}) || !q.Recovering {
		t.Fatalf("unclean election picks the first live replica, alone in the ISR, recovering: %s", q)
	}
}

func TestLastKnownLeaderIsElectedUncleanlyWhenISRAndELRAreEmpty(t *testing.T) {
	p := part([]int32{1, 2, 3}, []int32{}, nil, NoLeader)
	p.LastKnownELR = []int32{2}
	rec, res := NewChangeBuilder(p, activeExcept(1, 3), true, ElectionOnline, 2).Build()
	q := apply(p, rec)
	if q.Leader != 2 || !res.Unclean || !q.Recovering {
		t.Fatalf("Kafka's balanced recovery elects the last known leader, as an unclean election: %s", q)
	}
	if rec, _ := NewChangeBuilder(p, activeExcept(1, 2, 3), true, ElectionOnline, 2).Build(); rec != nil {
		t.Fatalf("a fenced last known leader is not elected (KAFKA-19522): %+v", rec)
	}
}

func TestNoChangeWritesNothing(t *testing.T) {
	p := part([]int32{1, 2, 3}, []int32{1, 2, 3}, nil, 1)
	if rec, _ := NewChangeBuilder(p, activeExcept(), true, ElectionOnline, 2).Build(); rec != nil {
		t.Fatalf("nothing changed, got %+v", rec)
	}
}

func TestPlacementSpreadsLeadersAndRacks(t *testing.T) {
	var brokers []*Broker
	for i := int32(1); i <= 6; i++ {
		brokers = append(brokers, &Broker{ID: i, Rack: string(rune('a' + (i-1)%3))})
	}
	got, err := Place(brokers, 6, 3, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	leaders := map[int32]int{}
	for _, replicas := range got {
		racks := map[string]bool{}
		for _, r := range replicas {
			racks[brokers[r-1].Rack] = true
		}
		if len(replicas) != 3 || len(racks) != 3 {
			t.Fatalf("replicas %v should span 3 racks", replicas)
		}
		leaders[replicas[0]]++
	}
	if len(leaders) < 3 {
		t.Fatalf("preferred leaders should be spread: %v", got)
	}
	brokers[0].Fenced = true
	got, _ = Place(brokers, 6, 3, rand.New(rand.NewPCG(1, 2)))
	for _, replicas := range got {
		if replicas[0] == 1 {
			t.Fatal("a fenced broker is never a preferred leader")
		}
	}
	if _, err := Place(brokers, 1, 7, rand.New(rand.NewPCG(1, 2))); err == nil {
		t.Fatal("replication factor above the broker count must fail")
	}
}

// The image knows how each leader epoch began from the change records alone
// (a leader from neither the ISR nor the ELR is unclean), and agrees with the
// election the builder made: a clean election, one from the ELR, an unclean
// one, the last known leader's, and a clean re-election of a leader whose
// partition is still RECOVERING.
func TestImageKnowsHowTheLeaderEpochBegan(t *testing.T) {
	recovering := part([]int32{1, 2, 3}, []int32{2}, nil, NoLeader)
	recovering.Recovering = true
	lastKnown := part([]int32{1, 2, 3}, nil, nil, NoLeader)
	lastKnown.LastKnownELR = []int32{3}
	cases := []struct {
		name     string
		p        *Partition
		down     []int32
		election Election
		leader   int32
		unclean  bool
	}{
		{"clean", part([]int32{1, 2, 3}, []int32{1, 2, 3}, nil, 1), []int32{1}, ElectionOnline, 2, false},
		{"from the ELR", part([]int32{1, 2, 3}, nil, []int32{3}, NoLeader), nil, ElectionOnline, 3, false},
		{"unclean", part([]int32{1, 2, 3}, []int32{1}, nil, NoLeader), []int32{1}, ElectionUnclean, 2, true},
		{"last known leader", lastKnown, []int32{1, 2}, ElectionOnline, 3, true},
		{"clean while recovering", recovering, nil, ElectionOnline, 2, false},
	}
	for _, c := range cases {
		b := NewChangeBuilder(c.p, activeExcept(c.down...), true, c.election, 2)
		if c.p.Leader != NoLeader {
			b.TargetISR = without(c.p.ISR, c.down)
		}
		rec, res := b.Build()
		q := apply(c.p, rec)
		if q.Leader != c.leader || res.Unclean != c.unclean || q.ElectedUncleanly != c.unclean {
			t.Errorf("%s: leader %d (want %d), builder unclean %v, image unclean %v (want %v): %s",
				c.name, q.Leader, c.leader, res.Unclean, q.ElectedUncleanly, c.unclean, q)
		}
	}
}

// A min.insync.replicas change while ELR is on writes a ClearElrRecord
// (ReplicationControlManager.replay(ClearElrRecord) forgets the ELR and
// the last known ELR). A partition that had no leader and an empty ISR
// then has nobody an ONLINE or PREFERRED election may pick, even with
// every broker back: only an UNCLEAN election elects it (fuzz seeds 365357
// and 368282). A partition with a leader loses nothing it needs.
func TestClearElrOfALeaderlessPartitionLeavesOnlyAnUncleanElection(t *testing.T) {
	leaderless := func(elr, lastKnown []int32) *Partition {
		p := part([]int32{3, 4}, []int32{}, elr, NoLeader)
		p.LastKnownELR = lastKnown
		return p
	}
	cases := []struct {
		name        string
		p           *Partition
		cleared     []int32 // ClearedWhileLeaderless after the ClearElrRecord
		onlyUnclean bool
	}{
		{"leaderless: the ELR and the last known leader go", leaderless([]int32{4}, []int32{4}), []int32{4}, true},
		{"leaderless: every ELR member goes", leaderless([]int32{3, 4}, []int32{4}), []int32{3, 4}, true},
		{"leaderless: a last known leader alone goes", leaderless(nil, []int32{3}), []int32{3}, true},
		{"led: the ELR goes, the leader stays", part([]int32{3, 4}, []int32{4}, []int32{3}, 4), nil, false},
	}
	for _, c := range cases {
		im := NewImage("", nil)
		q := c.p.Clone()
		im.Topics["t"] = &Topic{Name: "t", Partitions: []*Partition{q}}
		if err := im.apply(0, Record{ClearElr: &ClearElrRecord{Topic: "t"}}); err != nil {
			t.Fatal(err)
		}
		if len(q.ELR) != 0 || len(q.LastKnownELR) != 0 || !slices.Equal(q.ClearedWhileLeaderless, c.cleared) || q.OnlyUncleanlyElectable() != c.onlyUnclean {
			t.Errorf("%s: after ClearElr %s, cleared while leaderless %v (want %v), only uncleanly electable %v (want %v)",
				c.name, q, q.ClearedWhileLeaderless, c.cleared, q.OnlyUncleanlyElectable(), c.onlyUnclean)
			continue
		}
		if !c.onlyUnclean {
			continue
		}
		// Every broker is back: ONLINE (unfencing) and PREFERRED (leader
		// balancing) elect nobody.
		for _, e := range []Election{ElectionOnline, ElectionPreferred} {
			if rec, res := NewChangeBuilder(q, activeExcept(), true, e, 1).Build(); rec != nil || res.Leader != NoLeader {
				t.Errorf("%s: election %d with every broker back elected %d: %+v", c.name, e, res.Leader, rec)
			}
		}
		// An UNCLEAN one (unclean.leader.election.enable, or an operator's
		// ElectLeaders) elects the first replica, and the partition is
		// electable again.
		rec, res := NewChangeBuilder(q, activeExcept(), true, ElectionUnclean, 1).Build()
		r := apply(q, rec)
		if r.Leader != 3 || !res.Unclean || r.ClearedWhileLeaderless != nil || r.OnlyUncleanlyElectable() {
			t.Errorf("%s: an unclean election: %s (%+v), cleared while leaderless %v", c.name, r, res, r.ClearedWhileLeaderless)
		}
	}
}
