package broker

import (
	"slices"
	"time"

	"kafkasim/model/metadata"
	"kafkasim/model/proto"
)

// The leader's side of incremental fetch sessions (KIP-227; Kafka's
// FetchSession, FetchSessionCache and FetchManager.newContext in
// kafka.server). A follower's first fetch from a leader names every
// partition it follows there and opens a session; each later fetch names
// only the partitions whose fetch data changed, and the answer carries only
// the partitions with something new: records, a high watermark or log
// start the session was not told yet, an error, a divergence. The leader
// still serves every partition of the session on every fetch, as Kafka's
// IncrementalFetchContext does (foreachPartition): the follower's fetch
// state moves on each fetch, which the ISR rules read. Consumers fetch
// without a session (docs/model.md).

const (
	// fetchSessionCacheSlots is max.incremental.fetch.session.cache.slots.
	fetchSessionCacheSlots = 1000
	// fetchSessionEviction is how long a session must go unused before a
	// new one may evict it (FetchSessionCache's evictionMs, 120 s).
	fetchSessionEviction = 120 * time.Second
)

// cachedPartition is a session's partition (Kafka's CachedPartition): the
// follower's last fetch data for it, and the high watermark and log start
// the session was last told (-1: tell them with the next answer: a new
// partition, or one whose answer was an error).
type cachedPartition struct {
	fp       proto.FetchPartition
	hw       int64
	logStart int64
	// quiet is what the last full look at the partition found (see
	// replicaManager.fetchQuiet): the follower caught up, in the ISR,
	// nothing to read, no error; the state it saw, to tell whether anything
	// moved since. Not Kafka's: it answers the same without looking again.
	quiet bool
	p     *partition
	f     *followerState
	ver   uint64 // p's version then (partition.touch)
	leo   int64
	start int64
	// lazy: quiet, told its high watermark and log start, and off the
	// session's dirty list (fetchSession.dirty).
	lazy bool
}

// fetchSession is one follower's session (Kafka's FetchSession): parts
// sorted by partition.
type fetchSession struct {
	id       int32
	epoch    int32 // the epoch the next fetch must carry
	parts    []cachedPartition
	created  time.Duration
	lastUsed time.Duration

	// dirty are the indices into parts, sorted, that the next fetch looks
	// at: every partition but the lazy ones, which are quiet, told, and
	// unchanged since (partition.touch takes them off their lazy state
	// through partition.quietIn). Serving a lazy partition would only move
	// its follower's fetch state to the fetch's time and broker epoch: the
	// session keeps those for all of them (quietAt, quietEpoch; the
	// follower states read them through followerState.lazy). Not Kafka's,
	// whose IncrementalFetchContext visits every partition: the answers and
	// the follower states are the same, the simulation's cost is not.
	dirty      []int32
	quietAt    time.Duration
	quietEpoch int64
	// While a fetch is served (serving), the lazy partitions before the
	// one it serves (cursor) were served at servingAt with servingEpoch,
	// the others not yet; next are the lazy ones woken after being
	// passed, for the next fetch.
	serving      bool
	cursor       int32
	servingAt    time.Duration
	servingEpoch int64
	next         []int32
	// answered are the indices of the partitions the answer being made
	// carries, in its order.
	answered []int32

	// idx finds parts' partitions when indexed (see tpIndex); while the
	// parts are being reshaped, and should a partition number be negative,
	// find searches them.
	idx     tpIndex
	indexed bool
}

// lazyState is what a lazy partition at index i says of its follower:
// the time and broker epoch of the session's last fetch that served it.
func (s *fetchSession) lazyState(i int32) (time.Duration, int64) {
	if s.serving && i < s.cursor {
		return s.servingAt, s.servingEpoch
	}
	return s.quietAt, s.quietEpoch
}

// unlazy ends the laziness of parts[i], if lazy, writing its follower's
// state back; it reports whether it was lazy. The caller puts i on a list.
func (s *fetchSession) unlazy(i int32) bool {
	c := &s.parts[i]
	if !c.lazy {
		return false
	}
	c.lazy = false
	if c.f.lazy == s {
		c.f.settle()
	}
	c.p.leftQuietIn(s)
	return true
}

// leftQuietIn: session s no longer holds p lazily.
func (p *partition) leftQuietIn(s *fetchSession) {
	if j := slices.IndexFunc(p.quietIn, func(q quietRef) bool { return q.s == s }); j >= 0 {
		p.quietIn = slices.Delete(p.quietIn, j, j+1)
	}
}

// addDirty puts index i on the dirty list, in order.
func (s *fetchSession) addDirty(i int32) {
	if j, ok := slices.BinarySearch(s.dirty, i); !ok {
		s.dirty = slices.Insert(s.dirty, j, i)
	}
}

// wake: p, lazy in this session, changed (partition.touch). During a
// fetch, a partition not passed yet is served by it, as Kafka's loop
// would reach it after the change; one passed waits for the next fetch.
// at is where p was when it became lazy: p's index in parts, found
// without a lookup (were it not, the lookup finds it).
func (s *fetchSession) wake(p *partition, at int32) {
	i, ok := int(at), at >= 0 && int(at) < len(s.parts) && s.parts[at].p == p
	if !ok {
		i, ok = s.lookup(p.tp)
	}
	if !ok || s.parts[i].p != p || !s.unlazy(int32(i)) {
		// Not held lazily here (cannot happen): drop the stale entry.
		p.leftQuietIn(s)
		return
	}
	if s.serving && int32(i) < s.cursor {
		s.next = append(s.next, int32(i))
		return
	}
	s.addDirty(int32(i))
}

// wakeAll ends every partition's laziness: all go on the dirty list.
func (s *fetchSession) wakeAll() {
	s.dirty = s.dirty[:0]
	for i := range s.parts {
		s.unlazy(int32(i))
		s.dirty = append(s.dirty, int32(i))
	}
}

// rest is the end of a fetch served in session s: the partitions it looked
// at that are quiet, told, and unchanged become lazy.
func (s *fetchSession) rest() {
	keep := s.dirty[:0]
	for _, i := range s.dirty {
		c := &s.parts[i]
		if !c.quiet || c.p.ver != c.ver || c.leo != c.hw || c.start != c.logStart {
			keep = append(keep, i)
			continue
		}
		c.lazy = true
		if c.f.lazy != nil && c.f.lazy != s {
			c.f.settle()
		}
		c.f.lazy, c.f.lazyIdx = s, i
		if !slices.ContainsFunc(c.p.quietIn, func(q quietRef) bool { return q.s == s }) {
			c.p.quietIn = append(c.p.quietIn, quietRef{s: s, at: i})
		}
	}
	s.dirty = keep
	for _, i := range s.next {
		s.addDirty(i)
	}
	s.next = s.next[:0]
}

// lookup returns the index of tp in parts, if there.
func (s *fetchSession) lookup(tp metadata.TopicPartition) (int, bool) {
	if s.indexed {
		return s.idx.find(tp.Topic, tp.Partition)
	}
	return s.search(tp)
}

// find returns the index of tp in parts, or where it would go.
func (s *fetchSession) find(tp metadata.TopicPartition) (int, bool) {
	if s.indexed {
		if i, ok := s.idx.find(tp.Topic, tp.Partition); ok {
			return i, true
		}
	}
	return s.search(tp)
}

// reindex builds idx again, after parts were reshaped.
func (s *fetchSession) reindex() {
	s.indexed = s.idx.build(len(s.parts), func(i int) (string, int32) { return s.parts[i].fp.Topic, s.parts[i].fp.Partition })
}

func (s *fetchSession) search(tp metadata.TopicPartition) (int, bool) {
	return slices.BinarySearchFunc(s.parts, tp, func(c cachedPartition, tp metadata.TopicPartition) int {
		return cmpFetchPartition(c.fp, tp)
	})
}

// fetchSessionCache is a broker's sessions (Kafka's FetchSessionCache).
// Session ids are drawn from a counter, not at random: the first of each
// incarnation of the broker starts at the incarnation times 2^20, so a
// session id a follower kept from the broker's previous process names no
// session of this one.
type fetchSessionCache struct {
	sessions map[int32]*fetchSession
	nextID   int32
}

// fetchContextKind is which of Kafka's FetchContexts serves a fetch.
type fetchContextKind uint8

const (
	sessionlessFetch  fetchContextKind = iota // a consumer's (SessionlessFetchContext)
	fullFetch                                 // opens a session (FullFetchContext)
	incrementalFetch                          // IncrementalFetchContext
	sessionErrorFetch                         // SessionErrorContext
)

// fetchContext is how a fetch is served (Kafka's FetchContext), made once
// when the fetch is read: a fetch that waits in purgatory keeps it.
type fetchContext struct {
	kind    fetchContextKind
	session *fetchSession
	err     proto.ErrorCode
}

// newFetchContext is FetchManager.newContext: a full fetch closes the
// session it names and will open another; an incremental one must name a
// session this broker has, at the epoch it expects, and updates it with
// the partitions named (added or altered) and forgotten.
func (rm *replicaManager) newFetchContext(m *proto.FetchRequest) fetchContext {
	if m.ReplicaID < 0 || m.SessionEpoch == proto.FinalSessionEpoch {
		if m.SessionID != proto.InvalidSessionID {
			rm.removeSession(m.SessionID)
		}
		return fetchContext{kind: sessionlessFetch}
	}
	if m.SessionEpoch == proto.InitialSessionEpoch {
		if m.SessionID != proto.InvalidSessionID {
			rm.removeSession(m.SessionID)
		}
		return fetchContext{kind: fullFetch}
	}
	s := rm.sessions.sessions[m.SessionID]
	switch {
	case s == nil:
		return fetchContext{kind: sessionErrorFetch, err: proto.FetchSessionIDNotFound}
	case s.epoch != m.SessionEpoch:
		return fetchContext{kind: sessionErrorFetch, err: proto.InvalidFetchSessionEpoch}
	}
	reshaped := false // indices moved: every partition is looked at again
	for _, fp := range m.Partitions {
		tp := metadata.TopicPartition{Topic: fp.Topic, Partition: fp.Partition}
		if i, ok := s.find(tp); ok {
			if s.unlazy(int32(i)) {
				s.addDirty(int32(i))
			}
			s.parts[i].fp = fp // updateRequestParams
			s.parts[i].quiet = false
		} else {
			if !reshaped {
				s.wakeAll()
				reshaped, s.indexed = true, false
			}
			s.parts = slices.Insert(s.parts, i, cachedPartition{fp: fp, hw: -1, logStart: -1})
		}
	}
	for _, tp := range m.Forgotten {
		if i, ok := s.find(metadata.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}); ok {
			if !reshaped {
				s.wakeAll()
				reshaped, s.indexed = true, false
			}
			s.parts = slices.Delete(s.parts, i, i+1)
		}
	}
	if reshaped {
		s.wakeAll()
		s.reindex()
	}
	if len(s.parts) == 0 {
		// Nothing left: the session closes and the fetch is served
		// without one.
		rm.removeSession(s.id)
		return fetchContext{kind: sessionlessFetch}
	}
	s.lastUsed = rm.now()
	s.epoch = proto.NextSessionEpoch(s.epoch)
	return fetchContext{kind: incrementalFetch, session: s}
}

func (rm *replicaManager) removeSession(id int32) {
	if s := rm.sessions.sessions[id]; s != nil {
		s.wakeAll()
	}
	delete(rm.sessions.sessions, id)
}

// openSession caches a session for a full fetch being answered with resp
// (FullFetchContext.updateAndGenerateResponseData, maybeCreateSession) and
// returns its id, or InvalidSessionID when the cache has no room.
func (rm *replicaManager) openSession(m *proto.FetchRequest, resp *proto.FetchResponse) int32 {
	c := &rm.sessions
	if c.sessions == nil {
		c.sessions = map[int32]*fetchSession{}
	}
	if len(c.sessions) >= fetchSessionCacheSlots && !rm.evictSession(len(m.Partitions)) {
		return proto.InvalidSessionID
	}
	if c.nextID == 0 {
		c.nextID = int32((rm.n.env.Incarnation() % 2047) << 20)
	}
	for {
		c.nextID++
		if c.nextID <= 0 {
			c.nextID = 1
		}
		if c.sessions[c.nextID] == nil {
			break
		}
	}
	s := &fetchSession{id: c.nextID, epoch: proto.NextSessionEpoch(proto.InitialSessionEpoch), created: rm.now(), lastUsed: rm.now()}
	s.parts = make([]cachedPartition, 0, len(m.Partitions))
	for i, fp := range m.Partitions {
		s.parts = append(s.parts, cachedPartition{fp: fp})
		rm.told(m, &s.parts[len(s.parts)-1], &resp.Partitions[i])
	}
	slices.SortStableFunc(s.parts, func(a, b cachedPartition) int {
		return cmpFetchPartition(a.fp, metadata.TopicPartition{Topic: b.fp.Topic, Partition: b.fp.Partition})
	})
	s.reindex()
	s.wakeAll()
	c.sessions[s.id] = s
	return s.id
}

// evictSession makes room for a follower's session of size partitions
// (FetchSessionCache.tryEvict, every session a follower's, so privileged):
// the least recently used session if it went unused for the eviction
// time, else the smallest session older than that if it is no larger.
func (rm *replicaManager) evictSession(size int) bool {
	now := rm.now()
	var lru, small *fetchSession
	ids := make([]int32, 0, len(rm.sessions.sessions))
	for id := range rm.sessions.sessions { // kafkasim:orderless: sorted below
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		s := rm.sessions.sessions[id]
		if lru == nil || s.lastUsed < lru.lastUsed {
			lru = s
		}
		if now-s.created > fetchSessionEviction && (small == nil || len(s.parts) < len(small.parts)) {
			small = s
		}
	}
	switch {
	case lru != nil && now-lru.lastUsed > fetchSessionEviction:
		rm.removeSession(lru.id)
	case small != nil && len(small.parts) <= size:
		rm.removeSession(small.id)
	default:
		return false
	}
	return true
}

// mustRespond: an incremental answer carries the partition
// (CachedPartition.maybeUpdateResponseData).
func mustRespond(c *cachedPartition, r *proto.FetchPartitionResponse) bool {
	return len(r.Batches) > 0 || r.HighWatermark != c.hw || r.LogStartOffset != c.logStart ||
		r.Error != proto.None || r.Diverging != nil
}

// told records what the session was told of a partition (the update half
// of maybeUpdateResponseData: an error makes the next answer carry the
// partition again), and whether the partition is quiet.
func (rm *replicaManager) told(m *proto.FetchRequest, c *cachedPartition, r *proto.FetchPartitionResponse) {
	c.hw, c.logStart = r.HighWatermark, r.LogStartOffset
	if r.Error != proto.None {
		c.hw = -1
	}
	rm.observeQuiet(m, c, r)
}

// observeQuiet notes, after a full look at a partition for a follower's
// fetch, whether it was quiet: no error, no divergence, nothing to read,
// the follower at the leader's log end and in the ISR, the high watermark
// at the log end too. Until the partition changes (partition.touch), the
// same fetch data gets the same answer, and the fetch moves nothing but
// the follower's fetch state.
func (rm *replicaManager) observeQuiet(m *proto.FetchRequest, c *cachedPartition, r *proto.FetchPartitionResponse) {
	c.quiet = false
	if r.Error != proto.None || r.Diverging != nil || len(r.Batches) > 0 || c.fp.FetchOffset != r.LogEndOffset {
		return
	}
	p := rm.parts.get(metadata.TopicPartition{Topic: c.fp.Topic, Partition: c.fp.Partition})
	if p == nil || !p.isLeader || p.log == nil || p.hw != r.LogEndOffset || p.log.LEO() != r.LogEndOffset {
		return
	}
	f := p.follower(m.ReplicaID)
	if f == nil || !slices.Contains(p.isr, f.id) {
		return
	}
	c.quiet, c.p, c.f, c.ver = true, p, f, p.ver
	c.leo, c.start = r.LogEndOffset, p.log.LogStartOffset()
}

// fetchQuiet serves a quiet partition of a session without reading it
// (see observeQuiet), if it did not change since (its version) and the
// follower's broker epoch is current (staleBroker false). What
// fetchPartition would do then is only the follower's fetch state
// (updateFollowerFetchState: caught up now; a member of the ISR does not
// join it again, and a high watermark at the log end does not move). It
// reports whether it served the partition, and fills r when the answer
// must carry it (the session was not told its high watermark or log start
// yet).
func (rm *replicaManager) fetchQuiet(m *proto.FetchRequest, c *cachedPartition, staleBroker bool, r *proto.FetchPartitionResponse) (served, respond bool) {
	if !c.quiet || staleBroker || c.p.ver != c.ver {
		return false, false
	}
	f := c.f
	f.settle() // lazy in a session its follower left, if any
	*f = f.fetched(c.fp.FetchOffset, c.leo, m.BrokerEpoch, rm.now())
	if c.leo == c.hw && c.start == c.logStart {
		return true, false
	}
	p := c.p
	*r = proto.FetchPartitionResponse{TopicPartition: c.fp.TopicPartition, LeaderEpoch: p.leaderEpoch,
		HighWatermark: c.leo, LogStartOffset: c.start, LogEndOffset: c.leo, LastStableOffset: -1}
	return true, true
}

// staleFollower: the fetch comes from a follower's previous life (its
// broker epoch is older than the registered one), which fetchPartition
// refuses partition by partition.
func (rm *replicaManager) staleFollower(m *proto.FetchRequest) bool {
	b, ok := rm.image().Brokers[m.ReplicaID]
	return ok && m.BrokerEpoch >= 0 && b.Epoch > m.BrokerEpoch
}
