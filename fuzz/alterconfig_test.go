package fuzz

import (
	"testing"

	"kafkasim/scenarios"
)

// Some seeds get alter-config faults from a stream of their own: taking
// them away gives back exactly what the seed drew without them (elections,
// drawn after them within the same bound on faults, are left out of both).
func TestAlterConfigsComeFromTheirOwnStream(t *testing.T) {
	withoutElections(t)
	faults := 0
	for seed := uint64(1); seed <= 300; seed++ {
		_, n := drawnApart(t, seed, "alter-configs", &alterConfigPercent,
			func(f scenarios.ScheduledFault) bool { return f.Key == "alter-config" }, nil)
		faults += n
	}
	if faults == 0 || faults > 80 {
		t.Fatalf("300 seeds drew %d alter-config faults", faults)
	}
}
