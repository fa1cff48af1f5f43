package fuzz

import (
	"bytes"
	"testing"

	"kafkasim/model/cluster"
	"kafkasim/scenarios"
)

// Some seeds get reassign faults, from a stream of their own: taking them
// away gives back exactly what the seed drew without them (elections, drawn
// after them and capped by the same bound, are left out of the comparison).
func TestReassignmentsComeFromTheirOwnStream(t *testing.T) {
	savedElections := electionPercent
	electionPercent = 0
	defer func() { electionPercent = savedElections }()
	faults := 0
	for seed := uint64(1); seed <= 300; seed++ {
		with, err := Generate(seed, nil, nil)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		saved := reassignPercent
		reassignPercent = 0
		without, err := Generate(seed, nil, nil)
		reassignPercent = saved
		if err != nil {
			t.Fatalf("seed %d without reassignments: %v", seed, err)
		}
		stripped := *with
		stripped.Faults = nil
		for _, f := range with.Faults {
			if op, ok := f.Fault.Custom.(cluster.Reassign); ok {
				faults++
				if len(op.Replicas) == 0 || int(op.Replicas[0]) > with.Cluster.Brokers {
					t.Fatalf("seed %d: %v", seed, op)
				}
				continue
			}
			stripped.Faults = append(stripped.Faults, f)
		}
		a, _ := scenarios.Normalize(&stripped)
		ya, _ := a.Resolved()
		yb, _ := without.Resolved()
		if !bytes.Equal(ya, yb) {
			t.Fatalf("seed %d: without its reassignments the scenario is not what the seed drew:\n%s\n----\n%s", seed, ya, yb)
		}
	}
	if faults == 0 || faults > 100 {
		t.Fatalf("300 seeds drew %d reassign faults", faults)
	}
}
