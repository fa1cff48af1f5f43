package consumergroup

import "kafkasim/model/proto"

// ValidateOffsetCommit is ConsumerGroup.validateOffsetCommit for an
// OffsetCommit (not transactional) to a consumer group: a commit with a
// negative epoch (from outside the group: the admin client, an assign-mode
// consumer) is accepted only while the group has no member; otherwise the
// member must be known (UNKNOWN_MEMBER_ID — so a commit without a member id
// to a non-empty group is refused so) and commit with its current epoch
// (STALE_MEMBER_EPOCH). noGenerationFencing is the bug hook that accepts a
// stale epoch. The group instance id plays no part, as in Kafka.
func (g *Group) ValidateOffsetCommit(memberID string, memberEpoch int32, noGenerationFencing bool) proto.ErrorCode {
	if memberEpoch < 0 && len(g.members) == 0 {
		return proto.None
	}
	m := g.members[memberID]
	if m == nil {
		return proto.UnknownMemberID
	}
	return validateMemberEpoch(memberEpoch, m.MemberEpoch, noGenerationFencing)
}

// ValidateOffsetFetch is ConsumerGroup.validateOffsetFetch: a fetch without
// a member id and epoch (the admin client, a client that does not send
// them) is accepted; otherwise the member must be known and fetch with its
// current epoch. Kafka reads the members as of the last committed offset;
// the shell passes the group as committed.
func (g *Group) ValidateOffsetFetch(memberID string, memberEpoch int32, noGenerationFencing bool) proto.ErrorCode {
	if memberID == "" && memberEpoch < 0 {
		return proto.None
	}
	m := g.members[memberID]
	if m == nil {
		return proto.UnknownMemberID
	}
	return validateMemberEpoch(memberEpoch, m.MemberEpoch, noGenerationFencing)
}

// validateMemberEpoch is ConsumerGroup.validateMemberEpoch for a member of
// the consumer protocol.
func validateMemberEpoch(received, expected int32, noGenerationFencing bool) proto.ErrorCode {
	if received != expected && !noGenerationFencing {
		return proto.StaleMemberEpoch
	}
	return proto.None
}
