package reader

import (
	"time"

	"kafkasim/model/proto"
	"kafkasim/sim"
)

// Fenced is what a static member knew when its coordinator answered
// FENCED_INSTANCE_ID, which Kafka's consumer takes as fatal. A classic
// member: AbstractCoordinator's JoinGroup, SyncGroup and Heartbeat response
// handlers raise it; ConsumerCoordinator's OffsetCommitResponseHandler
// too, and poll throws it through invokeCompletedOffsetCommitCallbacks.
// A consumer-protocol member: ConsumerHeartbeatRequestManager.
// handleSpecificError ends it (handleFatalFailure). The coordinator
// answers so when it holds the member's group.instance.id under another
// member id (GroupMetadataManager.validateExistingMember,
// ClassicGroup.validateMember; throwIfInstanceIdIsFenced for a
// ConsumerGroupHeartbeat above epoch 0); the god view judges why from
// these facts.
type Fenced struct {
	// API is the request the answer came to.
	API string
	// At is when the answer came, in the run's virtual time (the god
	// view's loads and losses are in it; a clock fault must not move it);
	// Coordinator is the broker node that gave it.
	At          time.Duration
	Coordinator sim.NodeID
	// InstanceID is its group.instance.id.
	InstanceID string
	// Generation and MemberID are the member's when it was fenced: those
	// of its last JoinGroup answer, which the broker node JoinedFrom gave
	// at JoinedAt (-1: it holds no generation). A consumer-protocol
	// member's are the member epoch and member id its fenced heartbeat
	// sent, and JoinedAt (virtual time too) and JoinedFrom are those of the
	// last answer to its heartbeat at epoch 0.
	Generation int32
	MemberID   string
	JoinedAt   time.Duration
	JoinedFrom sim.NodeID
}

// failFenced ends a classic member on FENCED_INSTANCE_ID, keeping what it
// knew for ClassicFenced.
func (r *Reader) failFenced(api string) {
	g := r.group
	if g.fatal != "" {
		return
	}
	joinedAt := g.joinedAt
	if g.memberID == "" || g.generation == proto.NoGeneration {
		joinedAt = -1
	}
	g.fenced = &Fenced{API: api, At: r.env.WorldTime(), Coordinator: g.coordinator, InstanceID: g.cfg.GroupInstanceID, Generation: g.generation, MemberID: g.memberID,
		JoinedAt: joinedAt, JoinedFrom: g.joinedFrom}
	r.fail(api + ": FENCED_INSTANCE_ID")
}

// ClassicFenced reports what a classic member knew when FENCED_INSTANCE_ID
// ended it; ok false when it was not so ended.
func (r *Reader) ClassicFenced() (Fenced, bool) {
	if r.group == nil || r.group.fenced == nil {
		return Fenced{}, false
	}
	return *r.group.fenced, true
}

// consumerFenced keeps what a consumer-protocol member knew when the
// answer to call, FENCED_INSTANCE_ID, ended it (the manager's fatal
// error), for ConsumerFenced. Its times are the run's virtual time, as its
// joinedAt is.
func (r *Reader) consumerFenced(call *groupCall) {
	c := r.group.consumer
	if c.fenced != nil {
		return
	}
	if code, _ := c.m.Err(); code != proto.FencedInstanceID {
		return
	}
	c.fenced = &Fenced{API: "ConsumerGroupHeartbeat", At: r.env.WorldTime(), Coordinator: call.to, InstanceID: r.group.cfg.GroupInstanceID,
		Generation: call.hb.MemberEpoch, MemberID: call.hb.MemberID, JoinedAt: c.joinedAt, JoinedFrom: c.joinedFrom}
}

// ConsumerFenced reports what a consumer-protocol member knew when
// FENCED_INSTANCE_ID ended it; ok false when it was not so ended.
func (r *Reader) ConsumerFenced() (Fenced, bool) {
	if r.group == nil || r.group.consumer == nil || r.group.consumer.fenced == nil {
		return Fenced{}, false
	}
	return *r.group.consumer.fenced, true
}
