package group

import (
	"testing"
	"time"

	"kafkasim/model/proto"
)

func member(id string, protocols ...string) *classicMember {
	m := &classicMember{id: id}
	for _, p := range protocols {
		m.protocols = append(m.protocols, proto.JoinGroupProtocol{Name: p})
	}
	return m
}

func TestSelectProtocolPicksTheMostVotedCommonProtocol(t *testing.T) {
	for _, c := range []struct {
		name    string
		members []*classicMember
		want    string
	}{
		{"one member, its first", []*classicMember{member("a", "range", "roundrobin")}, "range"},
		{"only the common one counts", []*classicMember{member("a", "sticky", "range"), member("b", "range")}, "range"},
		{"majority of first choices", []*classicMember{member("a", "range", "sticky"), member("b", "sticky", "range"), member("c", "sticky", "range")}, "sticky"},
		{"a vote goes to the best common", []*classicMember{member("a", "cooperative", "range", "sticky"), member("b", "sticky", "range"), member("c", "range", "sticky")}, "range"},
		{"tie broken by name", []*classicMember{member("a", "sticky", "range"), member("b", "range", "sticky")}, "range"},
		{"nothing common", []*classicMember{member("a", "sticky"), member("b", "range")}, ""},
		{"no members", nil, ""},
	} {
		if got := selectProtocol(c.members); got != c.want {
			t.Errorf("%s: selectProtocol = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestValidPreviousStatesAreClassicGroupStates(t *testing.T) {
	all := []groupState{stateEmpty, statePreparingRebalance, stateCompletingRebalance, stateStable, stateDead}
	allowed := map[[2]groupState]bool{
		{stateEmpty, statePreparingRebalance}: true, {stateStable, statePreparingRebalance}: true, {stateCompletingRebalance, statePreparingRebalance}: true,
		{statePreparingRebalance, stateCompletingRebalance}: true, {stateCompletingRebalance, stateStable}: true,
		{statePreparingRebalance, stateEmpty}: true,
		{stateEmpty, stateDead}:               true, {statePreparingRebalance, stateDead}: true, {stateCompletingRebalance, stateDead}: true,
		{stateStable, stateDead}: true, {stateDead, stateDead}: true,
	}
	for _, from := range all {
		for _, to := range all {
			g := newClassicGroup("g")
			g.state = from
			ok := func() (ok bool) {
				defer func() { ok = recover() == nil }()
				g.transitionTo(to)
				return
			}()
			if ok != allowed[[2]groupState{from, to}] {
				t.Errorf("%v -> %v: allowed=%v, want %v", from, to, ok, allowed[[2]groupState{from, to}])
			}
		}
	}
}

func TestValidateOffsetCommitIsClassicGroups(t *testing.T) {
	group := func(state groupState) *classicGroup {
		g := newClassicGroup("g")
		g.generation = 4
		if state != stateEmpty {
			g.add(&classicMember{id: "m1"})
			g.add(&classicMember{id: "s1", instanceID: "i1"})
		}
		g.state = state
		return g
	}
	for _, c := range []struct {
		name       string
		state      groupState
		member     string
		instance   string
		generation int32
		want       proto.ErrorCode
		withBug    proto.ErrorCode
		txn        proto.ErrorCode // a TxnOffsetCommit's, without the bug
	}{
		{"simple commit to an empty group", stateEmpty, "", "", -1, proto.None, proto.None, proto.None},
		{"simple commit to a live group", stateStable, "", "", -1, proto.UnknownMemberID, proto.None, proto.None},
		{"simple commit to a rebalancing group", stateCompletingRebalance, "", "", -1, proto.UnknownMemberID, proto.None, proto.None},
		{"member of the generation", stateStable, "m1", "", 4, proto.None, proto.None, proto.None},
		{"stale generation", stateStable, "m1", "", 3, proto.IllegalGeneration, proto.None, proto.IllegalGeneration},
		{"unknown member", stateStable, "zz", "", 4, proto.UnknownMemberID, proto.None, proto.UnknownMemberID},
		{"generation to an empty group", stateEmpty, "m1", "", 4, proto.UnknownMemberID, proto.None, proto.UnknownMemberID},
		{"static member", stateStable, "s1", "i1", 4, proto.None, proto.None, proto.None},
		{"fenced instance", stateStable, "old", "i1", 4, proto.FencedInstanceID, proto.None, proto.FencedInstanceID},
		{"unknown instance", stateStable, "s1", "i9", 4, proto.UnknownMemberID, proto.None, proto.UnknownMemberID},
		{"assignment not yet known", stateCompletingRebalance, "m1", "", 4, proto.RebalanceInProgress, proto.None, proto.None},
		{"while preparing", statePreparingRebalance, "m1", "", 4, proto.None, proto.None, proto.None},
		{"dead group", stateDead, "m1", "", 4, proto.CoordinatorNotAvailable, proto.CoordinatorNotAvailable, proto.CoordinatorNotAvailable},
	} {
		if got := group(c.state).validateOffsetCommit(c.member, c.instance, c.generation, false, Bugs{}); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
		if got := group(c.state).validateOffsetCommit(c.member, c.instance, c.generation, false, Bugs{NoGenerationFencing: true}); got != c.withBug {
			t.Errorf("%s with no-generation-fencing: %v, want %v", c.name, got, c.withBug)
		}
		if got := group(c.state).validateOffsetCommit(c.member, c.instance, c.generation, true, Bugs{}); got != c.txn {
			t.Errorf("%s, transactional: %v, want %v", c.name, got, c.txn)
		}
	}
}

func TestRecordsRoundTrip(t *testing.T) {
	k := offsetKey{Group: "g", Topic: "orders", Partition: 7}
	v := offsetValue{Offset: 42, LeaderEpoch: 3, Metadata: "m", CommitTimestamp: 1500 * time.Millisecond}
	d, err := decodeRecord([]byte(encodeOffsetKey(k)), []byte(encodeOffsetValue(v)))
	if err != nil || d.Type != recordOffsetCommit || d.Offset != k || d.OffsetVal != v || d.Tombstone {
		t.Fatalf("offset commit: %+v, %v", d, err)
	}
	if key := encodeOffsetKey(k); key[0] != 0 || key[1] != 1 {
		t.Errorf("an offset commit key starts with %x, want big-endian 1", key[:2])
	}
	gv := groupValue{ProtocolType: "consumer", Generation: 5, Protocol: "range", Leader: "a", Members: []memberValue{
		{MemberID: "a", GroupInstanceID: "i", ClientID: "c", RebalanceTimeout: time.Minute, SessionTimeout: 10 * time.Second,
			Subscription: proto.ConsumerSubscription{Topics: []string{"t"}, OwnedPartitions: []proto.TopicPartition{{Topic: "t", Partition: 1}}, Generation: 4, RackID: "r"},
			Assignment:   []proto.TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}}},
		{MemberID: "b", SessionTimeout: 10 * time.Second}}}
	d, err = decodeRecord([]byte(encodeGroupKey("grp")), []byte(encodeGroupValue(gv)))
	if err != nil || d.Type != recordGroupMetadata || d.Group != "grp" || len(d.GroupVal.Members) != 2 {
		t.Fatalf("group metadata: %+v, %v", d, err)
	}
	got := d.GroupVal.Members[0]
	want := gv.Members[0]
	if got.MemberID != want.MemberID || got.GroupInstanceID != want.GroupInstanceID || got.RebalanceTimeout != want.RebalanceTimeout ||
		!subscriptionEqual(got.Subscription, want.Subscription) || len(got.Assignment) != 2 || d.GroupVal.Leader != "a" || d.GroupVal.Generation != 5 {
		t.Errorf("member: %+v, want %+v", got, want)
	}
	if d, err := decodeRecord([]byte(encodeGroupKey("grp")), nil); err != nil || !d.Tombstone || d.Group != "grp" {
		t.Errorf("tombstone: %+v, %v", d, err)
	}
	if _, err := decodeRecord([]byte{0, 9, 0, 1, 'g'}, []byte{0, 0}); err == nil {
		t.Error("an unknown record type decoded")
	}
	consumerKey := []byte{0, 5, 0, 3, 'a', 'b', 'c'}
	if d, err := decodeRecord(consumerKey, []byte{0, 0}); err != nil || d.Type != 5 || d.Group != "abc" {
		t.Errorf("a consumer protocol record: %+v, %v", d, err)
	}
}
