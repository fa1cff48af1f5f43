package cluster

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"kafkasim/godview"
	"kafkasim/model/audit"
	"kafkasim/model/proto"
	"kafkasim/model/txn"
	"kafkasim/sim"
)

// The god view of transactions: every transactional id the coordinators
// hold, the transactions left open, and the hanging ones (KIP-664).

// TxnHeld is a transactional id as the coordinator leading its partition of
// __transaction_state holds it.
type TxnHeld struct {
	proto.TransactionDescription
	// Coordinator is the broker id of that coordinator.
	Coordinator int32
}

// Transactions lists every transactional id a running coordinator holds
// as the leader of its partition of __transaction_state, by id (the god
// view's kafka-transactions.sh list, then describe of each).
func (c *Cluster) Transactions() []TxnHeld {
	var out []TxnHeld
	for i := range c.Brokers {
		id := int32(i + 1)
		b := c.Broker(id)
		if b == nil || c.World.State(c.BrokerNode(id)) != sim.Running {
			continue
		}
		l, ok := b.Coordinator(txn.Topic).(txn.Lister)
		if !ok {
			continue
		}
		for _, d := range l.Transactions() {
			// A deposed coordinator that has not heard yet still holds
			// its ids: the committed metadata says whose they are.
			if c.TransactionCoordinator(d.TransactionalID) == id {
				out = append(out, TxnHeld{TransactionDescription: d, Coordinator: id})
			}
		}
	}
	slices.SortFunc(out, func(a, b TxnHeld) int { return cmp.Compare(a.TransactionalID, b.TransactionalID) })
	return out
}

// noTransactionOpen reports whether every transaction has committed or
// aborted: each coordinator holds its ids Empty, CompleteCommit,
// CompleteAbort or Dead. One still open after the heal holds the last
// stable offset of the partitions it wrote, and read_committed readers
// with it; its coordinator aborts it transaction.timeout.ms after it
// began (TransactionCoordinator.abortTimedOutTransactions), so one left
// open is a liveness failure.
func (c *Cluster) noTransactionOpen() (bool, string) {
	for _, t := range c.Transactions() {
		if txn.Open(t.State) {
			why := fmt.Sprintf("transaction %s (producer id %d, epoch %d) is still %s on its coordinator broker-%d, begun at %v with transaction.timeout.ms %v",
				t.TransactionalID, t.ProducerID, t.ProducerEpoch, t.State, t.Coordinator, t.StartTime, t.TransactionTimeout)
			interval := txn.DefaultConfig().AbortTimedOutInterval
			if c.cfg.Transactions != nil {
				interval = c.cfg.Transactions.AbortCheckInterval()
			}
			if t.State == "Ongoing" && c.World.Now() > t.StartTime+t.TransactionTimeout+interval {
				why += fmt.Sprintf(": past its timeout and the abort interval (%v), its coordinator should have aborted it", interval)
			}
			return false, why
		}
	}
	return true, ""
}

// hangingTransactions lists the partitions whose last stable offset a
// transaction holds that its coordinator no longer holds open
// (godview.HangingTransaction, KIP-664): the partition's leader still has
// it ongoing (no marker), below its high watermark, and no coordinator
// holds its producer id open with the partition among its partitions.
// Nothing in Kafka resolves such a transaction but an operator's
// kafka-transactions.sh abort. When a loss Kafka permits took the marker
// the coordinator had written there (an unclean election, or a power loss
// its last known leader exposed: KAFKA-20716), the fact's Cause and
// ExposedBy are that loss's.
func (c *Cluster) hangingTransactions() []godview.Fact {
	if c.cfg.Transactions == nil {
		return nil
	}
	im := c.Metadata()
	if im == nil {
		return nil
	}
	// A coordinator that is down holds nothing: what it would hold open is
	// not known, so nothing is called hanging (the run did not converge).
	for i := range c.Brokers {
		if c.World.State(c.Brokers[i]) != sim.Running {
			return nil
		}
	}
	held := c.Transactions()
	var out []godview.Fact
	for _, p := range im.Partitions() {
		v := c.LeaderView(p)
		if v == nil || !v.Log().Transactional() {
			continue
		}
		hw := v.HighWatermark()
		tp := proto.TopicPartition{Topic: p.TopicPartition.Topic, Partition: p.TopicPartition.Partition}
		for _, o := range v.Log().Producers().OngoingTxns() {
			if o.FirstOffset >= hw {
				continue // not yet replicated: it holds nothing back
			}
			id, open := "", false
			for _, t := range held {
				if t.ProducerID != o.ProducerID {
					continue
				}
				id = t.TransactionalID
				open = txn.Open(t.State) && slices.Contains(t.Partitions, tp)
			}
			if open {
				continue
			}
			f := godview.Fact{Kind: godview.HangingTransaction, Partition: p.TopicPartition.String(), From: o.FirstOffset, To: hw,
				Producer: o.ProducerID, TransactionalID: id, At: int64(c.World.Now())}
			// The coordinator did write its marker, and a loss Kafka
			// permits took it (KAFKA-20716): the fact says which.
			f.Cause, f.ExposedBy, _ = c.Audit.LostMarker(p.TopicPartition, o.ProducerID, o.FirstOffset)
			out = append(out, f)
		}
	}
	return out
}

// StalledTransactions lists the transactions whose current coordinator
// stopped sending their markers (txn.Staller: a partition answered them
// INVALID_PRODUCER_EPOCH or TRANSACTION_COORDINATOR_FENCED), by id.
func (c *Cluster) StalledTransactions() []TxnHeld {
	var out []TxnHeld
	for _, t := range c.Transactions() {
		b := c.Broker(t.Coordinator)
		if b == nil {
			continue
		}
		s, ok := b.Coordinator(txn.Topic).(txn.Staller)
		if ok && slices.Contains(s.StalledTransactions(), t.TransactionalID) && txn.Open(t.State) {
			out = append(out, t)
		}
	}
	return out
}

// TransactionsNotJudged reports why the transactions' convergence (and
// that of the groups of the processors they stall) is not judged, or ""
// when it is: everything before the consumer groups has healed, every
// transaction still open is stalled (StalledTransactions), and every group
// that has not healed has a processor among its members whose
// transactional id is one of them. Kafka 4.x leaves such a transaction in
// PrepareCommit or PrepareAbort for as long as its coordinator holds it
// (TransactionMarkerRequestCompletionHandler's abortSending; a reload
// sends the markers again and a partition whose producer state is ahead
// refuses them again), and its producer's EndTxn and InitProducerId are
// CONCURRENT_TRANSACTIONS for ever: a processor retries its abort and
// never gets back to its group. A partition's producer state gets ahead
// of the coordinator only when __transaction_state lost records (an
// unclean election: KAFKA-20716 documents that it breaks exactly-once)
// or a bug switch broke the epochs: without either, a stall is the
// model's defect and convergence is judged.
func (c *Cluster) TransactionsNotJudged() string {
	if c.cfg.Transactions == nil || !c.HealedButGroups() {
		return ""
	}
	stalled := c.StalledTransactions()
	if len(stalled) == 0 || !c.TxnEpochsMayRunAhead() {
		return ""
	}
	for _, t := range c.Transactions() {
		if txn.Open(t.State) && !slices.ContainsFunc(stalled, func(s TxnHeld) bool { return s.TransactionalID == t.TransactionalID }) {
			return ""
		}
	}
	stalledGroups := map[string]bool{}
	for _, rs := range c.cfg.Readers {
		if rs.Processor == nil || rs.Processor.Producer.TransactionalID == "" || rs.Config.Group == nil {
			continue
		}
		for i := range rs.Count {
			id := ClientName(rs.Processor.Producer.TransactionalID, i)
			if slices.ContainsFunc(stalled, func(s TxnHeld) bool { return s.TransactionalID == id }) {
				stalledGroups[rs.Config.Group.GroupID] = true
			}
		}
	}
	if im := c.Metadata(); im != nil {
		for _, gid := range c.Groups() {
			if ok, _, _, _ := c.groupStable(im, gid); !ok && !stalledGroups[gid] {
				return ""
			}
		}
	}
	var out []string
	for _, t := range stalled {
		out = append(out, fmt.Sprintf("transaction %s (producer id %d, epoch %d) is stalled in %s on its coordinator broker-%d, which stopped sending its markers "+
			"when a partition refused them (INVALID_PRODUCER_EPOCH: the partition holds a later epoch of the producer than __transaction_state kept); "+
			"Kafka leaves it so (TransactionMarkerRequestCompletionHandler's abortSending; abortTimedOutTransactions takes only Ongoing ones) and answers its producer CONCURRENT_TRANSACTIONS for ever",
			t.TransactionalID, t.ProducerID, t.ProducerEpoch, t.State, t.Coordinator))
	}
	return strings.Join(out, "; ")
}

// TxnEpochsMayRunAhead tells whether a producer may hold a later epoch
// than __transaction_state (a partition's producer state, or the client
// itself): the god view saw a loss of a __transaction_state partition's
// committed records, or a bug switch that ends transactions without their
// epoch bump is on. Without either, a coordinator behind its producers is
// the model's defect.
func (c *Cluster) TxnEpochsMayRunAhead() bool {
	if slices.ContainsFunc(c.cfg.Bugs, func(b string) bool { return b == BugNoEpochBumpOnAbort || b == BugDelayedEndTxn }) {
		return true
	}
	return slices.ContainsFunc(c.Audit.Losses(), func(l audit.Loss) bool { return strings.HasPrefix(l.Partition, txn.Topic+"-") })
}
