package fuzz

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"time"

	"kafkasim/scenarios"
	"kafkasim/sim"
)

// withAdminFault appends an admin operation (a custom fault written under
// key) at a time drawn from rng within the run's duration.
func withAdminFault(rng *rand.Rand, s *scenarios.Scenario, faults []scenarios.ScheduledFault, key string, op any) []scenarios.ScheduledFault {
	at := time.Duration(rng.Int64N(int64(s.Duration/time.Millisecond))) * time.Millisecond
	return append(faults, scenarios.ScheduledFault{At: at, Fault: sim.Fault{Kind: sim.FaultCustom, Custom: op}, Key: key})
}

// inTimeOrder sorts a schedule by time, keeping the order of faults at the
// same instant.
func inTimeOrder(faults []scenarios.ScheduledFault) []scenarios.ScheduledFault {
	slices.SortStableFunc(faults, func(a, b scenarios.ScheduledFault) int { return cmp.Compare(a.At, b.At) })
	return faults
}
