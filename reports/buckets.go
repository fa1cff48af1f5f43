package reports

import "time"

// maxBuckets bounds how many time buckets a per-second series may have: a
// plot cannot show more, and a history recorded against a real cluster over
// days must not allocate a bucket per second of it.
const maxBuckets = 20000

// buckets divides [origin, origin+n*width) into n equal slices of time.
type buckets struct {
	origin int64 // ns
	width  int64 // ns
	n      int
}

// newBuckets covers the times minT..maxT (ns) with 1-second buckets, or
// wider ones (2 s, 5 s, 10 s, ...) when that would exceed maxBuckets.
//
// Simulated histories start at time 0, the same origin as the god-view
// timeline, so buckets start at 0 and plots line up. A history recorded
// with wall-clock times starts near 1.7e18 ns; there the origin moves to the
// first operation, since counting from 1970 would help nobody.
func newBuckets(minT, maxT int64) buckets {
	if minT < 0 {
		minT = 0
	}
	if maxT < minT {
		maxT = minT
	}
	origin := int64(0)
	if maxT/int64(time.Second) >= maxBuckets {
		origin = minT
	}
	span := maxT - origin
	steps := [...]int64{1, 2, 5}
	width := int64(time.Second)
	for mult := int64(1); ; mult *= 10 {
		found := false
		for _, s := range steps {
			width = s * mult * int64(time.Second)
			if span/width < maxBuckets {
				found = true
				break
			}
		}
		if found || mult > 1e12 {
			break
		}
	}
	return buckets{origin: origin, width: width, n: int(span/width) + 1}
}

// index is the bucket of time t (ns), clamped into range so that an
// operation with an odd time (zero, negative) still lands somewhere.
func (b buckets) index(t int64) int {
	if t <= b.origin || b.width <= 0 {
		return 0
	}
	i := (t - b.origin) / b.width
	if i >= int64(b.n) {
		return b.n - 1
	}
	return int(i)
}

// start is the beginning of bucket i in seconds since the origin: the x
// from which a per-bucket figure is drawn. The origin is 0 for simulated
// histories, so plots share the timeline's time axis.
func (b buckets) start(i int) float64 {
	return float64(i) * b.seconds()
}

// seconds is the width of a bucket in seconds, to turn counts into rates.
func (b buckets) seconds() float64 { return float64(b.width) / float64(time.Second) }

// label names the bucket width for titles: "second", "5s".
func (b buckets) label() string {
	if b.width == int64(time.Second) {
		return "second"
	}
	return fmtTime(time.Duration(b.width))
}
