// Package fuzz searches for fault schedules and configurations that break a
// guarantee: it draws whole scenarios from seeds (swarm style: per seed,
// some fault kinds are off and the rest get very different rates), runs
// them, and shrinks every failure to a small scenario file that `kafkasim
// run` replays to the same failure.
package fuzz

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"kafkasim/scenarios"
	"kafkasim/sim"
)

// Limits keep one generated case well under a second of wall time.
const (
	brokersMax      = 5
	partitionsMax   = 4
	faultsMax       = 12
	durationMin     = 20 * time.Second
	durationMax     = 45 * time.Second
	producerRateMax = 300
)

// faultKinds the generator draws from; swarm testing switches some off per
// seed.
var faultKinds = []string{"crash", "kill", "shutdown", "pause", "partition", "isolate", "power-loss", "disconnect", "slow-network", "clock", "disk"}

// Generate draws a scenario from a seed. With a base, the cluster, topics
// and clients are the base's and only the seed and the fault schedule are
// drawn; bugs are switched on as given.
func Generate(seed uint64, base *scenarios.Scenario, bugs []string) (*scenarios.Scenario, error) {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	var s *scenarios.Scenario
	if base != nil {
		c := *base
		c.Faults = nil
		c.Name = base.Name + "-fuzz-" + strconv.FormatUint(seed, 10)
		s = &c
	} else {
		s = drawCluster(rng, seed)
	}
	s.Seed = seed
	s.Bugs = append([]string{}, bugs...)
	s.Faults = drawFaults(rng, s)
	return scenarios.Normalize(s)
}

func drawCluster(rng *rand.Rand, seed uint64) *scenarios.Scenario {
	s := scenarios.New("fuzz-" + strconv.FormatUint(seed, 10))
	s.Duration = durationMin + time.Duration(rng.Int64N(int64(durationMax-durationMin)))/time.Second*time.Second
	s.Settle = 40 * time.Second
	s.Cluster.Controllers = []int{1, 3, 3, 5}[rng.IntN(4)]
	s.Cluster.Brokers = 3 + rng.IntN(brokersMax-2)
	s.Cluster.Racks = []string{"a", "b", "c"}[:1+rng.IntN(3)]
	b := &s.Cluster.Broker
	if rng.IntN(6) == 0 {
		set(b, "unclean.leader.election.enable", "true")
	}
	if rng.IntN(4) == 0 {
		set(b, "eligible.leader.replicas.enable", "false")
	}
	if rng.IntN(5) == 0 {
		set(b, "log.flush.interval.messages", "1")
	}
	set(b, "replica.lag.time.max.ms", strconv.Itoa([]int{5000, 10000, 30000}[rng.IntN(3)]))
	if rng.IntN(6) == 0 {
		// One batch per fetch: followers step through every offset while
		// they catch up, which opens the windows of ISR-join races.
		set(b, "replica.fetch.max.bytes", "1")
	}
	rf := 1 + rng.IntN(min(3, s.Cluster.Brokers))
	if rng.IntN(3) > 0 {
		rf = min(3, s.Cluster.Brokers) // most real topics replicate
	}
	t := s.NewTopic("orders", 1+rng.IntN(partitionsMax), rf)
	set(&t.Config, "min.insync.replicas", strconv.Itoa(1+rng.IntN(rf)))
	s.Topics = []scenarios.Topic{t}
	for i := range 1 + rng.IntN(2) {
		p := s.NewProducer(fmt.Sprintf("p%d", i+1), "orders", 1+rng.IntN(2), float64(50+rng.IntN(producerRateMax-50)), rng.IntN(30))
		c := &p.Config
		acks := []string{"all", "all", "all", "1", "0"}[rng.IntN(5)]
		set(c, "acks", acks)
		if acks != "all" || rng.IntN(4) == 0 {
			set(c, "enable.idempotence", "false")
		}
		set(c, "linger.ms", strconv.Itoa([]int{0, 5, 20, 100}[rng.IntN(4)]))
		set(c, "max.in.flight.requests.per.connection", strconv.Itoa(1+rng.IntN(5)))
		set(c, "request.timeout.ms", "10000")
		set(c, "delivery.timeout.ms", strconv.Itoa([]int{15000, 30000, 120000}[rng.IntN(3)]))
		s.Producers = append(s.Producers, p)
	}
	c := s.NewConsumer("c", 1+rng.IntN(2), []string{"orders"})
	set(&c.Config, "auto.offset.reset", "earliest")
	s.Consumers = []scenarios.Consumer{c}
	return s
}

func set(c *scenarios.Config, key, value string) {
	c.Set(key, value)
	if c.Explicit == nil {
		c.Explicit = map[string]bool{}
	}
	c.Explicit[key] = true
}

// drawFaults draws a swarm schedule: a random subset of fault kinds, each
// with its own weight, and up to faultsMax faults within the fault phase.
func drawFaults(rng *rand.Rand, s *scenarios.Scenario) []scenarios.ScheduledFault {
	var kinds []string
	var weights []int
	for _, k := range faultKinds {
		if rng.IntN(2) == 0 {
			kinds = append(kinds, k)
			weights = append(weights, 1+rng.IntN(8))
		}
	}
	if len(kinds) == 0 {
		kinds, weights = []string{"crash"}, []int{1}
	}
	total := 0
	for _, w := range weights {
		total += w
	}
	targets := targetsOf(s)
	n := rng.IntN(faultsMax + 1)
	var out []scenarios.ScheduledFault
	for i := range n {
		x := rng.IntN(total)
		k := 0
		for x >= weights[k] {
			x -= weights[k]
			k++
		}
		kind := kinds[k]
		at := time.Duration(rng.Int64N(int64(s.Duration-time.Second))) / time.Millisecond * time.Millisecond
		f := sim.Fault{Target: targets[rng.IntN(len(targets))]}
		down := time.Duration(100+rng.IntN(15000)) * time.Millisecond
		switch kind {
		case "crash":
			f.Kind, f.For = sim.FaultCrash, down
		case "kill":
			f.Kind, f.For = sim.FaultKill, down
		case "shutdown":
			f.Kind, f.For = sim.FaultShutdown, down
		case "pause":
			f.Kind, f.For = sim.FaultPause, down
		case "power-loss":
			f.Kind, f.For = sim.FaultPowerLoss, down
			if rng.IntN(2) == 0 && len(s.Cluster.Racks) > 0 {
				f.Target = "rack(" + s.Cluster.Racks[rng.IntN(len(s.Cluster.Racks))] + ")"
			}
		case "partition":
			f.Kind, f.For, f.Target = sim.FaultPartition, down, ""
			f.Groups = [][]string{{targets[rng.IntN(len(targets))]}, {"rest"}}
			if rng.IntN(3) == 0 {
				f.OneWay = true
			}
		case "isolate":
			f.Kind, f.For = sim.FaultIsolate, down
		case "disconnect":
			f.Kind = sim.FaultDisconnect
		case "slow-network":
			f.Kind, f.For, f.Latency = sim.FaultSlowNetwork, down, time.Duration(10+rng.IntN(500))*time.Millisecond
		case "disk":
			// A disk replacement or a torn write: the node loses power
			// first, and restarts after down.
			f.Kind, f.For = sim.FaultDisk, down
			// Brokers only: a controller whose disk is replaced refuses to
			// start until it is formatted again, as in Kafka.
			f.Target = fmt.Sprintf("broker-%d", 1+rng.IntN(s.Cluster.Brokers))
			f.Disk = []sim.DiskFaultKind{sim.DiskWipe, sim.DiskTornWrite, sim.DiskCorrupt}[rng.IntN(3)]
			if f.Disk == sim.DiskCorrupt {
				f.For = 0
			}
		case "clock":
			f.Kind, f.For = sim.FaultClock, down
			f.ClockJump = time.Duration(rng.IntN(20000)-10000) * time.Millisecond
			f.DriftPPM = int64(rng.IntN(2000) - 500)
		}
		key := kind
		out = append(out, scenarios.ScheduledFault{At: at, Fault: f, Key: key, Path: fmt.Sprintf("faults[%d]", i)})
	}
	return out
}

// targetsOf lists the selectors the generator aims faults at.
func targetsOf(s *scenarios.Scenario) []string {
	t := []string{"random-broker", "active-controller"}
	if len(s.Topics) > 0 {
		t = append(t, "leader("+s.Topics[0].Name+"-0)")
	}
	for i := 1; i <= s.Cluster.Brokers; i++ {
		t = append(t, fmt.Sprintf("broker-%d", i))
	}
	for i := 1; i <= s.Cluster.Controllers; i++ {
		t = append(t, fmt.Sprintf("controller-%d", i))
	}
	return t
}
