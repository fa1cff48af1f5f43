package cluster

import (
	"time"

	"kafkasim/checker"
	"kafkasim/model/producer"
	"kafkasim/model/proto"
	"kafkasim/model/reader"
)

// workload is a data-plane test run: a topic, producers, readers, faults,
// then a heal, a settle, and final reads; the history goes to the checker.
type workload struct {
	seed        uint64
	controllers int
	brokers     int
	topic       TopicSpec
	acks        int16
	idempotence bool
	producers   int
	rate        float64
	keys        int
	readers     int
	schedule    []plannedFault
	bugs        []string
	elrOff      bool
	unclean     bool
	faultPhase  time.Duration
	tweak       func(*Config)
	adversary   func(c *Cluster) func()
}

type workloadRun struct {
	c      *Cluster
	report *checker.Report
	final  bool
}

func (wl workload) config() Config {
	cfg := DefaultConfig(wl.seed)
	cfg.Controllers, cfg.Brokers = max(wl.controllers, 1), max(wl.brokers, 1)
	if wl.controllers == 0 {
		cfg.Controllers = 3
	}
	if wl.brokers == 0 {
		cfg.Brokers = 3
	}
	cfg.Racks = []string{"a", "b", "c"}
	cfg.Broker.ELREnabled = !wl.elrOff
	cfg.Broker.UncleanLeaderElection = wl.unclean
	cfg.Topics = []TopicSpec{wl.topic}
	cfg.Bugs = wl.bugs
	if wl.faultPhase == 0 {
		wl.faultPhase = 40 * time.Second
	}
	pc := producer.DefaultConfig("", wl.topic.Name)
	pc.Acks, pc.EnableIdempotence = wl.acks, wl.idempotence
	pc.Rate, pc.Keys = wl.rate, wl.keys
	pc.Start, pc.Stop = 2*time.Second, wl.faultPhase
	pc.DeliveryTimeout = 30 * time.Second
	pc.RequestTimeout = 10 * time.Second
	if wl.producers > 0 {
		cfg.Producers = []ProducerSpec{{Name: "p", Count: wl.producers, Config: pc}}
	}
	rc := reader.DefaultConfig("", []string{wl.topic.Name})
	if wl.readers > 0 {
		cfg.Readers = []ReaderSpec{{Name: "c", Count: wl.readers, Config: rc}}
	}
	if wl.tweak != nil {
		wl.tweak(&cfg)
	}
	return cfg
}

func (wl workload) run() (workloadRun, error) {
	if wl.faultPhase == 0 {
		wl.faultPhase = 40 * time.Second
	}
	cfg := wl.config()
	c, err := Build(cfg)
	if err != nil {
		return workloadRun{}, err
	}
	w := c.World
	for _, p := range wl.schedule {
		if err := w.ScheduleFault(p.At, p.Fault); err != nil {
			return workloadRun{}, err
		}
	}
	if wl.adversary != nil {
		w.SetAfterEvent(wl.adversary(c))
	}
	w.Start()
	w.RunUntil(wl.faultPhase)
	w.SetAfterEvent(nil)
	w.HealAll()
	// Settle: retries drain (delivery.timeout.ms is 30 s here), ISRs refill.
	w.RunFor(35 * time.Second)
	for _, id := range c.Readers {
		if r := c.Reader(id); r != nil {
			r.StartFinal()
		}
	}
	run := workloadRun{c: c}
	for i := 0; i < 60; i++ {
		w.RunFor(time.Second)
		done := len(c.Readers) > 0
		for _, id := range c.Readers {
			if r := c.Reader(id); r == nil || !r.FinalDone() {
				done = false
			}
		}
		if done {
			run.final = true
			break
		}
	}
	run.report = checker.Check(c.History.Ops(), wl.checkerConfig(c, cfg))
	return run, nil
}

// checkerConfig tells the checker what the run's configuration promises and
// what the god view saw lost in permitted ways.
func (wl workload) checkerConfig(c *Cluster, cfg Config) checker.Config {
	acks := "all"
	switch wl.acks {
	case proto.AcksLeader:
		acks = "1"
	case proto.AcksNone:
		acks = "0"
	}
	t := wl.topic
	minISR := t.MinInsyncReplicas
	if minISR == 0 {
		minISR = max(cfg.Broker.MinInsyncReplicas, 1)
	}
	flush := cfg.Data.Log.FlushIntervalMessages == 1 || t.Configs["flush.messages"] == "1"
	return checker.Config{
		Producers: []checker.ProducerGuarantees{{Prefix: "p", Acks: acks, Idempotence: wl.idempotence, MaxInFlight: 5, Retries: 1 << 30}},
		Topics:    []checker.TopicGuarantees{{Name: t.Name, ReplicationFactor: t.ReplicationFactor, MinInsyncReplicas: minISR, Unclean: wl.unclean, FlushEveryMessage: flush}},
		ELR:       !wl.elrOff,
		Bugs:      wl.bugs,
		// What the god view saw Kafka permit, as the runner tells its
		// checker.
		Happened: c.Facts(),
	}
}
