package runner

import (
	"fmt"

	"kafkasim/model/cluster"
	"kafkasim/model/producer"
	"kafkasim/model/proto"
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

// fencedBehind says why a transactional producer is closed and created
// again before it is probed ("" when it is not): it is fenced
// (PRODUCER_FENCED, fatal: TransactionManager.maybeTransitionToErrorState),
// and its transactional.id's coordinator holds its producer id at an epoch
// not past its own. No newer instance fenced it (its InitProducerId would
// have taken a later epoch): the coordinator's state went back, its
// transaction log having lost the records of the later epochs (a power
// loss took them from the page cache of every replica, and the controller
// then elected one without them), and Kafka's coordinator answers any
// epoch but its own with PRODUCER_FENCED
// (TransactionCoordinator.handleAddPartitionsToTransaction and
// endTransaction: strict equality for a client's request). The epoch it
// holds can since have caught up with the producer's: the transaction it
// kept Ongoing at the lower epoch times out, and abortTimedOutTransactions
// fences it with one bump (prepareFenceProducerEpoch; the abort does not
// bump again, KAFKA-19367), landing on the very epoch it fenced (fuzz seed
// 24083). Kafka's application must close a fenced producer; one that goes
// on writing creates a new one, whose initTransactions takes the next
// epoch from the coordinator (InitProducerId without a producer id), and
// that one is what can write after the heal.
func fencedBehind(c *cluster.Cluster, id sim.NodeID, transactionalID string) string {
	p := c.Producer(id)
	if p == nil || transactionalID == "" || p.TxnState() != producer.TxnFatalError ||
		p.TxnError() != proto.ProducerFenced.String() || !c.TxnEpochsMayRunAhead() {
		return ""
	}
	d, ok := c.DescribeTransaction(transactionalID)
	if !ok {
		return ""
	}
	pid, epoch := p.ProducerIDAndEpoch()
	if d.ProducerID != pid || d.ProducerEpoch > epoch {
		return ""
	}
	where := fmt.Sprintf("behind the epoch %d it held (the transaction log lost the records of its later epochs)", epoch)
	if d.ProducerEpoch == epoch {
		where = "the epoch it held: no newer instance fenced it; the transaction log lost the records of its later epochs, the coordinator fenced it from behind, then caught up (aborting on its timeout a transaction it held open at a lower epoch bumps the epoch)"
	}
	return fmt.Sprintf("%s closed and created again before its probe: fenced (PRODUCER_FENCED), transactional.id %s is at producer id %d, epoch %d, %s: Kafka's application must close a fenced producer, and creates a new one to write again",
		c.World.Name(id), transactionalID, d.ProducerID, d.ProducerEpoch, where)
}

// recreate closes a producer instance and starts a new one in its place
// (KafkaProducer.close, then a new KafkaProducer: a transactional one
// calls initTransactions first). It reports whether it did.
func recreate(w *sim.World, id sim.NodeID) bool {
	if !w.Shutdown(id) {
		return false
	}
	return w.RestartWhenDown(id)
}

// stalledProbe says why a transactional producer's probes that did not go
// through are not judged ("" when they are): its transactional.id's
// transaction is stalled (cluster.StalledTransactions). After its
// coordinator's transaction log lost records, a partition can hold a later
// epoch of the producer than the coordinator kept: it refuses the
// producer's writes (ProducerAppendInfo.checkProducerEpoch:
// INVALID_PRODUCER_EPOCH) and then the abort's markers, and the
// coordinator, as Kafka's TransactionMarkerRequestCompletionHandler does
// (abortSending), sends them no more and leaves the transaction in
// PrepareAbort: every EndTxn and InitProducerId of the transactional.id is
// CONCURRENT_TRANSACTIONS for ever, however often the application closes
// its producer and creates a new one (KAFKA-20716: an unclean election
// breaks exactly-once).
func stalledProbe(c *cluster.Cluster, id sim.NodeID, transactionalID string) string {
	if transactionalID == "" || !c.TxnEpochsMayRunAhead() {
		return ""
	}
	for _, t := range c.StalledTransactions() {
		if t.TransactionalID == transactionalID {
			return fmt.Sprintf("%s's probes not judged: transaction %s (producer id %d, epoch %d) is stalled in %s on its coordinator broker-%d, which stopped sending its markers when a partition refused them "+
				"(INVALID_PRODUCER_EPOCH: the partition holds a later epoch of the producer than __transaction_state kept); Kafka leaves it so "+
				"(TransactionMarkerRequestCompletionHandler's abortSending) and answers its producers CONCURRENT_TRANSACTIONS for ever",
				c.World.Name(id), t.TransactionalID, t.ProducerID, t.ProducerEpoch, t.State, t.Coordinator)
		}
	}
	return ""
}
