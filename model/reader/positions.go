package reader

import (
	"fmt"
	"slices"

	"kafkasim/model/proto"
)

// Positions: resetting a position the reader does not have (ListOffsets,
// auto.offset.reset) and validating one after a leader change (KIP-320's
// OffsetsForLeaderEpoch), as Kafka's OffsetFetcher does; what an answer
// makes of a position is decided by the pure functions below, as in Kafka's
// SubscriptionState.

// hasDefaultOffsetResetPolicy reports whether auto.offset.reset lets the
// reader reset a position the leader says is out of range (Kafka's
// SubscriptionState.hasDefaultOffsetResetPolicy). With none, Kafka's poll
// raises OffsetOutOfRangeException to the application; the reader keeps its
// position and fetches from it again once fresh metadata came.
func hasDefaultOffsetResetPolicy(autoOffsetReset string) bool { return autoOffsetReset != "none" }

// offsetResetTimestamp is the ListOffsets timestamp a position without an
// offset is reset to: the latest offset with auto.offset.reset=latest, else
// the earliest. With none, Kafka raises NoOffsetForPartitionException to the
// application instead; the reader, with no application to raise it to,
// reads from the log start.
func offsetResetTimestamp(autoOffsetReset string) int64 {
	if autoOffsetReset == "latest" {
		return proto.ListLatest
	}
	return proto.ListEarliest
}

// validationOutcome is what the leader's OffsetsForLeaderEpoch answer makes
// of a position awaiting validation.
type validationOutcome uint8

const (
	// positionValid: the position's epoch ends at or past the position on
	// the leader; the reader fetches on from it.
	positionValid validationOutcome = iota
	// truncatedToDivergence: the leader's log ends the position's epoch
	// below the position, truncated under the reader, which seeks back to
	// the first offset known to diverge (Kafka does not skip ahead).
	truncatedToDivergence
	// truncatedReset: the leader cannot say where the position's epoch
	// ends; the position is dropped, to be reset per auto.offset.reset.
	truncatedReset
)

// completeValidation decides what a leader's answer, where the position's
// epoch ends on it, makes of the position, and returns the position to
// read from: pos itself, the divergence under the answer's epoch, or none
// (-1) to be reset (Kafka's SubscriptionState.maybeCompleteValidation with
// a reset policy). Both truncations are Kafka's LogTruncation, which with
// auto.offset.reset=none it raises to the application (LogTruncationException)
// instead; the reader, with no application to raise it to, recovers from
// them as with a policy (offsetResetTimestamp).
func completeValidation(pos fetchPosition, end proto.EpochEndOffset) (validationOutcome, fetchPosition) {
	switch {
	case end.EndOffset < 0 || end.Epoch < 0:
		return truncatedReset, fetchPosition{offset: -1, offsetEpoch: -1}
	case end.EndOffset < pos.offset:
		return truncatedToDivergence, fetchPosition{offset: end.EndOffset, offsetEpoch: end.Epoch}
	}
	return positionValid, pos
}

// resetPositions asks the leaders for the earliest or latest offset of
// partitions without a position.
func (r *Reader) resetPositions() {
	r.listOffsets(offsetResetTimestamp(r.cfg.AutoOffsetReset), false)
}

func (r *Reader) listOffsets(ts int64, forEnd bool) {
	byLeader := map[int32][]proto.ListOffsetsPartition{}
	var leaders []int32
	for _, p := range r.subs.parts {
		if p.leader < 0 {
			continue
		}
		if !forEnd && (p.offset >= 0 || p.resetting || p.initializing) {
			continue
		}
		if _, ok := byLeader[p.leader]; !ok {
			leaders = append(leaders, p.leader)
		}
		byLeader[p.leader] = append(byLeader[p.leader], proto.ListOffsetsPartition{
			TopicPartition: proto.TopicPartition{Topic: p.key.topic, Partition: p.key.partition}, Timestamp: ts, CurrentLeaderEpoch: p.leaderEpoch})
	}
	slices.Sort(leaders)
	for _, l := range leaders {
		node, ok := r.brokers[l]
		if !ok {
			// The metadata names a leader it gives no address for: ask
			// again later rather than wait for an answer that cannot come.
			r.refreshMetadataSoon()
			continue
		}
		if !forEnd {
			for _, lp := range byLeader[l] {
				r.subs.assignedState(partKey{lp.Topic, lp.Partition}).resetting = true
			}
		}
		r.corr++
		kind := requestReset
		if forEnd {
			kind = requestEnd
		}
		r.requests.Add(r.corr, request{kind: kind})
		r.env.Send(node, &proto.ListOffsetsRequest{CorrelationID: r.corr, Partitions: byLeader[l], ReadCommitted: r.cfg.Isolation == "read_committed"})
		r.env.After(r.cfg.RequestTimeout/10, rtimer{kind: timerRequest, corr: r.corr})
	}
}

// requestFailed handles a ListOffsets or OffsetsForLeaderEpoch that got no
// answer: resets are asked again; validations stay pending and are retried
// once fresh metadata arrives.
func (r *Reader) requestFailed(kind requestKind) {
	if kind == requestReset {
		for _, p := range r.subs.parts {
			p.resetting = false
		}
	}
	r.refreshMetadata()
	if kind == requestEnd && r.final {
		r.env.After(r.cfg.RetryBackoff, rtimer{kind: timerPoll})
	}
}

func (r *Reader) handleListOffsets(m *proto.ListOffsetsResponse) {
	req, ok := r.requests.Remove(m.CorrelationID)
	if !ok {
		return
	}
	kind := req.kind
	for _, lp := range m.Partitions {
		p := r.subs.assignedState(partKey{lp.Topic, lp.Partition})
		if p == nil {
			continue
		}
		if kind == requestReset {
			p.resetting = false
		}
		if lp.Error != proto.None {
			r.refreshMetadata()
			continue
		}
		if kind == requestEnd {
			p.end = lp.Offset
			continue
		}
		if p.offset < 0 {
			p.seek(fetchPosition{offset: lp.Offset, offsetEpoch: -1}, sourceReset)
			p.buf = nil
			r.Stats.Resets++
			if a := r.cfg.FetchAudit; a != nil && p.outOfRange {
				tp := proto.TopicPartition{Topic: lp.Topic, Partition: lp.Partition}
				switch {
				case lp.Offset > p.outOfRangeFrom:
					a.OutOfRangeReset(r.env.ID(), tp, p.outOfRangeFrom, lp.Offset)
				case lp.Offset < p.outOfRangeFrom:
					// Kafka's consumer seeks to whatever ListOffsets
					// answers (SubscriptionState.maybeSeekUnvalidated),
					// below the position too.
					a.OutOfRangeRewind(r.env.ID(), tp, lp.Offset, p.outOfRangeFrom)
				}
			}
			p.outOfRange = false
			if r.group != nil && r.group.cfg.Audit != nil {
				r.group.cfg.Audit.PositionReset(r.env.ID(), r.group.cfg.GroupID, proto.TopicPartition{Topic: lp.Topic, Partition: lp.Partition})
			}
			if r.final {
				// Final reads start at the log start: what lies below it
				// was deleted by retention, and the history says so.
				if r.finalStarts == nil {
					r.finalStarts = map[string]int64{}
				}
				r.finalStarts[partKey{lp.Topic, lp.Partition}.String()] = lp.Offset
			}
		}
	}
	if kind == requestEnd {
		r.checkFinal()
	}
	if r.group != nil {
		r.fetchMissing() // a member's poll may be waiting on this position
	}
}

// validate sends OffsetsForLeaderEpoch for positions awaiting validation.
func (r *Reader) validate() {
	byLeader := map[int32][]proto.OffsetsForLeaderEpochPartition{}
	var leaders []int32
	for _, p := range r.subs.parts {
		if !p.validating || p.leader < 0 || r.env.Now() < p.validateAfter {
			continue
		}
		if _, ok := byLeader[p.leader]; !ok {
			leaders = append(leaders, p.leader)
		}
		byLeader[p.leader] = append(byLeader[p.leader], proto.OffsetsForLeaderEpochPartition{
			TopicPartition: proto.TopicPartition{Topic: p.key.topic, Partition: p.key.partition}, CurrentLeaderEpoch: p.leaderEpoch, LeaderEpoch: p.offsetEpoch})
	}
	slices.Sort(leaders)
	for _, l := range leaders {
		node, ok := r.brokers[l]
		if !ok {
			continue
		}
		for _, vp := range byLeader[l] {
			r.subs.assignedState(partKey{vp.Topic, vp.Partition}).validateAfter = r.env.Now() + r.cfg.RequestTimeout/10
		}
		r.corr++
		r.requests.Add(r.corr, request{kind: requestValidate})
		r.env.Send(node, &proto.OffsetsForLeaderEpochRequest{CorrelationID: r.corr, Partitions: byLeader[l]})
		r.env.After(r.cfg.RequestTimeout/10, rtimer{kind: timerRequest, corr: r.corr})
	}
}

func (r *Reader) handleValidation(m *proto.OffsetsForLeaderEpochResponse) {
	if _, ok := r.requests.Remove(m.CorrelationID); !ok {
		return
	}
	for _, vp := range m.Partitions {
		p := r.subs.assignedState(partKey{vp.Topic, vp.Partition})
		if p == nil || !p.validating {
			continue
		}
		if vp.Error != proto.None {
			// Validated again once the metadata settles, and not before
			// retry.backoff.ms.
			p.validateAfter = r.env.Now() + r.cfg.RetryBackoff
			r.refreshMetadata()
			continue
		}
		p.validating = false
		r.Stats.Validations++
		outcome, pos := completeValidation(p.fetchPosition, proto.EpochEndOffset{Epoch: vp.LeaderEpoch, EndOffset: vp.EndOffset})
		switch outcome {
		case truncatedReset:
			p.seek(pos, sourceNone)
			r.Stats.Truncations++
		case truncatedToDivergence:
			r.env.Note("reader", fmt.Sprintf("%s truncated at %d below position %d: seeking back", partKey{vp.Topic, vp.Partition}, vp.EndOffset, p.offset))
			p.seek(pos, sourceTruncation)
			p.buf = nil
			r.Stats.Truncations++
			if r.group != nil && r.group.cfg.Audit != nil {
				r.group.cfg.Audit.PositionTruncated(r.env.ID(), r.group.cfg.GroupID, proto.TopicPartition{Topic: vp.Topic, Partition: vp.Partition})
			}
		}
	}
	r.resetPositions()
	if r.group != nil {
		r.fetchMissing() // a member's poll may be waiting on this position
	}
}
