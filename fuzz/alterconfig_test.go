package fuzz

import (
	"bytes"
	"testing"

	"kafkasim/scenarios"
)

// Some seeds get alter-config faults from a stream of their own: taking
// them away gives back exactly what the seed drew without them (elections,
// drawn after them within the same bound on faults, are left out of both).
func TestAlterConfigsComeFromTheirOwnStream(t *testing.T) {
	savedElections := electionPercent
	electionPercent = 0
	defer func() { electionPercent = savedElections }()
	faults := 0
	for seed := uint64(1); seed <= 300; seed++ {
		with, err := Generate(seed, nil, nil)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		saved := alterConfigPercent
		alterConfigPercent = 0
		without, err := Generate(seed, nil, nil)
		alterConfigPercent = saved
		if err != nil {
			t.Fatalf("seed %d without alter-configs: %v", seed, err)
		}
		stripped := *with
		stripped.Faults = nil
		for _, f := range with.Faults {
			if f.Key == "alter-config" {
				faults++
				continue
			}
			stripped.Faults = append(stripped.Faults, f)
		}
		a, _ := scenarios.Normalize(&stripped)
		ya, _ := a.Resolved()
		yb, _ := without.Resolved()
		if !bytes.Equal(ya, yb) {
			t.Fatalf("seed %d: without its alter-configs the scenario is not what the seed drew:\n%s\n----\n%s", seed, ya, yb)
		}
	}
	if faults == 0 || faults > 80 {
		t.Fatalf("300 seeds drew %d alter-config faults", faults)
	}
}
