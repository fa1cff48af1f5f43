package audit

import (
	"testing"

	"kafkasim/model/metadata"
	"kafkasim/model/raft"
	"kafkasim/sim"
)

type idle struct{}

func (idle) Start(sim.Env)                   {}
func (idle) Deliver(sim.NodeID, sim.Message) {}
func (idle) Fire(sim.Timer)                  {}

func newAudit(t *testing.T) (*Audit, *sim.World) {
	t.Helper()
	w := sim.NewWorld(sim.DefaultOptions(1))
	for _, n := range []string{"c1", "c2", "c3"} {
		w.AddNode(sim.NodeSpec{Name: n, New: func() sim.Node { return idle{} }})
	}
	w.Start()
	w.RunUntil(0)
	return New(w), w
}

// logWith builds a replica log holding entries of the given epochs.
func logWith(t *testing.T, w *sim.World, node sim.NodeID, epochs ...int32) *raft.Log {
	t.Helper()
	l, _ := raft.OpenLog(w.Disk(node), "log")
	for i, e := range epochs {
		if err := l.Append(raft.Entry{Offset: int64(i), Epoch: e, Data: []byte{byte(e)}}); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

func expect(t *testing.T, a *Audit, invariant string, want int) {
	t.Helper()
	if got := a.Count(invariant); got != want {
		t.Fatalf("%s fired %d times, want %d (violations %v)", invariant, got, want, a.Violations())
	}
}

func TestSingleLeaderPerEpoch(t *testing.T) {
	a, _ := newAudit(t)
	a.BecameLeader(0, 1)
	a.BecameLeader(0, 1) // the same leader again (a restart as leader) is fine
	a.BecameLeader(1, 2)
	expect(t, a, SingleLeaderPerEpoch, 0)
	a.BecameLeader(2, 2)
	expect(t, a, SingleLeaderPerEpoch, 1)
}

func TestEpochMonotonic(t *testing.T) {
	a, _ := newAudit(t)
	a.EpochPersisted(0, 1)
	a.EpochPersisted(0, 3)
	a.EpochPersisted(1, 1)
	expect(t, a, EpochMonotonic, 0)
	a.EpochPersisted(0, 2)
	expect(t, a, EpochMonotonic, 1)
}

func TestMetadataHWMonotonicPerIncarnation(t *testing.T) {
	a, w := newAudit(t)
	l := logWith(t, w, 0, 1, 1, 1)
	a.HighWatermark(0, 2, 2, l)
	a.HighWatermark(0, 2, 3, l)
	expect(t, a, MetadataHWMonotonic, 0)
	a.HighWatermark(0, 2, 1, l)
	expect(t, a, MetadataHWMonotonic, 1)
	w.Crash(0, true)
	w.Restart(0)
	a.HighWatermark(0, 2, 1, l) // a restarted replica learns its high watermark again
	expect(t, a, MetadataHWMonotonic, 1)
}

func TestReplicasAgreeBelowHW(t *testing.T) {
	a, w := newAudit(t)
	a.HighWatermark(0, 2, 2, logWith(t, w, 0, 1, 2))
	a.HighWatermark(1, 2, 2, logWith(t, w, 1, 1, 2))
	expect(t, a, ReplicasAgreeBelowHW, 0)
	a.HighWatermark(2, 2, 2, logWith(t, w, 2, 1, 3))
	expect(t, a, ReplicasAgreeBelowHW, 1)
}

func TestCommittedEntryKept(t *testing.T) {
	a, w := newAudit(t)
	l := logWith(t, w, 0, 1, 1, 2)
	a.HighWatermark(0, 2, 2, l) // entries 0 and 1 committed in epoch 2
	// Truncating an uncommitted entry, or a different entry at a committed
	// offset, is how followers repair their logs.
	a.Diverged(1, 2, 1, 2, []raft.Entry{l.Entry(2)})
	a.Diverged(1, 2, 1, 1, []raft.Entry{{Offset: 1, Epoch: 7}})
	// A replica still in epoch 1, following a deposed leader that never had
	// entry 1, drops it above its own high watermark: it fetches it again
	// from the leader of epoch 2.
	a.Diverged(1, 1, 1, 1, []raft.Entry{l.Entry(1), l.Entry(2)})
	expect(t, a, CommittedEntryKept, 0)
	// Below its own high watermark it knew the entry was committed.
	a.Diverged(1, 1, 2, 1, []raft.Entry{l.Entry(1), l.Entry(2)})
	expect(t, a, CommittedEntryKept, 1)
	// In the commit's epoch, its leader must hold the entry.
	a.Diverged(1, 2, 1, 1, []raft.Entry{l.Entry(1), l.Entry(2)})
	expect(t, a, CommittedEntryKept, 2)
}

func TestRaftFatal(t *testing.T) {
	a, _ := newAudit(t)
	expect(t, a, RaftFatal, 0)
	a.Fatal(0, "diverges below the high watermark")
	expect(t, a, RaftFatal, 1)
}

func imageWith(owner string, brokers map[int32]bool, p *metadata.Partition) *metadata.Image {
	im := metadata.NewImage(owner, nil)
	for id, fenced := range brokers {
		im.Brokers[id] = &metadata.Broker{ID: id, Fenced: fenced}
	}
	im.Topics[p.Topic] = &metadata.Topic{Name: p.Topic, Partitions: []*metadata.Partition{p}}
	return im
}

func partition(leader, leaderEpoch int32, isr, elr []int32) *metadata.Partition {
	return &metadata.Partition{TopicPartition: metadata.TopicPartition{Topic: "t", Partition: 0}, Replicas: []int32{1, 2, 3},
		ISR: isr, ELR: elr, Leader: leader, LeaderEpoch: leaderEpoch}
}

func TestSingleLeaderPerPartitionEpoch(t *testing.T) {
	a, _ := newAudit(t)
	p := partition(1, 4, []int32{1, 2}, nil)
	a.PartitionChanged(imageWith("c1", nil, p), p)
	a.PartitionChanged(imageWith("c2", nil, p), p) // another node agrees
	q := partition(2, 5, []int32{2}, nil)
	a.PartitionChanged(imageWith("c1", nil, q), q)
	expect(t, a, SingleLeaderPerPartitionEpoch, 0)
	r := partition(3, 4, []int32{3}, nil)
	a.PartitionChanged(imageWith("c3", nil, r), r)
	expect(t, a, SingleLeaderPerPartitionEpoch, 1)
}

func TestPartitionShape(t *testing.T) {
	a, _ := newAudit(t)
	good := partition(1, 1, []int32{1}, []int32{2})
	a.PartitionChanged(imageWith("c1", nil, good), good)
	leaderless := partition(metadata.NoLeader, 2, nil, []int32{1, 2})
	a.PartitionChanged(imageWith("c1", nil, leaderless), leaderless)
	expect(t, a, ISRELRDisjoint, 0)
	expect(t, a, LeaderInISR, 0)
	overlap := partition(1, 3, []int32{1, 2}, []int32{2})
	a.PartitionChanged(imageWith("c1", nil, overlap), overlap)
	expect(t, a, ISRELRDisjoint, 1)
	outside := partition(3, 4, []int32{1, 2}, nil)
	a.PartitionChanged(imageWith("c1", nil, outside), outside)
	expect(t, a, LeaderInISR, 1)
}

func TestFencedBrokerLeadsNothing(t *testing.T) {
	a, _ := newAudit(t)
	p := partition(1, 1, []int32{1, 2}, nil)
	a.BatchApplied(imageWith("c1", map[int32]bool{1: false, 2: true}, p), 7)
	expect(t, a, FencedBrokerLeadsNothing, 0)
	a.BatchApplied(imageWith("c1", map[int32]bool{1: true, 2: false}, p), 8)
	expect(t, a, FencedBrokerLeadsNothing, 1)
}

func TestHaltOnViolationStopsTheRun(t *testing.T) {
	a, w := newAudit(t)
	a.HaltOnViolation = true
	w.At(w.Now()+1, func() { a.Fatal(0, "boom") })
	w.At(w.Now()+2, func() { t.Fatal("the run should have halted before this") })
	if r := w.RunFor(10); r.Reason != sim.StopHalted || r.Detail != RaftFatal {
		t.Fatalf("want a halt naming the invariant, got %+v", r)
	}
}
