package reader

import (
	"slices"
	"testing"

	"kafkasim/model/proto"

	"pgregory.net/rapid"
)

type fakeAssignor struct {
	name string
	coop bool
}

func (a fakeAssignor) Name() string      { return a.name }
func (a fakeAssignor) Cooperative() bool { return a.coop }
func (fakeAssignor) Assign(map[string]int32, []proto.JoinGroupMember) map[string][]proto.TopicPartition {
	return nil
}

func TestCooperativeProtocolNeedsEveryAssignorCooperative(t *testing.T) {
	rng, sticky := fakeAssignor{"range", false}, fakeAssignor{"cooperative-sticky", true}
	for _, tc := range []struct {
		assignors []GroupAssignor
		want      bool
	}{
		{nil, false},
		{[]GroupAssignor{sticky}, true},
		{[]GroupAssignor{rng, sticky}, false}, // Kafka's default runs eager
		{[]GroupAssignor{sticky, rng}, false},
		{[]GroupAssignor{sticky, sticky}, true},
	} {
		if got := cooperativeProtocol(tc.assignors); got != tc.want {
			t.Errorf("cooperativeProtocol(%v) = %v, want %v", tc.assignors, got, tc.want)
		}
	}
}

func tp(p int32) proto.TopicPartition { return proto.TopicPartition{Topic: "t", Partition: p} }

func TestAssignmentChange(t *testing.T) {
	for _, tc := range []struct {
		owned, assigned, added, revoked []proto.TopicPartition
	}{
		{nil, []proto.TopicPartition{tp(1), tp(0)}, []proto.TopicPartition{tp(0), tp(1)}, nil},
		{[]proto.TopicPartition{tp(0), tp(1)}, []proto.TopicPartition{tp(1)}, nil, []proto.TopicPartition{tp(0)}},
		{[]proto.TopicPartition{tp(0), tp(1)}, []proto.TopicPartition{tp(1), tp(2)}, []proto.TopicPartition{tp(2)}, []proto.TopicPartition{tp(0)}},
		{[]proto.TopicPartition{tp(0)}, []proto.TopicPartition{tp(0)}, nil, nil},
	} {
		added, revoked := assignmentChange(tc.owned, tc.assigned)
		if !slices.Equal(added, tc.added) || !slices.Equal(revoked, tc.revoked) {
			t.Errorf("assignmentChange(%v, %v) = %v, %v; want %v, %v", tc.owned, tc.assigned, added, revoked, tc.added, tc.revoked)
		}
	}
}

// What is owned after a change — owned less revoked, plus added — is the
// assignment, whatever was owned.
func TestAssignmentChangeLeavesTheAssignmentOwned(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		gen := rapid.SliceOfDistinct(rapid.Int32Range(0, 9), func(p int32) int32 { return p })
		owned, assigned := gen.Draw(t, "owned"), gen.Draw(t, "assigned")
		var o, a []proto.TopicPartition
		for _, p := range owned {
			o = append(o, tp(p))
		}
		for _, p := range assigned {
			a = append(a, tp(p))
		}
		added, revoked := assignmentChange(o, a)
		after := slices.DeleteFunc(slices.Clone(o), func(x proto.TopicPartition) bool { return slices.Contains(revoked, x) })
		after = append(after, added...)
		sortTPs(after)
		want := slices.Clone(a)
		sortTPs(want)
		if !slices.Equal(after, want) {
			t.Fatalf("owned %v, assigned %v: added %v, revoked %v leave %v", o, a, added, revoked, after)
		}
	})
}

func TestClassifyCommitError(t *testing.T) {
	for _, tc := range []struct {
		err  proto.ErrorCode
		want commitVerdict
	}{
		{proto.NotCoordinator, commitVerdict{retriable: true, coordinatorMoved: true, maybeApplied: true}},
		{proto.CoordinatorNotAvailable, commitVerdict{retriable: true, coordinatorMoved: true, maybeApplied: true}},
		{proto.RequestTimedOut, commitVerdict{retriable: true, maybeApplied: true}},
		{proto.CoordinatorLoadInProgress, commitVerdict{retriable: true}},
		{proto.IllegalGeneration, commitVerdict{}},
		{proto.UnknownMemberID, commitVerdict{}},
		{proto.RebalanceInProgress, commitVerdict{}},
		{proto.FencedInstanceID, commitVerdict{}},
		// The coordinator refuses it before writing anything.
		{proto.GroupIDNotFound, commitVerdict{}},
		{proto.UnknownServerError, commitVerdict{maybeApplied: true}},
	} {
		if got := classifyCommitError(tc.err); got != tc.want {
			t.Errorf("classifyCommitError(%v) = %+v, want %+v", tc.err, got, tc.want)
		}
	}
}

func TestOffsetsAfterIsEachPartitionsLastRecordPlusOne(t *testing.T) {
	a, b := partKey{"t", 0}, partKey{"t", 1}
	got := offsetsAfter([]workItem{{key: a, offset: 3, epoch: 0}, {key: b, offset: 7, epoch: 1}, {key: a, offset: 4, epoch: 2}, {key: b, offset: 8, epoch: 1}})
	want := []commitOffset{{a, fetchPosition{5, 2}}, {b, fetchPosition{9, 1}}}
	if !slices.Equal(got, want) {
		t.Fatalf("offsetsAfter = %v, want %v", got, want)
	}
	if got := offsetsAfter(nil); got != nil {
		t.Fatalf("offsetsAfter(nil) = %v", got)
	}
}
