package fuzz

import (
	"math/rand/v2"
	"strings"
	"time"

	"kafkasim/model/cluster"
	"kafkasim/scenarios"
)

// Operators' partition reassignments: some seeds get a reassign fault (the
// AlterPartitionReassignments API) moving a partition to other brokers,
// now and then changing its replication factor, while writes flow and other
// faults strike. A stream of their own decides, so that every other draw of
// a seed is what it was before they existed.

// reassignStream seeds the stream (the second word of its PCG).
const reassignStream = 0x9b05688c2b3e6c1f

// reassignPercent of the seeds get reassign faults. A variable for tests.
var reassignPercent = 8

// withReassignments adds 1-2 reassign faults to the schedule of some seeds
// with at least two brokers, keeping it in order of time and within
// faultsMax.
func withReassignments(rng *rand.Rand, s *scenarios.Scenario, faults []scenarios.ScheduledFault) []scenarios.ScheduledFault {
	if rng.IntN(100) >= reassignPercent || s.Cluster.Brokers < 2 || s.Duration <= time.Second {
		return faults
	}
	var topics []scenarios.Topic
	for _, t := range s.Topics {
		if !strings.HasPrefix(t.Name, "__") {
			topics = append(topics, t)
		}
	}
	if len(topics) == 0 {
		return faults
	}
	for range 1 + rng.IntN(2) {
		if len(faults) >= faultsMax {
			break
		}
		t := topics[rng.IntN(len(topics))]
		rf := max(t.ReplicationFactor, 1)
		if len(t.Assignment) > 0 {
			rf = len(t.Assignment[0])
		}
		switch rng.IntN(6) {
		case 0:
			rf-- // fewer replicas
		case 1:
			rf++ // more
		}
		rf = min(max(rf, 1), s.Cluster.Brokers)
		if rf == s.Cluster.Brokers && rf > 1 && rng.IntN(2) == 0 {
			// Every broker holds the partition: a target of as many
			// replicas only reorders them, so half the time one leaves.
			rf--
		}
		ids := rng.Perm(s.Cluster.Brokers)[:rf]
		op := cluster.Reassign{Topic: t.Name, Partition: int32(rng.IntN(max(t.Partitions, len(t.Assignment), 1)))}
		for _, id := range ids {
			op.Replicas = append(op.Replicas, int32(id+1))
		}
		faults = withAdminFault(rng, s, faults, "reassign", op)
	}
	return inTimeOrder(faults)
}
