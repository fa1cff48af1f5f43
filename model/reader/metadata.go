package reader

import (
	"maps"
	"slices"

	"kafkasim/model/proto"
	"kafkasim/sim"
)

// Metadata: the brokers' addresses and the partitions' leaders, which the
// reader asks for at start, every metadata.max.age.ms, and whenever an
// answer says its picture is stale (Kafka's Metadata and its updates).

func (r *Reader) brokerIDs() []int32 { return slices.Sorted(maps.Keys(r.brokers)) }

func (r *Reader) refreshMetadata() {
	if r.metaCorr != 0 || len(r.cfg.Brokers) == 0 {
		return
	}
	r.corr++
	r.metaCorr = r.corr
	target := r.cfg.Brokers[r.sent()%len(r.cfg.Brokers)]
	if ids := r.brokerIDs(); len(ids) > 0 {
		target = r.brokers[ids[r.sent()%len(ids)]]
	}
	r.metaTo = target
	r.env.Send(target, &proto.MetadataRequest{CorrelationID: r.corr, Topics: r.cfg.Topics})
	r.env.After(r.cfg.RequestTimeout/10, rtimer{kind: timerMetadata, corr: r.corr})
}

func (r *Reader) handleMetadata(m *proto.MetadataResponse) {
	if m.CorrelationID != r.metaCorr {
		return
	}
	r.metaCorr = 0
	if len(m.Brokers) > 0 {
		r.brokers = map[int32]sim.NodeID{}
		for _, b := range m.Brokers {
			r.brokers[b.ID] = b.Node
		}
	}
	for _, t := range m.Topics {
		if t.Error != proto.None {
			continue
		}
		if r.group != nil {
			r.learnTopic(t)
		}
		for _, mp := range t.Partitions {
			k := partKey{t.Name, mp.Partition}
			p := r.subs.assignedState(k)
			if p == nil && r.group != nil {
				continue // a group member reads what it is assigned
			}
			if p == nil {
				p = r.subs.assign(k) // assign mode: every partition listed
			}
			p.updateLeader(mp.Leader, mp.LeaderEpoch, !r.cfg.NoEpochValidation)
		}
	}
	if r.group != nil {
		r.checkAssignmentSnapshot()
	}
	r.validate()
	r.resetPositions()
	// Kafka's consumer keeps asking while a partition it reads has no
	// leader: AbstractFetch.prepareFetchRequests calls
	// Metadata.requestUpdate for a position without one, and the network
	// client sends the update once retry.backoff.ms has passed, in the
	// middle of a long poll too (the application thread's poll loop, or
	// the AsyncKafkaConsumer's background thread). Asked only at the next
	// poll, a member waiting out a poll would miss a leader elected
	// meanwhile, and with it the KIP-320 validation against that leader's
	// log (fuzz --groups seed 27057: 3.5 s without a fetch across an
	// unclean election).
	if !(r.stopped && !r.final) && r.leaderless() {
		r.leaderlessAt = r.env.WorldTime()
		r.refreshMetadataSoon()
	}
}

// leaderless reports whether a partition the reader reads has no leader
// it knows the address of.
func (r *Reader) leaderless() bool {
	for _, p := range r.subs.parts {
		if _, known := r.brokers[p.leader]; p.leader < 0 || !known {
			return true
		}
	}
	return false
}

// refreshIfLeaderless asks for metadata, at most every retry.backoff.ms,
// while a partition the reader reads has no known leader: nothing else would
// tell it when one is elected.
func (r *Reader) refreshIfLeaderless() {
	now := r.env.WorldTime()
	if now < r.leaderlessAt+r.cfg.RetryBackoff {
		return
	}
	if r.leaderless() {
		r.leaderlessAt = now
		r.refreshMetadata()
	}
}

// refreshMetadataSoon asks for metadata after retry.backoff.ms, unless a
// request is on its way.
func (r *Reader) refreshMetadataSoon() {
	if r.metaCorr != 0 {
		return
	}
	r.corr++
	r.metaCorr = r.corr
	r.env.After(r.cfg.RetryBackoff, rtimer{kind: timerMetadata, corr: r.corr})
}
