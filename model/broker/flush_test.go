package broker_test

import (
	"testing"
	"time"

	"kafkasim/model/cluster"
	"kafkasim/model/metadata"
	"kafkasim/model/partlog"
	"kafkasim/model/producer"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// With flush.messages=1 Kafka's UnifiedLog.append flushes holding the log's
// lock, and a leader moves its high watermark only under that lock
// (maybeIncrementHighWatermark); a follower's append holds it too, and a
// follower made leader waits for it. So no high watermark passes a batch
// whose append, flush included, has not returned: what a leader counts as
// committed is on its disk. Four producers on their own connections append
// concurrently, faster than the disk fsyncs (1-10 ms each), so fsyncs queue
// up behind each other.
func TestHighWatermarkWaitsForTheFlush(t *testing.T) {
	t.Run("leader", func(t *testing.T) {
		// Broker 1 leads orders-0 alone (ISR [1]: the high watermark is
		// the log end). Another append's completion, or a produce's,
		// must not move it past an append whose fsync is still running.
		c := flushEveryMessage(t, 1)
		durableHW(t, c, 1, 8*time.Second, func(moves int) {
			if moves < 500 {
				t.Fatalf("the high watermark moved %d times: the workload did not run", moves)
			}
		})
	})
	t.Run("follower made leader", func(t *testing.T) {
		// Broker 2 follows broker 1 and takes over at once when broker 1
		// shuts down (the controller moves leadership first): its own
		// appends, copied from broker 1, are still syncing then, and its
		// first high watermark must wait for them.
		c := flushEveryMessage(t, 2)
		if err := c.World.ScheduleFault(4*time.Second, sim.Fault{Kind: sim.FaultShutdown, Target: "broker-1", For: time.Minute}); err != nil {
			t.Fatal(err)
		}
		durableHW(t, c, 2, 20*time.Second, func(moves int) {
			if v := c.Broker(2).Partition(ordersTP); v == nil || !v.IsLeader() || moves < 50 {
				t.Fatalf("broker 2 did not lead and commit after broker 1 shut down (%d high watermark moves)", moves)
			}
		})
	})
}

var ordersTP = metadata.TopicPartition{Topic: "orders", Partition: 0}

// flushEveryMessage builds one controller and brokers 1..n, orders-0 on all
// of them led by broker 1 (min.insync.replicas 1), flush.messages=1, and four
// producers writing 300 records a second each without linger (and giving up on a
// request after 3 s).
func flushEveryMessage(t *testing.T, brokers int) *cluster.Cluster {
	t.Helper()
	cfg := cluster.DefaultConfig(5)
	cfg.Controllers, cfg.Brokers = 1, brokers
	replicas := []int32{}
	for b := range brokers {
		replicas = append(replicas, int32(b+1))
	}
	cfg.Topics = []cluster.TopicSpec{{Name: "orders", Partitions: 1, ReplicationFactor: brokers, MinInsyncReplicas: 1,
		Assignment: [][]int32{replicas}, Configs: map[string]string{"flush.messages": "1"}}}
	pc := producer.DefaultConfig("", "orders")
	pc.Rate, pc.Keys, pc.LingerMs, pc.RequestTimeout = 300, 10, 0, 3*time.Second
	cfg.Producers = []cluster.ProducerSpec{{Name: "p", Count: 4, Config: pc}}
	c, err := cluster.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// durableHW runs c until end and checks, after every event, that whenever
// broker's replica of orders-0 leads, its high watermark lies within what a
// power loss would leave of its log; done is told how often it moved.
func durableHW(t *testing.T, c *cluster.Cluster, broker int32, end time.Duration, done func(moves int)) {
	t.Helper()
	segment := partlog.SegmentFile("data/"+ordersTP.String(), 0)
	w := c.World
	node := c.BrokerNode(broker)
	var hw, durableEnd, durablePos int64
	moves := 0
	w.SetAfterEvent(func() {
		b := c.Broker(broker)
		if b == nil {
			return
		}
		v := b.Partition(ordersTP)
		if v == nil || !v.IsLeader() || v.HighWatermark() <= hw {
			return
		}
		hw = v.HighWatermark()
		moves++
		if hw <= durableEnd {
			return
		}
		data, _ := w.Disk(node).Durable(segment)
		for durablePos < int64(len(data)) {
			b, n, err := record.Decode(data[durablePos:])
			if err != nil {
				break
			}
			durablePos += int64(n)
			durableEnd = b.NextOffset()
		}
		if hw > durableEnd {
			t.Fatalf("at %v broker %d leads with high watermark %d, but its log is durable only up to %d: a power loss now loses committed offsets %d..%d",
				w.Now(), broker, hw, durableEnd, durableEnd, hw-1)
		}
	})
	w.Start()
	w.RunUntil(end)
	done(moves)
}
