package cluster

import (
	"testing"
	"time"

	"kafkasim/model/audit"
	"kafkasim/model/reader"
	"kafkasim/sim"
)

func TestRevertedFence(t *testing.T) {
	const s = time.Second
	b2 := sim.NodeID(5)
	// b-0 was given member id m2 in generation 2 by node b2 (broker 2) at
	// 51s, and fenced by it on SyncGroup at 52s.
	fenced := reader.Fenced{API: "SyncGroup", At: 52 * s, Coordinator: b2, InstanceID: "b-0", Generation: 2, MemberID: "m2",
		JoinedAt: 51 * s, JoinedFrom: b2}
	noGeneration := fenced
	noGeneration.JoinedAt = -1
	revert := func(at time.Duration, broker int32, instance, reverted, restored string) audit.StaticRevert {
		return audit.StaticRevert{At: at, Coordinator: audit.Coordinator{Broker: broker, Partition: 9}, InstanceID: instance,
			Reverted: reverted, Restored: restored}
	}
	tests := []struct {
		name string
		f    reader.Fenced
		r    audit.StaticRevert
		want bool
	}{
		{"its member id reverted between its join and the fence", fenced, revert(52*s, 2, "b-0", "m2", "m1"), true},
		{"reverted the instant it joined", fenced, revert(51*s, 2, "b-0", "m2", "m1"), true},
		{"reverted before it was given the id", fenced, revert(50*s, 2, "b-0", "m2", "m1"), false},
		{"reverted after the fence", fenced, revert(53*s, 2, "b-0", "m2", "m1"), false},
		{"another member id reverted", fenced, revert(52*s, 2, "b-0", "m3", "m1"), false},
		{"another instance reverted", fenced, revert(52*s, 2, "b-1", "m2", "m1"), false},
		{"another broker's coordinator reverted", fenced, revert(52*s, 1, "b-0", "m2", "m1"), false},
		{"reverted to its own id", fenced, revert(52*s, 2, "b-0", "m2", "m2"), false},
		{"the member held no generation", noGeneration, revert(52*s, 2, "b-0", "m2", "m1"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := revertedFence(tc.f, 2, tc.r); got != tc.want {
				t.Errorf("revertedFence = %v, want %v", got, tc.want)
			}
		})
	}
}
