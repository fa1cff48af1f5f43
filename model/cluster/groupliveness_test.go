package cluster

import (
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"kafkasim/model/proto"
)

func TestHeartbeatsOutpaced(t *testing.T) {
	s := time.Second
	tests := []struct {
		name    string
		members []memberPace
		timeout time.Duration
		slow    []string
	}{
		{"none", nil, 0, nil},
		{"Kafka's defaults", []memberPace{{"b-0", 3 * s, 300 * s}, {"b-1", 3 * s, 300 * s}}, 300 * s, nil},
		{"every heartbeat slower than the poll interval", []memberPace{{"b-0", 1700 * time.Millisecond, s}, {"b-1", 1700 * time.Millisecond, s}},
			s, []string{"b-0", "b-1"}},
		{"equal is in time", []memberPace{{"b-0", s, s}}, s, nil},
		// The group's timeout is its largest member's: one member with a
		// long poll interval covers the others' heartbeats.
		{"largest rebalance timeout wins", []memberPace{{"b-0", 4 * s, s}, {"l-0", 3 * s, 300 * s}}, 300 * s, nil},
		{"only the slower ones", []memberPace{{"b-0", 4 * s, 2 * s}, {"l-0", s, 2 * s}}, 2 * s, []string{"b-0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			timeout, slow := heartbeatsOutpaced(tc.members)
			var names []string
			for _, m := range slow {
				names = append(names, m.name)
			}
			if timeout != tc.timeout || !slices.Equal(names, tc.slow) {
				t.Errorf("heartbeatsOutpaced = %v, %v; want %v, %v", timeout, names, tc.timeout, tc.slow)
			}
		})
	}
}

func TestHeartbeatsOutpacedProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 6).Draw(t, "n")
		var members []memberPace
		for i := range n {
			members = append(members, memberPace{name: string(rune('a' + i)),
				heartbeat: time.Duration(rapid.IntRange(1, 20).Draw(t, "hb")) * 500 * time.Millisecond,
				rebalance: time.Duration(rapid.IntRange(1, 20).Draw(t, "rt")) * 500 * time.Millisecond})
		}
		timeout, slow := heartbeatsOutpaced(members)
		for _, m := range members {
			if m.rebalance > timeout {
				t.Fatalf("timeout %v below member %s's rebalance timeout %v", timeout, m.name, m.rebalance)
			}
			if reported := slices.Contains(slow, m); reported != (m.heartbeat > timeout) {
				t.Fatalf("member %s (heartbeat %v, timeout %v) reported %v", m.name, m.heartbeat, timeout, reported)
			}
		}
		if n > 0 && !slices.ContainsFunc(members, func(m memberPace) bool { return m.rebalance == timeout }) {
			t.Fatalf("timeout %v is no member's", timeout)
		}
	})
}

func TestRefusedForGood(t *testing.T) {
	for _, tc := range []struct {
		code proto.ErrorCode
		want bool
	}{
		{proto.UnreleasedInstanceID, true},
		// A fenced instance id means another process took it over: not
		// a refusal this member's own history explains.
		{proto.FencedInstanceID, false},
		{proto.InvalidRequest, false},
		{proto.GroupMaxSizeReached, false},
		{proto.None, false},
	} {
		if got := refusedForGood(tc.code); got != tc.want {
			t.Errorf("refusedForGood(%v) = %v, want %v", tc.code, got, tc.want)
		}
	}
}

func TestDescribePace(t *testing.T) {
	got := describePace([]memberPace{{"b-0", 4 * time.Second, 0}, {"b-1", 1700 * time.Millisecond, 0}, {"b-2", 1700 * time.Millisecond, 0}})
	if want := "b-1 and b-2 heartbeat every 1.7s, b-0 every 4s"; got != want {
		t.Errorf("describePace = %q, want %q", got, want)
	}
	got = describePace([]memberPace{{"b-0", 4 * time.Second, 0}})
	if want := "b-0 heartbeats every 4s"; got != want {
		t.Errorf("describePace = %q, want %q", got, want)
	}
}
