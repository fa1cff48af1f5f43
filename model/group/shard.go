package group

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"kafkasim/model/broker"
	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// A shard is the state of one partition of __consumer_offsets this broker
// leads (Kafka's CoordinatorRuntime.CoordinatorContext with its
// GroupCoordinatorShard): loaded from the log, then changed by operations
// whose records it appends. Its in-memory state runs ahead of the log's
// high watermark (Kafka's timeline data structures): an operation applies
// its records at once and answers once they are committed; a read sees the
// committed state only.

type shardState uint8

const (
	shardLoading shardState = iota
	shardActive
	shardClosed
)

type shard struct {
	c     *coordinator
	tp    metadata.TopicPartition
	epoch int32
	state shardState

	// loadFrom is the loader's position.
	loadFrom int64

	groups  map[string]*classicGroup
	offsets map[offsetKey]offsetValue
	// txn are the offsets of open transactions (txnoffsets.go).
	txn txnOffsets
	// replayed counts the offset commits replayed, in log order: each
	// one's seq.
	replayed int64
	// pending are the writes appended and not yet committed, oldest first;
	// committedUpTo is the offset below which the log is committed (Kafka's
	// lastCommittedOffset).
	pending       []*pendingWrite
	committedUpTo int64
	// stable are the operations with no records waiting on log that no
	// write's waiters stand for (see waitForPendingWrites), oldest first.
	stable   []*stableWaiter
	stableID uint64

	timers   map[string]*shardTimerEntry
	timerSeq uint64

	consumer ConsumerProtocol
}

// pendingWrite is an appended write not yet committed. prevOffsets are the
// values it overwrote (absent: none), which the committed view still sees
// (Kafka reads its TimelineHashMaps at the last committed offset).
type pendingWrite struct {
	lastOffset  int64
	prevOffsets map[offsetKey]*offsetValue
	createdBy   []string // the simple groups it created
	waiters     []func(proto.ErrorCode)
	failed      bool
	// generations are the group generations its records carry, for the
	// auditor (only with one).
	generations []groupGeneration
	// removals are the consumer-group members its records remove, for
	// the auditor (only with one).
	removals []memberRemoval
}

// stableWaiter is an operation with no records waiting for the log below
// upTo to be committed, with its own write timeout.
type stableWaiter struct {
	upTo int64
	key  string
	done func(proto.ErrorCode)
}

type shardTimerEntry struct {
	id  sim.TimerID
	seq uint64
	fn  func()
}

// shardTimer is a shard's timer as the broker hands it back: its
// partition, leader epoch, key (Kafka's CoordinatorTimer key) and number.
type shardTimer struct {
	Partition int32
	Epoch     int32
	Key       string
	Seq       uint64
}

// String is how the trace shows the timer.
func (t shardTimer) String() string {
	return "group.timer {p:" + strconv.Itoa(int(t.Partition)) + " epoch:" + strconv.Itoa(int(t.Epoch)) + " " + t.Key + " #" + strconv.FormatUint(t.Seq, 10) + "}"
}

func newShard(c *coordinator, tp metadata.TopicPartition, epoch int32) *shard {
	s := &shard{c: c, tp: tp, epoch: epoch, groups: map[string]*classicGroup{}, offsets: map[offsetKey]offsetValue{},
		timers: map[string]*shardTimerEntry{}}
	if c.cfg.Consumer != nil {
		s.consumer = c.cfg.Consumer(consumerEnv{s})
	}
	return s
}

// schedule runs fn after d unless cancelled, replacing the timer of key.
func (s *shard) schedule(key string, d time.Duration, fn func()) {
	s.cancel(key)
	s.timerSeq++
	id := s.c.t.After(d, shardTimer{Partition: s.tp.Partition, Epoch: s.epoch, Key: key, Seq: s.timerSeq})
	s.timers[key] = &shardTimerEntry{id: id, seq: s.timerSeq, fn: fn}
}

func (s *shard) cancel(key string) {
	if e, ok := s.timers[key]; ok {
		s.c.t.Cancel(e.id)
		delete(s.timers, key)
	}
}

func (s *shard) fire(t shardTimer) {
	e, ok := s.timers[t.Key]
	if !ok || e.seq != t.Seq {
		return
	}
	delete(s.timers, t.Key)
	e.fn()
}

// close drops the shard's timers and fails what waits on it
// (CoordinatorRuntime's unload: deferred events fail NOT_COORDINATOR; the
// groups' parked requests are answered NOT_COORDINATOR by onUnloaded).
func (s *shard) close() {
	if s.state == shardClosed {
		return
	}
	keys := make([]string, 0, len(s.timers))
	for k := range s.timers { // kafkasim:orderless: sorted below
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		s.cancel(k)
	}
	wasActive := s.state == shardActive
	s.state = shardClosed
	for _, w := range s.pending {
		if !w.failed {
			w.failed = true
			for _, fn := range w.waiters {
				fn(proto.NotCoordinator)
			}
		}
	}
	s.pending = nil
	stable := s.stable
	s.stable = nil
	for _, w := range stable {
		w.done(proto.NotCoordinator)
	}
	if wasActive {
		for _, g := range s.sortedGroups() {
			s.unloadClassicGroup(g)
		}
	}
}

func (s *shard) sortedGroups() []*classicGroup {
	ids := make([]string, 0, len(s.groups))
	for id := range s.groups { // kafkasim:orderless: sorted below
		ids = append(ids, id)
	}
	slices.Sort(ids)
	out := make([]*classicGroup, len(ids))
	for i, id := range ids {
		out[i] = s.groups[id]
	}
	return out
}

// normalize maps an append's error to the client's
// (CoordinatorOperationExceptionHelper.handleOperationException,
// GroupMetadataManager.appendGroupMetadataErrorToResponseError).
func normalize(err proto.ErrorCode) proto.ErrorCode {
	switch err {
	case proto.UnknownTopicOrPartition, proto.NotEnoughReplicas, proto.NotEnoughReplicasAfterAppend, proto.RequestTimedOut:
		return proto.CoordinatorNotAvailable
	case proto.NotLeaderOrFollower, proto.KafkaStorageError:
		return proto.NotCoordinator
	case proto.CorruptMessage:
		return proto.UnknownServerError
	}
	return err
}

// shardRecord is a record an operation writes.
type shardRecord struct {
	Key, Value string
	Tombstone  bool
}

// write appends records as one batch, acks=1 with the runtime's write
// timeout (CoordinatorPartitionWriter.append), and calls done with NONE
// once the high watermark passed them, or with the client's error. With
// replay the records are applied to the state at once, and taken back if
// the append fails at once (Kafka's revertLastWrittenOffset: writes to a
// shard happen one event at a time, so the failed one is the last and its
// undo is the snapshot before it). A write that fails later (it timed out,
// or leadership moved) keeps its records applied, as Kafka's does: they
// are in the log, uncommitted, and the committed view keeps them out until
// the high watermark passes them (OnHighWatermark, or a later write's
// commit). An operation with no records answers at
// once if nothing is pending, else once the log written before it is
// committed (waitForPendingWrites).
func (s *shard) write(records []shardRecord, replay bool, done func(proto.ErrorCode)) {
	if s.state != shardActive {
		done(proto.NotCoordinator)
		return
	}
	if len(records) == 0 {
		s.waitForPendingWrites(done)
		return
	}
	w := &pendingWrite{prevOffsets: map[offsetKey]*offsetValue{}}
	recs := make([]record.Record, len(records))
	for i, r := range records {
		recs[i] = record.Record{Key: r.Key, Value: r.Value, HasKey: true, Tombstone: r.Tombstone, Timestamp: s.c.t.Now().Milliseconds()}
		if replay {
			s.replayRecord([]byte(r.Key), []byte(r.Value), record.NoProducer, w)
		}
	}
	b := record.New(recs, record.Producer{ID: record.NoProducer}, false, record.CompressionNone)
	res := s.c.t.Append(s.tp, b, proto.AcksLeader, s.c.cfg.OffsetsCommitTimeout, func(r broker.AppendResult) { s.appended(w, r) })
	if res.Error != proto.None {
		s.undo(w)
		done(normalize(res.Error))
		return
	}
	w.lastOffset = res.LastOffset
	w.waiters = []func(proto.ErrorCode){done}
	if s.c.cfg.Audit != nil {
		w.generations = writtenGenerations(records)
	}
	s.pending = append(s.pending, w)
}

// waitForPendingWrites is CoordinatorRuntime.waitForPendingWrites: an
// operation with no records is answered once the log written before it is
// committed, up to Kafka's lastWrittenOffset — which after a load is the
// log end, and which a write that timed out does not take back: the
// pending writes that failed still count — or fails at its own write
// timeout (CoordinatorWriteEvent's OperationTimeout, REQUEST_TIMED_OUT).
// While the last pending write still waits, its waiters stand for that
// wait.
func (s *shard) waitForPendingWrites(done func(proto.ErrorCode)) {
	n := len(s.pending)
	if n == 0 {
		done(proto.None)
		return
	}
	if last := s.pending[n-1]; !last.failed {
		last.waiters = append(last.waiters, done)
		return
	}
	s.stableID++
	w := &stableWaiter{upTo: s.pending[n-1].lastOffset + 1, key: "stable-" + strconv.FormatUint(s.stableID, 10), done: done}
	s.stable = append(s.stable, w)
	s.schedule(w.key, s.c.cfg.OffsetsCommitTimeout, func() {
		s.stable = slices.DeleteFunc(s.stable, func(x *stableWaiter) bool { return x == w })
		w.done(normalize(proto.RequestTimedOut))
	})
}

// undo takes back a write's records.
func (s *shard) undo(w *pendingWrite) {
	for k, v := range w.prevOffsets { // kafkasim:orderless: each key restored on its own
		if v == nil {
			delete(s.offsets, k)
		} else {
			s.offsets[k] = *v
		}
	}
	for _, g := range w.createdBy {
		delete(s.groups, g)
	}
}

// appended hears what became of a write.
func (s *shard) appended(w *pendingWrite, r broker.AppendResult) {
	if s.state == shardClosed || w.failed {
		return
	}
	if r.Error != proto.None {
		w.failed = true
		for _, fn := range w.waiters {
			fn(normalize(r.Error))
		}
		w.waiters = nil
		return
	}
	s.committed(r.LastOffset + 1)
}

// committed: the log is committed below upTo; the writes below it are
// done.
func (s *shard) committed(upTo int64) {
	s.committedUpTo = max(s.committedUpTo, upTo)
	for len(s.pending) > 0 && s.pending[0].lastOffset < s.committedUpTo {
		w := s.pending[0]
		s.pending = s.pending[1:]
		if !w.failed {
			s.auditCommitted(w)
			for _, fn := range w.waiters {
				fn(proto.None)
			}
		}
	}
	for len(s.stable) > 0 && s.stable[0].upTo <= s.committedUpTo {
		w := s.stable[0]
		s.stable = s.stable[1:]
		s.cancel(w.key)
		w.done(proto.None)
	}
}

// committedOffset is the committed view of k.
func (s *shard) committedOffset(k offsetKey) (offsetValue, bool) {
	for _, w := range s.pending {
		if prev, ok := w.prevOffsets[k]; ok {
			if prev == nil {
				return offsetValue{}, false
			}
			return *prev, true
		}
	}
	v, ok := s.offsets[k]
	return v, ok
}

// replayRecord applies a record of the log, of a transactional batch of
// producerID or not (record.NoProducer); w (if not nil) notes what it
// overwrote.
func (s *shard) replayRecord(key, value []byte, producerID int64, w *pendingWrite) {
	d, err := decodeRecord(key, value)
	if err != nil {
		panic("group: " + s.tp.String() + ": a record the coordinator cannot read: " + err.Error())
	}
	switch {
	case d.Type == recordOffsetCommit || d.Type == recordOffsetCommitLegacy:
		s.replayed++
		if producerID != record.NoProducer && !d.Tombstone {
			s.txn.add(producerID, d.Offset, pendingTxnOffset{value: d.OffsetVal, seq: s.replayed})
			s.ensureSimpleGroup(d.Group, w)
			return
		}
		if w != nil {
			if _, noted := w.prevOffsets[d.Offset]; !noted {
				if prev, ok := s.offsets[d.Offset]; ok {
					w.prevOffsets[d.Offset] = &prev
				} else {
					w.prevOffsets[d.Offset] = nil
				}
			}
		}
		if d.Tombstone {
			delete(s.offsets, d.Offset)
			s.txn.tombstone(d.Offset)
			return
		}
		v := d.OffsetVal
		v.seq = s.replayed
		s.offsets[d.Offset] = v
		s.ensureSimpleGroup(d.Group, w)
	case d.Type == recordGroupMetadata:
		s.replayGroupMetadata(d)
	default:
		if s.consumer != nil {
			s.consumer.Replay(ConsumerRecord{Key: string(key), Value: string(value), Tombstone: d.Tombstone})
		}
	}
}

// ensureSimpleGroup is OffsetMetadataManager.replay's: an offset of a
// group that does not exist makes a simple (empty classic) group.
func (s *shard) ensureSimpleGroup(group string, w *pendingWrite) {
	if _, ok := s.groups[group]; !ok && (s.consumer == nil || !s.consumer.HasGroup(group)) {
		s.groups[group] = newClassicGroup(group)
		if w != nil {
			w.createdBy = append(w.createdBy, group)
		}
	}
}

// loadChunk reads and replays the next chunk of the log
// (CoordinatorLoaderImpl: from the log start to the log end, in chunks of
// offsets.load.buffer.size, records at and above the high watermark kept
// uncommitted). The load ends at the log end; requests meanwhile are
// answered COORDINATOR_LOAD_IN_PROGRESS.
func (s *shard) loadChunk() {
	r := s.c.t.Read(s.tp, s.loadFrom, math.MaxInt64, s.c.cfg.OffsetsLoadBufferSizeBytes, broker.IsolationLogEnd)
	if r.Error == proto.OffsetOutOfRange && s.loadFrom < r.LogStartOffset {
		s.loadFrom = r.LogStartOffset
		s.scheduleLoad()
		return
	}
	if r.Error != proto.None {
		return // no longer the leader: the resignation follows
	}
	s.committedUpTo = r.HighWatermark
	for _, b := range r.Batches {
		if b.Control {
			// CoordinatorLoaderImpl: a transaction marker ends the
			// producer's pending offsets.
			if t, _, ok := b.Marker(); ok {
				committed := t == record.ControlCommit
				var w *pendingWrite
				if b.BaseOffset >= r.HighWatermark {
					w = s.uncommittedLoad(b.LastOffset())
				}
				s.replayEndTxnMarker(b.ProducerID, committed, w)
			}
			s.loadFrom = b.NextOffset()
			continue
		}
		pid := int64(record.NoProducer)
		if b.Transactional {
			pid = b.ProducerID
		}
		b.EachRecord(func(_ int, offset int64, key []byte, hasKey bool, value []byte) {
			if !hasKey {
				return
			}
			var w *pendingWrite
			if offset >= r.HighWatermark {
				w = s.uncommittedLoad(b.LastOffset())
			}
			s.replayRecord(key, value, pid, w)
		})
		s.loadFrom = b.NextOffset()
	}
	if len(r.Batches) > 0 && s.loadFrom < r.LogEndOffset {
		s.scheduleLoad()
		return
	}
	s.loaded()
}

// uncommittedLoad is the pending write that stands for the loaded records
// above the high watermark, up to lastOffset.
func (s *shard) uncommittedLoad(lastOffset int64) *pendingWrite {
	if n := len(s.pending); n > 0 {
		s.pending[n-1].lastOffset = max(s.pending[n-1].lastOffset, lastOffset)
		return s.pending[n-1]
	}
	w := &pendingWrite{lastOffset: lastOffset, prevOffsets: map[offsetKey]*offsetValue{}, failed: true}
	s.pending = append(s.pending, w)
	return w
}

func (s *shard) scheduleLoad() {
	s.schedule("load", 0, s.loadChunk)
}

// loaded activates the shard (GroupMetadataManager.onLoaded: every member
// of a loaded classic group gets a new session timer).
func (s *shard) loaded() {
	s.state = shardActive
	for _, g := range s.sortedGroups() {
		for _, m := range g.allMembers() {
			s.rescheduleHeartbeat(g, m, m.sessionTimeout)
		}
	}
	if s.consumer != nil {
		s.consumer.OnLoaded()
	}
	s.auditLoaded()
}

// consumerEnv is the consumer protocol's handle on its shard.
type consumerEnv struct{ s *shard }

func (e consumerEnv) Now() time.Duration { return e.s.c.t.Now() }

func (e consumerEnv) Schedule(key string, d time.Duration, fn func() []ConsumerRecord) {
	s := e.s
	s.schedule("consumer-"+key, d, func() {
		if recs := fn(); len(recs) > 0 {
			s.writeConsumer(recs, func(proto.ErrorCode) {})
		}
	})
}

func (e consumerEnv) Cancel(key string) { e.s.cancel("consumer-" + key) }

func (e consumerEnv) Rand() *rand.Rand { return e.s.c.t.Rand() }

func (e consumerEnv) PartitionCount(topic string) (int32, bool) {
	return e.s.c.t.TopicPartitionCount(topic)
}

// writeConsumer writes the consumer protocol's records: replayed once
// appended (see ConsumerProtocol).
func (s *shard) writeConsumer(recs []ConsumerRecord, done func(proto.ErrorCode)) {
	records := make([]shardRecord, len(recs))
	for i, r := range recs {
		records[i] = shardRecord(r)
	}
	n := len(s.pending)
	s.write(records, false, done)
	if len(s.pending) > n { // appended
		if s.c.cfg.Audit != nil {
			s.pending[len(s.pending)-1].removals = s.consumerRemovals(recs)
		}
		for _, r := range recs {
			s.consumer.Replay(r)
		}
	}
}
