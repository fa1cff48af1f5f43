package broker_test

import (
	"testing"
	"time"

	"kafkasim/model/cluster"
	"kafkasim/model/metadata"
	"kafkasim/model/producer"
	"kafkasim/sim"
)

// A fetch answer counts only for a partition still at the offset it asked
// from (Kafka's AbstractFetcherThread: "the current offset is the same as the
// offset requested"). Here the follower's log is cut while its fetch is in
// flight; the answer, for the old log end, must be dropped and the follower
// fetch again from its new end at once — not try to append it, find the
// offsets do not line up, and back off for replica.fetch.backoff.ms.
func TestFetchAnswerForAMovedLogIsDropped(t *testing.T) {
	c := ordersOnTwoBrokers(t, 7)
	tp := metadata.TopicPartition{Topic: "orders", Partition: 0}
	w := c.World
	var cutAt time.Duration
	var cutFrom, cutTo int64
	w.SetAfterEvent(func() {
		if cutAt > 0 || w.Now() < 5*time.Second {
			return
		}
		follower := c.Broker(2)
		off, ok := follower.FetchInFlight(1, tp)
		v := follower.Partition(tp)
		if !ok || v == nil || off != v.Log().LEO() || off < 50 {
			return
		}
		cutAt, cutFrom, cutTo = w.Now(), off, off-20
		follower.TruncateReplica(tp, cutTo)
	})
	w.Start()
	w.RunUntil(5 * time.Second)
	for cutAt == 0 && w.Now() < 10*time.Second {
		w.RunUntil(w.Now() + time.Millisecond)
	}
	if cutAt == 0 {
		t.Fatal("the follower never had a fetch in flight at its log end")
	}
	// replica.fetch.backoff.ms is 1 s: well before that the follower must
	// have fetched back what was cut, and more.
	w.RunUntil(cutAt + 300*time.Millisecond)
	if leo := c.Broker(2).Partition(tp).Log().LEO(); leo <= cutFrom {
		t.Fatalf("cut from %d to %d at %v: 300 ms later the follower's log ends at %d (it backed off on the stale answer)",
			cutFrom, cutTo, cutAt, leo)
	}
}

// A write to the log directory that fails (here: the disk is full) takes the
// directory offline, and with it the metadata log Kafka 4 keeps there: the
// broker halts at once — no controlled shutdown, no clean-shutdown file, so
// its next start counts as unclean — instead of serving on with every
// append failing.
func TestLogDirFailureHaltsTheBroker(t *testing.T) {
	c := ordersOnTwoBrokers(t, 3)
	w := c.World
	w.Start()
	w.RunUntil(5 * time.Second)
	leader := c.BrokerNode(1)
	if w.State(leader) != sim.Running {
		t.Fatal("broker-1 is not running before the fault")
	}
	if err := w.InjectFault(sim.Fault{Kind: sim.FaultDisk, Disk: sim.DiskFull, Target: "broker-1"}); err != nil {
		t.Fatal(err)
	}
	w.RunUntil(w.Now() + 100*time.Millisecond)
	if w.State(leader) == sim.Running {
		t.Fatal("broker-1 serves on 100 ms after its disk filled")
	}
	if w.Disk(leader).Exists("meta/clean-shutdown") {
		t.Fatal("a halted broker left a clean-shutdown file")
	}
}

// ordersOnTwoBrokers builds one controller, brokers 1 and 2, partition
// orders-0 led by broker 1 and followed by broker 2, and a producer writing
// 200 records a second to it.
func ordersOnTwoBrokers(t *testing.T, seed uint64) *cluster.Cluster {
	t.Helper()
	cfg := cluster.DefaultConfig(seed)
	cfg.Controllers, cfg.Brokers = 1, 2
	cfg.Topics = []cluster.TopicSpec{{Name: "orders", Partitions: 1, ReplicationFactor: 2, Assignment: [][]int32{{1, 2}}}}
	pc := producer.DefaultConfig("", "orders")
	pc.Rate, pc.Keys = 200, 10
	cfg.Producers = []cluster.ProducerSpec{{Name: "p", Count: 1, Config: pc}}
	c, err := cluster.Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
