package cluster

import (
	"testing"
	"time"

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
