package broker

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// The follower's side of replication (Kafka's ReplicaFetcherThread): one
// fetcher per leader broker, one fetch in flight, covering every partition
// this broker follows there. Divergence is found from the last fetched epoch
// and repaired by truncation, in several rounds when needed.

type fetcher struct {
	leader      int32
	node        sim.NodeID
	parts       []metadata.TopicPartition // sorted
	inflight    uint64                    // correlation id, 0 if none
	backoffTill map[metadata.TopicPartition]bool
	gen         uint64
	// The follower's side of its incremental fetch session with the leader
	// (KIP-227, Kafka's FetchSessionHandler): sessionID and sessionEpoch
	// are the next request's FetchMetadata (epoch InitialSessionEpoch: a
	// full fetch); session are the partitions the session holds, as last
	// sent (sessionPartitions), sorted, which is also what the fetch in
	// flight asked for each: an answer counts only for a partition still
	// at that position. spareSession and want are buffers.
	sessionID    int32
	sessionEpoch int32
	session      []proto.FetchPartition
	spareSession []proto.FetchPartition
	// want is what to fetch now, sorted: worked out again in full when
	// wantAll (the partitions or backoffs changed), else for the partitions
	// touched since (dirty: their logs or states moved). pending are the
	// partitions touched since the last request, whose entries the next
	// incremental request compares with the session's (all of them when
	// diffAll).
	want    []proto.FetchPartition
	wantAll bool
	dirty   []metadata.TopicPartition
	pending []metadata.TopicPartition
	diffAll bool
	// box holds the fetch in flight; spare one answered, for the next.
	box, spare *fetchRequestBox

	// Indexes of parts, session and want (see tpIndex), each valid while
	// its flag is set: parts's and session's are built again when next
	// looked up after a change; want's after sendFetch changed it.
	partsIdx, sessionIdx, wantIdx             tpIndex
	partsIndexed, sessionIndexed, wantIndexed bool
}

func fetchPartitionAt(s []proto.FetchPartition) func(int) (string, int32) {
	return func(i int) (string, int32) { return s[i].Topic, s[i].Partition }
}

// inSession returns the index of tp in session, if there.
func (f *fetcher) inSession(tp metadata.TopicPartition) (int, bool) {
	if !f.sessionIndexed {
		if !f.sessionIdx.build(len(f.session), fetchPartitionAt(f.session)) {
			return slices.BinarySearchFunc(f.session, tp, cmpFetchPartition)
		}
		f.sessionIndexed = true
	}
	return f.sessionIdx.find(tp.Topic, tp.Partition)
}

// findInSession returns the index of tp in session, or where it would go,
// without building the index (the session is changing).
func (f *fetcher) findInSession(tp metadata.TopicPartition) (int, bool) {
	if f.sessionIndexed {
		if i, ok := f.sessionIdx.find(tp.Topic, tp.Partition); ok {
			return i, true
		}
	}
	return slices.BinarySearchFunc(f.session, tp, cmpFetchPartition)
}

// inWant returns the index of tp in want, or where it would go.
func (f *fetcher) inWant(tp metadata.TopicPartition) (int, bool) {
	if f.wantIndexed {
		if i, ok := f.wantIdx.find(tp.Topic, tp.Partition); ok {
			return i, true
		}
	}
	return slices.BinarySearchFunc(f.want, tp, cmpFetchPartition)
}

// sentFor is what the session holds for tp: what the fetch in flight asked
// for it, named or not (the session is sorted).
func (f *fetcher) sentFor(tp metadata.TopicPartition) (proto.FetchPartition, bool) {
	i, ok := f.inSession(tp)
	if !ok {
		return proto.FetchPartition{}, false
	}
	return f.session[i], true
}

func cmpFetchPartition(a proto.FetchPartition, tp metadata.TopicPartition) int {
	return cmpTP(metadata.TopicPartition{Topic: a.Topic, Partition: a.Partition}, tp)
}

// cmpTP orders partitions as TopicPartition.Less does. Sessions look
// partitions up by it on every fetch; most compares are within one topic,
// which string equality settles at once (the strings share their bytes),
// without the byte-wise ordering compare.
func cmpTP(a, b metadata.TopicPartition) int {
	if a.Topic == b.Topic {
		return cmp.Compare(a.Partition, b.Partition)
	}
	return strings.Compare(a.Topic, b.Topic)
}

// touched notes that tp's log or state moved: what to fetch for it is
// worked out again before the next request.
func (f *fetcher) touched(tp metadata.TopicPartition) {
	if f.wantAll {
		return
	}
	if len(f.dirty) > 2*len(f.parts)+16 {
		f.wantAll, f.dirty = true, f.dirty[:0]
		return
	}
	f.dirty = append(f.dirty, tp)
}

// follows: tp is among the partitions f fetches.
func (f *fetcher) follows(tp metadata.TopicPartition) bool {
	if !f.partsIndexed {
		if !f.partsIdx.build(len(f.parts), func(i int) (string, int32) { return f.parts[i].Topic, f.parts[i].Partition }) {
			_, ok := slices.BinarySearchFunc(f.parts, tp, cmpTP)
			return ok
		}
		f.partsIndexed = true
	}
	_, ok := f.partsIdx.find(tp.Topic, tp.Partition)
	return ok
}

// fetcherTimer ends a fetch that got no answer (gen matches), or a
// partition's backoff (tp set), or a backoff after a lost connection.
type fetcherTimer struct {
	leader  int32
	gen     uint64
	backoff bool
	tp      metadata.TopicPartition
}

// String is how the trace shows the timer (as fmt's %+v would: a trace
// records hundreds of thousands of these).
func (t fetcherTimer) String() string { return string(t.AppendDetail(nil)) }

// AppendDetail appends String's words (sim.DetailAppender).
func (t fetcherTimer) AppendDetail(b []byte) []byte {
	b = append(b, "broker.fetcherTimer {leader:"...)
	b = strconv.AppendInt(b, int64(t.leader), 10)
	b = append(b, " gen:"...)
	b = strconv.AppendUint(b, t.gen, 10)
	b = append(b, " backoff:"...)
	b = strconv.AppendBool(b, t.backoff)
	b = append(b, " tp:{Topic:"...)
	b = append(b, t.tp.Topic...)
	b = append(b, " Partition:"...)
	b = strconv.AppendInt(b, int64(t.tp.Partition), 10)
	return append(b, "}}"...)
}

// fetchTimeout is fetcherTimer for a fetch that may get no answer (no
// backoff, no partition): every fetch sent sets one, and boxing a
// fetcherTimer (a string inside) into the timer took 48 bytes the collector
// scans; this has no pointer. The trace shows it as the fetcherTimer it
// stands for.
type fetchTimeout struct {
	leader int32
	gen    uint64
}

func (t fetchTimeout) timer() fetcherTimer { return fetcherTimer{leader: t.leader, gen: t.gen} }

func (t fetchTimeout) String() string { return t.timer().String() }

// AppendDetail appends String's words (sim.DetailAppender).
func (t fetchTimeout) AppendDetail(b []byte) []byte { return t.timer().AppendDetail(b) }

func (rm *replicaManager) startFetching(p *partition, leader int32) {
	f := rm.fetchers[leader]
	if f == nil {
		node, ok := rm.n.cfg.Nodes[leader]
		if !ok {
			return
		}
		f = &fetcher{leader: leader, node: node, backoffTill: map[metadata.TopicPartition]bool{}, wantAll: true}
		rm.fetchers[leader] = f
		if rm.fetcherAt == nil {
			rm.fetcherAt = map[sim.NodeID]*fetcher{}
		}
		if rm.fetcherAt[node] != nil {
			rm.nodeShared = true
		}
		rm.fetcherAt[node] = f
	}
	if i, ok := slices.BinarySearchFunc(f.parts, p.tp, cmpTP); !ok {
		f.parts = slices.Insert(f.parts, i, p.tp)
		f.wantAll, f.partsIndexed = true, false
	}
	if f.inflight == 0 {
		rm.sendFetch(f)
	}
}

func (rm *replicaManager) stopFetching(p *partition) {
	for _, id := range sortedKeys(rm.fetchers) {
		f := rm.fetchers[id]
		if i, ok := slices.BinarySearchFunc(f.parts, p.tp, cmpTP); ok {
			f.parts = slices.Delete(f.parts, i, i+1)
			f.wantAll, f.partsIndexed = true, false
		}
	}
}

func sortedKeys(m map[int32]*fetcher) []int32 {
	keys := make([]int32, 0, len(m))
	for k := range m { // kafkasim:orderless: sorted below
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// fetchRequestBox is a follower's fetch and, when they are few (a broker
// follows a handful of partitions of each leader), its partitions: one
// allocation, reused once answered if the world delivered it exactly once
// (a duplicate might still arrive otherwise).
type fetchRequestBox struct {
	req   proto.FetchRequest
	parts [2]proto.FetchPartition
	// more backs a fetch of more partitions, kept with the box; forgot its
	// forgotten partitions.
	more   []proto.FetchPartition
	forgot []proto.TopicPartition
	// delivered: the world delivered the request, its only copy.
	delivered bool
}

// TakeBack implements sim.Owner.
func (b *fetchRequestBox) TakeBack() {
	if b.req.CorrelationID == proto.FreedCorrelationID {
		panic("broker: a fetch freed for reuse was delivered")
	}
	b.delivered = true
}

// answered frees the fetch in flight, its answer in, if the world
// delivered it exactly once, and reports whether it did.
func (f *fetcher) answered() bool {
	b := f.box
	f.box = nil
	if b == nil || !b.delivered {
		return false
	}
	if proto.PoisonFreed {
		b.req.CorrelationID = proto.FreedCorrelationID
		for i := range b.req.Partitions {
			b.req.Partitions[i].FetchOffset = -7
		}
		return true
	}
	f.spare = b
	return true
}

func (rm *replicaManager) sendFetch(f *fetcher) {
	if f.inflight != 0 {
		return
	}
	// What to fetch now: each partition ready for fetching, at its log end
	// (AbstractFetcherThread.buildFetch). One whose log end, log start or
	// epochs did not move since the session's last request is not named
	// again: the leader keeps it in the session. Only the partitions
	// touched since the last request are looked at again.
	if f.wantAll {
		want := f.want[:0]
		for _, tp := range f.parts {
			if fp, ok := rm.wantFetch(f, tp); ok {
				want = append(want, fp)
			}
		}
		f.want, f.wantAll, f.diffAll = want, false, true
		f.dirty = f.dirty[:0]
		f.wantIndexed = f.wantIdx.build(len(f.want), fetchPartitionAt(f.want))
	} else if len(f.dirty) > 0 {
		slices.SortFunc(f.dirty, cmpTP)
		f.dirty = slices.Compact(f.dirty)
		for _, tp := range f.dirty {
			i, had := f.inWant(tp)
			fp, ok := rm.wantFetch(f, tp)
			switch {
			case ok && had:
				f.want[i] = fp
			case ok:
				f.want = slices.Insert(f.want, i, fp)
				f.wantIndexed = false
			case had:
				f.want = slices.Delete(f.want, i, i+1)
				f.wantIndexed = false
			}
		}
		if !f.wantIndexed {
			f.wantIndexed = f.wantIdx.build(len(f.want), fetchPartitionAt(f.want))
		}
		f.pending = append(f.pending, f.dirty...)
		f.dirty = f.dirty[:0]
	}
	want := f.want
	if len(want) == 0 {
		// Nothing to fetch: no request. A fetcher left with no partition
		// at all (none waiting out a backoff) is idle: Kafka shuts it down
		// (ReplicaFetcherManager.shutdownIdleFetcherThreads), and the one
		// that fetches from this leader next starts without a session.
		delayed := false
		for tp := range f.backoffTill { // kafkasim:orderless: any one will do
			if p := rm.parts.get(tp); f.follows(tp) && p != nil && !p.isLeader && !p.failed && p.leader == f.leader && p.log != nil {
				delayed = true
			}
		}
		if !delayed {
			f.sessionID, f.sessionEpoch = proto.InvalidSessionID, proto.InitialSessionEpoch
			f.session = f.session[:0]
			f.sessionIndexed = false
		}
		return
	}
	box := f.spare
	if box != nil {
		f.spare = nil
		*box = fetchRequestBox{more: box.more[:0], forgot: box.forgot[:0]}
	} else {
		box = &fetchRequestBox{}
	}
	box.req.Owner = box
	req := &box.req
	req.ReplicaID, req.BrokerEpoch, req.MaxWait = rm.id(), rm.n.life.epoch, rm.cfg.ReplicaFetchWaitMax
	req.SessionID, req.SessionEpoch = f.sessionID, f.sessionEpoch
	req.Partitions = box.parts[:0]
	if cap(box.more) > 0 {
		req.Partitions = box.more[:0]
	}
	send := func(fp proto.FetchPartition) { req.Partitions = append(req.Partitions, fp) }
	if f.sessionEpoch != proto.InitialSessionEpoch && f.sessionID == proto.InvalidSessionID {
		panic("broker: an incremental fetch without a session")
	}
	if f.sessionEpoch == proto.InitialSessionEpoch {
		// A full fetch names every partition; the session becomes them
		// (FetchSessionHandler.Builder.build, a full request).
		req.Partitions = append(req.Partitions, want...)
		f.session, f.spareSession = append(f.spareSession[:0], want...), f.session
		f.sessionIndexed = false
	} else {
		// An incremental fetch names the partitions added to the session
		// and those whose fetch data changed, and forgets those no longer
		// fetched (Builder.build, an incremental request: added, altered,
		// removed). After each request the session is what was wanted, so
		// only the partitions touched since can differ.
		if f.diffAll {
			f.session, f.spareSession = rm.diffSession(f, box, f.session, want, send), f.session
			f.sessionIndexed = false
		} else {
			slices.SortFunc(f.pending, cmpTP)
			f.pending = slices.Compact(f.pending)
			for _, tp := range f.pending {
				i, inSession := f.findInSession(tp)
				j, inWant := f.inWant(tp)
				switch {
				case inSession && inWant:
					if f.session[i] != want[j] {
						send(want[j])
						f.session[i] = want[j]
					}
				case inWant:
					send(want[j])
					f.session = slices.Insert(f.session, i, want[j])
					f.sessionIndexed = false
				case inSession:
					box.forgot = append(box.forgot, f.session[i].TopicPartition)
					f.session = slices.Delete(f.session, i, i+1)
					f.sessionIndexed = false
				}
			}
		}
		req.Forgotten = box.forgot
	}
	f.pending, f.diffAll = f.pending[:0], false
	if cap(req.Partitions) > len(box.parts) {
		box.more = req.Partitions[:0] // kept with the box for its next fetch
	}
	rm.correlator++
	req.CorrelationID = rm.correlator
	f.inflight = req.CorrelationID
	f.gen++
	f.box = box // a fetch given up on (timed out) stays where it is
	rm.gate.Send(f.node, req)
	rm.n.env.After(rm.cfg.ReplicaSocketTimeout, fetchTimeout{leader: f.leader, gen: f.gen})
}

// wantFetch is what f asks of tp, if tp is ready for fetching from f's
// leader: followed there, not led here, not failed, not backing off.
func (rm *replicaManager) wantFetch(f *fetcher, tp metadata.TopicPartition) (proto.FetchPartition, bool) {
	p := rm.parts.get(tp)
	if p == nil || p.isLeader || p.failed || p.leader != f.leader || p.log == nil || !f.follows(tp) {
		return proto.FetchPartition{}, false
	}
	if len(f.backoffTill) > 0 && f.backoffTill[tp] {
		return proto.FetchPartition{}, false
	}
	lastEpoch := p.log.LatestEpoch()
	if rm.cfg.Bugs.HWTruncation {
		lastEpoch = -1 // no epochs to compare: followers trust their high watermark
	}
	return proto.FetchPartition{
		TopicPartition: proto.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}, FetchOffset: p.log.LEO(),
		CurrentLeaderEpoch: p.leaderEpoch, LastFetchedEpoch: lastEpoch, LogStartOffset: p.log.LogStartOffset(),
		MaxBytes: rm.cfg.ReplicaFetchMaxBytes}, true
}

// diffSession is the session after an incremental request that compares
// every partition wanted with the session's (after the partitions or
// backoffs changed): the added and altered are sent, the removed
// forgotten.
func (rm *replicaManager) diffSession(f *fetcher, box *fetchRequestBox, session, want []proto.FetchPartition, send func(proto.FetchPartition)) []proto.FetchPartition {
	next := f.spareSession[:0]
	i, j := 0, 0
	for i < len(session) || j < len(want) {
		var c int
		switch {
		case i == len(session):
			c = 1
		case j == len(want):
			c = -1
		default:
			c = cmpTP(metadata.TopicPartition{Topic: session[i].Topic, Partition: session[i].Partition},
				metadata.TopicPartition{Topic: want[j].Topic, Partition: want[j].Partition})
		}
		switch {
		case c < 0: // removed
			box.forgot = append(box.forgot, session[i].TopicPartition)
			i++
		case c > 0: // added
			send(want[j])
			next = append(next, want[j])
			j++
		default: // altered, or unchanged
			if session[i] != want[j] {
				send(want[j])
			}
			next = append(next, want[j])
			i++
			j++
		}
	}
	return next
}

func (rm *replicaManager) fetcherTimer(t fetcherTimer) {
	f := rm.fetchers[t.leader]
	if f == nil {
		return
	}
	switch {
	case t.backoff && t.tp.Topic != "":
		delete(f.backoffTill, t.tp)
		f.touched(t.tp)
	case t.gen != f.gen:
		return // a timeout of a fetch that was answered
	default:
		f.inflight = 0
		// The fetch failed (no answer, or its connection was lost): the
		// next is a full fetch that closes the session and opens another
		// (FetchSessionHandler.handleError, nextCloseExisting).
		f.sessionEpoch = proto.InitialSessionEpoch
	}
	rm.sendFetch(f)
}

// backoff pauses fetching tp from f for replica.fetch.backoff.ms.
func (rm *replicaManager) backoff(f *fetcher, tp metadata.TopicPartition) {
	f.backoffTill[tp] = true
	f.touched(tp)
	rm.n.env.After(rm.cfg.ReplicaFetchBackoff, fetcherTimer{leader: f.leader, backoff: true, tp: tp})
}

func (rm *replicaManager) peerDisconnected(peer sim.NodeID) {
	for _, id := range sortedKeys(rm.fetchers) {
		if f := rm.fetchers[id]; f.node == peer && f.inflight != 0 {
			// The fetch is lost with the connection: try again after the
			// backoff (the timer's gen is the fetch's, so it fires as a timeout).
			rm.n.env.After(rm.cfg.ReplicaFetchBackoff, fetchTimeout{leader: f.leader, gen: f.gen})
		}
	}
}

func (rm *replicaManager) handleFetchResponse(from sim.NodeID, m *proto.FetchResponse) {
	// Correlation ids are never reused, so at most one fetcher matches.
	var f *fetcher
	if !rm.nodeShared {
		// The only fetcher whose node is from.
		if x := rm.fetcherAt[from]; x != nil && x.inflight == m.CorrelationID {
			f = x
		}
	} else {
		for _, x := range rm.fetchers { // kafkasim:orderless: finds the one match
			if x.inflight == m.CorrelationID && x.node == from {
				f = x
			}
		}
	}
	if f == nil {
		return // an answer to a fetch given up on
	}
	f.inflight = 0
	f.gen++
	if f.answered() {
		rm.fetchesFreed++
	}
	if !f.sessionAnswered(m) {
		rm.sendFetch(f)
		return
	}
	for _, r := range m.Partitions {
		if rm.stopped {
			return // the log directory failed on an earlier partition
		}
		tp := metadata.TopicPartition{Topic: r.Topic, Partition: r.Partition}
		p := rm.parts.get(tp)
		if p == nil || p.isLeader || p.leader != f.leader || p.log == nil || !f.follows(tp) {
			continue // no longer fetched from f: Kafka's fetcher drops what it removed meanwhile
		}
		if s, ok := f.sentFor(tp); !ok || s.FetchOffset != p.log.LEO() || f.backoffTill[tp] {
			// The log moved since the fetch was sent (truncated on a leader
			// change, cut by recovery): the answer is for a position this
			// replica no longer holds. Kafka's fetcher processes an answer
			// only if the partition is ready to fetch and its fetch offset
			// is the one requested.
			continue
		}
		rm.processFetched(f, p, r)
	}
	rm.sendFetch(f)
}

// sessionAnswered moves the session on with an answer
// (FetchSessionHandler.handleResponse), and reports whether its partitions
// are to be processed: not after a session error. FETCH_SESSION_ID_NOT_FOUND
// (the leader restarted, or evicted the session) starts over with a new
// session; another error closes this one and opens another. A full fetch's
// answer names the session the leader opened (none: fetch in full again);
// an incremental one's moves to the next epoch, or, naming none, ends the
// session.
func (f *fetcher) sessionAnswered(m *proto.FetchResponse) bool {
	switch {
	case m.Error == proto.FetchSessionIDNotFound:
		f.sessionID, f.sessionEpoch = proto.InvalidSessionID, proto.InitialSessionEpoch
		return false
	case m.Error != proto.None:
		f.sessionEpoch = proto.InitialSessionEpoch
		return false
	case m.SessionID == proto.InvalidSessionID:
		f.sessionID, f.sessionEpoch = proto.InvalidSessionID, proto.InitialSessionEpoch
	case f.sessionEpoch == proto.InitialSessionEpoch:
		f.sessionID, f.sessionEpoch = m.SessionID, proto.NextSessionEpoch(proto.InitialSessionEpoch)
	default:
		f.sessionEpoch = proto.NextSessionEpoch(f.sessionEpoch)
	}
	return true
}

func (rm *replicaManager) processFetched(f *fetcher, p *partition, r proto.FetchPartitionResponse) {
	switch r.Error {
	case proto.None:
	case proto.OffsetOutOfRange:
		// Our log end is past the leader's (after an unclean election), or
		// before its log start (retention): move to where the leader is.
		switch {
		case r.LogEndOffset >= 0 && p.log.LEO() > r.LogEndOffset:
			rm.truncate(p, r.LogEndOffset, fmt.Sprintf("out of range: leader's log ends at %d", r.LogEndOffset))
		case r.LogStartOffset > p.log.LEO():
			rm.note("truncate", "%s: restart at the leader's log start %d", p.tp, r.LogStartOffset)
			removed := p.log.Batches(0)
			p.log.TruncateFullyAndStartAt(r.LogStartOffset)
			p.hw = r.LogStartOffset
			if a := rm.audit(); a != nil {
				a.ReplicaTruncated(rm.id(), p.tp, r.LogStartOffset, removed, "below the leader's log start")
			}
		default:
			rm.backoff(f, p.tp)
		}
		return
	case proto.FencedLeaderEpoch:
		if s, _ := f.sentFor(p.tp); s.CurrentLeaderEpoch != p.leaderEpoch {
			rm.note("replication", "%s: FENCED_LEADER_EPOCH for epoch %d, now %d: fetch again", p.tp, s.CurrentLeaderEpoch, p.leaderEpoch)
			return
		}
		p.failed = true // our epoch is newer than the leader's: wait for metadata
		p.touch()
		return
	default:
		rm.backoff(f, p.tp)
		return
	}
	if r.Diverging != nil {
		rm.truncateToDivergence(p, *r.Diverging)
		return
	}
	if len(r.Batches) > 0 {
		batches := r.Batches
		// Batches from an epoch newer than this replica knows are left for
		// later (KAFKA-18723): the metadata will catch up first.
		for i, b := range batches {
			if b.PartitionLeaderEpoch > p.leaderEpoch {
				batches = batches[:i]
				break
			}
		}
		if len(batches) > 0 && batches[0].BaseOffset < p.log.LEO() {
			// The batch holding our log end starts earlier (a fetch from the
			// middle of a batch cannot happen to followers, whose log ends on
			// batch boundaries); skip what we have.
			i := 0
			for i < len(batches) && batches[i].NextOffset() <= p.log.LEO() {
				i++
			}
			batches = batches[i:]
		}
		if len(batches) > 0 {
			if batches[0].BaseOffset < p.log.LEO() {
				// Our log ends inside the leader's batch: Kafka's follower
				// cannot append it either (UnexpectedAppendOffsetException).
				rm.note("replication", "%s: leader sent %d at our end %d", p.tp, batches[0].BaseOffset, p.log.LEO())
				rm.backoff(f, p.tp)
				return
			}
			// A batch above our log end follows a gap compaction left in
			// the leader's log: copied as is.
			before := rm.gate.Issued()
			if err := p.log.Append(batches, false); err != nil {
				rm.logDirFailed(fmt.Sprintf("%s: follower append failed: %v", p.tp, err))
				return
			}
			// Kafka's follower append flushes holding the log's lock too;
			// a follower made leader meanwhile waits for it.
			p.appendedFrom(batches[0].BaseOffset, before, nil)
		}
	}
	// The leader's log start is taken together with its high watermark, as
	// Kafka's processPartitionData does in one step (a log start past the
	// new high watermark is refused). It goes first so that the god view,
	// which checks what the new high watermark passes, sees a stale copy
	// below it (kept by a replica a leader whose epoch cache starts past its
	// epoch told to truncate there) as expired, as any reader does.
	if hw := min(r.HighWatermark, p.log.LEO()); r.LogStartOffset > p.log.LogStartOffset() && r.LogStartOffset <= hw {
		p.log.MaybeIncrementLogStartOffset(r.LogStartOffset)
	}
	p.setFollowerHW(r.HighWatermark)
}

// truncateToDivergence cuts the log where the leader says it diverges: to the
// end of that epoch in both logs; or, if this log never had that epoch, to
// where its largest earlier epoch ends (and the next fetch walks back
// further).
func (rm *replicaManager) truncateToDivergence(p *partition, d proto.EpochEndOffset) {
	leo := p.log.LEO()
	var to int64
	if rm.cfg.Bugs.EpochLookupFirstGreater {
		to = min(d.EndOffset, leo) // before KIP-279: one truncation, no local lookup
	} else {
		fe, fend := p.log.Epochs().EndOffsetFor(d.Epoch, leo)
		switch {
		case fe == -1:
			to = min(d.EndOffset, leo)
		case fe != d.Epoch:
			to = min(fend, leo)
		default:
			to = min(fend, d.EndOffset, leo)
		}
	}
	rm.truncate(p, to, fmt.Sprintf("diverging epoch %d ends at %d", d.Epoch, d.EndOffset))
}
