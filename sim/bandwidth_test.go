package sim

import (
	"math"
	"testing"
	"time"
)

func TestTransmitTimeIsExactInNanoseconds(t *testing.T) {
	for _, c := range []struct {
		n, rate int64
		want    time.Duration
	}{
		{125, 125_000_000, time.Microsecond},          // 125 MB/s (1 Gbit/s): 1 µs per 125 bytes
		{1_000_000, 1_000_000, time.Second},           // 1 MB at 1 MB/s
		{1, 3, 333_333_334},                           // rounded up: every byte costs time
		{3, 3, time.Second},                           // exact, not rounded
		{1 << 20, 500_000_000, 2_097_152},             // 1 MiB at 500 MB/s
		{100, 0, 0},                                   // unlimited
		{0, 1000, 0},                                  // nothing to send
		{math.MaxInt64 / 2, 1, math.MaxInt64},         // would overflow: forever
		{10_000_000_000, 10_000_000_000, time.Second}, // 10 GB at 10 GB/s, past 64 bits in the product
	} {
		if got := TransmitTime(c.n, c.rate); got != c.want {
			t.Errorf("TransmitTime(%d, %d) = %d ns, want %d", c.n, c.rate, got, c.want)
		}
	}
}

// bandwidthWorld is three probe nodes on links of a fixed 1 ms latency and 1
// MB/s (a byte takes 1 µs).
func bandwidthWorld(bw int64) (*World, []*probe) {
	return probeWorld(3, 3, NetworkOptions{Latency: Fixed(time.Millisecond), BandwidthBytesPerSecond: bw})
}

func arrivals(p *probe) []time.Duration {
	var out []time.Duration
	for _, d := range p.deliveries {
		out = append(out, d.at)
	}
	return out
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestBandwidthQueuesMessagesBehindEarlierOnesOnTheSameLinkDirection(t *testing.T) {
	w, p := bandwidthWorld(1_000_000)
	p[0].sendBytes(1, 1000) // on the wire 0..1ms, arrives at 2ms
	p[0].sendBytes(1, 500)  // waits behind it: on the wire 1..1.5ms, arrives at 2.5ms
	p[1].sendBytes(0, 100)  // the other direction is free: 0..0.1ms, arrives at 1.1ms
	p[0].sendBytes(2, 100)  // another link is free too
	w.RunFor(10 * time.Millisecond)
	if got, want := arrivals(p[1]), []time.Duration{2 * time.Millisecond, 2500 * time.Microsecond}; !equalDurations(got, want) {
		t.Fatalf("0->1 arrivals %v, want %v", got, want)
	}
	if got, want := arrivals(p[0]), []time.Duration{1100 * time.Microsecond}; !equalDurations(got, want) {
		t.Fatalf("1->0 arrivals %v, want %v: the other direction must not wait", got, want)
	}
	if got, want := arrivals(p[2]), []time.Duration{1100 * time.Microsecond}; !equalDurations(got, want) {
		t.Fatalf("0->2 arrivals %v, want %v: another link must not wait", got, want)
	}
	// Idle again: a message sent now starts now.
	start := w.Now()
	p[0].sendBytes(1, 2000)
	w.RunFor(10 * time.Millisecond)
	if got := p[1].deliveries[2].at - start; got != 3*time.Millisecond {
		t.Fatalf("a message on an idle link took %v, want 2ms on the wire + 1ms latency", got)
	}
}

func TestUnlimitedBandwidthCostsNoTime(t *testing.T) {
	w, p := bandwidthWorld(0)
	p[0].sendBytes(1, 1_000_000_000)
	p[0].sendBytes(1, 500)
	w.RunFor(10 * time.Millisecond)
	if got, want := arrivals(p[1]), []time.Duration{time.Millisecond, time.Millisecond}; !equalDurations(got, want) {
		t.Fatalf("arrivals %v, want %v: without a bandwidth size must not matter", got, want)
	}
}

func TestUnsizedMessagesCostTheDefaultSize(t *testing.T) {
	w, p := bandwidthWorld(1_000_000)
	p[0].send(1) // DefaultMessageBytes
	p[0].send(1)
	w.RunFor(10 * time.Millisecond)
	b := time.Duration(DefaultMessageBytes) * time.Microsecond
	if got, want := arrivals(p[1]), []time.Duration{time.Millisecond + b, time.Millisecond + 2*b}; !equalDurations(got, want) {
		t.Fatalf("arrivals %v, want %v", got, want)
	}
}

func TestADisconnectEmptiesTheLinkQueue(t *testing.T) {
	w, p := bandwidthWorld(1_000_000)
	p[0].sendBytes(1, 10_000) // 10ms on the wire
	p[1].sendBytes(0, 10_000)
	w.RunFor(time.Millisecond)
	w.Disconnect(0, 1)
	w.RunFor(time.Millisecond)
	if len(p[0].notices) != 1 || len(p[0].notices[0].Unsent) != 1 {
		t.Fatalf("the queued message must be lost with the connection: %+v", p[0].notices)
	}
	start := w.Now()
	p[0].sendBytes(1, 100)
	p[1].sendBytes(0, 100)
	w.RunFor(20 * time.Millisecond)
	if len(p[1].deliveries) != 1 || p[1].deliveries[0].at-start != 1100*time.Microsecond {
		t.Fatalf("a new connection starts idle: 0->1 deliveries %+v since %v", p[1].deliveries, start)
	}
	if len(p[0].deliveries) != 1 || p[0].deliveries[0].at-start != 1100*time.Microsecond {
		t.Fatalf("a new connection starts idle both ways: 1->0 deliveries %+v since %v", p[0].deliveries, start)
	}
}

func TestACutLinkDropsAtSendWithoutOccupyingIt(t *testing.T) {
	w, p := bandwidthWorld(1_000_000)
	cut := w.CutOneWay([]NodeID{0}, []NodeID{1})
	p[0].sendBytes(1, 50_000) // dropped at once: 50ms it does not occupy
	w.Heal(cut)
	start := w.Now()
	p[0].sendBytes(1, 100)
	w.RunFor(time.Second)
	if len(p[1].deliveries) != 1 || p[1].deliveries[0].at-start != 1100*time.Microsecond {
		t.Fatalf("deliveries %+v since %v: a message dropped at send must not hold the link", p[1].deliveries, start)
	}
}

func TestBandwidthKeepsFIFOWithRandomLatency(t *testing.T) {
	w, p := probeWorld(5, 2, NetworkOptions{Latency: Range{Min: 0, Max: 5 * time.Millisecond}, BandwidthBytesPerSecond: 1_000_000})
	for i := range 200 {
		p[0].sendBytes(1, 1+(i*37)%3000)
		w.RunFor(time.Duration(i%7) * 100 * time.Microsecond)
	}
	w.RunFor(10 * time.Second)
	if len(p[1].deliveries) != 200 {
		t.Fatalf("delivered %d of 200", len(p[1].deliveries))
	}
	for i, d := range p[1].deliveries {
		if d.n != i {
			t.Fatalf("delivery %d is #%d: FIFO broken", i, d.n)
		}
	}
}

func TestDiskWriteThroughputDelaysFsyncsBehindTheBytes(t *testing.T) {
	opts := DefaultDiskOptions()
	opts.WriteLatency = Fixed(100 * time.Microsecond)
	opts.FsyncLatency = Fixed(time.Millisecond)
	opts.WriteThroughputBytesPerSecond = 1_000_000 // a byte takes 1 µs
	w, disk, p := diskWorld(t, opts)
	disk.Append("log", make([]byte, 1000)) // device busy 0..1.1ms
	disk.Append("log", make([]byte, 500))  // then 1.1..1.7ms
	disk.Fsync("log", "a")                 // completes at 2.7ms
	w.RunFor(10 * time.Millisecond)
	if len((*p).firedAt) != 1 || (*p).firedAt[0] != 2700*time.Microsecond {
		t.Fatalf("fsync completed at %v, want [2.7ms]", (*p).firedAt)
	}
	// The device is idle again: the next write starts now.
	start := w.Now()
	disk.Append("log", make([]byte, 2000))
	disk.Fsync("log", "b")
	w.RunFor(10 * time.Millisecond)
	if len((*p).firedAt) != 2 || (*p).firedAt[1]-start != 3100*time.Microsecond {
		t.Fatalf("second fsync at %v since %v, want 2.1ms of writing and 1ms of fsync", (*p).firedAt, start)
	}
}

func TestDiskWithoutThroughputIgnoresWriteLength(t *testing.T) {
	opts := DefaultDiskOptions()
	opts.WriteLatency = Fixed(100 * time.Microsecond)
	opts.FsyncLatency = Fixed(time.Millisecond)
	w, disk, p := diskWorld(t, opts)
	disk.Append("log", make([]byte, 1_000_000))
	disk.Fsync("log", nil)
	w.RunFor(10 * time.Millisecond)
	if len((*p).firedAt) != 1 || (*p).firedAt[0] != 1100*time.Microsecond {
		t.Fatalf("fsync completed at %v, want [1.1ms]: an unlimited disk ignores length", (*p).firedAt)
	}
}
