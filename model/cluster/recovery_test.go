package cluster

import (
	"slices"
	"testing"
	"time"

	"kafkasim/model/metadata"
	"kafkasim/sim"
)

// An uncleanly elected leader stays RECOVERING in the metadata until a
// follower joins its ISR: as Kafka's Partition.makeLeader, the leader takes
// its own state as RECOVERED at once and reports it with the next ISR change
// it asks for, not with an AlterPartition of its own (KIP-704). How the epoch
// began is known apart from that state: the clean re-election of a leader
// still RECOVERING is not unclean.
func TestUncleanLeaderReportsRecoveryWithItsNextISRChange(t *testing.T) {
	cfg := DefaultConfig(11)
	unclean := true
	cfg.Topics = []TopicSpec{{Name: "t", Partitions: 1, ReplicationFactor: 2, Assignment: [][]int32{{1, 2}}, MinInsyncReplicas: 1, Unclean: &unclean}}
	c, _ := settledCluster(t, cfg)
	w := c.World
	tp := metadata.TopicPartition{Topic: "t", Partition: 0}
	part := func() *metadata.Partition { return c.Metadata().Partition(tp) }
	// Broker 2 is cut from the others until the controller fences it and
	// the ISR is broker 1 alone; then broker 1 crashes and broker 2 is back:
	// the only live replica is outside the ISR.
	cut := w.Partition([]sim.NodeID{c.BrokerNode(2)}, append(slices.Clone(c.Controllers), c.BrokerNode(1)))
	w.RunFor(15 * time.Second)
	if p := part(); !slices.Equal(p.ISR, []int32{1}) {
		t.Fatalf("broker 2 cut off for 15 s should have left the ISR: %s", p)
	}
	w.Crash(c.BrokerNode(1), false)
	w.Heal(cut)
	w.RunFor(10 * time.Second)
	p := part()
	if p.Leader != 2 || !p.Recovering || !p.ElectedUncleanly || !slices.Equal(p.ISR, []int32{2}) {
		t.Fatalf("broker 2 should lead uncleanly, alone in the ISR, RECOVERING, 10 s after broker 1 crashed: %s (recovering %v, unclean %v)",
			p, p.Recovering, p.ElectedUncleanly)
	}
	uncleanEpoch := p.LeaderEpoch
	// Broker 1 comes back, truncates to the new leader, catches up and joins:
	// that ISR change is the report.
	w.Restart(c.BrokerNode(1))
	w.RunFor(20 * time.Second)
	p = part()
	if !slices.Contains(p.ISR, 1) || p.Recovering {
		t.Fatalf("broker 1 should have rejoined the ISR, ending RECOVERING: %s (recovering %v)", p, p.Recovering)
	}
	if p.LeaderEpoch != uncleanEpoch || !p.ElectedUncleanly {
		t.Fatalf("the unclean epoch %d goes on: %s (unclean %v)", uncleanEpoch, p, p.ElectedUncleanly)
	}
	// A clean re-election (broker 2 shut down cleanly: broker 1 leads) is
	// clean.
	w.Shutdown(c.BrokerNode(2))
	w.RunFor(5 * time.Second)
	if p = part(); p.Leader != 1 || p.ElectedUncleanly {
		t.Fatalf("a controlled shutdown moves leadership cleanly: %s (unclean %v)", p, p.ElectedUncleanly)
	}
}
