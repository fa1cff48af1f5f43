package fuzz

import (
	"math/rand/v2"
	"strconv"
	"time"

	"kafkasim/model/cluster"
	"kafkasim/model/proto"
	"kafkasim/scenarios"
)

// Operators' leader elections: some seeds get elect-leaders faults (the
// ElectLeaders API) and a short leader.imbalance.check.interval.seconds, so
// that preferred elections (which move leadership inside the ISR while
// writes flow) happen in runs shorter than Kafka's 300 s interval. A stream
// of their own decides, so that every other draw of a seed is what it was
// before they existed.

// electionStream seeds the stream (the second word of its PCG).
const electionStream = 0x3c6ef372fe94f82b

// electionPercent of the seeds get elect-leaders faults; as many (drawn
// apart) get a short leader balancing interval. A variable for tests.
var electionPercent = 15

// withElections adds 1-2 elect-leaders faults to the schedule of some seeds
// and shortens the leader balancing interval of others (only for a drawn
// cluster: a base keeps its configuration), keeping the schedule in order
// of time and within faultsMax.
func withElections(rng *rand.Rand, s *scenarios.Scenario, faults []scenarios.ScheduledFault, drawnCluster bool) []scenarios.ScheduledFault {
	if drawnCluster && rng.IntN(100) < electionPercent {
		set(&s.Cluster.Broker, "leader.imbalance.check.interval.seconds", strconv.Itoa(5+rng.IntN(16)))
	}
	if rng.IntN(100) >= electionPercent || len(s.Topics) == 0 || s.Duration <= time.Second {
		return faults
	}
	for range 1 + rng.IntN(2) {
		if len(faults) >= faultsMax {
			break
		}
		op := cluster.ElectLeaders{Type: proto.ElectionPreferred}
		if rng.IntN(5) == 0 {
			// Unclean: a partition that has lost its leader gets one
			// from outside the ISR; one with a leader is left alone.
			op.Type = proto.ElectionUnclean
		}
		if rng.IntN(4) != 0 {
			t := s.Topics[rng.IntN(len(s.Topics))]
			op.Topic, op.Partition = t.Name, int32(rng.IntN(max(t.Partitions, 1)))
		}
		faults = withAdminFault(rng, s, faults, "elect-leaders", op)
	}
	return inTimeOrder(faults)
}
