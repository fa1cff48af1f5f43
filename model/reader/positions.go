package reader

import (
	"fmt"
	"slices"

	"kafkasim/model/proto"
)

// Positions: resetting a position the reader does not have (ListOffsets,
// auto.offset.reset) and validating one after a leader change (KIP-320's
// OffsetsForLeaderEpoch), as Kafka's OffsetFetcher does with the
// SubscriptionState's fetch states.

// resetPositions asks the leaders for the earliest or latest offset of
// partitions without a position.
func (r *Reader) resetPositions() {
	ts := proto.ListEarliest
	if r.cfg.AutoOffsetReset == "latest" {
		ts = proto.ListLatest
	}
	r.listOffsets(ts, false)
}

func (r *Reader) listOffsets(ts int64, forEnd bool) {
	byLeader := map[int32][]proto.ListOffsetsPartition{}
	var leaders []int32
	for _, p := range r.parts {
		if p.leader < 0 {
			continue
		}
		if !forEnd && (p.offset >= 0 || p.resetting) {
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
				r.pos[partKey{lp.Topic, lp.Partition}].resetting = true
			}
		}
		r.corr++
		kind := "reset"
		if forEnd {
			kind = "end"
		}
		r.requests.Add(r.corr, request{kind: kind})
		r.env.Send(node, &proto.ListOffsetsRequest{CorrelationID: r.corr, Partitions: byLeader[l], ReadCommitted: r.cfg.Isolation == "read_committed"})
		r.env.After(r.cfg.RequestTimeout/10, rtimer{kind: timerRequest, corr: r.corr})
	}
}

// requestFailed handles a ListOffsets or OffsetsForLeaderEpoch that got no
// answer: resets are asked again; validations stay pending and are retried
// once fresh metadata arrives.
func (r *Reader) requestFailed(kind string) {
	if kind == "reset" {
		for _, p := range r.parts {
			p.resetting = false
		}
	}
	r.refreshMetadata()
	if kind == "end" && r.final {
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
		p := r.pos[partKey{lp.Topic, lp.Partition}]
		if p == nil {
			continue
		}
		if kind == "reset" {
			p.resetting = false
		}
		if lp.Error != proto.None {
			r.refreshMetadata()
			continue
		}
		if kind == "end" {
			p.end = lp.Offset
			continue
		}
		if p.offset < 0 {
			p.offset, p.offsetEpoch = lp.Offset, -1
			p.buf = nil
			r.Stats.Resets++
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
	if kind == "end" {
		r.checkFinal()
	}
}

// validate sends OffsetsForLeaderEpoch for positions awaiting validation.
func (r *Reader) validate() {
	byLeader := map[int32][]proto.OffsetsForLeaderEpochPartition{}
	var leaders []int32
	for _, p := range r.parts {
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
			r.pos[partKey{vp.Topic, vp.Partition}].validateAfter = r.env.Now() + r.cfg.RequestTimeout/10
		}
		r.corr++
		r.requests.Add(r.corr, request{kind: "validate"})
		r.env.Send(node, &proto.OffsetsForLeaderEpochRequest{CorrelationID: r.corr, Partitions: byLeader[l]})
		r.env.After(r.cfg.RequestTimeout/10, rtimer{kind: timerRequest, corr: r.corr})
	}
}

func (r *Reader) handleValidation(m *proto.OffsetsForLeaderEpochResponse) {
	if _, ok := r.requests.Remove(m.CorrelationID); !ok {
		return
	}
	for _, vp := range m.Partitions {
		p := r.pos[partKey{vp.Topic, vp.Partition}]
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
		switch {
		case vp.EndOffset < 0 || vp.LeaderEpoch < 0:
			// The leader cannot say where our epoch ends: reset.
			p.offset, p.offsetEpoch = -1, -1
			r.Stats.Truncations++
		case vp.EndOffset < p.offset:
			// The log was truncated below our position: go back to the first
			// offset known to diverge (Kafka does not skip ahead).
			r.env.Note("reader", fmt.Sprintf("%s truncated at %d below position %d: seeking back", partKey{vp.Topic, vp.Partition}, vp.EndOffset, p.offset))
			p.offset, p.offsetEpoch = vp.EndOffset, vp.LeaderEpoch
			p.buf = nil
			r.Stats.Truncations++
		}
	}
	r.resetPositions()
}
