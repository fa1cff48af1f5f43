package group

import (
	"slices"

	"kafkasim/model/broker"
	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// Transactional offsets (KIP-98, KIP-447), after Kafka 4's
// OffsetMetadataManager: a TxnOffsetCommit's offsets are written to the
// group's partition in a transactional batch of the producer's id and
// epoch, and kept aside, pending, by producer id; they become the group's
// committed offsets when the transaction's commit marker is written to the
// partition, and are dropped at its abort marker. The transaction
// coordinator sends the marker to this broker (WriteTxnMarkers); the
// broker hands a marker for a partition of __consumer_offsets to the group
// coordinator (CoordinatorRuntime.scheduleTransactionCompletion), which
// applies it and writes it in its own order of writes. An OffsetFetch
// that requires stable offsets (a read_committed consumer's) is answered
// UNSTABLE_OFFSET_COMMIT for a partition with offsets pending in an open
// transaction.
//
// Before taking a transaction's first offsets, the coordinator has the
// partition added to the transaction (transaction version 2: the client
// sends no AddOffsetsToTxn; CoordinatorRuntime.scheduleTransactionalWriteOperation
// asks the partition writer to verify, which adds the partition).

// noSequence is a batch's base sequence when it has none (Kafka's
// RecordBatch.NO_SEQUENCE).
const noSequence int32 = -1

// pendingTxnOffset is a transactional offset waiting for its marker; seq
// orders it against the group's plain commits (Kafka compares the
// records' log offsets).
type pendingTxnOffset struct {
	value offsetValue
	seq   int64
}

// txnOffsets is a shard's transactional offsets.
type txnOffsets struct {
	// byProducer are the pending offsets of each producer id's open
	// transaction.
	byProducer map[int64]map[offsetKey]pendingTxnOffset
	// open are the producer ids with offsets pending for each key, in the
	// order they came (OffsetMetadataManager.OpenTransactions).
	open map[offsetKey][]int64
}

func (t *txnOffsets) add(pid int64, k offsetKey, v pendingTxnOffset) {
	if t.byProducer == nil {
		t.byProducer, t.open = map[int64]map[offsetKey]pendingTxnOffset{}, map[offsetKey][]int64{}
	}
	if t.byProducer[pid] == nil {
		t.byProducer[pid] = map[offsetKey]pendingTxnOffset{}
	}
	t.byProducer[pid][k] = v
	if !slices.Contains(t.open[k], pid) {
		t.open[k] = append(t.open[k], pid)
	}
}

// hasPending reports whether k has offsets pending in an open transaction.
func (t *txnOffsets) hasPending(k offsetKey) bool { return len(t.open[k]) > 0 }

// tombstone drops the pending offsets of k: a tombstone (an offset
// deletion or expiry) removes them from every open transaction too.
func (t *txnOffsets) tombstone(k offsetKey) {
	for _, pid := range t.open[k] {
		delete(t.byProducer[pid], k)
	}
	delete(t.open, k)
}

// end takes a producer's pending offsets out, in key order.
func (t *txnOffsets) end(pid int64) []offsetKeyValue {
	pending := t.byProducer[pid]
	if pending == nil {
		return nil
	}
	delete(t.byProducer, pid)
	out := make([]offsetKeyValue, 0, len(pending))
	for k, v := range pending { // kafkasim:orderless: sorted below
		out = append(out, offsetKeyValue{k, v})
		t.open[k] = slices.DeleteFunc(t.open[k], func(p int64) bool { return p == pid })
		if len(t.open[k]) == 0 {
			delete(t.open, k)
		}
	}
	slices.SortFunc(out, func(a, b offsetKeyValue) int { return compareKeys(a.k, b.k) })
	return out
}

type offsetKeyValue struct {
	k offsetKey
	v pendingTxnOffset
}

func compareKeys(a, b offsetKey) int {
	switch {
	case a.Group != b.Group:
		if a.Group < b.Group {
			return -1
		}
		return 1
	case a.Topic != b.Topic:
		if a.Topic < b.Topic {
			return -1
		}
		return 1
	}
	return int(a.Partition - b.Partition)
}

// replayEndTxnMarker is OffsetMetadataManager.replayEndTransactionMarker:
// at a commit, each pending offset of the producer becomes the group's
// unless a plain commit written after it already moved the offset; at an
// abort they go. w (if not nil) notes what the commit overwrote, for the
// committed view.
func (s *shard) replayEndTxnMarker(pid int64, committed bool, w *pendingWrite) {
	pending := s.txn.end(pid)
	if !committed {
		return
	}
	for _, kv := range pending {
		if cur, ok := s.offsets[kv.k]; ok && cur.seq > kv.v.seq {
			continue
		}
		if w != nil {
			if _, noted := w.prevOffsets[kv.k]; !noted {
				if prev, ok := s.offsets[kv.k]; ok {
					w.prevOffsets[kv.k] = &prev
				} else {
					w.prevOffsets[kv.k] = nil
				}
			}
		}
		v := kv.v.value
		v.seq = kv.v.seq
		s.offsets[kv.k] = v
	}
}

// validateTxnOffsetCommit is OffsetMetadataManager.validateTransactionalOffsetCommit:
// a group that does not exist takes a commit without a generation (it
// becomes a simple group) and answers ILLEGAL_GENERATION to one with;
// then the group checks the member as for an OffsetCommit, but a classic
// group that is completing a rebalance takes it (the member's generation
// is the new one), a live classic group takes one without a generation or
// a member, and a stale member epoch is ILLEGAL_GENERATION.
func (s *shard) validateTxnOffsetCommit(m *proto.TxnOffsetCommitRequest) (err proto.ErrorCode, created bool) {
	if s.consumer != nil && s.consumer.HasGroup(m.GroupID) {
		err := s.consumer.ValidateOffsetCommit(m.GroupID, m.MemberID, m.GroupInstanceID, m.GenerationIDOrMemberEpoch)
		if err == proto.StaleMemberEpoch {
			err = proto.IllegalGeneration
		}
		return err, false
	}
	g, ok := s.groups[m.GroupID]
	if !ok {
		if m.GenerationIDOrMemberEpoch < 0 || s.c.cfg.Bugs.NoGenerationFencing {
			s.groups[m.GroupID] = newClassicGroup(m.GroupID)
			return proto.None, true
		}
		return proto.IllegalGeneration, false
	}
	return g.validateOffsetCommit(m.MemberID, m.GroupInstanceID, m.GenerationIDOrMemberEpoch, true, s.c.cfg.Bugs), false
}

// commitTxnOffsets serves a TxnOffsetCommit: the partition is added to the
// transaction first, then the offsets are checked and written as the
// producer's, and answered once committed.
func (s *shard) commitTxnOffsets(from sim.NodeID, m *proto.TxnOffsetCommitRequest) {
	if m.GroupID == "" {
		s.c.send(from, m.ErrorResponse(proto.InvalidGroupID))
		return
	}
	if m.ProducerID < 0 || m.TransactionalID == "" {
		s.c.send(from, m.ErrorResponse(proto.InvalidRequest))
		return
	}
	s.c.t.AddPartitionToTxn(s.tp, m.TransactionalID, m.ProducerID, m.ProducerEpoch, func(err proto.ErrorCode) {
		if s.state != shardActive || s.c.shards[s.tp.Partition] != s {
			s.c.send(from, m.ErrorResponse(proto.NotCoordinator))
			return
		}
		if err != proto.None {
			s.c.send(from, m.ErrorResponse(normalize(err)))
			return
		}
		s.writeTxnOffsets(from, m)
	})
}

// writeTxnOffsets writes a verified TxnOffsetCommit.
func (s *shard) writeTxnOffsets(from sim.NodeID, m *proto.TxnOffsetCommitRequest) {
	err, created := s.validateTxnOffsetCommit(m)
	if err != proto.None {
		s.c.send(from, m.ErrorResponse(err))
		return
	}
	now := s.c.t.Now()
	recs := make([]record.Record, 0, len(m.Partitions))
	for _, p := range m.Partitions {
		k := offsetKey{Group: m.GroupID, Topic: p.Topic, Partition: p.Partition}
		v := offsetValue{Offset: p.CommittedOffset, LeaderEpoch: p.CommittedLeaderEpoch, Metadata: p.Metadata, CommitTimestamp: now}
		recs = append(recs, record.Record{Key: encodeOffsetKey(k), Value: encodeOffsetValue(v), HasKey: true, Timestamp: now.Milliseconds()})
	}
	if len(recs) == 0 {
		s.c.send(from, m.ErrorResponse(proto.None))
		return
	}
	// A coordinator's transactional batch carries no sequence: the
	// partition checks only the producer's epoch (AppendOrigin.COORDINATOR).
	b := record.New(recs, record.Producer{ID: m.ProducerID, Epoch: m.ProducerEpoch, BaseSequence: noSequence}, true, record.CompressionNone)
	w := &pendingWrite{prevOffsets: map[offsetKey]*offsetValue{}}
	res := s.c.t.Append(s.tp, b, proto.AcksLeader, s.c.cfg.OffsetsCommitTimeout, func(r broker.AppendResult) { s.appended(w, r) })
	if res.Error != proto.None {
		if created {
			delete(s.groups, m.GroupID)
		}
		s.c.send(from, m.ErrorResponse(normalize(res.Error)))
		return
	}
	for _, r := range recs {
		s.replayRecord([]byte(r.Key), []byte(r.Value), m.ProducerID, nil)
	}
	w.lastOffset = res.LastOffset
	w.waiters = []func(proto.ErrorCode){func(err proto.ErrorCode) { s.c.send(from, m.ErrorResponse(err)) }}
	if created {
		w.createdBy = append(w.createdBy, m.GroupID)
	}
	s.pending = append(s.pending, w)
}

// CompleteTransaction writes a transaction's marker to a partition of
// __consumer_offsets this broker leads, as the transaction coordinator
// asked (CoordinatorRuntime.scheduleTransactionCompletion): the marker is
// applied to the shard's offsets and appended in the shard's order of
// writes, and done hears NONE once it is committed, or the error
// (NOT_COORDINATOR when the shard is not active: the coordinator retries).
func (c *coordinator) CompleteTransaction(tp metadata.TopicPartition, producerID int64, producerEpoch int16, coordinatorEpoch int32, committed, noEpochBump bool, done func(proto.ErrorCode)) {
	s, ok := c.shards[tp.Partition]
	if !ok || s.state != shardActive {
		done(proto.NotCoordinator)
		return
	}
	s.completeTransaction(producerID, producerEpoch, coordinatorEpoch, committed, noEpochBump, done)
}

func (s *shard) completeTransaction(pid int64, epoch int16, coordinatorEpoch int32, committed, noEpochBump bool, done func(proto.ErrorCode)) {
	w := &pendingWrite{prevOffsets: map[offsetKey]*offsetValue{}}
	res := s.c.t.AppendMarker(s.tp, pid, epoch, coordinatorEpoch, committed, noEpochBump, s.c.cfg.OffsetsCommitTimeout, func(r broker.AppendResult) { s.appended(w, r) })
	if res.Error != proto.None {
		// The partition refused the marker (a fenced producer epoch or
		// coordinator epoch, or leadership lost): the offsets stay pending.
		done(normalize(res.Error))
		return
	}
	s.replayEndTxnMarker(pid, committed, w)
	w.lastOffset = res.LastOffset
	w.waiters = []func(proto.ErrorCode){done}
	s.pending = append(s.pending, w)
}
