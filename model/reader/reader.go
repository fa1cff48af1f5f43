// Package reader is a Kafka consumer in assign mode (no group): it reads
// every partition of its topics from the leaders, up to the high watermark,
// validating its position with the leader epoch after a leader change
// (KIP-320) and resetting it with auto.offset.reset when it falls out of
// range. Every poll is recorded in the history; final polls, made after the
// writers stop, read each partition to its end.
package reader

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"kafkasim/history"
	"kafkasim/internal/corrlist"
	"kafkasim/model/proto"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// Config is a reader instance's configuration.
type Config struct {
	Name   string
	Topics []string
	// Isolation is isolation.level (read_uncommitted).
	Isolation string
	// AutoOffsetReset is auto.offset.reset: earliest, latest or none.
	AutoOffsetReset string
	// Processing is the time spent between polls.
	Processing     sim.Range
	FetchMaxWait   time.Duration
	MaxPollRecords int
	// MaxPartitionFetchBytes is max.partition.fetch.bytes (1 MiB).
	MaxPartitionFetchBytes int
	RequestTimeout         time.Duration
	RetryBackoff           time.Duration
	// MetadataMaxAge is metadata.max.age.ms (5 minutes): how soon the
	// reader learns of partitions added to its topics.
	MetadataMaxAge time.Duration
	Brokers        []sim.NodeID
	Recorder       *history.Recorder
	Start, Stop    time.Duration
	// NoEpochValidation is the bug zoo's no-consumer-epoch-validation.
	NoEpochValidation bool
}

// DefaultConfig has Kafka's consumer defaults, except that a reader starts
// from the earliest offset (so that it can see everything written).
func DefaultConfig(name string, topics []string) Config {
	return Config{Name: name, Topics: topics, Isolation: "read_uncommitted", AutoOffsetReset: "earliest",
		Processing: sim.Range{Min: time.Millisecond, Max: 5 * time.Millisecond}, FetchMaxWait: 500 * time.Millisecond,
		MaxPollRecords: 500, MaxPartitionFetchBytes: 1 << 20, RequestTimeout: 30 * time.Second, RetryBackoff: 100 * time.Millisecond,
		MetadataMaxAge: 5 * time.Minute}
}

// LostRequestWait is the longest the reader waits on a request that gets no
// answer before it asks again: a fetch's fetch.max.wait.ms plus a tenth of
// request.timeout.ms (the timers below), then retry.backoff.ms.
func (c Config) LostRequestWait() time.Duration {
	return c.FetchMaxWait + c.RequestTimeout/10 + c.RetryBackoff
}

type partKey struct {
	topic     string
	partition int32
}

func (k partKey) String() string { return k.topic + "-" + strconv.Itoa(int(k.partition)) }

type position struct {
	key         partKey
	buf         []*record.Batch // fetched, not yet returned
	offset      int64           // -1: unknown, needs a reset
	offsetEpoch int32           // epoch of the last record consumed (-1: none)
	leader      int32
	leaderEpoch int32
	validating  bool
	// validateAfter is when a validation may be sent (again): a request in
	// flight waits for its answer or timeout, a failed one for
	// retry.backoff.ms (Kafka's SubscriptionState nextRetryTimeMs).
	validateAfter time.Duration
	resetting     bool
	end           int64 // final reads: the end to reach (-1: unknown)
}

type timerKind uint8

const (
	timerPoll timerKind = iota
	timerPollTimeout
	timerMetadata
	timerRequest
	timerMetadataAge
)

type rtimer struct {
	kind timerKind
	corr uint64
}

// String is how the trace shows the timer, which may come as a pointer into
// the fetch's own allocation (fetchBox). A trace records hundreds of
// thousands of these: no fmt.
func (t rtimer) String() string { return string(t.AppendDetail(nil)) }

// AppendDetail appends String's words (sim.DetailAppender).
func (t rtimer) AppendDetail(b []byte) []byte {
	b = append(b, "reader.rtimer {kind:"...)
	b = strconv.AppendInt(b, int64(t.kind), 10)
	b = append(b, " corr:"...)
	b = strconv.AppendUint(b, t.corr, 10)
	return append(b, '}')
}

// fetchBox is a reader's fetch, its partitions when they are few, and its
// timer: one allocation.
type fetchBox struct {
	req   proto.FetchRequest
	parts [2]proto.FetchPartition
	timer rtimer
}

// Reader is one reader instance.
type Reader struct {
	cfg Config
	env sim.Env
	rec *history.Recorder
	// hist is the reader's handle on rec (when rec is set).
	hist history.Proc

	brokers  map[int32]sim.NodeID
	pos      map[partKey]*position
	parts    []*position // by key: the order partitions are read in
	metaCorr uint64
	corr     uint64

	polling  bool
	pollWait uint64 // the timer of a poll waiting for fetches, 0 if none
	// pollSpans are the records of the poll under way, as spans of the
	// batches they come from; pollN counts them.
	pollSpans []history.RecordSpan
	pollN     int
	fetching  inFlight // leader -> fetch in flight
	pollStart time.Duration
	final     bool
	finalDone bool
	// finalStarts are log start offsets final reads began from, not yet
	// recorded in the history.
	finalStarts map[string]int64
	// leaderlessAt is when the reader last asked for metadata because a
	// partition had no leader.
	leaderlessAt time.Duration
	stopped      bool
	// requests in flight: their kind ("fetch", "reset", "end",
	// "validate") and, for a fetch, what it asked for.
	requests corrlist.List[request]
	// leaderScratch is fetchMissing's list of leaders.
	leaderScratch []int32

	// Stats for reports and tests.
	Stats Stats
}

// request is a request in flight: its kind and, for a fetch, the
// partitions it asked for.
type request struct {
	kind  string
	parts []proto.FetchPartition
}

// Stats counts what the reader did.
type Stats struct {
	Polls, Records, Resets, Truncations, Validations int
}

// New returns a constructor for a reader.
func New(cfg Config) func() sim.Node { return func() sim.Node { return &Reader{cfg: cfg} } }

// Start begins polling.
func (r *Reader) Start(env sim.Env) {
	r.env = env
	r.rec = r.cfg.Recorder
	if r.rec != nil {
		r.hist = r.rec.Proc(r.cfg.Name)
	}
	r.brokers = map[int32]sim.NodeID{}
	r.pos = map[partKey]*position{}
	r.requests = corrlist.List[request]{}
	if env.Incarnation() > 1 && r.rec != nil {
		r.rec.Restarted(r.cfg.Name) // the world recorded the death (Recorder.Died)
	}
	r.refreshMetadata()
	if r.cfg.MetadataMaxAge > 0 {
		env.After(r.cfg.MetadataMaxAge, rtimer{kind: timerMetadataAge})
	}
	env.After(max(r.cfg.Start-env.WorldTime(), 0)+r.cfg.Processing.Draw(env.Rand()), rtimer{kind: timerPoll})
}

// StartFinal switches to final reads, Jepsen's: every partition is read again
// from its log start to the end it has now (its high watermark), with polls
// recorded as final, so that an acknowledged record missing from them is
// lost rather than merely unseen.
func (r *Reader) StartFinal() {
	r.final = true
	r.finalDone = false
	for _, p := range r.parts {
		p.end = -1
		p.offset, p.offsetEpoch, p.validating, p.resetting = -1, -1, false, false
		p.buf = nil
	}
	r.listOffsets(proto.ListEarliest, false)
	r.listOffsets(proto.ListLatest, true)
}

// FinalDone reports whether final reads reached every partition's end.
func (r *Reader) FinalDone() bool { return r.final && r.finalDone }

// Stop ends polling.
func (r *Reader) Stop() { r.stopped = true }

// Deliver handles broker answers.
func (r *Reader) Deliver(from sim.NodeID, m sim.Message) {
	switch m := m.(type) {
	case *proto.MetadataResponse:
		r.handleMetadata(m)
	case *proto.FetchResponse:
		r.handleFetch(m)
	case *proto.ListOffsetsResponse:
		r.handleListOffsets(m)
	case *proto.OffsetsForLeaderEpochResponse:
		r.handleValidation(m)
	case *sim.Disconnected:
		r.refreshMetadata()
	}
}

// Fire handles timers.
func (r *Reader) Fire(t sim.Timer) {
	rt, ok := t.(rtimer)
	if p, boxed := t.(*rtimer); boxed {
		rt, ok = *p, true
	}
	if !ok {
		return
	}
	switch rt.kind {
	case timerPoll:
		r.poll()
	case timerPollTimeout:
		if r.polling && r.pollWait == rt.corr {
			r.drain()
			r.finishPoll()
		}
	case timerMetadata:
		if rt.corr == r.metaCorr {
			r.metaCorr = 0
			r.refreshMetadata()
		}
	case timerMetadataAge:
		r.refreshMetadata()
		r.env.After(r.cfg.MetadataMaxAge, rtimer{kind: timerMetadataAge})
	case timerRequest:
		if req, ok := r.requests.Remove(rt.corr); ok {
			if req.kind == "fetch" {
				r.fetchDone(rt.corr)
				r.refreshMetadata()
				return
			}
			r.requestFailed(req.kind)
		}
	}
}

func (r *Reader) brokerIDs() []int32 { return slices.Sorted(maps.Keys(r.brokers)) }

func (r *Reader) refreshMetadata() {
	if r.metaCorr != 0 || len(r.cfg.Brokers) == 0 {
		return
	}
	r.corr++
	r.metaCorr = r.corr
	target := r.cfg.Brokers[int(r.corr)%len(r.cfg.Brokers)]
	if ids := r.brokerIDs(); len(ids) > 0 {
		target = r.brokers[ids[int(r.corr)%len(ids)]]
	}
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
		for _, mp := range t.Partitions {
			k := partKey{t.Name, mp.Partition}
			p := r.pos[k]
			if p == nil {
				p = &position{key: k, offset: -1, offsetEpoch: -1, leader: -1, leaderEpoch: -1, end: -1}
				r.pos[k] = p
				r.parts = append(r.parts, p)
				slices.SortFunc(r.parts, func(a, b *position) int {
					if a.key.topic != b.key.topic {
						if a.key.topic < b.key.topic {
							return -1
						}
						return 1
					}
					return int(a.key.partition - b.key.partition)
				})
			}
			if mp.LeaderEpoch < p.leaderEpoch {
				continue // stale metadata
			}
			changed := mp.Leader != p.leader || mp.LeaderEpoch != p.leaderEpoch
			p.leader, p.leaderEpoch = mp.Leader, mp.LeaderEpoch
			if changed {
				p.buf = nil // fetched from the old leader: fetch again
			}
			if changed && p.offset >= 0 && p.offsetEpoch >= 0 && !r.cfg.NoEpochValidation && mp.Leader >= 0 {
				// KIP-320: the leader changed; before fetching again, ask the
				// new leader whether our position's epoch still ends where we
				// think, or the log was truncated under us.
				p.validating, p.validateAfter = true, 0
			}
		}
	}
	r.validate()
	r.resetPositions()
}

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

// poll returns what the fetch buffer holds (Kafka's poll does not wait when
// records are buffered), and keeps one fetch in flight per leader for the
// partitions whose buffers are empty. With nothing buffered it waits for the
// first fetch to answer, up to the fetch wait.
func (r *Reader) poll() {
	if r.stopped && !r.final {
		return
	}
	if r.cfg.Stop > 0 && r.env.WorldTime() >= r.cfg.Stop && !r.final {
		return
	}
	if r.final && r.finalDone {
		return
	}
	if r.final {
		r.askFinalEnds()
	}
	r.refreshIfLeaderless()
	r.polling = true
	r.pollSpans, r.pollN = r.pollSpans[:0], 0
	v := history.NoValue()
	v.Isolation = r.cfg.Isolation
	v.Final = r.final
	if r.rec != nil {
		r.hist.Invoke(history.FPoll, &v)
	}
	r.Stats.Polls++
	r.drain()
	r.fetchMissing()
	if r.pollN > 0 {
		r.finishPoll()
		return
	}
	// Nothing buffered: wait for a fetch (or the fetch wait, as a real
	// poll(timeout) returns empty).
	r.corr++
	r.pollWait = r.corr
	r.env.After(r.cfg.FetchMaxWait+r.cfg.RequestTimeout/10, rtimer{kind: timerPollTimeout, corr: r.corr})
	if r.fetching.empty() {
		r.refreshMetadata()
	}
}

// drain moves buffered records at or after each position into the poll, up
// to max.poll.records, partitions in order.
func (r *Reader) drain() {
	for _, p := range r.parts {
		if r.pollN >= r.cfg.MaxPollRecords {
			return
		}
		for len(p.buf) > 0 && r.pollN < r.cfg.MaxPollRecords {
			b := p.buf[0]
			r.take(p, b)
			if p.offset > b.LastOffset() {
				p.buf = p.buf[1:]
			}
		}
		if len(p.buf) == 0 {
			p.buf = nil
		}
	}
}

// fetchMissing sends a fetch to each leader without one in flight, for the
// partitions with a valid position and an empty buffer.
func (r *Reader) fetchMissing() {
	leaders := r.leaderScratch[:0]
	for _, p := range r.parts {
		if r.wantsFetch(p) && !slices.Contains(leaders, p.leader) {
			leaders = append(leaders, p.leader)
		}
	}
	slices.Sort(leaders)
	r.leaderScratch = leaders
	for _, l := range leaders {
		node, ok := r.brokers[l]
		if !ok {
			continue
		}
		box := &fetchBox{}
		parts := box.parts[:0] // the request keeps the list
		for _, p := range r.parts {
			if p.leader == l && r.wantsFetch(p) {
				parts = append(parts, proto.FetchPartition{
					TopicPartition: proto.TopicPartition{Topic: p.key.topic, Partition: p.key.partition}, FetchOffset: p.offset,
					CurrentLeaderEpoch: p.leaderEpoch, LastFetchedEpoch: -1, MaxBytes: r.cfg.MaxPartitionFetchBytes})
			}
		}
		r.corr++
		r.fetching.set(l, r.corr)
		box.req = proto.FetchRequest{CorrelationID: r.corr, ReplicaID: -1, BrokerEpoch: -1, MaxWait: r.cfg.FetchMaxWait, Partitions: parts}
		r.env.Send(node, &box.req)
		box.timer = rtimer{kind: timerRequest, corr: r.corr}
		r.env.After(r.cfg.FetchMaxWait+r.cfg.RequestTimeout/10, &box.timer)
		r.requests.Add(r.corr, request{kind: "fetch", parts: parts})
	}
}

// wantsFetch reports whether p needs a fetch: a valid position, nothing
// buffered, its leader's fetch not in flight, and (in the final read) not
// yet at the end.
func (r *Reader) wantsFetch(p *position) bool {
	if p.leader < 0 || p.offset < 0 || p.validating || p.resetting || len(p.buf) > 0 {
		return false
	}
	if r.fetching.busy(p.leader) {
		return false
	}
	return !r.final || p.end < 0 || p.offset < p.end
}

func (r *Reader) handleFetch(m *proto.FetchResponse) {
	req, ok := r.requests.Get(m.CorrelationID)
	if !ok || req.kind != "fetch" {
		return
	}
	r.requests.Remove(m.CorrelationID)
	r.fetchDone(m.CorrelationID)
	from := req.parts
	refresh := false
	for _, fp := range m.Partitions {
		k := partKey{fp.Topic, fp.Partition}
		p := r.pos[k]
		if p == nil {
			continue
		}
		switch fp.Error {
		case proto.None:
		case proto.OffsetOutOfRange:
			if r.cfg.AutoOffsetReset != "none" {
				p.offset, p.offsetEpoch = -1, -1
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
		if off, ok := fetchedFrom(from, k); ok && off != p.offset {
			r.env.Note("reader", fmt.Sprintf("%s: discarding stale fetch from %d, position %d", k, off, p.offset))
			continue
		}
		if len(fp.Batches) > 0 && fp.Batches[len(fp.Batches)-1].LastOffset() >= p.offset {
			p.buf = fp.Batches
		}
	}
	if refresh {
		r.refreshMetadata()
	}
	if r.polling && r.pollWait != 0 {
		r.drain()
		if r.pollN > 0 || r.fetching.empty() {
			r.finishPoll()
		}
	}
	r.fetchMissing()
}

// fetchedFrom is the offset a fetch asked for in a partition (a fetch names
// a handful of partitions: a scan beats a map).
func fetchedFrom(asked []proto.FetchPartition, k partKey) (int64, bool) {
	for _, fp := range asked {
		if fp.Partition == k.partition && fp.Topic == k.topic {
			return fp.FetchOffset, true
		}
	}
	return 0, false
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

// take adds a batch's records at or after the position, up to max.poll.records.
func (r *Reader) take(p *position, b *record.Batch) {
	// The records at or past the position, up to max.poll.records: offsets
	// grow within a batch, so they are one run of its records. Record i is
	// at BaseOffset+i unless compaction thinned the batch; only then are
	// its records decoded to find their offsets.
	lo, n := 0, b.RecordCount()
	var thinned []record.Record
	if b.Thinned() {
		thinned = b.Records()
		for lo < n && b.BaseOffset+int64(thinned[lo].OffsetDelta) < p.offset {
			lo++
		}
	} else {
		lo = int(min(max(p.offset-b.BaseOffset, 0), int64(n)))
	}
	hi := min(n, lo+r.cfg.MaxPollRecords-r.pollN)
	if hi > lo {
		r.pollSpans = append(r.pollSpans, history.RecordSpan{Src: b, Topic: p.key.topic, Partition: p.key.partition, Lo: int32(lo), Hi: int32(hi)})
		r.pollN += hi - lo
		last := b.BaseOffset + int64(hi-1)
		if thinned != nil {
			last = b.BaseOffset + int64(thinned[hi-1].OffsetDelta)
		}
		p.offset = last + 1
		p.offsetEpoch = b.PartitionLeaderEpoch
	}
	// A thinned (compacted) batch may end before its last offset.
	if p.offset <= b.LastOffset() && r.pollN < r.cfg.MaxPollRecords {
		p.offset = b.LastOffset() + 1
		p.offsetEpoch = b.PartitionLeaderEpoch
	}
}

func (r *Reader) finishPoll() {
	if !r.polling {
		return
	}
	r.polling = false
	r.pollWait = 0
	v := history.NoValue()
	v.Isolation = r.cfg.Isolation
	v.Final = r.final
	if r.final && len(r.finalStarts) > 0 {
		v.X().LogStartOffsets = r.finalStarts
		r.finalStarts = nil
	}
	if r.rec != nil {
		// The history keeps the spans (the batches are never changed),
		// not a copy of each record.
		r.hist.CompletePoll(history.OK, v, r.pollSpans)
	}
	r.Stats.Records += r.pollN
	r.pollSpans, r.pollN = r.pollSpans[:0], 0
	if r.final {
		r.checkFinal()
	}
	r.validate()
	r.env.After(r.cfg.Processing.Draw(r.env.Rand()), rtimer{kind: timerPoll})
}

func (r *Reader) checkFinal() {
	if !r.final {
		return
	}
	for _, p := range r.parts {
		if p.end < 0 || p.offset < p.end {
			return
		}
	}
	r.finalDone = true
}

// Position returns the next offset the reader will read in a partition, or
// -1 when it does not know (not assigned yet, or resetting).
func (r *Reader) Position(topic string, partition int32) int64 {
	p := r.pos[partKey{topic: topic, partition: partition}]
	if p == nil || p.resetting {
		return -1
	}
	return p.offset
}

// RefreshMetadata asks for metadata now (unless a request is on its way).
func (r *Reader) RefreshMetadata() { r.refreshMetadata() }

// Knows reports whether the reader's metadata has the partition.
func (r *Reader) Knows(topic string, partition int32) bool {
	return r.pos[partKey{topic: topic, partition: partition}] != nil
}

// Reads reports whether the reader reads a topic.
func (r *Reader) Reads(topic string) bool { return slices.Contains(r.cfg.Topics, topic) }

// FinalPending describes the partitions final reads have not finished, for
// a liveness failure's message.
func (r *Reader) FinalPending() string {
	var parts []string
	for _, p := range r.parts {
		if p.end < 0 || p.offset < p.end {
			parts = append(parts, fmt.Sprintf("%s at %d of %d (leader %d, validating %v, resetting %v)", p.key, p.offset, p.end, p.leader, p.validating, p.resetting))
		}
	}
	if len(r.parts) == 0 {
		return "no partitions assigned"
	}
	return strings.Join(parts, "; ")
}

// askFinalEnds asks again for the end of every partition final reads do not
// know the end of yet: partitions that appeared after StartFinal (the reader
// learned them from fresh metadata) or whose first answer was an error.
func (r *Reader) askFinalEnds() {
	missing := false
	for _, p := range r.parts {
		if p.end < 0 && p.leader >= 0 {
			missing = true
		}
	}
	if !missing {
		return
	}
	for _, req := range r.requests.All() {
		if req.kind == "end" {
			return
		}
	}
	r.listOffsets(proto.ListLatest, true)
}

// refreshIfLeaderless asks for metadata, at most every retry.backoff.ms,
// while a partition the reader reads has no known leader: nothing else would
// tell it when one is elected.
func (r *Reader) refreshIfLeaderless() {
	now := r.env.WorldTime()
	if now < r.leaderlessAt+r.cfg.RetryBackoff {
		return
	}
	for _, p := range r.parts {
		if _, known := r.brokers[p.leader]; p.leader < 0 || !known {
			r.leaderlessAt = now
			r.refreshMetadata()
			return
		}
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
