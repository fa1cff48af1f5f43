package reports

import (
	"fmt"
	"slices"
	"strings"
)

// GroupState is one consumer group as its coordinator held it when the run
// ended: what Kafka's Admin.describeConsumerGroups and
// listConsumerGroupOffsets return, which kafka-consumer-groups.sh
// --describe prints (docs/run-store.md, final-state.json).
//
// Numbers that do not apply to the group's protocol are -1: Generation and
// Leader belong to the classic protocol, GroupEpoch and AssignmentEpoch to
// the consumer protocol (KIP-848).
type GroupState struct {
	GroupID string `json:"group_id"`
	// Protocol is the group's group.protocol: "classic" or "consumer".
	Protocol string `json:"protocol"`
	// State is the coordinator's group state: classic Empty,
	// PreparingRebalance, CompletingRebalance, Stable or Dead
	// (ClassicGroupState); consumer Empty, Assigning, Reconciling, Stable or
	// Dead (ConsumerGroup.ConsumerGroupState).
	State string `json:"state"`
	// Coordinator is the broker id of the group's coordinator (the leader
	// of its __consumer_offsets partition), -1 when none.
	Coordinator int32 `json:"coordinator"`
	// Generation is a classic group's generation id (-1: consumer protocol).
	Generation int32 `json:"generation"`
	// Leader is a classic group's leader member id ("" for none, and for
	// the consumer protocol).
	Leader string `json:"leader,omitempty"`
	// GroupEpoch and AssignmentEpoch are a consumer group's group epoch and
	// target assignment epoch (-1: classic protocol).
	GroupEpoch      int32 `json:"group_epoch"`
	AssignmentEpoch int32 `json:"assignment_epoch"`
	// Assignor is the assignment strategy: a classic group's protocol name
	// (the assignor its members agreed on: "range", "cooperative-sticky"),
	// a consumer group's server-side assignor ("uniform", "range"); "" when
	// none was chosen yet. Kafka's ConsumerGroupDescription.partitionAssignor.
	Assignor string        `json:"assignor"`
	Members  []MemberState `json:"members"`
	// Offsets are the group's committed offsets (__consumer_offsets), one
	// per partition the group committed.
	Offsets []CommittedOffset `json:"offsets"`
}

// MemberState is one member of a group.
type MemberState struct {
	MemberID string `json:"member_id"`
	// GroupInstanceID is the member's group.instance.id (static
	// membership); "" for a dynamic member.
	GroupInstanceID string `json:"group_instance_id,omitempty"`
	ClientID        string `json:"client_id"`
	// Host is the member's node name. Kafka records the client's address
	// and describe prints it as "/10.0.0.7"; describe prints "/<host>".
	Host string `json:"host"`
	// MemberEpoch is a consumer-protocol member's epoch (-1: classic).
	MemberEpoch int32 `json:"member_epoch"`
	// Assignment is what the coordinator last gave the member (classic:
	// its part of the leader's SyncGroup assignment; consumer: its current
	// assignment, what it reconciled).
	Assignment []TopicPartition `json:"assignment"`
	// TargetAssignment is a consumer-protocol member's target assignment
	// (omitted for classic members).
	TargetAssignment []TopicPartition `json:"target_assignment,omitempty"`
}

// TopicPartition names a partition.
type TopicPartition struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// CommittedOffset is a group's committed offset of one partition.
type CommittedOffset struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// Offset is the next offset to consume, as committed.
	Offset int64 `json:"offset"`
	// LeaderEpoch is the leader epoch the commit carried (KIP-320), -1 when
	// none.
	LeaderEpoch int32 `json:"leader_epoch"`
}

// Group protocols (group.protocol) and their states, as Kafka names them.
var (
	groupProtocols = []string{"classic", "consumer"}
	classicStates  = []string{"Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead"}
	consumerStates = []string{"Empty", "Assigning", "Reconciling", "Stable", "Dead"}
)

// validateGroups checks what describe relies on in the groups section,
// naming the key of the first fault as JSON would reach it
// ("groups[1].state").
func validateGroups(gs []GroupState) error {
	seen := map[string]bool{}
	for i, g := range gs {
		key := fmt.Sprintf("groups[%d]", i)
		if g.GroupID == "" {
			return fmt.Errorf("%s.group_id: missing", key)
		}
		if seen[g.GroupID] {
			return fmt.Errorf("%s.group_id: %q appears twice", key, g.GroupID)
		}
		seen[g.GroupID] = true
		states := classicStates
		switch g.Protocol {
		case "classic":
		case "consumer":
			states = consumerStates
		default:
			return fmt.Errorf("%s.protocol: %q is not a group protocol (%s)", key, g.Protocol, strings.Join(groupProtocols, ", "))
		}
		if !slices.Contains(states, g.State) {
			return fmt.Errorf("%s.state: %q is not a state of a %s group (%s)", key, g.State, g.Protocol, strings.Join(states, ", "))
		}
		for j, m := range g.Members {
			if m.MemberID == "" {
				return fmt.Errorf("%s.members[%d].member_id: missing", key, j)
			}
			for k, tp := range append(append([]TopicPartition(nil), m.Assignment...), m.TargetAssignment...) {
				if tp.Topic == "" || tp.Partition < 0 {
					what := "assignment"
					if k >= len(m.Assignment) {
						what, k = "target_assignment", k-len(m.Assignment)
					}
					return fmt.Errorf("%s.members[%d].%s[%d]: not a partition (topic %q, partition %d)", key, j, what, k, tp.Topic, tp.Partition)
				}
			}
		}
		for j, o := range g.Offsets {
			if o.Topic == "" || o.Partition < 0 {
				return fmt.Errorf("%s.offsets[%d]: not a partition (topic %q, partition %d)", key, j, o.Topic, o.Partition)
			}
			if o.Offset < -1 {
				return fmt.Errorf("%s.offsets[%d].offset: %d is negative", key, j, o.Offset)
			}
		}
	}
	return nil
}

// GroupIDs are the groups of a final state, sorted.
func (fs FinalState) GroupIDs() []string {
	ids := make([]string, len(fs.Groups))
	for i, g := range fs.Groups {
		ids[i] = g.GroupID
	}
	slices.Sort(ids)
	return ids
}

// Group returns the group with this id.
func (fs FinalState) Group(id string) (GroupState, bool) {
	for _, g := range fs.Groups {
		if g.GroupID == id {
			return g, true
		}
	}
	return GroupState{}, false
}
