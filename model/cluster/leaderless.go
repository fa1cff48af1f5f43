package cluster

import (
	"fmt"
	"strings"

	"kafkasim/model/metadata"
)

// Partitions Kafka leaves without a leader until an operator acts: no
// leader, an empty ISR and ELR, no single last known leader
// (Partition.OnlyUncleanlyElectable), and a topic that does not allow
// unclean elections. PartitionChangeBuilder's ONLINE election (a broker
// unfenced, ReplicationControlManager.handleBrokerUnfenced) and PREFERRED
// one (leader balancing) pick only from the ISR, then the ELR, then the
// last known leader, so no broker coming back elects anyone: only an
// operator's ElectLeaders of type UNCLEAN (kafka-leader-election.sh
// --election-type unclean) or turning unclean.leader.election.enable on.
// With ELR on, Kafka 4.x gets there when a min.insync.replicas change's
// ClearElrRecord empties the ELR and last known leader of a partition that
// has no leader and an empty ISR (fuzz seeds 365357 and 368282).

// LeaderlessForGood says, for each partition Kafka leaves without a leader
// until an operator acts, why; nil when there is none.
func (c *Cluster) LeaderlessForGood() []string {
	im := c.Metadata()
	if im == nil {
		return nil
	}
	var out []string
	for _, p := range im.Partitions() {
		if why := leaderlessForGood(im, p); why != "" {
			out = append(out, why)
		}
	}
	return out
}

func leaderlessForGood(im *metadata.Image, p *metadata.Partition) string {
	t := im.Topics[p.Topic]
	if !p.OnlyUncleanlyElectable() || t == nil || t.UncleanLeaderElection {
		return ""
	}
	cause := ""
	if len(p.ClearedWhileLeaderless) > 0 {
		ids := make([]string, len(p.ClearedWhileLeaderless))
		for i, r := range p.ClearedWhileLeaderless {
			ids[i] = fmt.Sprintf("broker-%d", r)
		}
		cause = fmt.Sprintf(" (a min.insync.replicas change's ClearElrRecord took %s out of the last two while it had no leader and an empty ISR)",
			strings.Join(ids, ", "))
	}
	return fmt.Sprintf("%s has no replica Kafka may elect: its ISR, ELR and last known leader are empty%s; "+
		"with unclean.leader.election.enable off, no broker coming back elects one, only an operator's unclean election "+
		"(kafka-leader-election.sh --election-type unclean, or turning unclean.leader.election.enable on)", p.TopicPartition, cause)
}

// HealedButLeaderless reports whether everything convergence judges first
// has healed but for the partitions Kafka leaves leaderless
// (LeaderlessForGood): the control plane, and every other partition led
// with its replicas in sync and its high watermark at its log end. When it
// has not, the reason is what else is missing. What depends on such a
// partition (a producer's records for it, a reader's position in it, the
// probes and final reads) cannot heal either, and is not judged.
func (c *Cluster) HealedButLeaderless() (bool, string) {
	if ok, why := c.ControlPlaneConverged(); !ok {
		return false, why
	}
	im := c.Metadata()
	if im == nil {
		return false, "no committed metadata"
	}
	for _, p := range im.Partitions() {
		if leaderlessForGood(im, p) != "" {
			continue
		}
		if ok, why := c.partitionLedInSync(p); !ok {
			return false, why
		}
		if ok, why := c.partitionDrained(p); !ok {
			return false, why
		}
	}
	return true, ""
}
