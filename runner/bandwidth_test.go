package runner

import (
	"math"
	"testing"
)

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
	pn, pg := rn.P99ProduceLatencyMs(), rg.P99ProduceLatencyMs()
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
	if pn, pg := un.P99ProduceLatencyMs(), ug.P99ProduceLatencyMs(); math.Abs(pn-pg) > 1 {
		t.Errorf("without a bandwidth, p99 produce latency none %.1fms, gzip %.1fms; want the same", pn, pg)
	}
}
