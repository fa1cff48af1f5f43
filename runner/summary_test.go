package runner

import (
	"testing"

	"kafkasim/sim"
)

// summary.json's faults counts the faults that acted: not their undoing,
// not one that found no node, not the settle phase's heal.
func TestSummaryCountsInjectedFaults(t *testing.T) {
	log := []sim.FaultRecord{
		{Fault: sim.Fault{Kind: sim.FaultCrash}, Origin: "schedule", Nodes: []string{"broker-1"}},
		{Fault: sim.Fault{Kind: sim.FaultCrash}, Origin: "schedule", Nodes: []string{"broker-1"}, Undo: true},
		{Fault: sim.Fault{Kind: sim.FaultPause}, Origin: "nemesis/pause", Nodes: []string{"broker-2"}},
		{Fault: sim.Fault{Kind: sim.FaultKill}, Origin: "schedule", Skipped: "no node matched"},
		{Fault: sim.Fault{Kind: sim.FaultHeal, Target: "all"}, Origin: "heal"},
	}
	if n := injectedFaults(log); n != 2 {
		t.Fatalf("faults = %d, want 2 (a crash and a pause)", n)
	}
}
