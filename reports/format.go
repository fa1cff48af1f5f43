package reports

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// fmtTime shows a simulated time or a duration as a person reads it:
// to the millisecond from a second up ("1.353s", "1m12.5s", "2m"), to the
// microsecond below ("250ms", "1.5ms"), never a float's noise
// ("1.3527967140000001s") nor a zero tail ("1m0s").
func fmtTime(d time.Duration) string {
	if d < 0 {
		return "-" + fmtTime(-d)
	}
	switch {
	case d >= time.Second:
		d = d.Round(time.Millisecond)
	case d >= time.Microsecond:
		d = d.Round(time.Microsecond)
	}
	s := d.String()
	// Go spells whole minutes and hours "1m0s" and "1h0m0s".
	if strings.Contains(s, "m") && strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// fmtMillis labels a latency tick given in milliseconds: "0", "0.5ms",
// "250ms", "1.5s".
func fmtMillis(ms float64) string {
	if ms == 0 {
		return "0"
	}
	return fmtTime(time.Duration(math.Round(ms * 1e6)))
}

// fmtCount labels a count or a rate tick: "0", "750", "1.5k", "25k",
// "1.2M"; a fraction below one as a decimal ("0.2"). Integers never get a
// decimal tail.
func fmtCount(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return trimFloat(v/1e9) + "G"
	case a >= 1e6:
		return trimFloat(v/1e6) + "M"
	case a >= 1e3:
		return trimFloat(v/1e3) + "k"
	}
	return trimFloat(v)
}

// fmtPercent labels a fraction tick: "0%", "25%", "100%".
func fmtPercent(v float64) string { return trimFloat(v*100) + "%" }

// trimFloat writes v with at most three decimals and none that are zero,
// rounding away the noise of float arithmetic (0.1+0.2).
func trimFloat(v float64) string {
	v = math.Round(v*1000) / 1000
	if v == 0 {
		return "0" // not "-0"
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// fmtThousands writes an integer with thousands separators, for counts in
// running text ("59,864 records").
func fmtThousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
