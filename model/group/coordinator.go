package group

import (
	"math/rand/v2"
	"time"

	"kafkasim/model/broker"
	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// topics is what the coordinator uses of its broker: *broker.InternalTopics
// (an interface so that the shard's logic is tested against a log the test
// drives).
type topics interface {
	BrokerID() int32
	Send(to sim.NodeID, m sim.Message)
	Now() time.Duration
	After(d time.Duration, t sim.Timer) sim.TimerID
	Cancel(id sim.TimerID)
	Partitions() int
	Leader(partition int32) (int32, sim.NodeID, bool)
	Append(tp metadata.TopicPartition, b *record.Batch, acks int16, timeout time.Duration, done func(broker.AppendResult)) broker.AppendResult
	Read(tp metadata.TopicPartition, from, to int64, maxBytes int, isolation broker.FetchIsolation) broker.LogRead
	CreateTopic(proto.CreatableTopic)
	Rand() *rand.Rand
	TopicPartitionCount(topic string) (int32, bool)
	// AddPartitionToTxn has the transaction coordinator add tp to the
	// producer's transaction (transaction version 2's verification), done
	// hearing NONE or the error (at once when there is no transaction
	// coordinator to ask).
	AddPartitionToTxn(tp metadata.TopicPartition, transactionalID string, producerID int64, producerEpoch int16, done func(proto.ErrorCode))
	// AppendMarker appends a transaction's marker to a partition of the
	// coordinator's topic.
	AppendMarker(tp metadata.TopicPartition, producerID int64, producerEpoch int16, coordinatorEpoch int32, committed, noEpochBump bool,
		timeout time.Duration, done func(broker.AppendResult)) broker.AppendResult
}

var _ broker.TxnCompleter = (*coordinator)(nil)

// coordinator is the group coordinator of one broker start
// (GroupCoordinatorService over its CoordinatorRuntime): a shard per
// partition this broker leads.
type coordinator struct {
	cfg    Config
	t      topics
	shards map[int32]*shard
	// conns: the client connections with a heartbeat being served
	// (connection.go).
	conns map[clientConn]*heldHeartbeats
}

var _ broker.HighWatermarkListener = (*coordinator)(nil)

func newCoordinator(cfg Config, t topics) *coordinator {
	return &coordinator{cfg: cfg, t: t, shards: map[int32]*shard{}}
}

// OnBecomeLeader loads the partition's shard (scheduleLoadOperation); a
// newer leader epoch replaces a shard of an older one.
func (c *coordinator) OnBecomeLeader(tp metadata.TopicPartition, epoch int32) {
	if s, ok := c.shards[tp.Partition]; ok {
		if s.epoch >= epoch {
			return
		}
		s.close()
	}
	s := newShard(c, tp, epoch)
	c.shards[tp.Partition] = s
	s.scheduleLoad()
}

// OnResign unloads the partition's shard (scheduleUnloadOperation: unless
// the shard is of a newer epoch than the one resigned in).
func (c *coordinator) OnResign(tp metadata.TopicPartition, epoch int32) {
	s, ok := c.shards[tp.Partition]
	if !ok || (epoch != broker.NoLeaderEpoch && s.epoch >= epoch) {
		return
	}
	s.close()
	delete(c.shards, tp.Partition)
}

// OnHighWatermark is CoordinatorRuntime's HighWatermarkListener: the
// shard of the partition, if it is of the epoch the high watermark
// advanced in, counts the log below it as committed.
func (c *coordinator) OnHighWatermark(tp metadata.TopicPartition, epoch int32, hw int64) {
	if s, ok := c.shards[tp.Partition]; ok && s.epoch == epoch && s.state != shardClosed {
		s.committed(hw)
	}
}

// OnTimer hands a shard its timer.
func (c *coordinator) OnTimer(t sim.Timer) {
	if ct, ok := t.(connTimer); ok {
		c.resume(ct)
		return
	}
	st, ok := t.(shardTimer)
	if !ok {
		return
	}
	if s, ok := c.shards[st.Partition]; ok && s.epoch == st.Epoch {
		s.fire(st)
	}
}

// Handles takes the group APIs (KafkaApis hands them to the group
// coordinator) and FindCoordinator for groups; a transactional id's
// FindCoordinator is the transaction coordinator's.
func (c *coordinator) Handles(m sim.Message) bool {
	switch m := m.(type) {
	case *proto.FindCoordinatorRequest:
		return m.KeyType == proto.CoordinatorKeyGroup
	case *proto.JoinGroupRequest, *proto.SyncGroupRequest, *proto.HeartbeatRequest, *proto.LeaveGroupRequest,
		*proto.OffsetCommitRequest, *proto.OffsetFetchRequest, *proto.ConsumerGroupHeartbeatRequest,
		*proto.TxnOffsetCommitRequest:
		return true
	}
	return false
}

func (c *coordinator) numPartitions() int {
	if n := c.t.Partitions(); n > 0 {
		return n
	}
	return c.cfg.OffsetsTopicNumPartitions
}

// HandleRequest serves m: FindCoordinator on any broker, the rest on the
// shard of the group's partition (NOT_COORDINATOR if this broker does not
// lead it, COORDINATOR_LOAD_IN_PROGRESS while it loads).
func (c *coordinator) HandleRequest(from sim.NodeID, m sim.Message) {
	if f, ok := m.(*proto.FindCoordinatorRequest); ok {
		c.findCoordinator(from, f)
		return
	}
	if h, ok := m.(*proto.ConsumerGroupHeartbeatRequest); ok {
		c.heartbeatArrived(from, h)
		return
	}
	c.serve(from, m)
}

// serve hands a group request to the shard of the group's partition.
func (c *coordinator) serve(from sim.NodeID, m sim.Message) {
	r := m.(broker.CoordinatorRequest)
	s, ok := c.shards[partitionFor(groupOf(m), c.numPartitions())]
	switch {
	case !ok:
		c.send(from, r.NotCoordinator())
	case s.state == shardLoading:
		c.send(from, errorResponse(m, proto.CoordinatorLoadInProgress))
	default:
		s.handle(from, m)
	}
}

// findCoordinator is KafkaApis.getCoordinator for a group: the leader of
// the group's partition as this broker's metadata has it; while the topic
// does not exist, COORDINATOR_NOT_AVAILABLE after asking the controller to
// create it (AutoTopicCreationManager).
func (c *coordinator) findCoordinator(from sim.NodeID, m *proto.FindCoordinatorRequest) {
	resp := &proto.FindCoordinatorResponse{CorrelationID: m.CorrelationID, Key: m.Key, Error: proto.CoordinatorNotAvailable, NodeID: -1, Node: sim.NoNode}
	if c.t.Partitions() == 0 {
		c.t.CreateTopic(c.cfg.offsetsTopic())
	} else if b, node, ok := c.t.Leader(partitionFor(m.Key, c.t.Partitions())); ok {
		resp.Error, resp.NodeID, resp.Node = proto.None, b, node
	}
	c.send(from, resp)
}

// groupOf is the group a request is for.
func groupOf(m sim.Message) string { return m.(proto.GroupRequest).GroupKey() }

// errorResponse is m's answer with err.
func errorResponse(m sim.Message, err proto.ErrorCode) sim.Message {
	return m.(proto.GroupRequest).ErrorResponse(err)
}

// handle serves a request on its shard.
func (s *shard) handle(from sim.NodeID, m sim.Message) {
	switch m := m.(type) {
	case *proto.JoinGroupRequest:
		s.joinGroup(from, m)
	case *proto.SyncGroupRequest:
		s.syncGroup(from, m)
	case *proto.HeartbeatRequest:
		s.heartbeat(from, m)
	case *proto.LeaveGroupRequest:
		s.leaveGroup(from, m)
	case *proto.OffsetCommitRequest:
		s.commitOffsets(from, m)
	case *proto.OffsetFetchRequest:
		s.fetchOffsets(from, m)
	case *proto.TxnOffsetCommitRequest:
		s.commitTxnOffsets(from, m)
	case *proto.ConsumerGroupHeartbeatRequest:
		s.consumerHeartbeat(from, m)
	}
}

// consumerHeartbeat hands a ConsumerGroupHeartbeat to the consumer
// protocol; without one, the group id is not a consumer group's (Kafka's
// answer when the group is a classic one: GROUP_ID_NOT_FOUND).
func (s *shard) consumerHeartbeat(from sim.NodeID, m *proto.ConsumerGroupHeartbeatRequest) {
	if s.consumer == nil {
		s.c.send(from, errorResponse(m, proto.GroupIDNotFound))
		return
	}
	if _, classic := s.groups[m.GroupID]; classic {
		s.c.send(from, errorResponse(m, proto.GroupIDNotFound))
		return
	}
	resp, recs := s.consumer.Heartbeat(m)
	s.writeConsumer(recs, func(err proto.ErrorCode) {
		if err != proto.None {
			s.c.send(from, errorResponse(m, err))
			return
		}
		s.c.send(from, resp)
	})
}
