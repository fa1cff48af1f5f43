package broker

import (
	"time"

	"kafkasim/model/metadata"
	"kafkasim/model/proto"
)

// What the group coordinator asks of its broker for transactions (Kafka's
// CoordinatorPartitionWriter): that a partition of its topic join a
// producer's transaction before it writes the transaction's offsets there
// (maybeStartTransactionVerification, which with transaction version 2
// adds the partition through the broker's AddPartitionsToTxnManager), and
// that a transaction's marker be appended to its partition in its own
// order of writes (append of MemoryRecords.withEndTransactionMarker, from
// CoordinatorRuntime.completeTransaction).

// TxnCompleter is a Coordinator that writes the markers of its topic's
// partitions itself (Kafka's GroupCoordinator.completeTransaction, which
// handleWriteTxnMarkersRequest calls for the __consumer_offsets
// partitions instead of appending their markers): done hears NONE once
// the marker is committed, or the error, which the WriteTxnMarkers answer
// carries for the partition (a coordinator that is not ready answers as a
// partition leader that is not: NOT_LEADER_OR_FOLLOWER).
type TxnCompleter interface {
	CompleteTransaction(tp metadata.TopicPartition, producerID int64, producerEpoch int16, coordinatorEpoch int32, committed, noEpochBump bool, done func(proto.ErrorCode))
}

// AddPartitionToTxn has the transaction coordinator of transactionalID add
// tp to the producer's transaction; done hears NONE or the error as a
// produce would (verificationError), at once when there is no coordinator
// to ask.
func (t *InternalTopics) AddPartitionToTxn(tp metadata.TopicPartition, transactionalID string, producerID int64, producerEpoch int16, done func(proto.ErrorCode)) {
	t.rm.txnVerify.verify(transactionalID, producerID, producerEpoch, []proto.TopicPartition{{Topic: tp.Topic, Partition: tp.Partition}},
		func(errs []proto.ErrorCode) { done(errs[0]) })
}

// AppendMarker appends a transaction's marker as the leader of tp, after
// the producer state's checks (a fenced producer or coordinator epoch),
// acks=1 as the coordinator writes; done as for Append.
func (t *InternalTopics) AppendMarker(tp metadata.TopicPartition, producerID int64, producerEpoch int16, coordinatorEpoch int32, committed, noEpochBump bool,
	timeout time.Duration, done func(AppendResult)) AppendResult {
	rm := t.rm
	if tp.Topic != t.h.topic {
		panic("broker: the coordinator on " + t.h.topic + " appended a marker to " + tp.String())
	}
	p := rm.parts.get(tp)
	base, err := rm.appendMarker(tp, p, proto.TxnMarker{ProducerID: producerID, ProducerEpoch: producerEpoch,
		CoordinatorEpoch: coordinatorEpoch, Committed: committed, NoEpochBump: noEpochBump}, proto.AcksLeader)
	res := AppendResult{BaseOffset: base, LastOffset: base, Error: err}
	if err != proto.None {
		return res
	}
	t.await(p, res, proto.AcksLeader, timeout, done)
	return res
}

// completeMarker hands a __consumer_offsets partition's marker to the
// coordinator that writes it; it reports whether there is one.
func (rm *replicaManager) completeMarker(tp metadata.TopicPartition, mk proto.TxnMarker, done func(proto.ErrorCode)) bool {
	c, ok := rm.coordinatorOf(tp.Topic).(TxnCompleter)
	if !ok || rm.stopped {
		return false
	}
	c.CompleteTransaction(tp, mk.ProducerID, mk.ProducerEpoch, mk.CoordinatorEpoch, mk.Committed, mk.NoEpochBump, func(err proto.ErrorCode) {
		switch err {
		case proto.CoordinatorNotAvailable, proto.CoordinatorLoadInProgress, proto.NotCoordinator:
			// KafkaApis.handleWriteTxnMarkersRequest: the transaction
			// coordinator does not expect those; it retries this one.
			err = proto.NotLeaderOrFollower
		}
		done(err)
	})
	return true
}
