package fuzz

import (
	"bytes"
	"testing"

	"kafkasim/scenarios"
)

// Some seeds get elect-leaders faults and a short leader balancing
// interval, from a stream of their own: taking them away gives back exactly
// what the seed drew without them.
func TestElectionsComeFromTheirOwnStream(t *testing.T) {
	faults, intervals := 0, 0
	for seed := uint64(1); seed <= 300; seed++ {
		with, err := Generate(seed, nil, nil)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		saved := electionPercent
		electionPercent = 0
		without, err := Generate(seed, nil, nil)
		electionPercent = saved
		if err != nil {
			t.Fatalf("seed %d without elections: %v", seed, err)
		}
		stripped := *with
		stripped.Faults = nil
		for _, f := range with.Faults {
			if f.Key == "elect-leaders" {
				faults++
				continue
			}
			stripped.Faults = append(stripped.Faults, f)
		}
		if with.Cluster.Broker.Get("leader.imbalance.check.interval.seconds") != "300" {
			intervals++
			stripped.Cluster.Broker = without.Cluster.Broker
		}
		a, _ := scenarios.Normalize(&stripped)
		ya, _ := a.Resolved()
		yb, _ := without.Resolved()
		if !bytes.Equal(ya, yb) {
			t.Fatalf("seed %d: without its elections the scenario is not what the seed drew:\n%s\n----\n%s", seed, ya, yb)
		}
	}
	if faults == 0 || intervals == 0 || intervals > 100 {
		t.Fatalf("300 seeds drew %d elect-leaders faults and %d short intervals", faults, intervals)
	}
}
