package broker

import (
	"kafkasim/model/metadata"
	"kafkasim/sim"
)

// What the transaction coordinator asks of its broker besides its own
// topic: where the partitions of a transaction are led (Kafka's
// TransactionMarkerChannelManager reads the metadata cache for each
// partition's leader endpoint), and the active controller with the
// broker's epoch, for AllocateProducerIds (RPCProducerIdManager sends it
// through the broker's controller channel with its broker epoch).

// PartitionLeader is the leader of any partition as this broker's
// metadata has it (possibly stale): exists is false when the metadata has
// no such partition (a deleted topic: Kafka drops its markers); ok is
// false when it has no leader that is registered, unfenced and reachable.
func (t *InternalTopics) PartitionLeader(tp metadata.TopicPartition) (broker int32, node sim.NodeID, exists, ok bool) {
	im := t.rm.image()
	p := im.Partition(tp)
	if p == nil {
		return -1, sim.NoNode, false, false
	}
	if p.Leader < 0 {
		return -1, sim.NoNode, true, false
	}
	b, registered := im.Brokers[p.Leader]
	node, listed := t.rm.n.cfg.Nodes[p.Leader]
	if !registered || b.Fenced || !listed {
		return -1, sim.NoNode, true, false
	}
	return p.Leader, node, true, true
}

// Controller is the active controller as this broker's lifecycle last
// heard of it (NoNode: none known), and the broker's epoch (-1 before it
// registered).
func (t *InternalTopics) Controller() (sim.NodeID, int64) {
	if t.rm.stopped {
		return sim.NoNode, -1
	}
	return t.rm.n.life.target(), t.rm.n.life.epoch
}
