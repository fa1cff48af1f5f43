package reader

import (
	"testing"
	"time"
)

// The fetch timer allows for the largest answer to cross a link of the
// network's bandwidth, within request.timeout.ms; without a bandwidth it
// is what it always was.
func TestFetchTimeoutAllowsForTheAnswerOnTheWire(t *testing.T) {
	cfg := DefaultConfig("r", []string{"t"}) // 500ms + 30s/10, 1 MiB a partition
	r := &Reader{cfg: cfg}
	if got := r.fetchTimeout(3); got != 3500*time.Millisecond {
		t.Fatalf("unlimited: %v, want 3.5s", got)
	}
	r.cfg.LinkBandwidthBytesPerSecond = 1 << 20 // 1 MiB/s: a second a partition
	if got := r.fetchTimeout(2); got != 5500*time.Millisecond {
		t.Fatalf("1 MiB/s, two partitions: %v, want 3.5s + 2s", got)
	}
	r.cfg.LinkBandwidthBytesPerSecond = 10_000 // 105 s a partition: capped
	if got := r.fetchTimeout(1); got != 30*time.Second {
		t.Fatalf("10KB/s: %v, want request.timeout.ms (30s)", got)
	}
	r.cfg.LinkBandwidthBytesPerSecond = 125_000_000 // 1 Gbit/s: 8.4ms more
	if got := r.fetchTimeout(1); got != 3500*time.Millisecond+8_388_608 {
		t.Fatalf("1 Gbit/s: %v", got)
	}
}
