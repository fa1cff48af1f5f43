package sim

import "time"

// Clock is one node's view of time: virtual time with an offset and a drift.
// A node never reads the scheduler's time directly; it reads its Clock, so a
// clock fault (a jump, a fast or slow oscillator) changes what it believes
// without changing when the world runs it.
//
// Local time is piecewise linear in virtual time: from the last change at
// virtual time baseVirtual, local = baseLocal + elapsed * (1 + drift). Changing
// the drift starts a new piece, so the clock never jumps when only its rate
// changes.
type Clock struct {
	baseVirtual time.Duration
	baseLocal   time.Duration
	driftPPM    int64
}

// DriftPPMMax bounds the drift a clock fault may set: half as fast to twice as
// fast. Real oscillators drift by tens of ppm; larger values exist to stress
// timeouts.
const DriftPPMMax = 1_000_000

// Now is the local time at virtual time v.
func (c *Clock) Now(v time.Duration) time.Duration {
	elapsed := v - c.baseVirtual
	if c.driftPPM == 0 {
		return c.baseLocal + elapsed
	}
	return c.baseLocal + elapsed + time.Duration(int64(elapsed)/1_000_000*c.driftPPM+int64(elapsed)%1_000_000*c.driftPPM/1_000_000)
}

// VirtualDelay converts a delay measured on this clock into virtual time: a
// fast clock's timers fire early.
func (c *Clock) VirtualDelay(local time.Duration) time.Duration {
	if c.driftPPM == 0 || local <= 0 {
		return local
	}
	rate := 1_000_000 + c.driftPPM
	var d time.Duration
	if local < 1<<43 {
		// local·10⁶ fits 63 bits: one division, equal to the two below
		// (with local = q·rate + r, both are q·10⁶ + ⌊r·10⁶/rate⌋).
		d = time.Duration(uint64(local) * 1_000_000 / uint64(rate))
	} else {
		d = time.Duration(int64(local) / rate * 1_000_000)
		d += time.Duration(int64(local) % rate * 1_000_000 / rate)
	}
	if d <= 0 {
		d = 1
	}
	return d
}

// Jump moves the clock by delta (backwards when negative) at virtual time v.
func (c *Clock) Jump(v, delta time.Duration) {
	c.rebase(v)
	c.baseLocal += delta
}

// SetDrift changes the clock's rate at virtual time v, in parts per million
// (positive runs fast). It is clamped to ±DriftPPMMax/2 below and DriftPPMMax above.
func (c *Clock) SetDrift(v time.Duration, ppm int64) {
	c.rebase(v)
	c.driftPPM = min(max(ppm, -DriftPPMMax/2), DriftPPMMax)
}

// DriftPPM is the clock's current drift.
func (c *Clock) DriftPPM() int64 { return c.driftPPM }

// Offset is how far the clock is from virtual time at v.
func (c *Clock) Offset(v time.Duration) time.Duration { return c.Now(v) - v }

// Reset puts the clock back on virtual time, as an NTP step would.
func (c *Clock) Reset(v time.Duration) {
	c.baseVirtual, c.baseLocal, c.driftPPM = v, v, 0
}

func (c *Clock) rebase(v time.Duration) {
	c.baseLocal = c.Now(v)
	c.baseVirtual = v
}
