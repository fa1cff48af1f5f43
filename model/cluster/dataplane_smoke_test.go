package cluster

import (
	"kafkasim/sim"
	"testing"
	"time"

	"kafkasim/checker/history"
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
