package controller

import (
	"fmt"
	"time"

	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// Leader elections an operator or the controller itself asks for, beyond
// those a broker's failure forces: the periodic preferred-leader balancing
// (auto.leader.rebalance.enable) and the ElectLeaders API (KIP-460).

// MaxElectionsPerImbalance bounds the elections one balancing pass writes,
// as Kafka's ReplicationControlManager.MAX_ELECTIONS_PER_IMBALANCE; a pass
// that hits it runs again 10 ms later instead of an interval later.
const MaxElectionsPerImbalance = 1000

// balanceRetryDelay is how soon a pass that hit the bound runs again
// (QuorumController.maybeScheduleNextBalancePartitionLeaders: 10 ms, so that
// other events get the queue in between).
const balanceRetryDelay = 10 * time.Millisecond

type balanceTick struct{ gen uint64 }

// imbalanceSchedule is QuorumController's ImbalanceSchedule.
type imbalanceSchedule uint8

const (
	balanceDeferred    imbalanceSchedule = iota // next pass an interval after it is scheduled
	balanceImmediately                          // next pass 10 ms after it is scheduled
	balanceScheduled                            // a pass is scheduled
)

// maybeScheduleBalance schedules a balancing pass if leader balancing is on,
// none is scheduled, and some partition's leader is not its preferred
// replica. Kafka calls it after every controller write event (heartbeats,
// AlterPartition, the periodic NoOp and fence checks...) and on becoming
// active: so the first pass runs about leader.imbalance.check.interval
// after a partition first becomes imbalanced, not at a fixed phase.
func (n *Node) maybeScheduleBalance() {
	if n.cfg.LeaderImbalanceCheckInterval <= 0 || !n.Active() || n.balance == balanceScheduled || !imbalanced(n.draft) {
		return
	}
	delay := n.cfg.LeaderImbalanceCheckInterval
	if n.balance == balanceImmediately {
		delay = balanceRetryDelay
	}
	n.env.After(delay, balanceTick{gen: n.leaderGen})
	n.balance = balanceScheduled
}

// runBalance is one pass of QuorumController's maybeBalancePartitionLeaders
// event: its elections are written as one batch nobody waits for.
func (n *Node) runBalance() {
	batch, more := BalanceLeaders(n.draft, n.cfg.ELREnabled, MaxElectionsPerImbalance)
	n.balance = balanceDeferred
	if more {
		n.balance = balanceImmediately
	}
	if len(batch) > 0 {
		n.env.Note("controller", fmt.Sprintf("preferred leader election: %d partition(s) moved back to their preferred replica", len(batch)))
		n.propose(batch)
	}
}

// imbalanced reports whether any partition's leader is not its preferred
// replica (Kafka's imbalancedPartitions is not empty). A leaderless
// partition counts, as in Kafka: hasPreferredLeader is false for it.
func imbalanced(im *metadata.Image) bool {
	for _, t := range im.Topics { // kafkasim:orderless: any partition will do; runs after every controller event, so unsorted
		for _, p := range t.Partitions {
			if !p.HasPreferredLeader() {
				return true
			}
		}
	}
	return false
}

// BalanceLeaders is ReplicationControlManager.maybeBalancePartitionLeaders:
// a PREFERRED election for every partition whose leader is not its preferred
// replica, at most max records; more reports that it stopped at the bound.
// A partition whose preferred replica may not lead (fenced, shutting down,
// out of the ISR) is left as it is. Kafka has no imbalance threshold in
// KRaft: leader.imbalance.per.broker.percentage is gone in 4.0 (KAFKA-18743).
func BalanceLeaders(im *metadata.Image, elr bool, max int) (batch metadata.Batch, more bool) {
	for _, name := range im.TopicNames() {
		t := im.Topics[name]
		for _, p := range t.Partitions {
			if p.HasPreferredLeader() {
				continue
			}
			if len(batch) >= max {
				return batch, true
			}
			b := metadata.NewChangeBuilder(p, im.IsActive, elr, metadata.ElectionPreferred, t.EffectiveMinISR())
			if rec, _ := b.Build(); rec != nil {
				batch = append(batch, metadata.Record{PartitionChange: rec})
			}
		}
	}
	return batch, false
}

// ElectLeader is ReplicationControlManager.electLeader: one partition's
// election for an ElectLeaders request. PREFERRED is not needed when the
// preferred replica leads; UNCLEAN is not needed when the partition has a
// leader (it never moves a working leader). Otherwise a PREFERRED or UNCLEAN
// change is built; none means no replica may lead (for UNCLEAN: no live
// replica at all, in or out of the ISR).
func ElectLeader(im *metadata.Image, tp metadata.TopicPartition, typ proto.ElectionType, elr bool) (*metadata.PartitionChange, proto.ErrorCode, string) {
	t := im.Topics[tp.Topic]
	if t == nil {
		return nil, proto.UnknownTopicOrPartition, "No such topic as " + tp.Topic
	}
	p := im.Partition(tp)
	if p == nil {
		return nil, proto.UnknownTopicOrPartition, fmt.Sprintf("No such partition as %s", tp)
	}
	if typ == proto.ElectionPreferred && p.HasPreferredLeader() || typ == proto.ElectionUnclean && p.Leader != metadata.NoLeader {
		return nil, proto.ElectionNotNeeded, ""
	}
	election := metadata.ElectionPreferred
	if typ == proto.ElectionUnclean {
		election = metadata.ElectionUnclean
	}
	rec, _ := metadata.NewChangeBuilder(p, im.IsActive, elr, election, t.EffectiveMinISR()).Build()
	if rec == nil {
		if typ == proto.ElectionPreferred {
			return nil, proto.PreferredLeaderNotAvailable, ""
		}
		return nil, proto.EligibleLeadersNotAvailable, ""
	}
	return rec, proto.None, ""
}

// handleElectLeaders answers ElectLeaders (ReplicationControlManager.
// electLeaders): each partition asked for, or with no partitions every
// partition of every topic, leaving out of the answer those that needed no
// election, as Kafka does. The changes are written as one batch, and the
// answer waits for its commit.
func (n *Node) handleElectLeaders(from sim.NodeID, m *proto.ElectLeadersRequest) {
	reply := &proto.ElectLeadersResponse{CorrelationID: m.CorrelationID}
	var batch metadata.Batch
	seen := map[metadata.TopicPartition]bool{}
	elect := func(tp metadata.TopicPartition, all bool) {
		if seen[tp] {
			return // each change is built on the draft before the batch: once per partition
		}
		seen[tp] = true
		rec, code, msg := ElectLeader(n.draft, tp, m.Type, n.cfg.ELREnabled)
		if rec != nil {
			batch = append(batch, metadata.Record{PartitionChange: rec})
		}
		if all && code == proto.ElectionNotNeeded {
			return
		}
		reply.Results = append(reply.Results, proto.ElectLeadersResult{
			Partition: proto.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}, Error: code, Message: msg})
	}
	if m.Partitions == nil {
		for _, p := range n.draft.Partitions() {
			elect(p.TopicPartition, true)
		}
	} else {
		for i, tp := range m.Partitions {
			if i >= MaxElectLeadersPartitions {
				break
			}
			elect(metadata.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}, false)
		}
	}
	if len(batch) > 0 {
		n.env.Note("controller", fmt.Sprintf("ElectLeaders %s: %d partition(s) get a new leader", m.Type, len(batch)))
	}
	n.decide(batch, from, reply, nil)
}

// MaxElectLeadersPartitions bounds the partitions one request names (Kafka
// bounds a request's records by MAX_RECORDS_PER_USER_OP, 10000).
const MaxElectLeadersPartitions = 10000
