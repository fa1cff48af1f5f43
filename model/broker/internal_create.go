package broker

import (
	"math/rand/v2"
	"time"

	"kafkasim/model/proto"
	"kafkasim/sim"
)

// What a coordinator asks of the broker besides its partitions: that its
// topic be created (Kafka's AutoTopicCreationManager, which a FindCoordinator
// for a topic that does not exist yet calls), and randomness for the ids it
// hands out (Kafka's member ids carry a random Uuid).

// topicCreation is a coordinator's CreateTopics request in flight: one at a
// time, as AutoTopicCreationManager keeps its inflightTopics.
type topicCreation struct {
	correlation uint64 // 0: none in flight
	sentAt      time.Duration
}

// CreateTopic asks the active controller, as this broker's lifecycle last
// heard of it, to create topic, unless a request is already in flight
// (one that got no answer within the controller request timeout is sent
// again). The answer only ends the request: the coordinator learns of the
// topic from the metadata, and a client that was told
// COORDINATOR_NOT_AVAILABLE asks again, which asks again here if the
// creation failed.
func (t *InternalTopics) CreateTopic(topic proto.CreatableTopic) {
	rm, c := t.rm, &t.h.creating
	if rm.stopped || (c.correlation != 0 && rm.now()-c.sentAt < rm.n.cfg.ControllerRequestTimeout) {
		return
	}
	to := rm.n.life.target()
	if to == sim.NoNode {
		return
	}
	rm.createCorrelation++
	c.correlation, c.sentAt = rm.createCorrelation, rm.now()
	rm.n.env.Send(to, &proto.CreateTopicsRequest{CorrelationID: c.correlation, Topics: []proto.CreatableTopic{topic}})
}

// Rand is the broker's seeded random stream.
func (t *InternalTopics) Rand() *rand.Rand { return t.rm.n.env.Rand() }

// topicCreated ends the CreateTopics request m answers; it reports whether
// m was one a coordinator made.
func (rm *replicaManager) topicCreated(m *proto.CreateTopicsResponse) bool {
	for _, h := range rm.coordinators {
		if h.creating.correlation != 0 && h.creating.correlation == m.CorrelationID {
			h.creating = topicCreation{}
			return true
		}
	}
	return false
}

// TopicPartitionCount is a topic's partition count in this broker's
// metadata (ok false: no such topic), as a coordinator's assignor reads
// the metadata image (KIP-848's target assignment).
func (t *InternalTopics) TopicPartitionCount(topic string) (int32, bool) {
	if tp, ok := t.rm.image().Topics[topic]; ok {
		return int32(len(tp.Partitions)), true
	}
	return 0, false
}
