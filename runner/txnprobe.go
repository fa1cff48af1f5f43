package runner

import (
	"fmt"

	"kafkasim/model/cluster"
	"kafkasim/model/producer"
	"kafkasim/sim"
)

// fenced says why a transactional producer is not probed after the heal
// ("" when it is): its transactional.id's epoch is past its own — a newer
// instance's InitProducerId bumped it, or, with transaction version 2, its
// coordinator aborted its timed-out transaction (and its commit was then
// answered PRODUCER_FENCED, KAFKA-20785) — and Kafka's producer treats
// ProducerFencedException as fatal: the application must close it
// (KafkaProducer's documented handling), so it never writes again.
func fenced(c *cluster.Cluster, id sim.NodeID, transactionalID string) string {
	p := c.Producer(id)
	if p == nil || transactionalID == "" || p.TxnState() != producer.TxnFatalError {
		return ""
	}
	d, ok := c.DescribeTransaction(transactionalID)
	if !ok {
		return ""
	}
	pid, epoch := p.ProducerIDAndEpoch()
	if d.ProducerID == pid && d.ProducerEpoch <= epoch {
		return ""
	}
	return fmt.Sprintf("%s not probed: fenced, transactional.id %s is now at producer id %d, epoch %d (it held %d, epoch %d: a newer instance initialized, or the coordinator aborted its timed-out transaction): its producer is closed, as Kafka's application must close a fenced one",
		c.World.Name(id), transactionalID, d.ProducerID, d.ProducerEpoch, pid, epoch)
}

// transactionalIDs are the transactional ids of the cluster's producer
// instances, by node.
func transactionalIDs(c *cluster.Cluster, specs []cluster.ProducerSpec) map[sim.NodeID]string {
	out := map[sim.NodeID]string{}
	i := 0
	for _, ps := range specs {
		for n := range ps.Count {
			if i < len(c.Producers) && ps.Config.TransactionalID != "" {
				out[c.Producers[i]] = cluster.ClientName(ps.Config.TransactionalID, n)
			}
			i++
		}
	}
	return out
}
