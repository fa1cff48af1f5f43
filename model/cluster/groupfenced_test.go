package cluster

import (
	"testing"
	"time"

	"kafkasim/godview"
	"kafkasim/model/audit"
	"kafkasim/model/reader"
	"kafkasim/sim"
)

func TestRolledBackFence(t *testing.T) {
	const s = time.Second
	b1, b2 := sim.NodeID(4), sim.NodeID(5)
	// b-0 joined through broker node b1 at 30s as member m2 in generation
	// 5, and was fenced by node b2 at 60s.
	fenced := reader.Fenced{API: "OffsetCommit", At: 60 * s, Coordinator: b2, InstanceID: "b-0", Generation: 5, MemberID: "m2",
		JoinedAt: 30 * s, JoinedFrom: b1}
	sameBroker := fenced
	sameBroker.JoinedFrom = b2
	noGeneration := fenced
	noGeneration.JoinedAt = -1
	load := func(at time.Duration, static map[string]string) audit.GroupLoad {
		return audit.GroupLoad{At: at, Coordinator: audit.Coordinator{Broker: 2, Partition: 9, LeaderEpoch: 2}, Generation: 1, StaticMembers: static}
	}
	older := map[string]string{"b-0": "m1"}
	tests := []struct {
		name   string
		f      reader.Fenced
		load   audit.GroupLoad
		loaded bool
		want   bool
	}{
		{"loaded after the join, instance under an older member id", fenced, load(50*s, older), true, true},
		{"same broker reloaded after the join (a loss, a re-election)", sameBroker, load(50*s, older), true, true},
		// A deposed coordinator on another broker gave the member its id
		// after the fencing one loaded the group.
		{"loaded before a join another broker answered", fenced, load(20*s, older), true, true},
		// The fencing coordinator itself gave the member its id after it
		// loaded: its own state fenced the member, not a rollback.
		{"loaded before a join it answered itself", sameBroker, load(20*s, older), true, false},
		{"the load holds the member's own id", fenced, load(50*s, map[string]string{"b-0": "m2"}), true, false},
		{"the load holds no such instance", fenced, load(50*s, map[string]string{"b-1": "m9"}), true, false},
		{"the load came after the fence", fenced, load(61*s, older), true, false},
		{"never loaded", fenced, audit.GroupLoad{}, false, false},
		{"the member held no generation", noGeneration, load(50*s, older), true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := rolledBackFence(tc.f, tc.load, tc.loaded); got != tc.want {
				t.Errorf("rolledBackFence = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestConsumerRolledBackFence(t *testing.T) {
	const s = time.Second
	b1 := sim.NodeID(4)
	// b-0 joined as member m2 at 30s (broker node b1 answered once its
	// records were committed) and was fenced at its member epoch 7 at 60s.
	fenced := reader.Fenced{API: "ConsumerGroupHeartbeat", At: 60 * s, Coordinator: b1, InstanceID: "b-0", Generation: 7, MemberID: "m2",
		JoinedAt: 30 * s, JoinedFrom: b1}
	neverJoined := fenced
	neverJoined.JoinedAt = -1
	load := func(at time.Duration, static map[string]string) audit.GroupLoad {
		return audit.GroupLoad{At: at, Coordinator: audit.Coordinator{Broker: 1, Partition: 9, LeaderEpoch: 4}, Generation: 2, StaticMembers: static}
	}
	older := map[string]string{"b-0": "m1"}
	const partition = "__consumer_offsets-9"
	loss := func(p string, at time.Duration) godview.Fact {
		return godview.Fact{Kind: godview.Loss, Partition: p, From: 37, To: 366, Cause: "power-loss", At: int64(at)}
	}
	lost := []godview.Fact{loss(partition, 50*s)}
	tests := []struct {
		name   string
		f      reader.Fenced
		load   audit.GroupLoad
		loaded bool
		losses []godview.Fact
		want   bool
	}{
		{"records lost after the join, loaded without them", fenced, load(50*s, older), true, lost, true},
		{"lost after the join, loaded later still", fenced, load(55*s, older), true, lost, true},
		// Without a loss the coordinator's own state fenced the member: a
		// KIP-848 join is answered only once its records are committed.
		{"no loss", fenced, load(50*s, older), true, nil, false},
		{"a loss of another partition", fenced, load(50*s, older), true, []godview.Fact{loss("__consumer_offsets-8", 50*s)}, false},
		{"a loss before the join", fenced, load(50*s, older), true, []godview.Fact{loss(partition, 20*s)}, false},
		{"a loss after the load", fenced, load(50*s, older), true, []godview.Fact{loss(partition, 52*s)}, false},
		{"a fact that is no loss", fenced, load(50*s, older), true, []godview.Fact{{Kind: godview.PartitionsAdded, Partition: partition, At: int64(50 * s)}}, false},
		{"loaded before the join", fenced, load(20*s, older), true, []godview.Fact{loss(partition, 10*s)}, false},
		{"the load holds the member's own id", fenced, load(50*s, map[string]string{"b-0": "m2"}), true, lost, false},
		{"the load holds no such instance", fenced, load(50*s, map[string]string{"b-1": "m9"}), true, lost, false},
		{"the load came after the fence", fenced, load(61*s, older), true, []godview.Fact{loss(partition, 61*s)}, false},
		{"never loaded", fenced, audit.GroupLoad{}, false, lost, false},
		{"the member never joined", neverJoined, load(50*s, older), true, lost, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, got := consumerRolledBackFence(tc.f, tc.load, tc.loaded, tc.losses, partition)
			if got != tc.want {
				t.Errorf("consumerRolledBackFence = %v, want %v", got, tc.want)
			}
		})
	}
}
