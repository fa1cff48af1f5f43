package broker_test

import (
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"kafkasim/history"
	"kafkasim/model/cluster"
	"kafkasim/model/producer"
	"kafkasim/model/proto"
	"kafkasim/model/reader"
	"kafkasim/sim"
)

// A broker reuses a waiting produce once its answer is delivered and no
// partition's waiting list holds it, and a fetch answer once delivered (or
// at once, when its fetch is parked); a follower and a producer reuse a
// request answered after the world delivered it once. Nothing may read them after that: with
// them filled with nonsense instead of reused, a run under
// crashes, pauses, partitions (one that cuts a leader off from its
// followers only, so that writes time out while still listed as waiting)
// and message duplication must be the same run, event for event and
// operation for operation; a freed produce touched again panics. With 24
// partitions on 3 brokers, a fetch names more partitions than a fetch
// answer holds in itself (its more).
func TestFreedMessagesAreNeverReadAgain(t *testing.T) {
	for _, partitions := range []int{6, 24} {
		t.Run(fmt.Sprint(partitions, " partitions"), func(t *testing.T) { testFreedMessagesAreNeverReadAgain(t, partitions) })
	}
}

func testFreedMessagesAreNeverReadAgain(t *testing.T, partitions int) {
	run := func(poison bool) (trace uint64, hist [32]byte, produces, answers, fetches, requests uint64) {
		if poison {
			proto.PoisonFreed = true
			defer func() { proto.PoisonFreed = false }()
		}
		cfg := cluster.DefaultConfig(11)
		cfg.Controllers, cfg.Brokers = 1, 3
		// Latencies far apart, so that a duplicate may arrive after the
		// answer to its original.
		cfg.Network.DuplicateProbability = 0.1
		cfg.Network.Latency = sim.Range{Min: time.Millisecond, Max: 60 * time.Millisecond}
		cfg.Topics = []cluster.TopicSpec{{Name: "orders", Partitions: partitions, ReplicationFactor: 3, MinInsyncReplicas: 2}}
		pc := producer.DefaultConfig("", "orders")
		pc.Rate, pc.Keys = 500, 50
		// Writes time out while a leader is cut off from its followers,
		// and their answers reach the producer while other partitions'
		// waiting lists still hold them.
		pc.RequestTimeout = 1500 * time.Millisecond
		// Eight producers: a broker serves a connection's requests one at a
		// time, so each producer sends few, large requests.
		cfg.Producers = []cluster.ProducerSpec{{Name: "p", Count: 8, Config: pc}}
		cfg.Readers = []cluster.ReaderSpec{{Name: "c", Count: 1, Config: reader.DefaultConfig("", []string{"orders"})}}
		c, err := cluster.Build(cfg)
		if err != nil {
			t.Fatal(err)
		}
		w := c.World
		w.ScheduleFault(4*time.Second, sim.Fault{Kind: sim.FaultCrash, Target: "random-broker", For: 3 * time.Second})
		w.ScheduleFault(9*time.Second, sim.Fault{Kind: sim.FaultPause, Target: "random-broker", For: 2 * time.Second})
		w.ScheduleFault(13*time.Second, sim.Fault{Kind: sim.FaultPartition, Groups: [][]string{{"random-broker"}, {"rest"}}, For: 3 * time.Second})
		w.ScheduleFault(16*time.Second, sim.Fault{Kind: sim.FaultPartition, Groups: [][]string{{"broker-1"}, {"broker-2", "broker-3"}}, For: 4 * time.Second})
		w.Start()
		w.RunUntil(25 * time.Second)
		h := sha256.New()
		var buf []byte
		c.History.Each(func(op *history.Op) {
			buf = history.AppendJSON(buf[:0], op)
			h.Write(buf)
		})
		for id := int32(1); id <= 3; id++ {
			p, a, f := c.Broker(id).Freed()
			produces, answers, fetches = produces+p, answers+a, fetches+f
		}
		for _, id := range c.Producers {
			requests += uint64(c.Producer(id).Stats.RequestsReused)
		}
		return w.TraceHash(), [32]byte(h.Sum(nil)), produces, answers, fetches, requests
	}
	trace, hist, produces, answers, fetches, requests := run(false)
	if produces < 200 || answers < 200 || fetches < 100 || requests < 200 {
		t.Fatalf("only %d produces, %d fetch answers, %d follower fetches and %d produce requests freed: too few to test reuse", produces, answers, fetches, requests)
	}
	poisonedTrace, poisonedHist, _, _, _, _ := run(true)
	if trace != poisonedTrace || hist != poisonedHist {
		t.Fatalf("freed messages filled with nonsense changed the run: trace %x, history %x; reused: %x, %x", poisonedTrace, poisonedHist[:8], trace, hist[:8])
	}
}
