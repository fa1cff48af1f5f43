package reports

import (
	"math"
	"time"
)

// tick is one labelled mark on an axis.
type tick struct {
	v     float64
	label string
}

// axis is an axis decided before drawing: its range, its ticks and their
// labels, and its title. The plots set every axis themselves rather than
// leave it to the plotting library, which spans a flat series from -1 to
// 1, labels integers "25000.00" and scales to whatever is largest.
type axis struct {
	min, max float64
	ticks    []tick
	label    string
	// symlog spaces values by log10(1+v): for rates whose bursts are a
	// hundred times their usual level, which a linear axis flattens.
	symlog bool
}

// symlog is log10(1+v), which keeps 0 on a logarithmic axis. The plots
// draw a symlog axis as a linear one over symlog(v), with its ticks moved
// likewise (see plotted): the plotting library places an axis label by
// the linear middle of the data, which a scale of its own would skew.
func symlog(v float64) float64 { return math.Log10(1 + math.Max(v, 0)) }

// plotted is where value v sits on a: v itself, or symlog(v).
func (a axis) plotted(v float64) float64 {
	if a.symlog && finite(v) {
		return symlog(v)
	}
	return v
}

// burstRatio is how far the largest value may stand above the typical
// (median non-zero) one before a rate axis turns logarithmic.
const burstRatio = 20

// burstyRateAxis is rateAxis, or a symlog axis (0, 10, 100, 1k, ...) when
// bursts stand far above the typical rate: sends stalled by a fault and
// acknowledged at once after it, a consumer catching up, would otherwise
// flatten the steady rate onto the axis.
func burstyRateAxis(label string, ss []series) axis {
	t := top(ss)
	var nonzero []float64
	for _, s := range ss {
		for _, y := range s.ys {
			if finite(y) && y > 0 {
				nonzero = append(nonzero, y)
			}
		}
	}
	if len(nonzero) == 0 || t <= burstRatio*percentile(nonzero, 0.5) {
		return rateAxis(label, t)
	}
	return symlogAxis(label+" (log)", t)
}

// symlogAxis spans 0 to the first of 1, 2, 3 or 5 times a power of ten at
// or above top, ticked at 0 and at the powers of ten from 10 (1 would sit
// on 0, and a top tick beside 10k would sit on it).
func symlogAxis(label string, top float64) axis {
	hi := 1.0
	for mag := 1.0; hi < top; mag *= 10 {
		for _, m := range []float64{1, 2, 3, 5, 10} {
			if hi = m * mag; hi >= top {
				break
			}
		}
	}
	a := axis{min: 0, label: label, symlog: true}
	a.ticks = append(a.ticks, tick{0, "0"})
	for p := 10.0; p <= hi; p *= 10 {
		a.ticks = append(a.ticks, tick{p, fmtCount(p)})
	}
	a.max = math.Pow(10, symlog(hi)*(1+headroom)) - 1
	return a
}

// headroom is the share of a value axis above its top tick.
const headroom = 0.06

// yTicks is about how many ticks a value axis gets.
const yTicks = 5

// niceStep is the smallest step of 1, 2, 2.5 or 5 times a power of ten
// that covers top in at most n steps. With integer set, the step is a
// whole number (counts of records, partitions, replicas).
func niceStep(top float64, n int, integer bool) float64 {
	if !(top > 0) || math.IsInf(top, 0) {
		return 1
	}
	for p := math.Floor(math.Log10(top / float64(n))); ; p++ {
		mag := math.Pow(10, p)
		for _, m := range []float64{1, 2, 2.5, 5} {
			step := m * mag
			if integer && (step < 1 || step != math.Trunc(step)) {
				continue
			}
			if math.Ceil(top/step-1e-9) <= float64(n) {
				return step
			}
		}
	}
}

// valueAxis spans 0 to the first tick at or above top, with ticks labelled
// by format. Counts, rates, latencies and lags are never negative, so the
// axis starts at 0; a series that stays at 0 still gets an axis of one
// step (0 to 1 for a count) rather than a degenerate one.
func valueAxis(label string, top float64, integer bool, format func(float64) string) axis {
	if !(top > 0) || math.IsInf(top, 0) {
		top = 0
	}
	step := niceStep(top, yTicks, integer)
	n := int(math.Ceil(top/step - 1e-9))
	if n < 1 {
		n = 1
	}
	// A little room above the top tick, so that a line at the top (a full
	// ISR) is not drawn on the frame.
	a := axis{min: 0, max: float64(n) * step * (1 + headroom), label: label}
	for i := 0; i <= n; i++ {
		v := float64(i) * step
		a.ticks = append(a.ticks, tick{v, format(v)})
	}
	return a
}

// countAxis is for whole quantities: records, partitions, replicas.
func countAxis(label string, top float64) axis { return valueAxis(label, top, true, fmtCount) }

// rateAxis is for quantities per second, whole or not.
func rateAxis(label string, top float64) axis {
	return valueAxis(label, top, top >= yTicks, fmtCount)
}

// millisAxis is for latencies in milliseconds, labelled as durations.
func millisAxis(label string, top float64) axis {
	if !(top > 0) {
		top = 1 // a latency axis of 0..1ms, not 0..0
	}
	return valueAxis(label, top, false, fmtMillis)
}

// fractionAxis is 0 to 100%.
func fractionAxis(label string) axis {
	a := axis{min: 0, max: 1 + headroom, label: label}
	for _, v := range []float64{0, 0.25, 0.5, 0.75, 1} {
		a.ticks = append(a.ticks, tick{v, fmtPercent(v)})
	}
	return a
}

// timeSteps are the steps a time axis may take, in order.
var timeSteps = []time.Duration{
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond,
	10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond,
	100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 20 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 20 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// timeStep picks the first of timeSteps that divides [0, end] into at
// most n steps; a longer span takes whole days.
func timeStep(end time.Duration, n int) time.Duration {
	for _, s := range timeSteps {
		if end <= s*time.Duration(n) {
			return s
		}
	}
	day := 24 * time.Hour
	return (end/(day*time.Duration(n)) + 1) * day
}

// xTicks is about how many ticks the time axis gets.
const xTicks = 10

// timeAxis spans simulated time from 0 to end in seconds, ticked at round
// times labelled "20s", "1m", "1m30s".
func timeAxis(end time.Duration) axis {
	if end <= 0 {
		end = time.Second
	}
	a := axis{min: 0, max: end.Seconds(), label: "simulated time"}
	step := timeStep(end, xTicks)
	for t := time.Duration(0); t <= end; t += step {
		label := fmtTime(t)
		if t == 0 {
			label = "0"
		}
		a.ticks = append(a.ticks, tick{t.Seconds(), label})
	}
	return a
}
