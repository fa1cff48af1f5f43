package runner

import (
	"math"
	"sort"
	"testing"

	"kafkasim/history"
)

// p99SendLatency is the 99th percentile of acknowledged sends' latency (as
// the sweep's p99-produce-latency-ms measures it).
func p99SendLatency(res *Result) float64 {
	invoked := map[string]int64{}
	var lat []float64
	res.History.Each(func(op *history.Op) {
		if op.F != history.FSend {
			return
		}
		switch op.Type {
		case history.Invoke:
			invoked[op.Value.Value] = op.Time
		case history.OK:
			if t, ok := invoked[op.Value.Value]; ok {
				lat = append(lat, float64(op.Time-t)/1e6)
			}
		}
	})
	if len(lat) == 0 {
		return 0
	}
	sort.Float64s(lat)
	return lat[int(math.Ceil(0.99*float64(len(lat))))-1]
}

// On a link the records do not fit through uncompressed, gzip carries them:
// the twin scenarios differ only in compression.type, and gzip shows the
// higher availability and the lower p99 produce latency. Without the
// bandwidth the two would have the same latency (bytes would cost no time):
// the second half checks that too.
func TestGzipBeatsNoneOnASaturatedLink(t *testing.T) {
	all := bundled(t)
	none, gzip := all["saturated-link-none.yaml"], all["saturated-link-gzip.yaml"]
	if none == nil || gzip == nil {
		t.Fatal("the saturated-link twins are not bundled")
	}
	rn, rg := run(t, none), run(t, gzip)
	for _, r := range []*Result{rn, rg} {
		if r.Verdict != Pass {
			t.Fatalf("%s: %s", r.Scenario.Name, explain(r))
		}
	}
	sn, sg := rn.Summary("test"), rg.Summary("test")
	pn, pg := p99SendLatency(rn), p99SendLatency(rg)
	t.Logf("none: availability %.3f p99 %.0fms; gzip: availability %.3f p99 %.0fms", sn.Writes.Availability, pn, sg.Writes.Availability, pg)
	if sg.Writes.Availability <= sn.Writes.Availability {
		t.Errorf("availability: gzip %.3f, none %.3f; want gzip higher", sg.Writes.Availability, sn.Writes.Availability)
	}
	if pg <= 0 || pg*2 >= pn {
		t.Errorf("p99 produce latency: gzip %.1fms, none %.1fms; want gzip under half of none", pg, pn)
	}

	// Unlimited bandwidth: the same records cost the same time either way,
	// and the uncompressed producer is not starved.
	none.Cluster.Network.BandwidthBytesPerSecond, gzip.Cluster.Network.BandwidthBytesPerSecond = 0, 0
	none.Expect, gzip.Expect = nil, nil
	un, ug := run(t, none), run(t, gzip)
	if a := un.Summary("test").Writes.Availability; a < 0.99 {
		t.Errorf("without a bandwidth, none's availability is %.3f; want the link not to matter", a)
	}
	if pn, pg := p99SendLatency(un), p99SendLatency(ug); math.Abs(pn-pg) > 1 {
		t.Errorf("without a bandwidth, p99 produce latency none %.1fms, gzip %.1fms; want the same", pn, pg)
	}
}
