package membership

import (
	"fmt"
	"slices"
)

// MemberState is Kafka's client-side MemberState: where the member stands
// in its relationship to the group.
type MemberState int8

const (
	// Unsubscribed: not in the group and not wanting to be (the start, and
	// after a leave).
	Unsubscribed MemberState = iota
	// Joining: the next heartbeat joins with epoch 0.
	Joining
	// Reconciling: an assignment from the coordinator differs from what the
	// member owns; revocation and assignment run.
	Reconciling
	// Acknowledging: a reconciliation finished; the next heartbeat reports
	// the partitions now owned.
	Acknowledging
	// Stable: the member owns its whole assignment and heartbeats at the
	// interval.
	Stable
	// Fenced: the coordinator fenced the member; it gives up its partitions
	// (onPartitionsLost) and rejoins.
	Fenced
	// PrepareLeaving: leaving; the application releases its partitions
	// (onPartitionsRevoked) before the leave heartbeat.
	PrepareLeaving
	// Leaving: the next heartbeat leaves (epoch -1, or -2 for a static
	// member).
	Leaving
	// Fatal: an unrecoverable error; the member sends nothing more.
	Fatal
	// Stale: the member left because its poll timer expired; it rejoins on
	// the next poll once it has dropped its partitions.
	Stale
)

var stateNames = [...]string{"UNSUBSCRIBED", "JOINING", "RECONCILING", "ACKNOWLEDGING", "STABLE",
	"FENCED", "PREPARE_LEAVING", "LEAVING", "FATAL", "STALE"}

func (s MemberState) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("MemberState(%d)", int8(s))
}

// previousValidStates is MemberState's static table of valid transitions:
// the states a state may be entered from (staying put is always allowed).
var previousValidStates = map[MemberState][]MemberState{
	Joining:        {Fenced, Unsubscribed, Stale},
	Stable:         {Joining, Acknowledging, Reconciling},
	Reconciling:    {Stable, Joining, Acknowledging, Reconciling},
	Acknowledging:  {Reconciling},
	Fatal:          {Joining, Stable, Reconciling, Acknowledging, PrepareLeaving, Leaving, Unsubscribed},
	Fenced:         {Joining, Stable, Reconciling, Acknowledging, PrepareLeaving, Leaving},
	Leaving:        {PrepareLeaving},
	Unsubscribed:   {PrepareLeaving, Leaving, Fenced},
	PrepareLeaving: {Joining, Stable, Reconciling, Acknowledging, Unsubscribed},
	Stale:          {Leaving},
}

// validTransition is AbstractMembershipManager.transitionTo's check.
func validTransition(from, to MemberState) bool {
	return from == to || slices.Contains(previousValidStates[to], from)
}

// canHandleNewAssignment is MemberState.canHandleNewAssignment: the states
// in which an assignment from the coordinator is taken in.
func (s MemberState) canHandleNewAssignment() bool {
	return s == Joining || s == Stable || s == Reconciling || s == Acknowledging
}

// notInGroup is AbstractMembershipManager.isNotInGroup.
func (s MemberState) notInGroup() bool {
	return s == Unsubscribed || s == Fenced || s == Fatal || s == Stale
}

// skipsHeartbeat is shouldSkipHeartbeat: states that send nothing.
func (s MemberState) skipsHeartbeat() bool {
	return s == Unsubscribed || s == Fatal || s == Stale || s == Fenced
}

// heartbeatsNow is shouldHeartbeatNow: states whose heartbeat does not
// wait for the interval.
func (s MemberState) heartbeatsNow() bool {
	return s == Acknowledging || s == Leaving || s == Joining
}

// leavingGroup is isLeavingGroup (for the default close operation).
func (s MemberState) leavingGroup() bool {
	return s == PrepareLeaving || s == Leaving
}
