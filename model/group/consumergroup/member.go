package consumergroup

import (
	"slices"
	"time"

	"kafkasim/model/proto"
)

// MemberState is where a member stands in its reconciliation, with Kafka's
// byte values (modern/MemberState).
type MemberState int8

const (
	// Stable: the member has its whole target assignment.
	Stable MemberState = 0
	// UnrevokedPartitions: the member must revoke partitions before it may
	// move to the target epoch.
	UnrevokedPartitions MemberState = 1
	// UnreleasedPartitions: the member is at the target epoch but waits on
	// partitions their previous owners have not released yet.
	UnreleasedPartitions MemberState = 2
	// UnknownState is a state byte this version does not know (a record
	// from a newer coordinator); such a member is fenced.
	UnknownState MemberState = 127
)

func (s MemberState) String() string {
	switch s {
	case Stable:
		return "STABLE"
	case UnrevokedPartitions:
		return "UNREVOKED_PARTITIONS"
	case UnreleasedPartitions:
		return "UNRELEASED_PARTITIONS"
	}
	return "UNKNOWN"
}

// memberStateFrom is MemberState.fromValue: an unknown byte is UNKNOWN.
func memberStateFrom(b int8) MemberState {
	switch s := MemberState(b); s {
	case Stable, UnrevokedPartitions, UnreleasedPartitions:
		return s
	}
	return UnknownState
}

// NoRebalanceTimeout is a member's rebalance timeout before it sent one
// (ConsumerGroupMember.Builder's default, -1).
const NoRebalanceTimeout time.Duration = -1

// Member is a ConsumerGroupMember: what its ConsumerGroupMemberMetadata
// record holds (the subscription side) and what its
// ConsumerGroupCurrentMemberAssignment record holds (the reconciliation
// side). The client id and host Kafka keeps are left out: nothing here
// reads them.
type Member struct {
	MemberID string
	// Subscription side.
	InstanceID           string // "": a dynamic member
	RackID               string
	RebalanceTimeout     time.Duration
	SubscribedTopicNames []string // sorted
	ServerAssignor       string   // "": none asked for
	// Reconciliation side.
	MemberEpoch         int32
	PreviousMemberEpoch int32
	State               MemberState
	// Assigned is what the member may own now; PendingRevocation what it
	// must give up before it may move on. Both sets count as held by the
	// member when another member waits for a partition.
	Assigned          []proto.TopicPartition
	PendingRevocation []proto.TopicPartition
}

// newMember is ConsumerGroupMember.Builder(memberId).build(): epoch 0,
// stable, nothing assigned.
func newMember(memberID string) *Member {
	return &Member{MemberID: memberID, RebalanceTimeout: NoRebalanceTimeout}
}

func (m *Member) clone() *Member {
	c := *m
	c.SubscribedTopicNames = slices.Clone(m.SubscribedTopicNames)
	c.Assigned = slices.Clone(m.Assigned)
	c.PendingRevocation = slices.Clone(m.PendingRevocation)
	return &c
}

// subscriptionEqual compares what ConsumerGroupMemberMetadata holds.
func (m *Member) subscriptionEqual(o *Member) bool {
	return m.MemberID == o.MemberID && m.InstanceID == o.InstanceID && m.RackID == o.RackID &&
		m.RebalanceTimeout == o.RebalanceTimeout && m.ServerAssignor == o.ServerAssignor &&
		slices.Equal(m.SubscribedTopicNames, o.SubscribedTopicNames)
}

// assignmentEqual compares what ConsumerGroupCurrentMemberAssignment holds.
func (m *Member) assignmentEqual(o *Member) bool {
	return m.MemberEpoch == o.MemberEpoch && m.PreviousMemberEpoch == o.PreviousMemberEpoch &&
		m.State == o.State && slices.Equal(m.Assigned, o.Assigned) &&
		slices.Equal(m.PendingRevocation, o.PendingRevocation)
}

// updateMemberEpoch is ConsumerGroupMember.Builder.updateMemberEpoch: the
// current epoch becomes the previous one, even when it does not change.
func (m *Member) updateMemberEpoch(epoch int32) {
	m.PreviousMemberEpoch = m.MemberEpoch
	m.MemberEpoch = epoch
}

// isReconciledTo is ModernGroupMember.isReconciledTo.
func (m *Member) isReconciledTo(targetAssignmentEpoch int32) bool {
	return m.State == Stable && m.MemberEpoch == targetAssignmentEpoch
}

// normalizeTopics sorts and deduplicates a subscription, nil when empty
// (Kafka keeps it as a set).
func normalizeTopics(topics []string) []string {
	if len(topics) == 0 {
		return nil
	}
	out := slices.Clone(topics)
	slices.Sort(out)
	return slices.Compact(out)
}
