package fuzz

import (
	"testing"

	"kafkasim/model/cluster"
	"kafkasim/scenarios"
)

// Some seeds get reassign faults, from a stream of their own: taking them
// away gives back exactly what the seed drew without them (elections, drawn
// after them and capped by the same bound, are left out of the comparison).
func TestReassignmentsComeFromTheirOwnStream(t *testing.T) {
	withoutElections(t)
	faults := 0
	for seed := uint64(1); seed <= 300; seed++ {
		with, n := drawnApart(t, seed, "reassignments", &reassignPercent, func(f scenarios.ScheduledFault) bool {
			_, ok := f.Fault.Custom.(cluster.Reassign)
			return ok
		}, nil)
		for _, f := range with.Faults {
			if op, ok := f.Fault.Custom.(cluster.Reassign); ok && (len(op.Replicas) == 0 || int(op.Replicas[0]) > with.Cluster.Brokers) {
				t.Fatalf("seed %d: %v", seed, op)
			}
		}
		faults += n
	}
	if faults == 0 || faults > 100 {
		t.Fatalf("300 seeds drew %d reassign faults", faults)
	}
}
