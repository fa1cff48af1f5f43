package reader

import (
	"maps"
	"math"
	"slices"
	"time"

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
	r.noteEquivalence(m)
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
		r.leaderlessAt, r.leaderlessWait = r.env.WorldTime(), r.metadataBackoff()
		r.refreshMetadataAfter(r.leaderlessWait)
	}
}

// noteEquivalence counts the answers in a row that raised no leader epoch,
// as Kafka's Metadata.update and updateLatestMetadata do: a partition seen
// for the first time, or in a higher epoch, starts the count again.
func (r *Reader) noteEquivalence(m *proto.MetadataResponse) {
	r.equivalentMetadata++
	if r.seenEpochs == nil {
		r.seenEpochs = map[partKey]int32{}
	}
	for _, t := range m.Topics {
		if t.Error != proto.None {
			continue
		}
		for _, mp := range t.Partitions {
			k := partKey{t.Name, mp.Partition}
			if seen, ok := r.seenEpochs[k]; !ok || mp.LeaderEpoch > seen {
				r.seenEpochs[k] = mp.LeaderEpoch
				r.equivalentMetadata = 0
			}
		}
	}
}

// metadataBackoff is how long the reader waits after a metadata answer
// before it asks again for a leader it still lacks: Kafka's
// Metadata.timeToAllowUpdate, ExponentialBackoff(retry.backoff.ms, 2,
// retry.backoff.max.ms, 20% jitter) of equivalentResponseCount-1 (at least
// its first step), so that a partition left leaderless for long is asked
// about every retry.backoff.max.ms, not every retry.backoff.ms. Kafka
// draws the jitter anew each time the network client looks; one draw per
// wait is a simplification.
func (r *Reader) metadataBackoff() time.Duration {
	ceiling := r.cfg.RetryBackoffMax
	initial := min(r.cfg.RetryBackoff, ceiling)
	if ceiling <= initial {
		// retry.backoff.max.ms at most retry.backoff.ms: a constant wait
		return initial
	}
	expMax := math.Log2(float64(ceiling) / float64(max(initial, time.Millisecond)))
	term := float64(initial) * math.Pow(2, min(float64(max(r.equivalentMetadata-1, 0)), expMax))
	return min(time.Duration(term*(0.8+0.4*r.env.Rand().Float64())), ceiling)
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

// refreshIfLeaderless asks for metadata, at most as often as
// metadataBackoff allows, while a partition the reader reads has no known
// leader: nothing else would tell it when one is elected.
func (r *Reader) refreshIfLeaderless() {
	now := r.env.WorldTime()
	if now < r.leaderlessAt+r.leaderlessWait {
		return
	}
	if r.leaderless() {
		r.leaderlessAt = now
		r.refreshMetadata()
	}
}

// refreshMetadataSoon asks for metadata after retry.backoff.ms, unless a
// request is on its way.
func (r *Reader) refreshMetadataSoon() { r.refreshMetadataAfter(r.cfg.RetryBackoff) }

func (r *Reader) refreshMetadataAfter(wait time.Duration) {
	if r.metaCorr != 0 {
		return
	}
	r.corr++
	r.metaCorr = r.corr
	r.env.After(wait, rtimer{kind: timerMetadata, corr: r.corr})
}
