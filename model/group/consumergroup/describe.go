package consumergroup

import (
	"slices"

	"kafkasim/model/proto"
)

// GroupState is ConsumerGroup.ConsumerGroupState.
type GroupState string

// The consumer group states, as `describe groups` prints them.
const (
	StateEmpty       GroupState = "Empty"
	StateAssigning   GroupState = "Assigning"
	StateReconciling GroupState = "Reconciling"
	StateStable      GroupState = "Stable"
	StateDead        GroupState = "Dead"
)

// State is ConsumerGroup.maybeUpdateGroupState: Empty without members,
// Assigning while the target assignment lags the group epoch, Reconciling
// while a member is not at the target epoch with all its partitions (a
// static member that left with epoch -2 counts), Stable otherwise; Dead for
// a group that does not exist.
func (g *Group) State() GroupState {
	switch {
	case !g.exists:
		return StateDead
	case len(g.members) == 0:
		return StateEmpty
	case g.groupEpoch > g.assignmentEpoch:
		return StateAssigning
	}
	for _, id := range g.MemberIDs() {
		if !g.members[id].isReconciledTo(g.assignmentEpoch) {
			return StateReconciling
		}
	}
	return StateStable
}

// Description is the group as ConsumerGroupDescribe (and `describe groups`)
// shows it.
type Description struct {
	GroupID         string
	State           GroupState
	GroupEpoch      int32
	AssignmentEpoch int32
	AssignorName    string
	Members         []MemberDescription // by member id
}

// MemberDescription is one member in a Description.
type MemberDescription struct {
	MemberID             string
	InstanceID           string
	RackID               string
	MemberEpoch          int32
	MemberState          MemberState
	SubscribedTopicNames []string
	Assignment           []proto.TopicPartition // what it may own now
	PendingRevocation    []proto.TopicPartition
	TargetAssignment     []proto.TopicPartition
}

// Describe is ConsumerGroup.asDescribedGroup; assignors are the
// coordinator's, for the name of the one the group uses.
func (g *Group) Describe(assignors []Assignor) Description {
	d := Description{GroupID: g.id, State: g.State(), GroupEpoch: g.groupEpoch, AssignmentEpoch: g.assignmentEpoch}
	members := g.view(nil, "")
	if len(assignors) > 0 {
		d.AssignorName = preferredAssignor(members, assignors).Name()
	}
	for _, m := range members {
		d.Members = append(d.Members, MemberDescription{
			MemberID: m.MemberID, InstanceID: m.InstanceID, RackID: m.RackID,
			MemberEpoch: m.MemberEpoch, MemberState: m.State,
			SubscribedTopicNames: slices.Clone(m.SubscribedTopicNames),
			Assignment:           slices.Clone(m.Assigned),
			PendingRevocation:    slices.Clone(m.PendingRevocation),
			TargetAssignment:     slices.Clone(g.target[m.MemberID]),
		})
	}
	return d
}
