package reader

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"kafkasim/model/proto"
	"kafkasim/sim"
)

// The fetch path: one fetch in flight per leader for the partitions ready to
// be fetched, and the answers, which fill each partition's buffer (Kafka's
// AbstractFetch: prepareFetchRequests, handleFetchSuccess).

// fetchBox is a reader's fetch, its partitions when they are few, and its
// timer: one allocation.
type fetchBox struct {
	req   proto.FetchRequest
	parts [2]proto.FetchPartition
	timer rtimer
}

// fetchMissing sends a fetch to each leader without one in flight, for the
// partitions with a valid position and an empty buffer: the leaders in
// order, each fetch's partitions in the subscription's order. One pass
// over the partitions, grouped by leader after (a reader of thousands of
// partitions over dozens of leaders would otherwise look at every
// partition once per leader); whether a partition wants a fetch depends on
// its own leader's fetch alone, so grouping first changes nothing.
func (r *Reader) fetchMissing() {
	want := r.wantScratch[:0]
	for _, p := range r.subs.parts {
		if r.wantsFetch(p) {
			want = append(want, p)
		}
	}
	slices.SortStableFunc(want, func(a, b *partitionState) int { return cmp.Compare(a.leader, b.leader) })
	for i := 0; i < len(want); {
		l := want[i].leader
		j := i + 1
		for j < len(want) && want[j].leader == l {
			j++
		}
		group := want[i:j]
		i = j
		node, ok := r.brokers[l]
		if !ok {
			continue
		}
		box := &fetchBox{}
		parts := box.parts[:0] // the request keeps the list
		if len(group) > len(box.parts) {
			parts = make([]proto.FetchPartition, 0, len(group))
		}
		for _, p := range group {
			parts = append(parts, proto.FetchPartition{
				TopicPartition: proto.TopicPartition{Topic: p.key.topic, Partition: p.key.partition}, FetchOffset: p.offset,
				CurrentLeaderEpoch: p.leaderEpoch, LastFetchedEpoch: -1, MaxBytes: r.cfg.MaxPartitionFetchBytes})
		}
		r.corr++
		r.fetching.set(l, r.corr)
		box.req = proto.FetchRequest{CorrelationID: r.corr, ReplicaID: -1, BrokerEpoch: -1, MaxWait: r.cfg.FetchMaxWait, Partitions: parts,
			SessionEpoch: proto.FinalSessionEpoch} // no fetch session (see docs/model.md)
		if r.cfg.Isolation == "read_committed" {
			box.req.Isolation = proto.ReadCommitted
		}
		r.env.Send(node, &box.req)
		box.timer = rtimer{kind: timerRequest, corr: r.corr}
		r.env.After(r.fetchTimeout(len(parts)), &box.timer)
		r.requests.Add(r.corr, request{kind: requestFetch, parts: parts})
	}
	clear(want) // the scratch keeps no partition alive
	r.wantScratch = want[:0]
}

// fetchTimeout is how long the reader waits for a fetch's answer before it
// takes the fetch for lost: fetch.max.wait.ms plus a tenth of
// request.timeout.ms (Kafka's consumer waits the whole request.timeout.ms;
// the model gives up sooner to notice lost fetches). On a network with a
// bandwidth it allows besides for the largest answer the fetch may get
// (max.partition.fetch.bytes per partition) to cross the link, as long as
// the whole stays within request.timeout.ms, Kafka's own bound; without
// that a reader behind by a megabyte on a slow link would give up on every
// answer while it is still on the wire, and never read.
func (r *Reader) fetchTimeout(parts int) time.Duration {
	base := r.cfg.FetchMaxWait + r.cfg.RequestTimeout/10
	bw := r.cfg.LinkBandwidthBytesPerSecond
	if bw <= 0 {
		return base
	}
	transfer := sim.TransmitTime(int64(parts)*int64(r.cfg.MaxPartitionFetchBytes), bw)
	return max(base, min(base+transfer, r.cfg.RequestTimeout))
}

// wantsFetch reports whether p needs a fetch: a valid position, nothing
// buffered, its leader's fetch not in flight, and (in the final read) not
// yet at the end.
func (r *Reader) wantsFetch(p *partitionState) bool {
	if p.leader < 0 || p.offset < 0 || p.validating || p.resetting || len(p.buf) > 0 {
		return false
	}
	if r.fetching.busy(p.leader) {
		return false
	}
	return !r.final || !p.reachedEnd()
}

func (r *Reader) handleFetch(m *proto.FetchResponse) {
	req, ok := r.requests.Get(m.CorrelationID)
	if !ok || req.kind != requestFetch {
		return
	}
	r.requests.Remove(m.CorrelationID)
	r.fetchDone(m.CorrelationID)
	from := req.parts
	refresh := false
	for _, fp := range m.Partitions {
		k := partKey{fp.Topic, fp.Partition}
		p := r.subs.assignedState(k)
		if p == nil {
			continue
		}
		asked, ok := askedFor(from, k)
		switch fp.Error {
		case proto.None:
		case proto.OffsetOutOfRange:
			// An answer to a fetch from an offset that is no longer the
			// position says nothing of the position: a fetch parked at a
			// paused or deposed leader, answered after the reader moved
			// on elsewhere. Kafka's FetchCollector.handleInitializeErrors
			// discards it (fetchOffset != position.offset) rather than
			// reset a position the leader never judged.
			if ok && asked.FetchOffset != p.offset {
				r.env.Note("reader", fmt.Sprintf("%s: discarding stale out-of-range answer to a fetch from %d, position %d", k, asked.FetchOffset, p.offset))
				refresh = true
				continue
			}
			if hasDefaultOffsetResetPolicy(r.cfg.AutoOffsetReset) {
				p.outOfRange, p.outOfRangeFrom = p.offset >= 0, p.offset
				p.seek(fetchPosition{offset: -1, offsetEpoch: -1}, sourceNone)
				p.buf = nil
			}
			refresh = true
			continue
		default:
			refresh = true
			continue
		}
		if p.offset < 0 || p.validating || p.resetting || len(p.buf) > 0 {
			continue // the position moved since the fetch left
		}
		// Kafka's consumer discards a response fetched from an offset
		// that is no longer its position (a seek since, say KIP-320's).
		if ok && asked.FetchOffset != p.offset {
			r.env.Note("reader", fmt.Sprintf("%s: discarding stale fetch from %d, position %d", k, asked.FetchOffset, p.offset))
			continue
		}
		if len(fp.Batches) > 0 && fp.Batches[len(fp.Batches)-1].LastOffset() >= p.offset {
			p.buf = fp.Batches
			if len(fp.AbortedTransactions) > 0 || len(p.aborted) > 0 || len(p.abortedPids) > 0 {
				p.aborted = slices.SortedFunc(slices.Values(fp.AbortedTransactions), func(a, b proto.AbortedTransaction) int {
					return int(min(max(a.FirstOffset-b.FirstOffset, -1), 1))
				})
				p.abortedPids = p.abortedPids[:0]
			}
			// Asked of a leader the reader has since learned was replaced,
			// and taken all the same, as Kafka's consumer takes it.
			if a := r.cfg.FetchAudit; a != nil && ok && asked.CurrentLeaderEpoch < p.leaderEpoch {
				a.StaleLeaderRead(r.env.ID(), proto.TopicPartition{Topic: k.topic, Partition: k.partition}, p.offset, fp.Batches[len(fp.Batches)-1].LastOffset()+1)
			}
		}
	}
	if refresh {
		r.refreshMetadata()
	}
	if r.polling && r.pollWait != 0 {
		r.collector.collectFetch(r.subs.parts)
		if r.collector.n > 0 || r.fetching.empty() {
			r.finishPoll()
		}
	}
	r.fetchMissing()
}

// askedFor is what a fetch asked of a partition: its offset and the leader
// epoch it was sent under (a fetch names a handful of partitions: a scan
// beats a map).
func askedFor(asked []proto.FetchPartition, k partKey) (proto.FetchPartition, bool) {
	for _, fp := range asked {
		if fp.Partition == k.partition && fp.Topic == k.topic {
			return fp, true
		}
	}
	return proto.FetchPartition{}, false
}

func (r *Reader) fetchDone(corr uint64) { r.fetching.done(corr) }

// inFlight is a reader's fetches in flight, one per leader at most: a
// handful, looked through at every fetch a poll considers, so a short list
// rather than a map.
type inFlight []leaderFetch

type leaderFetch struct {
	leader int32
	corr   uint64
}

func (f inFlight) empty() bool { return len(f) == 0 }

func (f inFlight) busy(leader int32) bool {
	for _, e := range f {
		if e.leader == leader {
			return true
		}
	}
	return false
}

// set records the fetch corr to leader (replacing one in flight there).
func (f *inFlight) set(leader int32, corr uint64) {
	for i := range *f {
		if (*f)[i].leader == leader {
			(*f)[i].corr = corr
			return
		}
	}
	*f = append(*f, leaderFetch{leader, corr})
}

// done forgets the fetch corr.
func (f *inFlight) done(corr uint64) {
	*f = slices.DeleteFunc(*f, func(e leaderFetch) bool { return e.corr == corr })
}
