package cluster

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"kafkasim/sim"

	"kafkasim/history"
	"kafkasim/model/producer"
	"kafkasim/model/reader"
)

func TestDataPlaneSmoke(t *testing.T) {
	cfg := DefaultConfig(1)
	cfg.Topics = []TopicSpec{{Name: "orders", Partitions: 3, ReplicationFactor: 3, MinInsyncReplicas: 2}}
	pc := producer.DefaultConfig("", "orders")
	pc.Rate, pc.Keys = 100, 10
	pc.Start, pc.Stop = 2*time.Second, 15*time.Second
	cfg.Producers = []ProducerSpec{{Name: "p", Count: 1, Config: pc}}
	rc := reader.DefaultConfig("", []string{"orders"})
	cfg.Readers = []ReaderSpec{{Name: "c", Count: 1, Config: rc}}
	c, err := Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.World.Start()
	c.World.RunUntil(20 * time.Second)
	ops := c.History.Ops()
	counts := map[string]int{}
	for _, o := range ops {
		counts[o.F+"/"+o.Type.String()]++
	}
	t.Logf("steps %d ops %d %v", c.World.Steps(), len(ops), counts)
	p := c.Producer(c.Producers[0])
	r := c.Reader(c.Readers[0])
	t.Logf("producer %+v", p.Stats.Sent)
	t.Logf("reader %+v", r.Stats)
	for _, v := range c.Audit.Violations() {
		t.Errorf("violation: %v", v)
	}
	for i, o := range ops {
		if i < 10 || (o.F == history.FPoll && len(o.Value.Records) > 0 && i < 400) {
			t.Log(o)
		}
	}
	t.Log(describe(c))
}

func TestDataPlaneFaultsSmoke(t *testing.T) {
	for seed := uint64(1); seed <= 5; seed++ {
		cfg := DefaultConfig(seed)
		cfg.Topics = []TopicSpec{{Name: "orders", Partitions: 3, ReplicationFactor: 3, MinInsyncReplicas: 2}}
		pc := producer.DefaultConfig("", "orders")
		pc.Rate, pc.Keys = 200, 10
		pc.Start, pc.Stop = 2*time.Second, 40*time.Second
		cfg.Producers = []ProducerSpec{{Name: "p", Count: 2, Config: pc}}
		rc := reader.DefaultConfig("", []string{"orders"})
		cfg.Readers = []ReaderSpec{{Name: "c", Count: 1, Config: rc}}
		c, err := Build(cfg)
		if err != nil {
			t.Fatal(err)
		}
		w := c.World
		for i, at := range []time.Duration{8, 16, 24, 32} {
			kind := sim.FaultCrash
			if i%2 == 1 {
				kind = sim.FaultKill
			}
			w.ScheduleFault(at*time.Second, sim.Fault{Kind: kind, Target: "leader(orders-0)", For: 3 * time.Second})
		}
		w.ScheduleFault(20*time.Second, sim.Fault{Kind: sim.FaultIsolate, Target: "leader(orders-1)", For: 5 * time.Second})
		w.Start()
		w.RunUntil(45 * time.Second)
		w.HealAll()
		w.RunFor(20 * time.Second)
		for _, id := range c.Readers {
			c.Reader(id).StartFinal()
		}
		w.RunFor(20 * time.Second)
		acked := map[string][2]int64{}
		final := map[[2]int64]string{}
		for _, o := range c.History.Ops() {
			if o.F == history.FSend && o.Type == history.OK {
				acked[o.Value.Value] = [2]int64{int64(o.Value.Partition), o.Value.Offset}
			}
			if o.F == history.FPoll && o.Type == history.OK && o.Value.Final {
				for _, r := range o.Value.Records {
					final[[2]int64{int64(r.Partition), r.Offset}] = r.Value
				}
			}
		}
		lost := 0
		for v, at := range acked {
			if final[at] != v {
				lost++
			}
		}
		p0, p1 := c.Producer(c.Producers[0]), c.Producer(c.Producers[1])
		t.Logf("seed %d: acked %d lost %d; p0 %+v p1 %+v; reader done %v; violations %v; losses %v", seed, len(acked), lost,
			[4]int{p0.Stats.Sent, p0.Stats.Acked, p0.Stats.Failed, p0.Stats.Indeterminate},
			[4]int{p1.Stats.Sent, p1.Stats.Acked, p1.Stats.Failed, p1.Stats.Indeterminate},
			c.Reader(c.Readers[0]).FinalDone(), c.Audit.Violations(), c.Audit.Losses())
		if lost > 0 {
			t.Errorf("seed %d: %d acknowledged writes lost with acks=all, min ISR 2\n%s", seed, lost, describe(c))
		}
	}
}

// A run's trace is the same record for record, details included, every
// time: no description may print a pointer (a parked fetch's timeout and a
// waiting produce's once did, so two runs of one seed wrote different trace
// files under the same trace hash).
func TestTraceDetailsAreTheSameEveryRun(t *testing.T) {
	run := func() []sim.TraceRecord {
		cfg := DefaultConfig(3)
		cfg.Topics = []TopicSpec{{Name: "orders", Partitions: 3, ReplicationFactor: 3, MinInsyncReplicas: 2}}
		pc := producer.DefaultConfig("", "orders")
		// Writes stop early, so that the readers' fetches park and
		// time out.
		pc.Rate, pc.Keys, pc.Stop = 50, 10, 8*time.Second
		cfg.Producers = []ProducerSpec{{Name: "p", Count: 1, Config: pc}}
		cfg.Readers = []ReaderSpec{{Name: "c", Count: 1, Config: reader.DefaultConfig("", []string{"orders"})}}
		buf := &sim.TraceBuffer{RecordsMax: 1 << 20}
		cfg.Trace = buf
		c, err := Build(cfg)
		if err != nil {
			t.Fatal(err)
		}
		c.World.Start()
		c.World.RunUntil(20 * time.Second)
		return buf.Records
	}
	first := run()
	// Garbage between the runs, so that the second one's objects live
	// elsewhere.
	garbage := make([][]byte, 0, 1000)
	for range cap(garbage) {
		garbage = append(garbage, make([]byte, 1000))
	}
	second := run()
	parked := 0
	for i := range first {
		if i >= len(second) || first[i] != second[i] {
			t.Fatalf("trace record %d differs between two runs:\n%+v\n%+v", i, first[i], second[min(i, len(second)-1)])
		}
		if strings.Contains(first[i].Detail, "parkedTimeout") {
			parked++
		}
		if strings.Contains(first[i].Detail, "0x") {
			t.Fatalf("trace record %d shows a pointer: %+v", i, first[i])
		}
	}
	if len(first) != len(second) || parked == 0 {
		t.Fatalf("%d and %d records, %d parked-fetch timeouts: the runs did not park fetches", len(first), len(second), parked)
	}
	runtime.KeepAlive(garbage)
}

// detailBytesSink takes details as bytes (sim.DetailSink), as the run
// store's trace file does, and keeps them as strings.
type detailBytesSink struct {
	sim.TraceBuffer
	asBytes int
}

func (s *detailBytesSink) RecordDetail(r sim.TraceRecord, detail []byte) {
	s.asBytes++
	r.Detail = string(detail)
	s.Record(r)
}

// A sink that takes details as bytes gets, event for event, the words a
// sink of strings gets (the payloads' AppendDetail and String agree).
func TestTraceDetailsAsBytesAreTheStringsWords(t *testing.T) {
	run := func(sink sim.TraceSink) {
		cfg := DefaultConfig(5)
		cfg.Topics = []TopicSpec{{Name: "orders", Partitions: 3, ReplicationFactor: 3, MinInsyncReplicas: 2}}
		pc := producer.DefaultConfig("", "orders")
		pc.Rate, pc.Keys = 200, 10
		cfg.Producers = []ProducerSpec{{Name: "p", Count: 2, Config: pc}}
		cfg.Readers = []ReaderSpec{{Name: "c", Count: 1, Config: reader.DefaultConfig("", []string{"orders"})}}
		cfg.Trace = sink
		c, err := Build(cfg)
		if err != nil {
			t.Fatal(err)
		}
		c.World.ScheduleFault(4*time.Second, sim.Fault{Kind: sim.FaultCrash, Target: "random-broker", For: 2 * time.Second})
		c.World.Start()
		c.World.RunUntil(10 * time.Second)
	}
	strs := &sim.TraceBuffer{RecordsMax: 1 << 20}
	bytes := &detailBytesSink{TraceBuffer: sim.TraceBuffer{RecordsMax: 1 << 20}}
	run(strs)
	run(bytes)
	if len(strs.Records) != len(bytes.Records) || len(strs.Records) == 0 {
		t.Fatalf("%d and %d records", len(strs.Records), len(bytes.Records))
	}
	for i := range strs.Records {
		if strs.Records[i] != bytes.Records[i] {
			t.Fatalf("record %d: %+v as strings, %+v as bytes", i, strs.Records[i], bytes.Records[i])
		}
	}
	if bytes.asBytes < len(bytes.Records)*3/4 { // the data plane's events; notes, boots and the control plane's come as strings
		t.Fatalf("only %d of %d details came as bytes", bytes.asBytes, len(bytes.Records))
	}
}
