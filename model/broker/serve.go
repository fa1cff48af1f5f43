package broker

import (
	"slices"
	"strconv"
	"time"

	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// Serving reads: fetches from followers and consumers (with long polling),
// ListOffsets, OffsetsForLeaderEpoch, Metadata and InitProducerId.

func singleBatch(b *record.Batch) []*record.Batch { return []*record.Batch{b} }

type parkedFetch struct {
	from     sim.NodeID
	on       uint64 // the connection it was read on
	req      *proto.FetchRequest
	ctx      fetchContext
	deadline time.Duration
	timer    sim.TimerID
	done     bool
}

type parkedTimeout struct{ p *parkedFetch }

// String is how the trace shows the timer: the fetch it ends, by sender and
// correlation id (fmt would print the pointer, which differs from run to run).
func (t parkedTimeout) String() string {
	return "broker.parkedTimeout {from:" + strconv.Itoa(int(t.p.from)) + " correlation:" + strconv.FormatUint(t.p.req.CorrelationID, 10) + "}"
}

// deliver routes the data-plane messages; it reports whether m was one.
func (rm *replicaManager) deliver(from sim.NodeID, m sim.Message) bool {
	if rm.stopped {
		switch m.(type) {
		case *proto.ProduceRequest, *proto.FetchRequest, *proto.ListOffsetsRequest, *proto.OffsetsForLeaderEpochRequest,
			*proto.MetadataRequest, *proto.InitProducerIDRequest:
			// The socket server has stopped processing requests (Kafka's
			// SocketServer.stopProcessingRequests): the connection closes
			// and the client tries another broker.
			rm.n.env.CloseConnection(from)
			return true
		}
	}
	switch m := m.(type) {
	case *proto.ProduceRequest, *proto.FetchRequest, *proto.ListOffsetsRequest, *proto.OffsetsForLeaderEpochRequest,
		*proto.MetadataRequest, *proto.InitProducerIDRequest:
		rm.read(from, m)
	case *proto.FetchResponse:
		rm.handleFetchResponse(from, m)
	case *proto.WriteTxnMarkersRequest:
		if rm.stopped {
			rm.n.env.CloseConnection(from)
		} else {
			rm.handleWriteTxnMarkers(from, m)
		}
	case *proto.AlterPartitionResponse:
		rm.alter.handleResponse(from, m)
	case *sim.Disconnected:
		rm.txnVerify.disconnected(m.Peer)
		rm.coordinatorsDisconnected(m.Peer)
		rm.peerDisconnected(m.Peer)
		return false // the lifecycle may care too
	default:
		return false
	}
	return true
}

// fire handles the replica manager's timers; it reports whether t was one.
func (rm *replicaManager) fire(t sim.Timer) bool {
	switch t := t.(type) {
	case produceTimeout:
		rm.produceTimedOut(t.req)
	case appendTimeout:
		t.a.timedOut()
	case markersTimeout:
		t.w.timedOut()
	case verifyTimeout:
		rm.txnVerify.timedOut(t)
	case verifyRetry:
		rm.txnVerify.retry(t)
	case appendsFinished:
		rm.tellScheduled = false
		rm.tellAppends()
	case coordinatorTimer:
		rm.fireCoordinatorTimer(t)
	case parkedTimeout:
		if !t.p.done {
			rm.unpark(t.p)
			rm.serveFetch(t.p.from, t.p.on, t.p.req, t.p.ctx, 0)
		}
	case fetcherTimer:
		rm.fetcherTimer(t)
	case fetchTimeout:
		rm.fetcherTimer(t.timer())
	case alterTimer:
		rm.alter.timer(t)
	case rmTick:
		rm.tick(t.kind)
	case readUnread:
		rm.readUnread(t)
	default:
		return false
	}
	return true
}

func (rm *replicaManager) unpark(p *parkedFetch) {
	p.done = true
	rm.n.env.Cancel(p.timer)
	rm.parked = slices.DeleteFunc(rm.parked, func(x *parkedFetch) bool { return x == p })
}

// wakeParked re-runs the parked fetches that read tp: it has new data, a new
// high watermark, or a new leader.
func (rm *replicaManager) wakeParked(tp metadata.TopicPartition) {
	if len(rm.parked) == 0 {
		return
	}
	var wake []*parkedFetch
	for _, p := range rm.parked {
		if p.ctx.kind == incrementalFetch {
			// An incremental fetch waits on every partition of its
			// session, named or not.
			if _, ok := p.ctx.session.lookup(tp); ok {
				wake = append(wake, p)
			}
			continue
		}
		for _, fp := range p.req.Partitions {
			if fp.Topic == tp.Topic && fp.Partition == tp.Partition {
				wake = append(wake, p)
				break
			}
		}
	}
	for _, p := range wake {
		if p.done {
			// Woken already: a follower's fetch woken above moved a high
			// watermark, whose own wake ran it. Running it again would
			// park (or answer) the same fetch twice, and the copies would
			// double at every wake. Kafka's DelayedOperation.forceComplete
			// completes an operation once (its completed flag).
			continue
		}
		rm.unpark(p)
		rm.serveFetch(p.from, p.on, p.req, p.ctx, p.deadline)
	}
}

// fetchAnswer is a fetch's answer and, when they are few, its partitions:
// one allocation, reused once the answer is delivered (a follower fetches
// one or two partitions from each leader, a reader a few more). More
// partitions go in more, kept with the answer for its next reuse: a
// follower of __consumer_offsets's fifty partitions fetches dozens from
// each leader, several times a second.
type fetchAnswer struct {
	rm    *replicaManager
	resp  proto.FetchResponse
	parts [4]proto.FetchPartitionResponse
	more  []proto.FetchPartitionResponse
	// poisoned: freed and filled with nonsense (tests).
	poisoned bool
}

// spareAnswersMax bounds the fetch answers a broker keeps for reuse.
const spareAnswersMax = 64

func (rm *replicaManager) newFetchAnswer() *fetchAnswer {
	if a := rm.spareAnswers.Get(); a != nil {
		return a
	}
	a := &fetchAnswer{rm: rm}
	a.resp.Owner = a
	return a
}

// TakeBack implements sim.Owner: the answer was delivered, or never
// sent (its fetch was parked).
func (a *fetchAnswer) TakeBack() {
	if a.poisoned {
		panic("broker: a fetch answer freed for reuse is still in use")
	}
	a.rm.answersFreed++
	if proto.PoisonFreed {
		a.poisoned = true
		a.resp.CorrelationID = proto.FreedCorrelationID
		for i := range a.parts {
			a.parts[i] = proto.FetchPartitionResponse{Error: proto.CorruptMessage, HighWatermark: -7, LogStartOffset: -7, LogEndOffset: -7}
		}
		more := a.more[:cap(a.more)]
		for i := range more {
			more[i] = proto.FetchPartitionResponse{Error: proto.CorruptMessage, HighWatermark: -7, LogStartOffset: -7, LogEndOffset: -7}
		}
		return
	}
	// The batches they name may go. serveFetch wrote no further than one
	// past the answer's partitions (a partition it filled in and dropped
	// again, as it drops only the last): a follower's answer sized for its
	// whole session carries a few of a hundred, and clearing all of them on
	// every answer showed in profiles of big clusters.
	clear(a.parts[:])
	clear(a.more[:min(len(a.resp.Partitions)+1, cap(a.more))])
	a.resp.Partitions = nil
	a.resp.Error, a.resp.SessionID = proto.None, proto.InvalidSessionID
	a.rm.spareAnswers.Put(a, spareAnswersMax)
}

// handleFetch answers a fetch, or parks it until deadline if nothing is there
// yet (fetch.max.wait.ms / replica.fetch.wait.max.ms).
func (rm *replicaManager) handleFetch(from sim.NodeID, on uint64, m *proto.FetchRequest, deadline time.Duration) {
	if m.CorrelationID == proto.FreedCorrelationID {
		panic("broker: a fetch its sender freed for reuse arrived")
	}
	rm.serveFetch(from, on, m, rm.newFetchContext(m), deadline)
}

// serveFetch answers a fetch in its context, or parks it until deadline
// (ReplicaManager.fetchMessages and DelayedFetch): again each time it wakes.
func (rm *replicaManager) serveFetch(from sim.NodeID, on uint64, m *proto.FetchRequest, ctx fetchContext, deadline time.Duration) {
	answer := rm.newFetchAnswer()
	resp := &answer.resp
	resp.CorrelationID = m.CorrelationID
	if ctx.kind == sessionErrorFetch {
		// A session error is answered at once, with no partitions
		// (SessionErrorContext: nothing to wait for).
		resp.Error = ctx.err
		resp.Partitions = answer.parts[:0]
		rm.answer(from, on, resp)
		return
	}
	n := len(m.Partitions)
	if ctx.kind == incrementalFetch {
		n = len(ctx.session.parts)
	}
	if n <= len(answer.parts) {
		resp.Partitions = answer.parts[:0]
	} else {
		if cap(answer.more) < n {
			answer.more = make([]proto.FetchPartitionResponse, 0, n)
		}
		resp.Partitions = answer.more[:0]
	}
	follower := m.ReplicaID >= 0
	anything := false
	if ctx.kind == incrementalFetch {
		// Every partition of the session is served; the answer carries
		// those with something new (IncrementalFetchContext).
		stale := rm.staleFollower(m)
		s := ctx.session
		if stale {
			s.wakeAll()
		}
		s.serving, s.servingAt, s.servingEpoch = true, rm.now(), m.BrokerEpoch
		s.answered = s.answered[:0]
		for k := 0; k < len(s.dirty); k++ { // partition.touch may add to it
			i := s.dirty[k]
			s.cursor = i
			c := &s.parts[i]
			resp.Partitions = append(resp.Partitions, proto.FetchPartitionResponse{})
			r := &resp.Partitions[len(resp.Partitions)-1]
			served, respond := rm.fetchQuiet(m, c, stale, r)
			if !served {
				rm.fetchPartition(m, c.fp, true, r)
				respond = mustRespond(c, r)
				if r.Error != proto.None || r.Diverging != nil || len(r.Batches) > 0 {
					anything = true
				}
				rm.observeQuiet(m, c, r)
			}
			if !respond {
				resp.Partitions = resp.Partitions[:len(resp.Partitions)-1]
			} else {
				s.answered = append(s.answered, i)
			}
		}
		s.serving = false
		s.quietAt, s.quietEpoch = s.servingAt, s.servingEpoch
	} else {
		for _, fp := range m.Partitions {
			// Filled in place: copying the answer out of fetchPartition and
			// into the slice (write barriers included) showed in profiles.
			resp.Partitions = append(resp.Partitions, proto.FetchPartitionResponse{})
			r := &resp.Partitions[len(resp.Partitions)-1]
			rm.fetchPartition(m, fp, follower, r)
			if r.Error != proto.None || r.Diverging != nil || len(r.Batches) > 0 {
				anything = true
			}
		}
	}
	if !anything && deadline > rm.now() {
		p := &parkedFetch{from: from, on: on, req: m, ctx: ctx, deadline: deadline}
		p.timer = rm.n.env.After(deadline-rm.now(), parkedTimeout{p: p})
		rm.parked = append(rm.parked, p)
		answer.TakeBack() // the answer is made again when the fetch wakes
		if ctx.kind == incrementalFetch {
			ctx.session.rest()
		}
		return
	}
	switch ctx.kind {
	case fullFetch:
		resp.SessionID = rm.openSession(m, resp)
	case incrementalFetch:
		resp.SessionID = ctx.session.id
		for k := range resp.Partitions {
			r := &resp.Partitions[k]
			c := &ctx.session.parts[ctx.session.answered[k]]
			c.hw, c.logStart = r.HighWatermark, r.LogStartOffset
			if r.Error != proto.None {
				c.hw = -1
			}
		}
		ctx.session.rest()
	}
	rm.answer(from, on, resp)
}

// fetchPartition answers one partition of fetch m into r.
func (rm *replicaManager) fetchPartition(m *proto.FetchRequest, fp proto.FetchPartition, follower bool, r *proto.FetchPartitionResponse) {
	tp := metadata.TopicPartition{Topic: fp.Topic, Partition: fp.Partition}
	*r = proto.FetchPartitionResponse{TopicPartition: fp.TopicPartition, HighWatermark: -1, LogStartOffset: -1, LogEndOffset: -1, LastStableOffset: -1}
	p := rm.parts.get(tp)
	switch {
	case p == nil || p.log == nil:
		r.Error = proto.NotLeaderOrFollower
		if rm.image().Partition(tp) == nil {
			r.Error = proto.UnknownTopicOrPartition
		}
		return
	case fp.CurrentLeaderEpoch >= 0 && fp.CurrentLeaderEpoch < p.leaderEpoch:
		r.Error = proto.FencedLeaderEpoch
		return
	case fp.CurrentLeaderEpoch > p.leaderEpoch:
		r.Error = proto.UnknownLeaderEpoch
		return
	case !p.isLeader:
		r.Error = proto.NotLeaderOrFollower
		return
	}
	r.LeaderEpoch = p.leaderEpoch
	r.HighWatermark = p.hw
	r.LogStartOffset = p.log.LogStartOffset()
	r.LogEndOffset = p.log.LEO()
	var f *followerState
	if follower {
		if f = p.follower(m.ReplicaID); f == nil {
			r.Error = proto.UnknownLeaderEpoch // not a replica of this partition
			return
		}
		if b, ok := rm.image().Brokers[m.ReplicaID]; ok && m.BrokerEpoch >= 0 && b.Epoch > m.BrokerEpoch {
			r.Error = proto.NotLeaderOrFollower // a fetch from the broker's previous life
			return
		}
		if fp.LastFetchedEpoch >= 0 && fp.FetchOffset > 0 {
			var e int32
			var end int64
			if rm.cfg.Bugs.EpochLookupFirstGreater {
				e, end = p.log.Epochs().FirstGreaterStart(fp.LastFetchedEpoch, p.log.LEO())
			} else {
				e, end = p.log.Epochs().EndOffsetFor(fp.LastFetchedEpoch, p.log.LEO())
			}
			if end == -1 || e == -1 {
				r.Error = proto.OffsetOutOfRange
				return
			}
			if e < fp.LastFetchedEpoch || end < fp.FetchOffset {
				r.Diverging = &proto.EpochEndOffset{Epoch: e, EndOffset: end}
				return
			}
		}
	}
	upTo := p.hw
	if follower {
		upTo = p.log.LEO()
	} else {
		// A consumer learns the LSO at either isolation; read_committed
		// reads up to it (FetchIsolation.TXN_COMMITTED). A log that never
		// saw a transaction has its high watermark for LSO.
		r.LastStableOffset = p.log.LastStableOffset(p.hw)
		if m.Isolation == proto.ReadCommitted {
			upTo = r.LastStableOffset
		}
	}
	if r.Batches, r.Error = readLog(p, fp.FetchOffset, upTo, fp.MaxBytes); r.Error != proto.None {
		return
	}
	if m.Isolation == proto.ReadCommitted && !follower && len(r.Batches) > 0 && p.log.Transactional() {
		r.AbortedTransactions = abortedTransactions(p, fp.FetchOffset, r.Batches[len(r.Batches)-1].NextOffset())
	}
	if follower {
		// The answer carries the high watermark from before this fetch
		// moved it: followers learn commits one round trip late.
		p.updateFollowerFetchState(f, fp.FetchOffset, r.LogEndOffset, m.BrokerEpoch)
	}
}

// abortedTransactions is a read_committed fetch's aborted list for what it
// read, [from, upTo) (UnifiedLog.addAbortedTransactions: up to the next
// offset after the last batch read); nil when none.
func abortedTransactions(p *partition, from, upTo int64) []proto.AbortedTransaction {
	aborted := p.log.CollectAbortedTransactions(from, upTo)
	if len(aborted) == 0 {
		return nil
	}
	out := make([]proto.AbortedTransaction, len(aborted))
	for i, a := range aborted {
		out[i] = proto.AbortedTransaction{ProducerID: a.ProducerID, FirstOffset: a.FirstOffset}
	}
	return out
}

// readLog reads p's log as a fetch from offset from does: whole batches
// from the one holding from, below upTo, about maxBytes of them (at least
// one; 0: 1 MiB).
func readLog(p *partition, from, upTo int64, maxBytes int) ([]*record.Batch, proto.ErrorCode) {
	if from < p.log.LogStartOffset() || from > p.log.LEO() {
		return nil, proto.OffsetOutOfRange
	}
	if maxBytes <= 0 {
		maxBytes = 1 << 20
	}
	if from < upTo {
		return p.log.Read(from, upTo, maxBytes), proto.None
	}
	return nil, proto.None
}

// leaderChecked finds a partition this broker leads and checks the
// client's view of its leader epoch (ListOffsets and OffsetsForLeaderEpoch
// carry it, as KIP-320 asks).
func (rm *replicaManager) leaderChecked(tp proto.TopicPartition, currentLeaderEpoch int32) (*partition, proto.ErrorCode) {
	p := rm.parts.get(metadata.TopicPartition{Topic: tp.Topic, Partition: tp.Partition})
	switch {
	case p == nil || !p.isLeader || p.log == nil:
		return nil, proto.NotLeaderOrFollower
	case currentLeaderEpoch >= 0 && currentLeaderEpoch < p.leaderEpoch:
		return nil, proto.FencedLeaderEpoch
	case currentLeaderEpoch > p.leaderEpoch:
		return nil, proto.UnknownLeaderEpoch
	}
	return p, proto.None
}

func (rm *replicaManager) handleListOffsets(from sim.NodeID, on uint64, m *proto.ListOffsetsRequest) {
	resp := &proto.ListOffsetsResponse{CorrelationID: m.CorrelationID}
	for _, q := range m.Partitions {
		r := proto.ListOffsetsPartitionResponse{TopicPartition: q.TopicPartition, Offset: -1, LeaderEpoch: -1}
		p, err := rm.leaderChecked(q.TopicPartition, q.CurrentLeaderEpoch)
		switch {
		case err != proto.None:
			r.Error = err
		case q.Timestamp == proto.ListEarliest:
			r.Offset, r.LeaderEpoch = p.log.LogStartOffset(), p.leaderEpoch
		case p.epochStart > p.hw:
			// KIP-207: a new leader answers "latest" only once its high
			// watermark has reached the start of its epoch.
			r.Error = proto.OffsetNotAvailable
		case m.ReadCommitted:
			// Kafka's fetchOffsetForTimestamp: a read_committed "latest"
			// is the last stable offset.
			r.Offset, r.LeaderEpoch = p.log.LastStableOffset(p.hw), p.leaderEpoch
		default:
			r.Offset, r.LeaderEpoch = p.hw, p.leaderEpoch
		}
		resp.Partitions = append(resp.Partitions, r)
	}
	rm.answer(from, on, resp) // reports no state of its own that a pending fsync must make durable first
}

func (rm *replicaManager) handleOffsetsForLeaderEpoch(from sim.NodeID, on uint64, m *proto.OffsetsForLeaderEpochRequest) {
	resp := &proto.OffsetsForLeaderEpochResponse{CorrelationID: m.CorrelationID}
	for _, q := range m.Partitions {
		r := proto.OffsetsForLeaderEpochPartitionResponse{TopicPartition: q.TopicPartition, LeaderEpoch: -1, EndOffset: -1}
		if p, err := rm.leaderChecked(q.TopicPartition, q.CurrentLeaderEpoch); err != proto.None {
			r.Error = err
		} else {
			r.LeaderEpoch, r.EndOffset = p.log.Epochs().EndOffsetFor(q.LeaderEpoch, p.log.LEO())
		}
		resp.Partitions = append(resp.Partitions, r)
	}
	rm.answer(from, on, resp) // reports no state of its own that a pending fsync must make durable first
}

// handleMetadata answers from this broker's committed metadata: unfenced
// brokers, and each partition's leader and epoch as this broker knows them
// (possibly stale, as in Kafka).
func (rm *replicaManager) handleMetadata(from sim.NodeID, on uint64, m *proto.MetadataRequest) {
	im := rm.image()
	resp := &proto.MetadataResponse{CorrelationID: m.CorrelationID}
	for _, id := range im.BrokerIDs() {
		b := im.Brokers[id]
		if node, ok := rm.n.cfg.Nodes[id]; ok && !b.Fenced {
			resp.Brokers = append(resp.Brokers, proto.MetadataBroker{ID: id, Node: node, Rack: b.Rack})
		}
	}
	topics := m.Topics
	if topics == nil {
		topics = im.TopicNames()
	}
	for _, name := range topics {
		t, ok := im.Topics[name]
		mt := proto.MetadataTopic{Name: name}
		last := &rm.metaAnswered
		if !ok {
			mt.Error = proto.UnknownTopicOrPartition
		} else if last.im == im && last.offset == im.Offset && last.t == t {
			// The image did not move since the last answer listed the
			// topic: the same partitions, shared (no reader modifies
			// an answer). Producers ask again and again while leaders
			// move, and an answer of 3,000 partitions showed in
			// profiles.
			mt.Partitions = last.parts
		} else if last.t != nil && last.t.Name == name && sameMetadataPartitions(last.parts, t.Partitions) {
			// The image moved, but not what the answer lists (a NoOp
			// record, a broker fenced, an ELR cleared): still the same,
			// shared. 23 of the 59 answers a minute of BenchmarkBigCluster
			// built were such copies, about 260 kB each.
			mt.Partitions = last.parts
			*last = metadataAnswered{im: im, offset: im.Offset, t: t, parts: last.parts}
		} else if shared := rm.n.cfg.Answers; shared != nil && shared.topic == name && sameMetadataPartitions(shared.parts, t.Partitions) {
			// Another broker listed the same partitions last: shared.
			mt.Partitions = shared.parts
			*last = metadataAnswered{im: im, offset: im.Offset, t: t, parts: shared.parts}
		} else {
			// The replicas and ISRs are copies, all in one array (two
			// small allocations per partition showed in profiles of
			// clients' metadata requests on thousands of partitions);
			// each is capped to its length, so an append copies it.
			n := 0
			for _, p := range t.Partitions {
				n += len(p.Replicas) + len(p.ISR)
			}
			ids := make([]int32, 0, n)
			clone := func(s []int32) []int32 {
				if s == nil {
					return nil // as slices.Clone
				}
				ids = append(ids, s...)
				return ids[len(ids)-len(s) : len(ids) : len(ids)]
			}
			if len(t.Partitions) > 0 {
				mt.Partitions = make([]proto.MetadataPartition, 0, len(t.Partitions))
			}
			for _, p := range t.Partitions {
				mt.Partitions = append(mt.Partitions, proto.MetadataPartition{Partition: p.Partition, Leader: p.Leader,
					LeaderEpoch: p.LeaderEpoch, Replicas: clone(p.Replicas), ISR: clone(p.ISR)})
			}
			*last = metadataAnswered{im: im, offset: im.Offset, t: t, parts: mt.Partitions}
			if shared := rm.n.cfg.Answers; shared != nil {
				shared.topic, shared.parts = name, mt.Partitions
			}
		}
		resp.Topics = append(resp.Topics, mt)
	}
	rm.answer(from, on, resp) // reports no state of its own that a pending fsync must make durable first
}

// sameMetadataPartitions reports whether an answer's partitions are those
// of ps as handleMetadata lists them, nil lists included.
func sameMetadataPartitions(parts []proto.MetadataPartition, ps []*metadata.Partition) bool {
	if len(parts) != len(ps) {
		return false
	}
	same := func(a, b []int32) bool { return (a == nil) == (b == nil) && slices.Equal(a, b) }
	for i, p := range ps {
		a := &parts[i]
		if a.Partition != p.Partition || a.Leader != p.Leader || a.LeaderEpoch != p.LeaderEpoch ||
			!same(a.Replicas, p.Replicas) || !same(a.ISR, p.ISR) {
			return false
		}
	}
	return true
}

// metadataAnswered is a topic's partitions as a clients' metadata answer
// listed them, and the image they were read from, at its offset then: an
// image changes only as it moves on (Image.Apply), and a broker's restart
// makes another.
type metadataAnswered struct {
	im     *metadata.Image
	offset int64
	t      *metadata.Topic
	parts  []proto.MetadataPartition
}

// handleInitProducerID hands out a producer id, unique in the cluster: the
// broker's epoch (a metadata offset, unique among registrations) and a
// counter. (Kafka allocates blocks through the controller; the uniqueness is
// what matters.)
func (rm *replicaManager) handleInitProducerID(from sim.NodeID, on uint64, m *proto.InitProducerIDRequest) {
	resp := &proto.InitProducerIDResponse{CorrelationID: m.CorrelationID}
	if m.TransactionalID != "" {
		// Only a transaction coordinator serves a transactional id (it
		// took the request before the replica manager did, if this broker
		// hosts one).
		resp.Error, resp.ProducerID, resp.ProducerEpoch = proto.NotCoordinator, proto.NoProducerID, proto.NoProducerEpoch
	} else if rm.n.life.epoch < 0 {
		resp.Error = proto.BrokerNotAvailable
	} else {
		rm.nextPID++
		resp.ProducerID = rm.n.life.epoch<<20 | rm.nextPID
	}
	rm.answer(from, on, resp) // reports no state of its own that a pending fsync must make durable first
}
