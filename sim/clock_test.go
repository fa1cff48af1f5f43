package sim

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

func TestClockDriftAndJump(t *testing.T) {
	var c Clock
	if c.Now(5*time.Second) != 5*time.Second {
		t.Fatal("a fresh clock reads virtual time")
	}
	c.SetDrift(10*time.Second, 100_000) // 10% fast from 10s
	if got := c.Now(20 * time.Second); got != 21*time.Second {
		t.Fatalf("10s at +10%% after 10s: got %v, want 21s", got)
	}
	c.Jump(20*time.Second, -30*time.Second)
	if got := c.Now(20 * time.Second); got != -9*time.Second {
		t.Fatalf("a backward jump: got %v, want -9s", got)
	}
	c.SetDrift(20*time.Second, 0)
	if got := c.Now(25 * time.Second); got != -4*time.Second {
		t.Fatalf("changing drift must not jump the clock: got %v", got)
	}
	c.Reset(30 * time.Second)
	if c.Offset(40*time.Second) != 0 {
		t.Fatal("Reset puts the clock back on virtual time")
	}
}

func TestClockVirtualDelayInvertsDrift(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var c Clock
		ppm := rapid.Int64Range(-DriftPPMMax/2, DriftPPMMax).Draw(t, "ppm")
		c.SetDrift(0, ppm)
		local := time.Duration(rapid.Int64Range(1, int64(time.Hour)).Draw(t, "local_ns"))
		v := c.VirtualDelay(local)
		// After v of virtual time the clock has advanced by local, to within
		// the rounding of one nanosecond per conversion.
		if diff := c.Now(v) - local; diff < -2 || diff > 2 {
			t.Fatalf("drift %d ppm: a %v local timer fires after %v virtual, when the clock reads %v", ppm, local, v, c.Now(v))
		}
	})
}

func TestFastClockFiresTimersEarly(t *testing.T) {
	w, probes := probeWorld(1, 1, DefaultNetworkOptions())
	w.Clock(0).SetDrift(w.Now(), 1_000_000) // twice as fast
	probes[0].env.After(10*time.Second, "t")
	w.RunFor(5*time.Second + time.Nanosecond)
	if len(probes[0].fired) != 1 {
		t.Fatal("a clock running twice as fast fires a 10s timer after 5s of virtual time")
	}
	if got := probes[0].firedAt[0]; got < 10*time.Second-time.Microsecond || got > 10*time.Second+time.Microsecond {
		t.Fatalf("the node's own clock reads %v when it fires", got)
	}
}

// VirtualDelay's one division gives what dividing quotient and remainder
// apart gives (the form it keeps for delays of hours), at every drift.
func TestClockVirtualDelayOneDivision(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		ppm := rapid.Int64Range(-DriftPPMMax/2, DriftPPMMax).Draw(t, "ppm")
		local := time.Duration(rapid.OneOf(rapid.Int64Range(1, 1<<43-1), rapid.Int64Range(1<<43-1000, 1<<43+1000), rapid.Int64Range(1<<43, 1<<52), rapid.Int64Range(1, 1<<62)).Draw(t, "local_ns"))
		c := &Clock{driftPPM: ppm}
		rate := 1_000_000 + ppm
		want := time.Duration(int64(local)/rate*1_000_000 + int64(local)%rate*1_000_000/rate)
		if ppm == 0 {
			want = local
		}
		if got := c.VirtualDelay(local); got != max(want, 1) {
			t.Fatalf("VirtualDelay(%d) at %d ppm = %d, want %d", local, ppm, got, want)
		}
	})
}
