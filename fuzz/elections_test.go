package fuzz

import (
	"testing"

	"kafkasim/scenarios"
)

// Some seeds get elect-leaders faults and a short leader balancing
// interval, from a stream of their own: taking them away gives back exactly
// what the seed drew without them.
func TestElectionsComeFromTheirOwnStream(t *testing.T) {
	faults, intervals := 0, 0
	for seed := uint64(1); seed <= 300; seed++ {
		_, n := drawnApart(t, seed, "elections", &electionPercent,
			func(f scenarios.ScheduledFault) bool { return f.Key == "elect-leaders" },
			func(with, stripped, without *scenarios.Scenario) {
				if with.Cluster.Broker.Get("leader.imbalance.check.interval.seconds") != "300" {
					intervals++
					stripped.Cluster.Broker = without.Cluster.Broker
				}
			})
		faults += n
	}
	if faults == 0 || intervals == 0 || intervals > 100 {
		t.Fatalf("300 seeds drew %d elect-leaders faults and %d short intervals", faults, intervals)
	}
}
