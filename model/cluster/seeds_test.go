package cluster

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"kafkasim/godview"
	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// The worked examples of the seed articles, reproduced by the model.

func (p *probeClient) produce(w *sim.World, to sim.NodeID, topic string, records int, timeout time.Duration, wait time.Duration) *proto.ProduceResponse {
	recs := make([]record.Record, records)
	for i := range recs {
		recs[i] = record.Record{Value: fmt.Sprintf("v%d", i)}
	}
	b := record.New(recs, record.Producer{ID: record.NoProducer}, false, record.CompressionNone)
	n := len(p.got)
	p.env.Send(to, &proto.ProduceRequest{CorrelationID: uint64(n + 1), Acks: proto.AcksAll, Timeout: timeout,
		Partitions: []proto.ProducePartition{{TopicPartition: proto.TopicPartition{Topic: topic}, Batch: b}}})
	w.RunFor(wait)
	for _, m := range p.got[n:] {
		if r, ok := m.(*proto.ProduceResponse); ok {
			return r
		}
	}
	return nil
}

// TestAcksAllWithMinISR2 is the seed's canAck example: ISR {A, B}, min ISR 2,
// an acks=all write at offset 100 is acknowledged when both have it, not
// while B is behind, and not at all once only A remains.
func TestAcksAllWithMinISR2(t *testing.T) {
	cfg := DefaultConfig(11)
	cfg.Topics = []TopicSpec{{Name: "t", Assignment: [][]int32{{1, 2, 3}}, MinInsyncReplicas: 2}}
	c, probe := settledCluster(t, cfg)
	w := c.World
	a, b, cc := c.BrokerNode(1), c.BrokerNode(2), c.BrokerNode(3)
	tp := metadata.TopicPartition{Topic: "t", Partition: 0}
	isr := func() []int32 { return c.Metadata().Partition(tp).ISR }

	// C falls behind and out of the ISR: ISR {A, B}. (A follower that is not
	// behind stays in the ISR even if it stops fetching: there must be data
	// it lacks.)
	cutC := w.Partition([]sim.NodeID{cc}, []sim.NodeID{a, b})
	// The write waits for C until the leader drops C from the ISR
	// (replica.lag.time.max.ms, checked every half of it).
	if r := probe.produce(w, a, "t", 1, 60*time.Second, 50*time.Second); r == nil || r.Partitions[0].Error != proto.None {
		t.Fatalf("A and B acknowledge once C is out of the ISR: %+v", r)
	}
	if got := isr(); !slices.Equal(got, []int32{1, 2}) {
		t.Fatalf("C should have left the ISR: %v", got)
	}
	if r := probe.produce(w, a, "t", 99, 10*time.Second, time.Second); r == nil || r.Partitions[0].Error != proto.None || r.Partitions[0].BaseOffset != 1 {
		t.Fatalf("99 more records, to offsets 1..99: %+v", r)
	}
	// A and B both caught up: the write at offset 100 is acknowledged.
	r := probe.produce(w, a, "t", 1, 10*time.Second, time.Second)
	if r == nil || r.Partitions[0].Error != proto.None || r.Partitions[0].BaseOffset != 100 {
		t.Fatalf("ISR A,B caught up: want offset 100 acknowledged, got %+v", r)
	}
	// B behind (cut off from A): the write at 101 waits, and times out.
	cutB := w.Partition([]sim.NodeID{b}, []sim.NodeID{a})
	r = probe.produce(w, a, "t", 1, 10*time.Second, 5*time.Second)
	if r != nil {
		t.Fatalf("ISR A,B with B behind: no acknowledgement yet, got %+v", r)
	}
	w.RunFor(6 * time.Second)
	if r := probe.last().(*proto.ProduceResponse); r.Partitions[0].Error != proto.RequestTimedOut {
		t.Fatalf("the write B never copied times out: %s", r.Partitions[0].Error)
	}
	// B leaves the ISR: only A remains, and acks=all is refused outright.
	w.RunFor(45 * time.Second)
	if got := isr(); !slices.Equal(got, []int32{1}) {
		t.Fatalf("B should have left the ISR: %v", got)
	}
	r = probe.produce(w, a, "t", 1, 10*time.Second, time.Second)
	if r == nil || r.Partitions[0].Error != proto.NotEnoughReplicas {
		t.Fatalf("only A remains: want NOT_ENOUGH_REPLICAS, got %+v", r)
	}
	// Strict min ISR: the write at 101 that A holds alone was never committed.
	if hw := c.Broker(1).Partition(tp).HighWatermark(); hw != 101 {
		t.Fatalf("the high watermark must not pass what A alone holds: %d", hw)
	}
	w.Heal(cutB)
	w.Heal(cutC)
	w.RunFor(30 * time.Second)
	if got := isr(); len(got) != 3 {
		t.Fatalf("healed, every replica rejoins the ISR: %v", got)
	}
}

// TestUncleanElectionLosesExactlyTheMissingOffsets is the seed's arithmetic:
// the committed log ends at 101 (offsets 0..100), a replica whose log ends at
// 98 is elected uncleanly, and exactly 98, 99 and 100 are lost.
func TestUncleanElectionLosesExactlyTheMissingOffsets(t *testing.T) {
	cfg := DefaultConfig(12)
	yes := true
	cfg.Topics = []TopicSpec{{Name: "t", Assignment: [][]int32{{1, 2}}, MinInsyncReplicas: 1, Unclean: &yes}}
	cfg.Brokers = 2
	c, probe := settledCluster(t, cfg)
	w := c.World
	a, b := c.BrokerNode(1), c.BrokerNode(2)
	tp := metadata.TopicPartition{Topic: "t", Partition: 0}
	if r := probe.produce(w, a, "t", 98, 10*time.Second, time.Second); r == nil || r.Partitions[0].Error != proto.None {
		t.Fatalf("98 records: %+v", r)
	}
	// B stops copying at 98; the next write waits until B leaves the ISR,
	// then A alone commits 98..100.
	cut := w.Partition([]sim.NodeID{b}, []sim.NodeID{a})
	if r := probe.produce(w, a, "t", 1, 60*time.Second, 50*time.Second); r == nil || r.Partitions[0].Error != proto.None || r.Partitions[0].BaseOffset != 98 {
		t.Fatalf("with ISR {A} and min ISR 1 A commits alone: %+v", r)
	}
	for range 2 {
		if r := probe.produce(w, a, "t", 1, 10*time.Second, time.Second); r == nil || r.Partitions[0].Error != proto.None {
			t.Fatalf("with ISR {A} and min ISR 1 A commits alone: %+v", r)
		}
	}
	if hw := c.Broker(1).Partition(tp).HighWatermark(); hw != 101 {
		t.Fatalf("committed log should end at 101, got %d", hw)
	}
	if leo := c.Broker(2).Partition(tp).Log().LEO(); leo != 98 {
		t.Fatalf("B's log should end at 98, got %d", leo)
	}
	// A dies for good; B is elected uncleanly.
	w.Crash(a, true)
	w.Heal(cut)
	w.RunFor(15 * time.Second)
	p := c.Metadata().Partition(tp)
	if p.Leader != 2 {
		t.Fatalf("B should lead after the unclean election: %s", p)
	}
	losses := c.Audit.Losses()
	if len(losses) != 1 || losses[0].Cause != "unclean-election" || losses[0].From != 98 || losses[0].Records != 3 {
		t.Fatalf("want exactly offsets 98..100 lost by the unclean election, got %+v", losses)
	}
	// The checker is told of the loss and of the unclean election behind it.
	facts := c.Facts()
	if l := facts.Of(godview.Loss); len(l) != 1 || l[0] != losses[0] {
		t.Fatalf("the facts' losses %+v, want the audit's %+v", l, losses)
	}
	if u := facts.Of(godview.UncleanElection); len(u) != 1 || u[0].Partition != "t-0" || u[0].At != losses[0].At {
		t.Fatalf("unclean elections %+v, want one of t-0 at %d", u, losses[0].At)
	}
	if v := c.Audit.Violations(); len(v) > 0 {
		t.Fatalf("an unclean election is permitted, not a violation: %v", v)
	}
}

// TestBatchingCompressesRepeatedRecords is the seed's gzip experiment: 100
// copies of a short JSON record compressed one by one take two orders of
// magnitude more bytes than compressed as one batch.
func TestBatchingCompressesRepeatedRecords(t *testing.T) {
	msg := `{"type":"order.created","status":"new"}` + "\n" // the seed's record
	gz := func(s string) int {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write([]byte(s))
		w.Close()
		return b.Len()
	}
	// The seed's own numbers, measured the seed's way.
	separately, together := 100*gz(msg), gz(strings.Repeat(msg, 100))
	// The same through Kafka record batches: 100 single-record gzip batches
	// against one gzip batch of 100 records.
	var oneByOne int
	for range 100 {
		b := record.New([]record.Record{{Value: msg}}, record.Producer{ID: record.NoProducer}, false, record.CompressionGzip)
		oneByOne += b.RecordsBytes()
	}
	recs := make([]record.Record, 100)
	for i := range recs {
		recs[i] = record.Record{Value: msg}
	}
	batch := record.New(recs, record.Producer{ID: record.NoProducer}, false, record.CompressionGzip)
	t.Logf("gzip separately %d, one stream %d; record batches: %d bytes one by one, %d as one batch (%d with headers)",
		separately, together, oneByOne, batch.RecordsBytes(), batch.SizeBytes())
	// The seed measured 6500 vs 87 with Go 1.27's compress/gzip; other Go
	// versions differ by a few bytes per stream.
	if separately < 6000 || separately > 7000 || together < 80 || together > 100 {
		t.Fatalf("the seed's experiment gives about 6500 vs 87, got %d vs %d", separately, together)
	}
	// In record batches each record keeps its framing (length, offset
	// delta), which compresses less well than the seed's bare repetition:
	// thousands of bytes against a few hundred, still over 15 times smaller.
	if oneByOne < 6000 || oneByOne > 8000 || batch.RecordsBytes() > 500 || oneByOne < 15*batch.RecordsBytes() {
		t.Fatalf("record batches: want about 7000 vs a few hundred, got %d vs %d", oneByOne, batch.RecordsBytes())
	}
	decoded, _, err := record.Decode(batch.Encode(nil))
	if err != nil || decoded.RecordCount() != 100 || decoded.Records()[99].Value != msg {
		t.Fatalf("the compressed batch decodes back: %v", err)
	}
}
