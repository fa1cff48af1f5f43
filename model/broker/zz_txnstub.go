package broker

import (
	"kafkasim/model/metadata"
	"kafkasim/model/proto"
)

// TEMPORARY (txngroup branch): wired to the partition side's
// AddPartitionsToTxn manager at merge.
func (t *InternalTopics) AddPartitionToTxn(tp metadata.TopicPartition, transactionalID string, producerID int64, producerEpoch int16, done func(proto.ErrorCode)) {
	done(proto.CoordinatorNotAvailable)
}
