package membership

import (
	"slices"

	"kafkasim/model/proto"
)

// Description is the member as the client sees it.
type Description struct {
	GroupID     string
	MemberID    string
	InstanceID  string
	State       MemberState
	MemberEpoch int32
	// Owned is what the application owns (the actions it reported done).
	Owned []proto.TopicPartition
	// Assignment is the assignment last reconciled: what heartbeats report.
	Assignment []proto.TopicPartition
	// Target is the assignment last received from the coordinator.
	Target []proto.TopicPartition
	// Subscription is the subscribed topics, sorted.
	Subscription []string
	// PendingActions counts the actions issued and not reported done.
	PendingActions int
}

// Describe is a copy of the member's state.
func (m *Manager) Describe() Description {
	d := Description{GroupID: m.cfg.GroupID, MemberID: m.memberID, InstanceID: m.cfg.InstanceID,
		State: m.state, MemberEpoch: m.epoch, Owned: slices.Clone(m.owned),
		Assignment: slices.Clone(m.current.partitions), Target: slices.Clone(m.target.partitions),
		Subscription: slices.Clone(m.subscription)}
	for _, a := range m.queue {
		if !a.hidden {
			d.PendingActions++
		}
	}
	return d
}

// State is the member's state.
func (m *Manager) State() MemberState { return m.state }

// MemberID is the member id, the same for the manager's whole life.
func (m *Manager) MemberID() string { return m.memberID }

// MemberEpoch is the member epoch: the coordinator's, 0 while joining, -1
// or -2 once left.
func (m *Manager) MemberEpoch() int32 { return m.epoch }

// Owned is what the application owns.
func (m *Manager) Owned() []proto.TopicPartition { return slices.Clone(m.owned) }

// Err is the fatal error, proto.None while there is none.
func (m *Manager) Err() (proto.ErrorCode, string) { return m.fatalError, m.fatalMessage }

// InGroup tells whether the member is an active member of the group (not
// UNSUBSCRIBED, FENCED, FATAL or STALE).
func (m *Manager) InGroup() bool { return !m.state.notInGroup() }
