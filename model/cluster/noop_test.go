package cluster

import (
	"testing"
	"time"

	"kafkasim/model/metadata"
	"kafkasim/model/raft"
)

// countNoOps counts the log's NoOp batches and their epochs.
func countNoOps(t *testing.T, log *raft.Log) (n int, epochs map[int32]int) {
	t.Helper()
	epochs = map[int32]int{}
	for off := int64(0); off < log.EndOffset(); off++ {
		e := log.Entry(off)
		if e.Control {
			continue
		}
		b, err := metadata.DecodeBatch(e.Data)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) == 1 && b[0].NoOp != nil {
			n++
			epochs[e.Epoch]++
		}
	}
	return n, epochs
}

// noOpCluster is a started default cluster with one topic and the given
// metadata.max.idle.interval.ms.
func noOpCluster(t *testing.T, interval time.Duration) *Cluster {
	t.Helper()
	cfg := DefaultConfig(1)
	cfg.Quorum.MaxIdleInterval = interval
	cfg.Topics = []TopicSpec{{Name: "orders", Partitions: 1, ReplicationFactor: 3}}
	c, err := Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.World.Start()
	return c
}

// KIP-835: the active controller appends a NoOp record every
// metadata.max.idle.interval.ms (500 ms), whatever else it writes; the
// records commit, and the brokers' metadata follows them.
func TestActiveControllerWritesNoOpRecords(t *testing.T) {
	c := noOpCluster(t, 500*time.Millisecond)
	c.World.RunUntil(5 * time.Second)
	n0, _ := countNoOps(t, c.Controller(c.Controllers[0]).Raft().Log())
	c.World.RunUntil(15 * time.Second)
	active, _ := c.ActiveController()
	if active == nil {
		t.Fatalf("no active controller\n%s", describe(c))
	}
	r := active.Raft()
	n, epochs := countNoOps(t, r.Log())
	t.Logf("NoOp records: %d at 5 s, %d at 15 s", n0, n)
	// 10 s at one record per 500 ms: 20, give or take the one in flight.
	if got := n - n0; got < 19 || got > 21 {
		t.Fatalf("%d NoOp records in 10 s, want 20 (one per 500 ms)\n%s", got, describe(c))
	}
	if len(epochs) != 1 {
		t.Fatalf("NoOp records in epochs %v: only the active controller writes them\n%s", epochs, describe(c))
	}
	// They commit: the high watermark is within a record or two of the end.
	if end := r.Log().EndOffset(); r.HighWatermark() < end-2 {
		t.Fatalf("high watermark %d, log end %d: the NoOp records do not commit\n%s", r.HighWatermark(), end, describe(c))
	}
	for i := range c.Brokers {
		if b := c.Broker(int32(i + 1)); b.Image().Offset < r.HighWatermark()-5 {
			t.Fatalf("broker-%d's metadata at %d, the high watermark at %d: brokers must follow the records\n%s", i+1, b.Image().Offset, r.HighWatermark(), describe(c))
		}
	}
}

// metadata.max.idle.interval.ms 0 writes no NoOp records, as in Kafka.
func TestNoOpRecordsOffAtZero(t *testing.T) {
	c := noOpCluster(t, 0)
	c.World.RunUntil(15 * time.Second)
	for _, id := range c.Controllers {
		if n, _ := countNoOps(t, c.Controller(id).Raft().Log()); n != 0 {
			t.Fatalf("%s holds %d NoOp records with the interval at 0\n%s", c.World.Name(id), n, describe(c))
		}
	}
}
