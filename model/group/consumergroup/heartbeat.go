package consumergroup

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"kafkasim/model/proto"
)

// Default broker settings (GroupCoordinatorConfig).
const (
	// DefaultSessionTimeout is group.consumer.session.timeout.ms.
	DefaultSessionTimeout = 45 * time.Second
	// DefaultHeartbeatInterval is group.consumer.heartbeat.interval.ms.
	DefaultHeartbeatInterval = 5 * time.Second
)

// Member epochs a heartbeat sends to leave, as the coordinator keeps them.
const (
	LeaveGroupMemberEpoch       = proto.LeaveGroupMemberEpoch
	LeaveGroupStaticMemberEpoch = proto.LeaveGroupStaticMemberEpoch
)

// Config is the coordinator's configuration of consumer groups.
type Config struct {
	SessionTimeout    time.Duration // group.consumer.session.timeout.ms
	HeartbeatInterval time.Duration // group.consumer.heartbeat.interval.ms
	// MaxSize is group.consumer.max.size; 0: unbounded (Kafka's default is
	// Integer.MAX_VALUE).
	MaxSize int
	// Assignors are group.consumer.assignors, the first the default.
	Assignors []Assignor
	// GrantBeforeRelease is the bug zoo's grant-before-release:
	// reconciliation grants a partition to its new owner before the
	// previous owner acknowledged its revocation.
	GrantBeforeRelease bool
}

// Env is what a decision needs from the world.
type Env struct {
	Config Config
	// Rand draws the ids of members that join without one.
	Rand *rand.Rand
	// Partitions is the broker's metadata image.
	Partitions PartitionCounts
}

// TimerKind names a member's timer.
type TimerKind int8

const (
	// SessionTimeout fences a member that stopped heartbeating
	// (scheduleConsumerGroupSessionTimeout; key: group, member).
	SessionTimeout TimerKind = iota
	// RebalanceTimeout fences a member that did not revoke in time
	// (scheduleConsumerGroupRebalanceTimeout; key: group, member).
	RebalanceTimeout
)

func (k TimerKind) String() string {
	if k == SessionTimeout {
		return "session-timeout"
	}
	return "rebalance-timeout"
}

// Timer asks the shell to schedule (replacing the one of the same kind and
// member) or cancel a member's timer. When it fires the shell calls
// Group.OnTimer with it.
type Timer struct {
	Kind     TimerKind
	MemberID string
	Cancel   bool
	After    time.Duration
	// MemberEpoch (RebalanceTimeout): the epoch the member must have left
	// by then.
	MemberEpoch int32
}

// Result is a decision: the records that make the change (replay them into
// the group at once, answer once they are committed, restore the group's
// clone if they fail), the timers to schedule or cancel now (Kafka does so
// in the handler; a timer that outlives a reverted change finds the state
// as it is when it fires), and the response (nil for a timer).
type Result struct {
	Response *proto.ConsumerGroupHeartbeatResponse
	Records  []Record
	Timers   []Timer
}

func errorResult(req *proto.ConsumerGroupHeartbeatRequest, code proto.ErrorCode, msg string) Result {
	// Kafka answers an error with the error alone (member id null, epoch 0).
	return Result{Response: &proto.ConsumerGroupHeartbeatResponse{CorrelationID: req.CorrelationID, Error: code, ErrorMessage: msg}}
}

// Heartbeat handles a ConsumerGroupHeartbeat (GroupMetadataManager.
// consumerGroupHeartbeat): a leave for epochs -1 and -2, otherwise a join
// (epoch 0) or a member's heartbeat. g is the group the request names: New
// when the coordinator has none (only a join creates it).
func (g *Group) Heartbeat(env *Env, req *proto.ConsumerGroupHeartbeatRequest) Result {
	if code, msg := validateRequest(env, req); code != proto.None {
		return errorResult(req, code, msg)
	}
	if req.MemberEpoch == LeaveGroupMemberEpoch || req.MemberEpoch == LeaveGroupStaticMemberEpoch {
		return g.leave(env, req)
	}
	return g.heartbeat(env, req)
}

// validateRequest is GroupCoordinatorService's
// throwIfConsumerGroupHeartbeatRequestIsInvalid. A member id is required
// for a heartbeat or a leave; a join may come without one (ConsumerGroup-
// Heartbeat v0: the coordinator makes one up).
func validateRequest(env *Env, req *proto.ConsumerGroupHeartbeatRequest) (proto.ErrorCode, string) {
	if (req.MemberEpoch > 0 || req.MemberEpoch == LeaveGroupMemberEpoch) && req.MemberID == "" {
		return proto.InvalidRequest, "MemberId can't be empty."
	}
	if req.GroupID == "" {
		return proto.InvalidRequest, "GroupId can't be empty."
	}
	switch {
	case req.MemberEpoch == 0:
		if req.RebalanceTimeout < 0 {
			return proto.InvalidRequest, "RebalanceTimeoutMs must be provided in first request."
		}
		if !req.OwnedSent || len(req.OwnedPartitions) != 0 {
			return proto.InvalidRequest, "TopicPartitions must be empty when (re-)joining."
		}
		if req.SubscribedTopicNames == nil {
			return proto.InvalidRequest, "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining."
		}
	case req.MemberEpoch == LeaveGroupStaticMemberEpoch:
		if req.InstanceID == "" {
			return proto.InvalidRequest, "InstanceId can't be null."
		}
	case req.MemberEpoch < LeaveGroupStaticMemberEpoch:
		return proto.InvalidRequest, "MemberEpoch is invalid."
	}
	if req.ServerAssignor != "" && !slices.ContainsFunc(env.Config.Assignors, func(a Assignor) bool { return a.Name() == req.ServerAssignor }) {
		return proto.UnsupportedAssignor, fmt.Sprintf("ServerAssignor %s is not supported.", req.ServerAssignor)
	}
	return proto.None, ""
}

// NewMemberID draws a member id as Kafka's Uuid.randomUuid().toString()
// prints one: 16 random bytes in unpadded URL-safe base64.
func NewMemberID(r *rand.Rand) string {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], r.Uint64())
	binary.BigEndian.PutUint64(b[8:], r.Uint64())
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// checkMemberEpoch is throwIfConsumerGroupMemberEpochIsInvalid: the
// coordinator accepts the member's epoch, or its previous epoch when what
// the member owns is within what it is assigned (the response that moved it
// on was lost).
func checkMemberEpoch(m *Member, req *proto.ConsumerGroupHeartbeatRequest) (proto.ErrorCode, string) {
	switch {
	case req.MemberEpoch > m.MemberEpoch:
		return proto.FencedMemberEpoch, fmt.Sprintf("The consumer group member has a greater member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", req.MemberEpoch, m.MemberEpoch)
	case req.MemberEpoch < m.MemberEpoch:
		if req.MemberEpoch != m.PreviousMemberEpoch || !isSubset(req.OwnedPartitions, req.OwnedSent, m.Assigned) {
			return proto.FencedMemberEpoch, fmt.Sprintf("The consumer group member has a smaller member epoch (%d) than the one known by the group coordinator (%d). The member must abandon all its partitions and rejoin.", req.MemberEpoch, m.MemberEpoch)
		}
	}
	return proto.None, ""
}

// heartbeat is the join or heartbeat of GroupMetadataManager.
// consumerGroupHeartbeat: (1) create or update the member and bump the
// group epoch if its subscription (or the subscribed topics' metadata)
// changed; (2) compute a new target assignment if the group epoch passed
// the assignment epoch; (3) reconcile the member towards its target.
func (g *Group) heartbeat(env *Env, req *proto.ConsumerGroupHeartbeatRequest) Result {
	if !g.exists && req.MemberEpoch != 0 {
		return errorResult(req, proto.GroupIDNotFound, fmt.Sprintf("Consumer group %s not found.", req.GroupID))
	}
	memberID := req.MemberID
	if max := env.Config.MaxSize; max > 0 && len(g.members) >= max && (memberID == "" || g.members[memberID] == nil) {
		return errorResult(req, proto.GroupMaxSizeReached, fmt.Sprintf("The consumer group has reached its maximum capacity of %d members.", max))
	}
	if memberID == "" {
		memberID = NewMemberID(env.Rand)
	}

	var records []Record
	var member *Member // the member as the request finds it
	replaced := ""     // a departed static member this one replaces
	if req.InstanceID == "" {
		// getOrMaybeSubscribeDynamicConsumerGroupMember.
		if m := g.members[memberID]; m != nil {
			if code, msg := checkMemberEpoch(m, req); code != proto.None {
				return errorResult(req, code, msg)
			}
			member = m.clone()
		} else if req.MemberEpoch == 0 {
			member = newMember(memberID)
		} else {
			return errorResult(req, proto.UnknownMemberID, fmt.Sprintf("Member %s is not a member of group %s.", memberID, g.id))
		}
	} else {
		// getOrMaybeSubscribeStaticConsumerGroupMember.
		existing := g.staticMember(req.InstanceID)
		switch {
		case req.MemberEpoch == 0 && existing == nil:
			if m := g.members[memberID]; m != nil {
				if code, msg := checkMemberEpoch(m, req); code != proto.None {
					return errorResult(req, code, msg)
				}
				member = m.clone()
			} else {
				member = newMember(memberID)
			}
		case req.MemberEpoch == 0:
			// The instance id comes back: only after its previous member
			// left with epoch -2 may a new one take its place.
			if existing.MemberEpoch != LeaveGroupStaticMemberEpoch {
				return errorResult(req, proto.UnreleasedInstanceID, fmt.Sprintf("Static member %s with instance id %s cannot join the group because the instance id is owned by %s member.", memberID, req.InstanceID, existing.MemberID))
			}
			// replaceMember: the departed member's subscription, target
			// and assignment move to the new member id, at epoch 0.
			member = existing.clone()
			member.MemberID = memberID
			member.MemberEpoch, member.PreviousMemberEpoch = 0, 0
			replaced = existing.MemberID
			records = append(records, removeMemberRecords(g.id, existing.MemberID)...)
			records = append(records,
				memberMetadataRecord(g.id, member),
				targetAssignmentRecord(g.id, memberID, g.target[existing.MemberID]),
				currentAssignmentRecord(g.id, member))
		default:
			if existing == nil {
				return errorResult(req, proto.UnknownMemberID, fmt.Sprintf("Instance id %s is unknown.", req.InstanceID))
			}
			if existing.MemberID != memberID {
				return errorResult(req, proto.FencedInstanceID, fmt.Sprintf("Static member %s with instance id %s was fenced by member %s.", memberID, req.InstanceID, existing.MemberID))
			}
			if code, msg := checkMemberEpoch(existing, req); code != proto.None {
				return errorResult(req, code, msg)
			}
			member = existing.clone()
		}
	}

	// 1. The member's subscription side, from the fields the request sent.
	updated := member.clone()
	if req.InstanceID != "" {
		updated.InstanceID = req.InstanceID
	}
	if req.RackID != "" {
		updated.RackID = req.RackID
	}
	if req.RebalanceTimeout >= 0 {
		updated.RebalanceTimeout = req.RebalanceTimeout
	}
	if req.ServerAssignor != "" {
		updated.ServerAssignor = req.ServerAssignor
	}
	if req.SubscribedTopicNames != nil {
		updated.SubscribedTopicNames = normalizeTopics(req.SubscribedTopicNames)
	}
	bumpGroupEpoch := g.groupEpoch == 0 // a new group moves off epoch 0
	if !updated.subscriptionEqual(member) {
		records = append(records, memberMetadataRecord(g.id, updated))
		if !slices.Equal(updated.SubscribedTopicNames, member.SubscribedTopicNames) {
			bumpGroupEpoch = true
		}
	}
	// Kafka 4.1 recomputes the metadata hash when the subscription changed
	// or the group's metadata refresh is due (a new metadata image touching
	// a subscribed topic makes it due); here it is recomputed at every
	// heartbeat, which the shell's current image makes the same.
	members := g.view(updated, replaced)
	hash := metadataHash(subscribedTopics(members), env.Partitions)
	if hash != g.metadataHash {
		bumpGroupEpoch = true
	}
	groupEpoch := g.groupEpoch
	if bumpGroupEpoch {
		groupEpoch++
		records = append(records, groupMetadataRecord(g.id, groupEpoch, hash))
	}

	// 2. The target assignment.
	targetEpoch, target := g.assignmentEpoch, g.targetOf(updated.MemberID, updated.InstanceID)
	if groupEpoch > g.assignmentEpoch {
		targets, trecs := g.updateTarget(env, groupEpoch, members, updated.MemberID, replaced)
		records = append(records, trecs...)
		targetEpoch, target = groupEpoch, targets[updated.MemberID]
	}

	// 3. Reconciliation (maybeReconcile).
	var timers []Timer
	next := updated
	if !updated.isReconciledTo(targetEpoch) {
		var fenced bool
		next, fenced = reconcile(updated, reconciliation{
			targetEpoch: targetEpoch, target: target, held: g.partitionEpochs(),
			owned: normalize(req.OwnedPartitions), ownedSent: req.OwnedSent,
			grantBeforeRelease: env.Config.GrantBeforeRelease,
		})
		if fenced {
			return errorResult(req, proto.FencedMemberEpoch, "The consumer group member is in a unknown state. The member must abandon all its partitions and rejoin.")
		}
		if !next.assignmentEqual(updated) {
			records = append(records, currentAssignmentRecord(g.id, next))
			if next.State == UnrevokedPartitions {
				timers = append(timers, Timer{Kind: RebalanceTimeout, MemberID: next.MemberID, After: next.RebalanceTimeout, MemberEpoch: next.MemberEpoch})
			} else {
				timers = append(timers, Timer{Kind: RebalanceTimeout, MemberID: next.MemberID, Cancel: true})
			}
		}
	}
	timers = append(timers, Timer{Kind: SessionTimeout, MemberID: memberID, After: env.Config.SessionTimeout})

	resp := &proto.ConsumerGroupHeartbeatResponse{CorrelationID: req.CorrelationID, MemberID: next.MemberID,
		MemberEpoch: next.MemberEpoch, HeartbeatInterval: env.Config.HeartbeatInterval}
	// The assignment goes to a member that joins or sent a full request
	// (after an error it sends everything), or when it changed.
	fullRequest := req.RebalanceTimeout >= 0 && req.SubscribedTopicNames != nil && req.OwnedSent
	if req.MemberEpoch == 0 || fullRequest || !slices.Equal(member.Assigned, next.Assigned) {
		resp.Assignment, resp.HasAssignment = slices.Clone(next.Assigned), true
	}
	return Result{Response: resp, Records: records, Timers: timers}
}

// leave is GroupMetadataManager.consumerGroupLeave: -1 removes the member;
// -2 (static members) keeps it, at epoch -2 with its partitions, until its
// session times out or a new member takes its instance id.
func (g *Group) leave(env *Env, req *proto.ConsumerGroupHeartbeatRequest) Result {
	if !g.exists {
		return errorResult(req, proto.GroupIDNotFound, fmt.Sprintf("Consumer group %s not found.", req.GroupID))
	}
	resp := &proto.ConsumerGroupHeartbeatResponse{CorrelationID: req.CorrelationID, MemberID: req.MemberID, MemberEpoch: req.MemberEpoch}
	var member *Member
	if req.InstanceID == "" {
		if member = g.members[req.MemberID]; member == nil {
			return errorResult(req, proto.UnknownMemberID, fmt.Sprintf("Member %s is not a member of group %s.", req.MemberID, g.id))
		}
	} else {
		if member = g.staticMember(req.InstanceID); member == nil {
			return errorResult(req, proto.UnknownMemberID, fmt.Sprintf("Instance id %s is unknown.", req.InstanceID))
		}
		if member.MemberID != req.MemberID {
			return errorResult(req, proto.FencedInstanceID, fmt.Sprintf("Static member %s with instance id %s was fenced by member %s.", req.MemberID, req.InstanceID, member.MemberID))
		}
		if req.MemberEpoch == LeaveGroupStaticMemberEpoch {
			// consumerGroupStaticMemberGroupLeave: only the epoch changes
			// (and nothing is pending revocation); the session timer runs on.
			left := member.clone()
			left.MemberEpoch = LeaveGroupStaticMemberEpoch
			left.PendingRevocation = nil
			resp.MemberID, resp.MemberEpoch = member.MemberID, LeaveGroupStaticMemberEpoch
			return Result{Response: resp, Records: []Record{currentAssignmentRecord(g.id, left)}}
		}
	}
	res := g.fence(env, member.MemberID)
	res.Response = resp
	return res
}

// fence is consumerGroupFenceMember: the member's tombstones, then the
// group epoch bumped (with the metadata hash of the subscriptions left),
// and its timers cancelled. The target assignment is recomputed at the
// next heartbeat of any member.
func (g *Group) fence(env *Env, memberID string) Result {
	records := removeMemberRecords(g.id, memberID)
	hash := metadataHash(subscribedTopics(g.view(nil, memberID)), env.Partitions)
	records = append(records, groupMetadataRecord(g.id, g.groupEpoch+1, hash))
	return Result{Records: records, Timers: []Timer{
		{Kind: SessionTimeout, MemberID: memberID, Cancel: true},
		{Kind: RebalanceTimeout, MemberID: memberID, Cancel: true},
	}}
}

// OnTimer handles a member's timer that fired: a session timeout fences
// the member if it is still there; a rebalance timeout fences it if it is
// still at the epoch it had to leave (scheduleConsumerGroupSessionTimeout,
// scheduleConsumerGroupRebalanceTimeout). A timer that finds nothing to do
// returns an empty Result.
func (g *Group) OnTimer(env *Env, t Timer) Result {
	m := g.members[t.MemberID]
	if t.Cancel || m == nil {
		return Result{}
	}
	if t.Kind == RebalanceTimeout && m.MemberEpoch != t.MemberEpoch {
		return Result{}
	}
	return g.fence(env, t.MemberID)
}
