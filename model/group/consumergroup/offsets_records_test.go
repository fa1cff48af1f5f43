package consumergroup

import (
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"kafkasim/model/proto"
)

func TestValidateOffsets(t *testing.T) {
	g, env := New("g"), testEnv(topics{"t0": 2})
	empty := New("g")
	apply(t, g, g.Heartbeat(env, joinReq("a", "t0"))) // a at epoch 1
	cases := []struct {
		name          string
		g             *Group
		member        string
		epoch         int32
		noFencing     bool
		commit, fetch proto.ErrorCode
	}{
		{"member at its epoch", g, "a", 1, false, proto.None, proto.None},
		{"stale epoch", g, "a", 0, false, proto.StaleMemberEpoch, proto.StaleMemberEpoch},
		{"newer epoch", g, "a", 2, false, proto.StaleMemberEpoch, proto.StaleMemberEpoch},
		{"stale epoch, no generation fencing", g, "a", 0, true, proto.None, proto.None},
		{"unknown member", g, "zz", 1, false, proto.UnknownMemberID, proto.UnknownMemberID},
		{"unknown member, no generation fencing", g, "zz", 1, true, proto.UnknownMemberID, proto.UnknownMemberID},
		{"from outside, non-empty group", g, "", -1, false, proto.UnknownMemberID, proto.None},
		{"from outside, empty group", empty, "", -1, false, proto.None, proto.None},
		{"a member id to an empty group", empty, "a", 1, false, proto.UnknownMemberID, proto.UnknownMemberID},
	}
	for _, c := range cases {
		if got := c.g.ValidateOffsetCommit(c.member, c.epoch, c.noFencing); got != c.commit {
			t.Errorf("%s: commit %v, want %v", c.name, got, c.commit)
		}
		if got := c.g.ValidateOffsetFetch(c.member, c.epoch, c.noFencing); got != c.fetch {
			t.Errorf("%s: fetch %v, want %v", c.name, got, c.fetch)
		}
	}
}

func TestDescribeStates(t *testing.T) {
	g, env := New("g"), testEnv(topics{"t0": 2})
	if g.State() != StateDead {
		t.Fatalf("no group: %s", g.State())
	}
	apply(t, g, g.Heartbeat(env, joinReq("a", "t0")))
	apply(t, g, g.Heartbeat(env, joinReq("b", "t0")))
	d := g.Describe(env.Config.Assignors)
	if d.State != StateReconciling || d.GroupEpoch != 2 || d.AssignmentEpoch != 2 || d.AssignorName != "uniform" || len(d.Members) != 2 {
		t.Fatalf("describe %+v", d)
	}
	if b := d.Members[1]; b.MemberID != "b" || b.MemberState != UnreleasedPartitions || len(b.Assignment) != 0 || !slices.Equal(b.TargetAssignment, []proto.TopicPartition{tp("t0", 1)}) {
		t.Fatalf("b described %+v", b)
	}
	apply(t, g, g.Heartbeat(env, hbReq("a", 1, tp("t0", 0))))
	apply(t, g, g.Heartbeat(env, hbReq("b", 2)))
	if s := g.State(); s != StateStable {
		t.Fatalf("reconciled: %s", s)
	}
	apply(t, g, g.OnTimer(env, Timer{Kind: SessionTimeout, MemberID: "b"}))
	if s := g.State(); s != StateAssigning {
		t.Fatalf("member gone, target not recomputed: %s", s)
	}
	apply(t, g, g.OnTimer(env, Timer{Kind: SessionTimeout, MemberID: "a"}))
	if s := g.State(); s != StateEmpty {
		t.Fatalf("no member: %s", s)
	}
}

func drawRecord(t *rapid.T) Record {
	str := rapid.StringMatching(`[a-z0-9-]{0,12}`)
	tps := func(label string) []proto.TopicPartition {
		return normalize(rapid.SliceOfN(rapid.Custom(func(t *rapid.T) proto.TopicPartition {
			return tp(str.Draw(t, "topic"), rapid.Int32Range(0, 1000).Draw(t, "partition"))
		}), 0, 5).Draw(t, label))
	}
	r := Record{Type: rapid.Int16Range(firstRecordType, lastRecordType).Draw(t, "type"), GroupID: str.Draw(t, "group")}
	if hasMemberKey(r.Type) {
		r.MemberID = str.Draw(t, "member")
	}
	if rapid.Bool().Draw(t, "tombstone") {
		r.Tombstone = true
		return r
	}
	switch r.Type {
	case TypeGroupMetadata:
		r.GroupEpoch, r.MetadataHash = rapid.Int32().Draw(t, "epoch"), rapid.Uint64().Draw(t, "hash")
	case TypeMemberMetadata:
		r.Member = &Member{MemberID: r.MemberID, InstanceID: str.Draw(t, "instance"), RackID: str.Draw(t, "rack"),
			RebalanceTimeout:     time.Duration(rapid.Int64Range(-1, 1<<40).Draw(t, "timeout")),
			SubscribedTopicNames: normalizeTopics(rapid.SliceOfN(str, 0, 4).Draw(t, "topics")),
			ServerAssignor:       str.Draw(t, "assignor")}
	case TypeTargetAssignmentMetadata:
		r.AssignmentEpoch = rapid.Int32().Draw(t, "assignment epoch")
	case TypeTargetAssignmentMember:
		r.Partitions = tps("target")
	case TypeCurrentMemberAssignment:
		r.Member = &Member{MemberID: r.MemberID, MemberEpoch: rapid.Int32().Draw(t, "epoch"), PreviousMemberEpoch: rapid.Int32().Draw(t, "prev"),
			State: memberStateFrom(int8(rapid.IntRange(0, 3).Draw(t, "state"))), Assigned: tps("assigned"), PendingRevocation: tps("pending")}
	}
	return r
}

func TestRecordsRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		r := drawRecord(t)
		k, v, tomb := r.Encode()
		if typ, group, ok := KeyType(k); !ok || typ != r.Type || group != r.GroupID || !IsConsumerGroupRecord(k) {
			t.Fatalf("key %q: %d %q %v", k, typ, group, ok)
		}
		got, err := Decode(k, v, tomb)
		if err != nil {
			t.Fatal(err)
		}
		if r.Type == TypePartitionMetadata && !r.Tombstone {
			return // nothing in its value is kept
		}
		if got.Type != r.Type || got.GroupID != r.GroupID || got.MemberID != r.MemberID || got.Tombstone != r.Tombstone ||
			got.GroupEpoch != r.GroupEpoch || got.MetadataHash != r.MetadataHash || got.AssignmentEpoch != r.AssignmentEpoch ||
			!slices.Equal(got.Partitions, r.Partitions) || (got.Member == nil) != (r.Member == nil) ||
			(r.Member != nil && (!got.Member.subscriptionEqual(r.Member) || !got.Member.assignmentEqual(r.Member))) {
			t.Fatalf("decoded %+v (member %+v), want %+v (member %+v)", got, got.Member, r, r.Member)
		}
		// Every truncation of a value is refused, not misread.
		for n := 0; n < len(v); n++ {
			if _, err := Decode(k, v[:n], false); err == nil && r.Type != TypePartitionMetadata {
				t.Fatalf("value truncated to %d bytes decoded", n)
			}
		}
	})
}

func TestKeyLayout(t *testing.T) {
	k, _, tomb := tombstone(TypeCurrentMemberAssignment, "g1", "m").Encode()
	if want := "\x00\x08\x00\x02g1\x00\x01m"; k != want || !tomb {
		t.Fatalf("key %q, want %q", k, want)
	}
	if IsConsumerGroupRecord("\x00\x01\x00\x01g") || IsConsumerGroupRecord("\x00") {
		t.Fatal("an offset commit key or a short key taken for a consumer group record")
	}
}

// Replay refuses what Kafka's replay refuses: a member's subscription
// deleted before its assignment.
func TestReplayOrder(t *testing.T) {
	g, env := New("g"), testEnv(topics{"t0": 1})
	apply(t, g, g.Heartbeat(env, joinReq("a", "t0")))
	if err := g.Clone().Replay(tombstone(TypeMemberMetadata, "g", "a")); err == nil {
		t.Fatal("subscription tombstone before the assignment tombstones replayed")
	}
	if err := g.Clone().Replay(tombstone(TypeGroupMetadata, "g", "")); err == nil {
		t.Fatal("group tombstone with members replayed")
	}
	if err := g.Replay(groupMetadataRecord("other", 3, 0)); err == nil {
		t.Fatal("another group's record replayed")
	}
	// A clone is a snapshot: changing g leaves it.
	snap := g.Clone()
	apply(t, g, g.Heartbeat(env, joinReq("b", "t0")))
	if snap.Equal(g) || snap.Member("b") != nil {
		t.Fatal("the clone changed with the group")
	}
}
