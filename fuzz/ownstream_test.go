package fuzz

import (
	"bytes"
	"testing"

	"kafkasim/scenarios"
)

// drawnApart checks, for one seed, that the faults drop picks out come from a
// stream of their own: the seed's scenario without them is exactly what the
// seed draws with *percent at zero. fix, if not nil, may make the stripped
// scenario agree on what else the same stream draws (a config). It returns
// the scenario drawn and how many faults drop picked.
func drawnApart(t *testing.T, seed uint64, what string, percent *int, drop func(scenarios.ScheduledFault) bool,
	fix func(with, stripped, without *scenarios.Scenario)) (*scenarios.Scenario, int) {
	t.Helper()
	with, err := Generate(seed, nil, nil)
	if err != nil {
		t.Fatalf("seed %d: %v", seed, err)
	}
	saved := *percent
	*percent = 0
	without, err := Generate(seed, nil, nil)
	*percent = saved
	if err != nil {
		t.Fatalf("seed %d without %s: %v", seed, what, err)
	}
	stripped := *with
	stripped.Faults = nil
	n := 0
	for _, f := range with.Faults {
		if drop(f) {
			n++
			continue
		}
		stripped.Faults = append(stripped.Faults, f)
	}
	if fix != nil {
		fix(with, &stripped, without)
	}
	a, _ := scenarios.Normalize(&stripped)
	ya, _ := a.Resolved()
	yb, _ := without.Resolved()
	if !bytes.Equal(ya, yb) {
		t.Fatalf("seed %d: without its %s the scenario is not what the seed drew:\n%s\n----\n%s", seed, what, ya, yb)
	}
	return with, n
}

// withoutElections turns the elections stream off for a test of a stream
// drawn before it within the same bound on faults.
func withoutElections(t *testing.T) {
	saved := electionPercent
	electionPercent = 0
	t.Cleanup(func() { electionPercent = saved })
}
