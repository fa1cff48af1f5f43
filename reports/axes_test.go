package reports

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestFmtTimeReadsAsAPersonWould(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{1352796714 * time.Nanosecond, "1.353s"},
		{72*time.Second + 500*time.Millisecond, "1m12.5s"},
		{60 * time.Second, "1m"},
		{2*time.Minute + 3*time.Second, "2m3s"},
		{time.Hour, "1h"},
		{time.Hour + 5*time.Second, "1h0m5s"},
		{0, "0s"},
		{250 * time.Millisecond, "250ms"},
		{1500 * time.Microsecond, "1.5ms"},
		{4986015136 * time.Nanosecond, "4.986s"},
		{-2 * time.Second, "-2s"},
	} {
		if got := fmtTime(c.d); got != c.want {
			t.Errorf("fmtTime(%d) = %q, want %q", int64(c.d), got, c.want)
		}
	}
}

func TestTickLabels(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0", 750: "750", 1000: "1k", 1500: "1.5k", 25000: "25k", 12500: "12.5k",
		2.5e6: "2.5M", 0.2: "0.2", 0.1 + 0.2: "0.3", 3: "3",
	} {
		if got := fmtCount(v); got != want {
			t.Errorf("fmtCount(%v) = %q, want %q", v, got, want)
		}
	}
	for ms, want := range map[float64]string{0: "0", 0.5: "500µs", 250: "250ms", 1500: "1.5s", 90000: "1m30s"} {
		if got := fmtMillis(ms); got != want {
			t.Errorf("fmtMillis(%v) = %q, want %q", ms, got, want)
		}
	}
	if got := fmtPercent(0.25); got != "25%" {
		t.Errorf("fmtPercent(0.25) = %q", got)
	}
	if got := fmtThousands(119728); got != "119,728" {
		t.Errorf("fmtThousands = %q", got)
	}
}

func tickValues(a axis) []float64 {
	var vs []float64
	for _, tk := range a.ticks {
		vs = append(vs, tk.v)
	}
	return vs
}

func tickLabels(a axis) []string {
	var ls []string
	for _, tk := range a.ticks {
		ls = append(ls, tk.label)
	}
	return ls
}

// checkAxis asserts what every value axis of the report promises: it starts
// at 0, covers top, its ticks rise from 0 inside it, and no label carries
// a decimal tail on a whole number.
func checkAxis(t *testing.T, name string, a axis, top float64) {
	t.Helper()
	if a.min != 0 {
		t.Errorf("%s: axis starts at %v, want 0", name, a.min)
	}
	if a.max < top || a.max <= a.min {
		t.Errorf("%s: axis %v..%v does not cover %v", name, a.min, a.max, top)
	}
	if len(a.ticks) < 2 || a.ticks[0].v != 0 {
		t.Fatalf("%s: ticks %v", name, tickLabels(a))
	}
	for i, tk := range a.ticks {
		if tk.v < 0 || tk.v > a.max || (i > 0 && tk.v <= a.ticks[i-1].v) {
			t.Errorf("%s: tick %v out of order or range %v..%v", name, tk.v, a.min, a.max)
		}
		if strings.Contains(tk.label, ".0") || strings.HasSuffix(tk.label, ".") {
			t.Errorf("%s: tick label %q has a zero decimal", name, tk.label)
		}
	}
}

func TestCountAxes(t *testing.T) {
	for _, c := range []struct {
		top  float64
		want []string
	}{
		// A flat zero series (no partition ever without a leader) still
		// gets an axis: 0 to 1, never -1 to 1.
		{0, []string{"0", "1"}},
		{1, []string{"0", "1"}},
		{2, []string{"0", "1", "2"}},
		{3, []string{"0", "1", "2", "3"}},
		// Whole quantities take whole steps, however small the range.
		{7, []string{"0", "2", "4", "6", "8"}},
		{75000, []string{"0", "20k", "40k", "60k", "80k"}},
		{12000, []string{"0", "2.5k", "5k", "7.5k", "10k", "12.5k"}},
	} {
		a := countAxis("records", c.top)
		checkAxis(t, "count", a, c.top)
		if got := tickLabels(a); !slices.Equal(got, c.want) {
			t.Errorf("countAxis(%v) ticks %v, want %v", c.top, got, c.want)
		}
		for _, v := range tickValues(a) {
			if v != math.Trunc(v) {
				t.Errorf("countAxis(%v) has a fractional tick %v", c.top, v)
			}
		}
	}
	// Rates below one per second keep their fractions.
	a := rateAxis("per second", 0.4)
	checkAxis(t, "rate", a, 0.4)
	if got := tickLabels(a); !slices.Equal(got, []string{"0", "0.1", "0.2", "0.3", "0.4"}) {
		t.Errorf("rateAxis(0.4) ticks %v", got)
	}
	m := millisAxis("latency", 0)
	checkAxis(t, "latency", m, 0)
	m = millisAxis("latency", 9700)
	checkAxis(t, "latency", m, 9700)
	if got := tickLabels(m); !slices.Equal(got, []string{"0", "2s", "4s", "6s", "8s", "10s"}) {
		t.Errorf("millisAxis(9700) ticks %v", got)
	}
	checkAxis(t, "fraction", fractionAxis("failed"), 1)
}

func TestTimeAxis(t *testing.T) {
	a := timeAxis(92 * time.Second)
	if a.min != 0 || a.max != 92 {
		t.Errorf("time axis %v..%v, want 0..92", a.min, a.max)
	}
	want := []string{"0", "10s", "20s", "30s", "40s", "50s", "1m", "1m10s", "1m20s", "1m30s"}
	if got := tickLabels(a); !slices.Equal(got, want) {
		t.Errorf("ticks %v, want %v", got, want)
	}
	if got := tickLabels(timeAxis(800 * time.Millisecond)); got[1] != "100ms" {
		t.Errorf("a short run's ticks %v", got)
	}
	if got := tickLabels(timeAxis(12 * time.Minute)); !slices.Contains(got, "2m") || len(got) > xTicks+1 {
		t.Errorf("a long run's ticks %v", got)
	}
}

// Rates whose bursts stand far above their usual level (sends stalled by
// a fault and answered at once) get a logarithmic axis that keeps the
// usual level readable; steady rates keep a linear one.
func TestBurstyRatesGoLogarithmic(t *testing.T) {
	steady := []series{{ys: []float64{0, 1000, 1000, 980, 12000, 1000, 0}}}
	a := burstyRateAxis("records/s", steady)
	if a.symlog {
		t.Errorf("bursts of 12 times the usual rate should stay linear: %+v", a)
	}
	checkAxis(t, "steady", a, 12000)
	bursty := []series{{ys: []float64{0, 400, 100, 100, 0, 0, 26176, 100}}}
	a = burstyRateAxis("records/s", bursty)
	if !a.symlog || !strings.Contains(a.label, "log") {
		t.Fatalf("bursts of 260 times the usual rate should go logarithmic: %+v", a)
	}
	checkAxis(t, "bursty", a, 26176)
	if got := tickLabels(a); !slices.Equal(got, []string{"0", "10", "100", "1k", "10k"}) {
		t.Errorf("symlog ticks %v", got)
	}
	if a.plotted(0) != 0 || a.plotted(9) != 1 {
		t.Error("a symlog axis draws v at log10(1+v)")
	}
	if n := a.plotted(100) / a.plotted(a.max); n < 0.35 || n > 0.5 {
		t.Errorf("100 of 26k sits at %.2f of the axis; a symlog axis puts it near the middle", n)
	}
	if lin := rateAxis("x", 5); lin.plotted(3) != 3 {
		t.Error("a linear axis draws values as they are")
	}
}
