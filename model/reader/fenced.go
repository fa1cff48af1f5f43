package reader

import (
	"time"

	"kafkasim/model/proto"
	"kafkasim/sim"
)

// Fenced is what a classic static member knew when its coordinator
// answered FENCED_INSTANCE_ID, which Kafka's consumer takes as fatal
// (AbstractCoordinator's JoinGroup, SyncGroup and Heartbeat response
// handlers raise it; ConsumerCoordinator's OffsetCommitResponseHandler
// too, and poll throws it through invokeCompletedOffsetCommitCallbacks).
// The coordinator answers so when it holds the member's group.instance.id
// under another member id (GroupMetadataManager.validateExistingMember,
// ClassicGroup.validateMember); the god view judges why from these facts.
type Fenced struct {
	// API is the request the answer came to.
	API string
	// At is when the answer came; Coordinator is the broker node that gave
	// it.
	At          time.Duration
	Coordinator sim.NodeID
	// InstanceID is its group.instance.id.
	InstanceID string
	// Generation and MemberID are the member's when it was fenced: those
	// of its last JoinGroup answer, which the broker node JoinedFrom gave
	// at JoinedAt (-1: it holds no generation).
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
	g.fenced = &Fenced{API: api, At: r.env.Now(), Coordinator: g.coordinator, InstanceID: g.cfg.GroupInstanceID, Generation: g.generation, MemberID: g.memberID,
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
