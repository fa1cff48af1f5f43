package broker

import (
	"slices"
	"testing"
	"time"

	"kafkasim/model/metadata"
)

const lagMax = 30 * time.Second

// brokers registers ids 1..5 at broker epoch 10+id, active unless fenced or
// shutting down.
func brokers(fenced, shuttingDown []int32) map[int32]*metadata.Broker {
	out := map[int32]*metadata.Broker{}
	for id := int32(1); id <= 5; id++ {
		out[id] = &metadata.Broker{ID: id, Epoch: int64(10 + id), Fenced: slices.Contains(fenced, id),
			InControlledShutdown: slices.Contains(shuttingDown, id)}
	}
	return out
}

// follower is a follower whose log ends at leo, last caught up at
// lastCaughtUp, fetching with broker epoch brokerEpoch (-1: none known).
func follower(id int32, leo int64, lastCaughtUp time.Duration, brokerEpoch int64) *followerState {
	return &followerState{id: id, leo: leo, lastCaughtUp: lastCaughtUp, lastFetchLeaderLEO: -1, brokerEpoch: brokerEpoch}
}

// leader1 is broker 1 leading with log end 100, high watermark 80, epoch
// start 50, ISR [1 2 3], min ISR 2, at 100 s.
func leader1(followers ...*followerState) leaderState {
	return leaderState{leo: 100, hw: 80, epochStart: 50, isr: []int32{1, 2, 3}, minISR: 2, followers: followers,
		brokers: brokers(nil, nil), now: 100 * time.Second, lagMax: lagMax, strictMinISR: true}
}

func TestHighWatermark(t *testing.T) {
	now := 100 * time.Second
	cases := []struct {
		name  string
		state func() leaderState
		hw    int64
		moved bool
	}{
		{"the smallest ISR log end", func() leaderState {
			return leader1(follower(2, 95, now, 12), follower(3, 90, now, 13))
		}, 90, true},
		{"every ISR member at the leader's log end", func() leaderState {
			return leader1(follower(2, 100, now, 12), follower(3, 100, now, 13))
		}, 100, true},
		{"an ISR member exactly at the high watermark holds it", func() leaderState {
			return leader1(follower(2, 100, now, 12), follower(3, 80, now, 13))
		}, 80, false},
		{"an ISR member below the high watermark never moves it back", func() leaderState {
			return leader1(follower(2, 100, now, 12), follower(3, 60, now, 13))
		}, 80, false},
		{"an ISR member whose position is unknown (-1) holds it", func() leaderState {
			return leader1(follower(2, 100, now, 12), follower(3, -1, now, -1))
		}, 80, false},
		{"a follower out of the ISR and out of sync does not count", func() leaderState {
			return leader1(follower(2, 100, now, 12), follower(3, 100, now, 13), follower(4, 10, now-lagMax-1, 14))
		}, 100, true},
		{"a caught-up eligible follower out of the ISR is waited for", func() leaderState {
			return leader1(follower(2, 100, now, 12), follower(3, 100, now, 13), follower(4, 90, now-lagMax, 14))
		}, 90, true},
		{"a caught-up follower that is fenced is not waited for", func() leaderState {
			s := leader1(follower(2, 100, now, 12), follower(3, 100, now, 13), follower(4, 90, now, 14))
			s.brokers = brokers([]int32{4}, nil)
			return s
		}, 100, true},
		{"a caught-up follower fetching with a stale broker epoch is not waited for", func() leaderState {
			return leader1(follower(2, 100, now, 12), follower(3, 100, now, 13), follower(4, 90, now, 9))
		}, 100, true},
		{"a pending ISR expansion counts", func() leaderState {
			s := leader1(follower(2, 100, now, 12), follower(3, 100, now, 13), follower(4, 85, now-time.Hour, 14))
			s.pending = &pendingISR{isr: []int32{1, 2, 3, 4}}
			return s
		}, 85, true},
		{"a pending ISR shrink does not count until committed", func() leaderState {
			s := leader1(follower(2, 100, now, 12), follower(3, 85, now, 13))
			s.pending = &pendingISR{isr: []int32{1, 2}}
			return s
		}, 85, true},
		{"the oldest append still syncing bounds it", func() leaderState {
			s := leader1(follower(2, 100, now, 12), follower(3, 100, now, 13))
			s.syncing = []int64{92, 96}
			return s
		}, 92, true},
		{"an append syncing at the high watermark holds it", func() leaderState {
			s := leader1(follower(2, 100, now, 12), follower(3, 100, now, 13))
			s.syncing = []int64{80}
			return s
		}, 80, false},
		{"alone in the ISR: the leader's log end", func() leaderState {
			s := leader1(follower(2, 10, now-time.Hour, 12), follower(3, 10, now-time.Hour, 13))
			s.isr, s.minISR = []int32{1}, 1
			return s
		}, 100, true},
		{"an ISR below min ISR stops it (KIP-966)", func() leaderState {
			s := leader1(follower(2, 100, now, 12))
			s.isr = []int32{1}
			return s
		}, 80, false},
		{"an ISR exactly at min ISR moves it", func() leaderState {
			s := leader1(follower(2, 100, now, 12))
			s.isr = []int32{1, 2}
			return s
		}, 100, true},
		{"below min ISR without the strict rule (no-strict-min-isr)", func() leaderState {
			s := leader1(follower(2, 100, now, 12))
			s.isr, s.strictMinISR = []int32{1}, false
			return s
		}, 100, true},
	}
	for _, c := range cases {
		s := c.state()
		hw, moved := s.highWatermark()
		if hw != c.hw || moved != c.moved {
			t.Errorf("%s: got high watermark %d (moved %v), want %d (moved %v)", c.name, hw, moved, c.hw, c.moved)
		}
	}
}

func TestCaughtUp(t *testing.T) {
	now := 100 * time.Second
	cases := []struct {
		name string
		f    *followerState
		want bool
	}{
		{"at the leader's log end long ago", follower(2, 100, 0, 12), true},
		{"behind, caught up just now", follower(2, 40, now, 12), true},
		{"behind, caught up exactly replica.lag.time.max.ms ago", follower(2, 40, now-lagMax, 12), true},
		{"behind, caught up a nanosecond more than replica.lag.time.max.ms ago", follower(2, 40, now-lagMax-1, 12), false},
		{"past the leader's log end (diverged) and lagging", follower(2, 120, now-time.Hour, 12), false},
	}
	for _, c := range cases {
		s := leader1()
		if got := s.caughtUp(c.f); got != c.want {
			t.Errorf("%s: caughtUp = %v, want %v", c.name, got, c.want)
		}
	}
	// Early in a run (now below replica.lag.time.max.ms), a follower a new
	// leader has not seen catch up is not caught up, nor after a first
	// fetch short of the leader's end; an ISR member is, for lagMax.
	s := leader1()
	s.now = lagMax / 2
	fs := newFollowerStates([]int32{1, 2, 3}, []int32{1, 3}, 1, s.now)
	if s.caughtUp(fs[0]) {
		t.Error("a follower outside the ISR that never caught up counts as caught up early in the run")
	}
	if f := fs[0].fetched(10, 80, 12, s.now); s.caughtUp(&f) {
		t.Error("a first fetch short of the leader's end made an outside follower caught up")
	}
	if !s.caughtUp(fs[1]) {
		t.Error("an ISR member does not count as caught up when the leader takes over")
	}
}

func TestMayJoinISR(t *testing.T) {
	noFollowers := func() leaderState { return leader1() }
	now := 100 * time.Second
	cases := []struct {
		name  string
		state func() leaderState
		f     *followerState
		want  bool
	}{
		{"caught up to the high watermark and past the epoch start", noFollowers, follower(4, 90, now, 14), true},
		{"exactly at the high watermark", noFollowers, follower(4, 80, now, 14), true},
		{"one short of the high watermark", noFollowers, follower(4, 79, now, 14), false},
		{"already in the ISR", noFollowers, follower(3, 100, now, 13), false},
		{"another ISR change in flight", func() leaderState {
			s := leader1()
			s.pending = &pendingISR{isr: []int32{1, 2}}
			return s
		}, follower(4, 100, now, 14), false},
		{"fenced", func() leaderState {
			s := leader1()
			s.brokers = brokers([]int32{4}, nil)
			return s
		}, follower(4, 100, now, 14), false},
		{"in controlled shutdown", func() leaderState {
			s := leader1()
			s.brokers = brokers(nil, []int32{4})
			return s
		}, follower(4, 100, now, 14), false},
		{"not registered", noFollowers, follower(9, 100, now, 19), false},
		{"fetching with a previous broker epoch (KIP-903)", noFollowers, follower(4, 100, now, 13), false},
		{"fetching without a broker epoch (Kafka takes -1)", noFollowers, follower(4, 100, now, -1), true},
		{"not fetched from this leader yet: broker epoch unknown (Replica.resetReplicaState)", noFollowers, follower(4, 100, now, brokerEpochUnknown), false},
		{"at the high watermark but short of the epoch start (KAFKA-7128)", func() leaderState {
			s := leader1()
			s.hw, s.epochStart = 40, 50
			return s
		}, follower(4, 45, now, 14), false},
		{"exactly at the epoch start", func() leaderState {
			s := leader1()
			s.hw, s.epochStart = 40, 50
			return s
		}, follower(4, 50, now, 14), true},
		{"short of the epoch start, with isr-join-at-stale-hw", func() leaderState {
			s := leader1()
			s.hw, s.epochStart, s.joinBelowEpochStart = 40, 50, true
			return s
		}, follower(4, 45, now, 14), true},
	}
	for _, c := range cases {
		s := c.state()
		if got := s.mayJoinISR(c.f); got != c.want {
			t.Errorf("%s: mayJoinISR = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestShrunkISR(t *testing.T) {
	now := 100 * time.Second
	cases := []struct {
		name   string
		state  func() leaderState
		keep   []int32
		shrink bool
	}{
		{"every member caught up", func() leaderState {
			return leader1(follower(2, 90, now, 12), follower(3, 100, 0, 13))
		}, []int32{1, 2, 3}, false},
		{"a member lagging exactly replica.lag.time.max.ms stays", func() leaderState {
			return leader1(follower(2, 90, now-lagMax, 12), follower(3, 100, 0, 13))
		}, []int32{1, 2, 3}, false},
		{"a member lagging a nanosecond more leaves", func() leaderState {
			return leader1(follower(2, 90, now-lagMax-1, 12), follower(3, 100, 0, 13))
		}, []int32{1, 3}, true},
		{"a member the leader has no follower state for leaves", func() leaderState {
			return leader1(follower(2, 100, now, 12))
		}, []int32{1, 2}, true},
		{"the leader stays even when every follower lags", func() leaderState {
			return leader1(follower(2, 10, 0, 12), follower(3, 10, 0, 13))
		}, []int32{1}, true},
		{"nothing while another ISR change is in flight", func() leaderState {
			s := leader1(follower(2, 10, 0, 12), follower(3, 10, 0, 13))
			s.pending = &pendingISR{isr: []int32{1, 2, 3, 4}}
			return s
		}, nil, false},
	}
	for _, c := range cases {
		s := c.state()
		keep, shrink := s.shrunkISR(1)
		if !slices.Equal(keep, c.keep) || shrink != c.shrink {
			t.Errorf("%s: got %v (shrink %v), want %v (shrink %v)", c.name, keep, shrink, c.keep, c.shrink)
		}
	}
}

func TestFollowerFetched(t *testing.T) {
	// The follower last fetched at 10 s when the leader's log ended at 60,
	// and was caught up at 5 s.
	before := followerState{id: 2, leo: 50, lastCaughtUp: 5 * time.Second, lastFetchLeaderLEO: 60, lastFetchTime: 10 * time.Second, brokerEpoch: 12}
	now := 12 * time.Second
	cases := []struct {
		name                           string
		offset, leaderEnd              int64
		brokerEpoch                    int64
		lastCaughtUp                   time.Duration
		lastFetchLeaderLEO, epochAfter int64
	}{
		{"from the leader's log end: caught up now", 70, 70, 12, now, 70, 12},
		{"from the leader's end at the previous fetch: caught up as of then", 60, 70, 12, 10 * time.Second, 70, 12},
		{"short of the leader's end at the previous fetch: not caught up", 59, 70, 12, 5 * time.Second, 70, 12},
		{"a new broker epoch is taken", 59, 70, 13, 5 * time.Second, 70, 13},
		{"a fetch without a broker epoch is stored as -1 (Kafka's Some(-1))", 59, 70, -1, 5 * time.Second, 70, -1},
		{"a leader whose log end went back keeps the larger end", 55, 55, 12, now, 60, 12},
	}
	for _, c := range cases {
		got := before.fetched(c.offset, c.leaderEnd, c.brokerEpoch, now)
		want := followerState{id: 2, leo: c.offset, lastCaughtUp: c.lastCaughtUp, lastFetchLeaderLEO: c.lastFetchLeaderLEO, lastFetchTime: now, brokerEpoch: c.epochAfter}
		if got != want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, want)
		}
	}
	if before.leo != 50 {
		t.Fatal("fetched changed the state it was called on")
	}
}

func TestStartsLeaderEpoch(t *testing.T) {
	cases := []struct {
		name       string
		wasLeader  bool
		known, now int32
		starts     bool
		start      int64
	}{
		{"a follower becomes leader", false, 4, 5, true, 120},
		{"a follower of the same epoch becomes leader (it learned the epoch as follower)", false, 5, 5, true, 120},
		{"the leader is elected again in a newer epoch", true, 4, 6, true, 120},
		{"the leader learns its own epoch again", true, 5, 5, false, -1},
		{"the leader hears of an older epoch", true, 5, 4, false, -1},
	}
	for _, c := range cases {
		starts, start := startsLeaderEpoch(c.wasLeader, c.known, c.now, 120)
		if starts != c.starts || start != c.start {
			t.Errorf("%s: got (%v, %d), want (%v, %d)", c.name, starts, start, c.starts, c.start)
		}
	}
}

func TestNewFollowerStates(t *testing.T) {
	got := newFollowerStates([]int32{3, 1, 2}, []int32{1, 3}, 1, 7*time.Second)
	want := []followerState{
		{id: 3, leo: -1, lastCaughtUp: 7 * time.Second, lastFetchLeaderLEO: -1, lastFetchTime: never, brokerEpoch: brokerEpochUnknown},
		{id: 2, leo: -1, lastCaughtUp: never, lastFetchLeaderLEO: -1, lastFetchTime: never, brokerEpoch: brokerEpochUnknown},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d followers, want %d", len(got), len(want))
	}
	for i := range want {
		if *got[i] != want[i] {
			t.Errorf("follower %d: got %+v, want %+v", i, *got[i], want[i])
		}
	}
}

func TestMaximalISR(t *testing.T) {
	isr := []int32{1, 2}
	if got := maximalISR(isr, nil); !slices.Equal(got, isr) {
		t.Errorf("no change in flight: got %v", got)
	}
	if got := maximalISR(isr, &pendingISR{isr: []int32{1, 2, 3}}); !slices.Equal(got, []int32{1, 2, 3}) {
		t.Errorf("an expansion counts: got %v", got)
	}
	if got := maximalISR(isr, &pendingISR{isr: []int32{1}}); !slices.Equal(got, []int32{1, 2}) {
		t.Errorf("a shrink does not: got %v", got)
	}
	if !slices.Equal(isr, []int32{1, 2}) {
		t.Fatal("maximalISR changed the committed ISR")
	}
}

// A reassignment's change seen by the leader: an added replica gets a
// fresh follower state (position unknown, never caught up), a removed one
// is dropped, the others keep theirs.
func TestSyncFollowerStates(t *testing.T) {
	two := &followerState{id: 2, leo: 40}
	three := &followerState{id: 3, leo: 41}
	got := syncFollowerStates([]*followerState{two, three}, []int32{1, 2, 3}, 1)
	if len(got) != 2 || got[0] != two || got[1] != three {
		t.Fatalf("unchanged assignment: %v", got)
	}
	got = syncFollowerStates([]*followerState{two, three}, []int32{4, 1, 3}, 1)
	if len(got) != 2 || got[0].id != 4 || got[0].leo != -1 || got[0].lastCaughtUp != never || got[1] != three {
		t.Fatalf("got %+v %+v", got[0], got[1])
	}
}
