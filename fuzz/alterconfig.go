package fuzz

import (
	"math/rand/v2"
	"strconv"
	"time"

	"kafkasim/model/cluster"
	"kafkasim/model/proto"
	"kafkasim/scenarios"
)

// Operators' config changes: some seeds get an alter-config fault (the
// IncrementalAlterConfigs API) lowering or raising a topic's
// min.insync.replicas, turning unclean leader election on or off, or
// shortening retention; a few alter the cluster-wide default or one
// broker's own config (which the controller refuses for min ISR while ELR
// is on). A stream of their own decides, so that every other draw of a seed
// is what it was before they existed.

// alterConfigStream seeds the stream (the second word of its PCG).
const alterConfigStream = 0xa54ff53a5f1d36f1

// alterConfigPercent of the seeds get alter-config faults. A variable for
// tests.
var alterConfigPercent = 8

// withAlterConfigs adds 1-2 alter-config faults to the schedule of some
// seeds, keeping it in order of time and within faultsMax.
func withAlterConfigs(rng *rand.Rand, s *scenarios.Scenario, faults []scenarios.ScheduledFault) []scenarios.ScheduledFault {
	if rng.IntN(100) >= alterConfigPercent || len(s.Topics) == 0 || s.Duration <= time.Second {
		return faults
	}
	for range 1 + rng.IntN(2) {
		if len(faults) >= faultsMax {
			break
		}
		t := s.Topics[rng.IntN(len(s.Topics))]
		op := cluster.AlterConfig{ResourceType: proto.ResourceTopic, Name: t.Name}
		switch r := rng.IntN(8); {
		case r == 0:
			op.ResourceType, op.Name = proto.ResourceBroker, "" // cluster-wide
		case r == 1 && s.Cluster.Brokers > 0:
			op.ResourceType, op.Name = proto.ResourceBroker, strconv.Itoa(1+rng.IntN(s.Cluster.Brokers))
		}
		var c proto.AlterableConfig
		switch r := rng.IntN(6); {
		case r < 3:
			c = proto.AlterableConfig{Name: "min.insync.replicas", Value: strconv.Itoa(1 + rng.IntN(max(t.ReplicationFactor, 1)))}
		case r < 5:
			c = proto.AlterableConfig{Name: "unclean.leader.election.enable", Value: strconv.FormatBool(rng.IntN(3) != 0)}
		case op.ResourceType == proto.ResourceTopic:
			c = proto.AlterableConfig{Name: "retention.ms", Value: strconv.Itoa((5 + rng.IntN(56)) * 1000)}
		default:
			c = proto.AlterableConfig{Name: "unclean.leader.election.enable", Value: "true"}
		}
		op.Configs = []proto.AlterableConfig{c}
		faults = withAdminFault(rng, s, faults, "alter-config", op)
	}
	return inTimeOrder(faults)
}
