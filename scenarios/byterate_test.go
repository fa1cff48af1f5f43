package scenarios

import (
	"strings"
	"testing"
)

func TestByteRatesParseStrictly(t *testing.T) {
	for s, want := range map[string]int64{
		"unlimited": 0,
		"1B/s":      1,
		"125MB/s":   125_000_000,
		"1.5GB/s":   1_500_000_000,
		"2KB/s":     2_000,
		"1KiB/s":    1024,
		"4MiB/s":    4 << 20,
		"1GiB/s":    1 << 30,
		"1Gbit/s":   125_000_000,
		"100Mbit/s": 12_500_000,
		"8Kbit/s":   1_000,
		"1000GB/s":  ByteRateMax,
	} {
		got, err := parseByteRate(s)
		if err != nil || got != want {
			t.Errorf("parseByteRate(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", "0B/s", "0", "125", "125MB", "125mb/s", "125 MB/s", "-1MB/s", "+1MB/s", "1e6B/s",
		"0.5B/s", "0.001Kbit/s", "1001GB/s", "1Tbit/s", "infinite", "MB/s", "1..2MB/s", "0x10MB/s", "NaNMB/s", "InfMB/s"} {
		if n, err := parseByteRate(s); err == nil {
			t.Errorf("parseByteRate(%q) = %d, want an error", s, n)
		}
	}
}

func TestByteRatesFormatAsTheyParse(t *testing.T) {
	for _, n := range []int64{0, 1, 999, 1000, 1500, 125_000_000, 1_500_000_000, 1 << 20, ByteRateMax} {
		got, err := parseByteRate(formatByteRate(n))
		if err != nil || got != n {
			t.Errorf("%d formats as %q, which parses as %d, %v", n, formatByteRate(n), got, err)
		}
	}
}

func TestBandwidthAndWriteThroughputKeys(t *testing.T) {
	s, err := Parse("ok.yaml", []byte("cluster:\n  network: {bandwidth: 1Gbit/s}\n  disk: {write-throughput: 500MB/s}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Cluster.Network.BandwidthBytesPerSecond != 125_000_000 || s.Cluster.Disk.WriteThroughputBytesPerSecond != 500_000_000 {
		t.Fatalf("got %+v, %+v", s.Cluster.Network, s.Cluster.Disk)
	}
	cfg := s.ClusterConfig()
	if cfg.Network.BandwidthBytesPerSecond != 125_000_000 || cfg.Disk.WriteThroughputBytesPerSecond != 500_000_000 {
		t.Fatalf("the model's options: %+v, %+v", cfg.Network, cfg.Disk)
	}
	def, err := Parse("default.yaml", []byte("name: x\n"))
	if err != nil {
		t.Fatal(err)
	}
	if def.Cluster.Network.BandwidthBytesPerSecond != 0 || def.Cluster.Disk.WriteThroughputBytesPerSecond != 0 {
		t.Fatal("absent keys must be unlimited")
	}
	explicit, err := Parse("explicit.yaml", []byte("cluster:\n  network: {bandwidth: unlimited}\n  disk: {write-throughput: unlimited}\n"))
	if err != nil || explicit.Cluster.Network != def.Cluster.Network || explicit.Cluster.Disk != def.Cluster.Disk {
		t.Fatalf("explicit unlimited must be the default: %v", err)
	}
	for _, c := range []struct{ src, key string }{
		{"cluster:\n  network:\n    bandwidth: 125mb/s\n", "cluster.network.bandwidth"},
		{"cluster:\n  disk:\n    write-throughput: 0\n", "cluster.disk.write-throughput"},
	} {
		es := parseErrors(t, c.src)
		if len(es) != 1 || es[0].Key != c.key || es[0].Line != 3 || es[0].File != "bad.yaml" || strings.Contains(es[0].Error(), "\n") {
			t.Errorf("%q: want one one-line error at bad.yaml line 3, key %s; got %v", c.src, c.key, es)
		}
	}
}
