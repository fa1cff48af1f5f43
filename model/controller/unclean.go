package controller

import (
	"fmt"
	"time"

	"kafkasim/model/metadata"
)

// The periodic unclean leader election (QuorumController's electUnclean
// task, ReplicationControlManager.maybeElectUncleanLeaders): a partition
// left leaderless while its topic did not allow unclean elections stays
// leaderless when an operator turns unclean.leader.election.enable on; the
// controller elects it uncleanly at its next pass, or when a replica's
// broker comes back (unfence builds its election with the topic's current
// config), or at an operator's ElectLeaders of type UNCLEAN.

// UncleanLeaderElectionInterval is unclean.leader.election.interval.ms's
// default (ReplicationConfigs.UNCLEAN_LEADER_ELECTION_INTERVAL_MS_DEFAULT,
// 5 minutes): how often the active controller runs its pass.
const UncleanLeaderElectionInterval = 5 * time.Minute

type uncleanTick struct{ gen uint64 }

// maybeScheduleUnclean arms the next pass when one could elect something: a
// leaderless partition of a topic that allows unclean elections, with a
// replica on an active broker. Kafka's
// periodic task runs every interval from activation whatever the state; a
// pass that finds nothing to do changes nothing, so the model arms only the
// passes that may act, at the same instants (activation plus a multiple of
// the interval), and a run that never needs one schedules no event.
func (n *Node) maybeScheduleUnclean() {
	if !n.Active() || n.uncleanScheduled || !uncleanCandidates(n.draft) {
		return
	}
	since := n.env.Now() - n.activeSince
	next := (since/UncleanLeaderElectionInterval + 1) * UncleanLeaderElectionInterval
	n.env.After(next-since, uncleanTick{gen: n.leaderGen})
	n.uncleanScheduled = true
}

// uncleanCandidates reports whether a leaderless partition whose topic
// allows unclean elections has a replica that may lead.
func uncleanCandidates(im *metadata.Image) bool {
	for _, t := range im.Topics { // kafkasim:orderless: any partition will do
		if !t.UncleanLeaderElection {
			continue
		}
		for _, p := range t.Partitions {
			if p.Leader != metadata.NoLeader {
				continue
			}
			for _, r := range p.Replicas {
				if im.IsActive(r) {
					return true
				}
			}
		}
	}
	return false
}

// runUnclean is one pass: its elections are written as one batch nobody
// waits for.
func (n *Node) runUnclean() {
	n.uncleanScheduled = false
	batch, _ := ElectUncleanLeaders(n.draft, n.cfg.ELREnabled, MaxElectionsPerImbalance)
	if len(batch) > 0 {
		n.env.Note("controller", fmt.Sprintf("unclean leader election: %d leaderless partition(s) get a leader", len(batch)))
		n.propose(batch)
	}
}

// ElectUncleanLeaders is ReplicationControlManager.maybeElectUncleanLeaders:
// an UNCLEAN election for every leaderless partition whose topic has
// unclean.leader.election.enable=true, at most max records; more reports
// that it stopped at the bound.
func ElectUncleanLeaders(im *metadata.Image, elr bool, max int) (batch metadata.Batch, more bool) {
	for _, name := range im.TopicNames() {
		t := im.Topics[name]
		if !t.UncleanLeaderElection {
			continue
		}
		for _, p := range t.Partitions {
			if p.Leader != metadata.NoLeader {
				continue
			}
			if len(batch) >= max {
				return batch, true
			}
			b := metadata.NewChangeBuilder(p, im.IsActive, elr, metadata.ElectionUnclean, t.EffectiveMinISR())
			if rec, _ := b.Build(); rec != nil {
				batch = append(batch, metadata.Record{PartitionChange: rec})
			}
		}
	}
	return batch, false
}
