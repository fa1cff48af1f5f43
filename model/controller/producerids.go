package controller

import (
	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// ProducerIDBlockSize is ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE: how many
// producer ids one AllocateProducerIds hands a broker.
const ProducerIDBlockSize = 1000

// handleAllocateProducerIds is ProducerIdControlManager.generateNextProducerId
// (KIP-730): a registered broker with its current epoch gets the next block,
// [NextProducerID, NextProducerID+ProducerIDBlockSize), once the
// ProducerIdsRecord that moves NextProducerID past it is committed. Blocks
// never overlap, whoever asks and whichever controller is active, because
// each starts where the committed (or drafted) log left the counter.
func (n *Node) handleAllocateProducerIds(from sim.NodeID, m *proto.AllocateProducerIdsRequest) {
	reply, rec := AllocateProducerIDs(n.draft, m)
	if rec == nil {
		n.gate.Send(from, reply)
		return
	}
	if !n.decide(metadata.Batch{{ProducerIDs: rec}}, from, reply, nil) {
		n.gate.Send(from, &proto.AllocateProducerIdsResponse{CorrelationID: m.CorrelationID, Error: proto.NotController, ControllerHint: n.raft.Leader()})
	}
}

// AllocateProducerIDs is the decision: the answer, and the record to
// commit before it is sent (nil: answer at once).
func AllocateProducerIDs(draft *metadata.Image, m *proto.AllocateProducerIdsRequest) (*proto.AllocateProducerIdsResponse, *metadata.ProducerIDsRecord) {
	reply := &proto.AllocateProducerIdsResponse{CorrelationID: m.CorrelationID, ControllerHint: sim.NoNode}
	// ClusterControlManager.checkBrokerEpoch: a fenced-out or restarted
	// broker's request is STALE_BROKER_EPOCH.
	if b := draft.Brokers[m.BrokerID]; b == nil || b.Epoch != m.BrokerEpoch {
		reply.Error = proto.StaleBrokerEpoch
		return reply, nil
	}
	start := draft.NextProducerID
	reply.ProducerIDStart, reply.ProducerIDLen = start, ProducerIDBlockSize
	return reply, &metadata.ProducerIDsRecord{BrokerID: m.BrokerID, NextID: start, BlockSize: ProducerIDBlockSize}
}
