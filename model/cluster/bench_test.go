package cluster

import (
	"os"
	"runtime"
	"testing"
	"time"

	"kafkasim/internal/gctune"
	"kafkasim/internal/hugeheap"
	"kafkasim/model/group"
	"kafkasim/model/producer"
	"kafkasim/model/reader"
	"kafkasim/sim"
)

// BenchmarkIdleClusterHour runs a 3-controller, 5-broker cluster with one
// topic for one simulated hour of heartbeats, metadata fetches and check
// quorum, and reports events per wall second and simulated seconds per wall
// second.
func BenchmarkIdleClusterHour(b *testing.B) {
	var events uint64
	for range b.N {
		cfg := DefaultConfig(1)
		cfg.Controllers, cfg.Brokers = 3, 5
		cfg.Topics = []TopicSpec{{Name: "orders", Partitions: 6, ReplicationFactor: 3, MinInsyncReplicas: 2}}
		c, err := Build(cfg)
		if err != nil {
			b.Fatal(err)
		}
		c.World.Start()
		c.World.RunUntil(time.Hour)
		if ok, why := c.ControlPlaneConverged(); !ok {
			b.Fatalf("idle cluster not converged: %s", why)
		}
		events += c.World.Steps()
	}
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(events)/secs, "events/s")
	b.ReportMetric(float64(b.N)*time.Hour.Seconds()/secs, "sim-s/s")
	b.ReportMetric(float64(events)/float64(b.N), "events/run")
}

// BenchmarkDataPlaneFiveMinutes is issue 4's benchmark: 3 controllers, 5
// brokers, a topic of 12 partitions with RF 3, 4 producers at 2,000 records/s
// each, 2 readers, 5 simulated minutes with a crash every 30 s, history
// recording included.
//
// It runs with the garbage collector tuned as the kafkasim command tunes it
// (internal/gctune, unless GOGC is set) and, as the command does, the heap
// marked for huge pages where the machine leaves that to programs
// (internal/hugeheap); it reports bytes allocated per event.
func BenchmarkDataPlaneFiveMinutes(b *testing.B) { runDataPlaneBench(b, dataPlaneBenchConfig) }

// runDataPlaneBench runs the data-plane benchmark's five minutes, with a
// broker crash every 30 s, on the cluster config builds.
func runDataPlaneBench(b *testing.B, config func(seed uint64) Config) {
	if os.Getenv("GOGC") == "" {
		defer gctune.Start()()
	}
	if _, _, err := hugeheap.Reserve(); err != nil {
		b.Fatal(err)
	}
	var events uint64
	var simTime time.Duration
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range b.N {
		c, err := Build(config(1))
		if err != nil {
			b.Fatal(err)
		}
		for i := 1; i <= 9; i++ {
			c.World.ScheduleFault(time.Duration(30*i)*time.Second, sim.Fault{Kind: sim.FaultCrash, Target: "random-broker", For: 10 * time.Second})
		}
		c.World.Start()
		c.World.RunUntil(5 * time.Minute)
		events += c.World.Steps()
		simTime += c.World.Now()
		if c.History.Len() < 1_000_000 {
			b.Fatalf("only %d history operations: the workload did not run", c.History.Len())
		}
	}
	secs := b.Elapsed().Seconds()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(events)/secs, "events/s")
	b.ReportMetric(simTime.Seconds()/secs, "sim-s/s")
	b.ReportMetric(float64(events)/float64(b.N), "events/run")
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(events), "B/event")
}

// BenchmarkDataPlaneFiveMinutesBandwidth is BenchmarkDataPlaneFiveMinutes
// with bytes costing time: 1 Gbit/s links (cluster.network.bandwidth) and
// 500 MB/s disks (cluster.disk.write-throughput). The links are far from
// full; what it measures is the cost of the queueing arithmetic, which must
// stay within 15% of the unlimited benchmark's events/s.
func BenchmarkDataPlaneFiveMinutesBandwidth(b *testing.B) {
	runDataPlaneBench(b, func(seed uint64) Config {
		cfg := dataPlaneBenchConfig(seed)
		cfg.Network.BandwidthBytesPerSecond = 125_000_000
		cfg.Disk.WriteThroughputBytesPerSecond = 500_000_000
		return cfg
	})
}

func dataPlaneBenchConfig(seed uint64) Config {
	cfg := DefaultConfig(seed)
	cfg.Controllers, cfg.Brokers = 3, 5
	cfg.Racks = []string{"a", "b", "c"}
	cfg.Topics = []TopicSpec{{Name: "orders", Partitions: 12, ReplicationFactor: 3, MinInsyncReplicas: 2}}
	pc := producer.DefaultConfig("", "orders")
	pc.Rate, pc.Keys = 2000, 1000
	cfg.Producers = []ProducerSpec{{Name: "p", Count: 4, Config: pc}}
	cfg.Readers = []ReaderSpec{{Name: "c", Count: 2, Config: reader.DefaultConfig("", []string{"orders"})}}
	return cfg
}

// BenchmarkDataPlaneGroupFiveMinutes is BenchmarkDataPlaneFiveMinutes with
// the two readers replaced by a consumer group of three members (classic
// protocol, Kafka's default assignors, committing after processing, no
// processing time): the same load, read through the group coordinator, with
// a process operation per record and the commits in the history. Compare its
// sim-s/s with BenchmarkDataPlaneReadersFiveMinutes's (docs/performance.md).
func BenchmarkDataPlaneGroupFiveMinutes(b *testing.B) {
	runDataPlaneBench(b, func(seed uint64) Config { return groupBenchConfig(seed, true) })
}

// BenchmarkDataPlaneReadersFiveMinutes is what the group benchmark is
// measured against: the same consumers, three of them polling without
// processing time, as assign-mode readers. BenchmarkDataPlaneFiveMinutes's
// two readers, which sleep 1–5 ms between polls, are not the same load.
func BenchmarkDataPlaneReadersFiveMinutes(b *testing.B) {
	runDataPlaneBench(b, func(seed uint64) Config { return groupBenchConfig(seed, false) })
}

// groupBenchConfig is the data-plane benchmark's cluster and producers with
// three consumers that poll without processing time, as members of one
// consumer group when inGroup, else as assign-mode readers.
func groupBenchConfig(seed uint64, inGroup bool) Config {
	cfg := dataPlaneBenchConfig(seed)
	rc := reader.DefaultConfig("", []string{"orders"})
	rc.Processing = sim.Range{}
	if inGroup {
		gc := reader.DefaultGroupConfig("billing")
		gc.Commit = reader.CommitAfterProcessing
		gc.Processing = sim.Range{}
		gc.Assignors, _ = ClientAssignors([]string{"range", "cooperative-sticky"})
		rc.Group = &gc
		cfg.Groups = &GroupSettings{Coordinator: groupBenchCoordinator()}
	}
	cfg.Readers = []ReaderSpec{{Name: "c", Count: 3, Config: rc}}
	return cfg
}

func groupBenchCoordinator() group.Config {
	gc := group.DefaultConfig()
	gc.OffsetsTopicReplicationFactor = 3
	return gc
}

// BenchmarkBigCluster is issue 28's load: 3 controllers, 30 brokers in 3
// racks, 3,000 partitions with RF 3 and min ISR 2, 8 producers at 250
// records/s each with acks=all, a random broker crashed for 4 s every 10 s,
// one simulated minute. Almost every partition is idle at any moment: what
// it measures is what an idle partition costs (fetch sessions, KIP-227).
// docs/examples/big-cluster-3000.yaml is the same load as a scenario.
// Run it with -benchtime 1x.
func BenchmarkBigCluster(b *testing.B) {
	if os.Getenv("GOGC") == "" {
		defer gctune.Start()()
	}
	var events uint64
	var simTime time.Duration
	for range b.N {
		cfg := DefaultConfig(1)
		cfg.Controllers, cfg.Brokers = 3, 30
		cfg.Racks = []string{"a", "b", "c"}
		cfg.Topics = []TopicSpec{{Name: "orders", Partitions: 3000, ReplicationFactor: 3, MinInsyncReplicas: 2}}
		pc := producer.DefaultConfig("", "orders")
		pc.Rate, pc.Keys = 250, 1000 // acks=all, the default
		cfg.Producers = []ProducerSpec{{Name: "p", Count: 8, Config: pc}}
		c, err := Build(cfg)
		if err != nil {
			b.Fatal(err)
		}
		for i := 1; i <= 5; i++ {
			c.World.ScheduleFault(time.Duration(10*i)*time.Second, sim.Fault{Kind: sim.FaultCrash, Target: "random-broker", For: 4 * time.Second})
		}
		c.World.Start()
		c.World.RunUntil(time.Minute)
		events += c.World.Steps()
		simTime += c.World.Now()
		if c.History.Len() < 100_000 {
			b.Fatalf("only %d history operations: the workload did not run", c.History.Len())
		}
	}
	secs := b.Elapsed().Seconds()
	b.ReportMetric(float64(events)/secs, "events/s")
	b.ReportMetric(simTime.Seconds()/secs, "sim-s/s")
	b.ReportMetric(float64(events)/float64(b.N), "events/run")
}
