package group

import (
	"slices"

	"kafkasim/model/proto"
	"kafkasim/sim"
)

// Offsets (OffsetMetadataManager): an OffsetCommit is checked against its
// group, written one record per partition, and answered once committed;
// an OffsetFetch reads the committed state.

// validateOffsetCommit is OffsetMetadataManager.validateOffsetCommit: the
// group's kind checks the member; a commit with generation -1 to a group
// that does not exist makes a simple group; with a generation, a group
// that does not exist is GROUP_ID_NOT_FOUND (OffsetCommit v9+). created
// reports a simple group made for the commit (taken back if it fails).
func (s *shard) validateOffsetCommit(m *proto.OffsetCommitRequest) (err proto.ErrorCode, created bool) {
	if s.consumer != nil && s.consumer.HasGroup(m.GroupID) {
		return s.consumer.ValidateOffsetCommit(m.GroupID, m.MemberID, m.GroupInstanceID, m.GenerationIDOrMemberEpoch), false
	}
	g, ok := s.groups[m.GroupID]
	if !ok {
		if m.GenerationIDOrMemberEpoch < 0 || s.c.cfg.Bugs.NoGenerationFencing {
			s.groups[m.GroupID] = newClassicGroup(m.GroupID)
			return proto.None, true
		}
		return proto.GroupIDNotFound, false
	}
	return g.validateOffsetCommit(m.MemberID, m.GroupInstanceID, m.GenerationIDOrMemberEpoch, false, s.c.cfg.Bugs), false
}

func (s *shard) commitOffsets(from sim.NodeID, m *proto.OffsetCommitRequest) {
	if m.GroupID == "" {
		s.c.send(from, m.Refused(proto.InvalidGroupID))
		return
	}
	err, created := s.validateOffsetCommit(m)
	if err != proto.None {
		s.c.send(from, m.Refused(err))
		return
	}
	records := make([]shardRecord, 0, len(m.Partitions))
	for _, p := range m.Partitions {
		k := offsetKey{Group: m.GroupID, Topic: p.Topic, Partition: p.Partition}
		v := offsetValue{Offset: p.CommittedOffset, LeaderEpoch: p.CommittedLeaderEpoch, Metadata: p.Metadata, CommitTimestamp: s.c.t.Now()}
		records = append(records, shardRecord{Key: encodeOffsetKey(k), Value: encodeOffsetValue(v)})
	}
	n := len(s.pending)
	var written *pendingWrite // set once the write is appended, before any answer
	s.write(records, true, func(err proto.ErrorCode) {
		if err == proto.None && written != nil {
			s.auditOffsetCommit(m, written.lastOffset)
		}
		s.c.send(from, m.Refused(err))
	})
	if len(s.pending) > n {
		written = s.pending[len(s.pending)-1]
	}
	if created && len(s.pending) > n {
		s.pending[len(s.pending)-1].createdBy = append(s.pending[len(s.pending)-1].createdBy, m.GroupID)
	} else if created && len(s.pending) == n && len(records) > 0 {
		delete(s.groups, m.GroupID) // the append failed at once
	}
}

// fetchOffsets is GroupCoordinatorService.fetchOffsets: a read of the
// committed state (scheduleReadOperation at the last committed offset),
// or, with RequireStable, of the latest state answered once every pending
// write is committed (a write operation with no records).
func (s *shard) fetchOffsets(from sim.NodeID, m *proto.OffsetFetchRequest) {
	if s.consumer != nil && s.consumer.HasGroup(m.GroupID) && (m.MemberID != "" || m.MemberEpoch >= 0) {
		if err := s.consumer.ValidateOffsetFetch(m.GroupID, m.MemberID, m.MemberEpoch); err != proto.None {
			s.c.send(from, &proto.OffsetFetchResponse{CorrelationID: m.CorrelationID, Error: err})
			return
		}
	}
	if !m.RequireStable {
		s.c.send(from, s.offsetFetchResponse(m, s.committedOffset, s.committedKeys))
		return
	}
	latest := func(k offsetKey) (offsetValue, bool) { v, ok := s.offsets[k]; return v, ok }
	resp := s.offsetFetchResponse(m, latest, s.latestKeys)
	for i := range resp.Partitions {
		// OffsetMetadataManager.fetchOffsets: a partition with offsets
		// pending in an open transaction is not stable yet.
		p := &resp.Partitions[i]
		if s.txn.hasPending(offsetKey{Group: m.GroupID, Topic: p.Topic, Partition: p.Partition}) {
			p.Error, p.CommittedOffset, p.CommittedLeaderEpoch, p.Metadata = proto.UnstableOffsetCommit, -1, -1, ""
		}
	}
	s.write(nil, false, func(err proto.ErrorCode) {
		if err == proto.CoordinatorNotAvailable {
			// GroupCoordinatorService.handleOffsetFetchException: what
			// handleOperationException makes COORDINATOR_NOT_AVAILABLE
			// (a timeout among them) is NOT_COORDINATOR to an OffsetFetch.
			err = proto.NotCoordinator
		}
		if err != proto.None {
			resp = &proto.OffsetFetchResponse{CorrelationID: m.CorrelationID, Error: err}
		}
		s.c.send(from, resp)
	})
}

// offsetFetchResponse answers m from a view: every partition asked for,
// -1 where nothing is committed; all the group's partitions when none
// were asked for.
func (s *shard) offsetFetchResponse(m *proto.OffsetFetchRequest, view func(offsetKey) (offsetValue, bool), keys func(string) []offsetKey) *proto.OffsetFetchResponse {
	resp := &proto.OffsetFetchResponse{CorrelationID: m.CorrelationID}
	want := m.Partitions
	if want == nil {
		for _, k := range keys(m.GroupID) {
			want = append(want, proto.TopicPartition{Topic: k.Topic, Partition: k.Partition})
		}
	}
	for _, tp := range want {
		p := proto.OffsetFetchPartitionResponse{TopicPartition: tp, CommittedOffset: -1, CommittedLeaderEpoch: -1}
		if v, ok := view(offsetKey{Group: m.GroupID, Topic: tp.Topic, Partition: tp.Partition}); ok {
			p.CommittedOffset, p.CommittedLeaderEpoch, p.Metadata = v.Offset, v.LeaderEpoch, v.Metadata
		}
		resp.Partitions = append(resp.Partitions, p)
	}
	return resp
}

// latestKeys are the group's offsets in the latest state, in order.
func (s *shard) latestKeys(group string) []offsetKey {
	var out []offsetKey
	for k := range s.offsets { // kafkasim:orderless: sorted below
		if k.Group == group {
			out = append(out, k)
		}
	}
	sortKeys(out)
	return out
}

// committedKeys are the group's offsets in the committed state, in order.
func (s *shard) committedKeys(group string) []offsetKey {
	seen := map[offsetKey]bool{}
	for k := range s.offsets { // kafkasim:orderless: building a set
		if k.Group == group {
			seen[k] = true
		}
	}
	for _, w := range s.pending {
		for k := range w.prevOffsets { // kafkasim:orderless: building a set
			if k.Group == group {
				seen[k] = true
			}
		}
	}
	var out []offsetKey
	for k := range seen { // kafkasim:orderless: sorted below
		if _, ok := s.committedOffset(k); ok {
			out = append(out, k)
		}
	}
	sortKeys(out)
	return out
}

func sortKeys(ks []offsetKey) {
	slices.SortFunc(ks, func(a, b offsetKey) int {
		switch {
		case a.Topic != b.Topic:
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		case a.Partition != b.Partition:
			return int(a.Partition - b.Partition)
		}
		return 0
	})
}
