package sim

import (
	"math/bits"
	"math/rand/v2"
	"time"
)

// Seed derives named random streams from one run seed. Every concern (the
// network's links, each disk, the fault schedule, each nemesis rule, the
// workload, each node) draws from its own stream, so that drawing more in one
// concern never shifts the draws of another. Shrinking relies on this: removing
// a fault must not change the latencies the network draws.
type Seed uint64

// Stream returns a fresh generator for the named concern. The same seed and
// name always give the same sequence.
func (s Seed) Stream(name string) *rand.Rand {
	pcg := s.PCG(name)
	return rand.New(&pcg)
}

// PCG returns the raw generator for the named concern, for callers that keep
// it by value to avoid an allocation (one per network link).
func (s Seed) PCG(name string) rand.PCG {
	n := hashString(name)
	return *rand.NewPCG(splitmix(uint64(s)^n), splitmix(n+0x9e3779b97f4a7c15))
}

// splitmix is SplitMix64's finaliser: it spreads nearby seeds far apart.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// uniformDuration draws a duration in [lo, hi] from a raw 64-bit source. The
// multiply-high reduction has a bias below 2^-40 for any range a simulation
// uses, which is far below anything a run can observe.
func uniformDuration(r interface{ Uint64() uint64 }, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	span := uint64(hi-lo) + 1
	x, _ := bits.Mul64(r.Uint64(), span)
	return lo + time.Duration(x)
}

// chance reports true with probability p, drawing only when 0 < p < 1 so that
// a knob that is off consumes nothing from its stream.
func chance(r interface{ Uint64() uint64 }, p float64) bool {
	if p <= 0 {
		return false
	}
	if p >= 1 {
		return true
	}
	return float64(r.Uint64()>>11)/(1<<53) < p
}

// Range is an inclusive range of durations, drawn uniformly.
type Range struct {
	Min, Max time.Duration
}

// Fixed returns the range holding only d.
func Fixed(d time.Duration) Range { return Range{Min: d, Max: d} }

// Draw picks a duration in the range from r.
func (rg Range) Draw(r *rand.Rand) time.Duration { return uniformDuration(r, rg.Min, rg.Max) }
