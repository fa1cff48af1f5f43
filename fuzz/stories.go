package fuzz

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"kafkasim/scenarios"
	"kafkasim/sim"
)

// Stories are fault schedules with a plot: several faults on the nodes of
// one partition, timed against each other and against the cluster's own
// timeouts (replica.lag.time.max.ms, the broker session), as an operator's
// bad day strings them together. A swarm schedule of independent faults
// almost never lines up three or four of them in the order and within the
// windows such a plot needs. A story names its nodes as a scenario file
// does (a broker by name, leader(orders-0)), so its counterexamples replay,
// and it never looks at which bugs are switched on.

// storyPercent is the share of seeds, per story, that play it.
var storyPercent = map[string]int{"replace": 8, "elections": 10}

// stories in the order their shares are laid out (a story added later goes
// last, so that the seeds of the earlier ones still play them).
var stories = []string{"replace", "elections"}

func drawStory(rng *rand.Rand) string {
	x := rng.IntN(100)
	for _, st := range stories {
		if x < storyPercent[st] {
			return st
		}
		x -= storyPercent[st]
	}
	return ""
}

// fitReplace shapes a drawn cluster for the replacement story: a topic
// replicated three ways with its replicas placed by the scenario (so the
// story can name a follower of orders-0), a lag timeout short enough that a
// follower falls out of the ISR within the run, and acks=all writes.
func fitReplace(rng *rand.Rand, s *scenarios.Scenario) {
	set(&s.Cluster.Broker, "replica.lag.time.max.ms", strconv.Itoa([]int{5000, 10000}[rng.IntN(2)]))
	// A follower notices a dead link within a second or two (Kafka's
	// default, 30 s, would keep it from fetching long after the link is
	// back, and the story's timing is against the link).
	set(&s.Cluster.Broker, "replica.socket.timeout.ms", strconv.Itoa([]int{1000, 2000}[rng.IntN(2)]))
	s.Duration = 35*time.Second + time.Duration(rng.IntN(11))*time.Second
	t := &s.Topics[0]
	t.ReplicationFactor = min(3, s.Cluster.Brokers)
	brokers := make([]int32, s.Cluster.Brokers)
	for i := range brokers {
		brokers[i] = int32(i + 1)
	}
	rng.Shuffle(len(brokers), func(i, j int) { brokers[i], brokers[j] = brokers[j], brokers[i] })
	t.Assignment = make([][]int32, t.Partitions)
	for i := range t.Assignment {
		for r := range t.ReplicationFactor {
			t.Assignment[i] = append(t.Assignment[i], brokers[(i+r)%len(brokers)])
		}
	}
	set(&t.Config, "min.insync.replicas", strconv.Itoa(1+rng.IntN(2)))
	for i := range s.Producers {
		s.Producers[i].Stop = s.Duration
	}
	p := &s.Producers[0]
	set(&p.Config, "acks", "all")
}

// msOf reads a duration config the way scenario files write it (a number of
// milliseconds or a Go duration), or def.
func msOf(c scenarios.Config, key string, def time.Duration) time.Duration {
	v := c.Get(key)
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Duration(n) * time.Millisecond
	}
	if d, err := time.ParseDuration(v); err == nil {
		return d
	}
	return def
}

// between draws a duration in [lo, hi), to the millisecond.
func between(rng *rand.Rand, lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	return (lo + time.Duration(rng.Int64N(int64(hi-lo)))) / time.Millisecond * time.Millisecond
}

// drawReplaceStory: a follower of orders-0 loses its replication link long
// enough to drop out of the ISR; just before the link comes back, the
// leader's ISR changes stop reaching the controllers (its AlterPartition
// requests stall, or its link to the quorum is cut for less than a session),
// so the request adding the follower back waits; meanwhile the follower's
// disk is replaced (a clean shutdown, a wipe, a restart that registers it
// again) and it comes back behind (cut from the other brokers again, or just
// slow to copy). When the leader's request finally lands it names the broker
// epoch the follower had before the replacement. Then, sometimes, the leader
// moves on. The rest of the schedule is a few data-plane faults.
func drawReplaceStory(rng *rand.Rand, s *scenarios.Scenario) []scenarios.ScheduledFault {
	topic := s.Topics[0].Name
	leader := "leader(" + topic + "-0)"
	follower := fmt.Sprintf("broker-%d", 1+rng.IntN(s.Cluster.Brokers))
	if a := s.Topics[0].Assignment; len(a) > 0 && len(a[0]) > 1 {
		follower = fmt.Sprintf("broker-%d", a[0][1+rng.IntN(len(a[0])-1)])
	}
	lag := msOf(s.Cluster.Broker, "replica.lag.time.max.ms", 30*time.Second)
	session := msOf(s.Cluster.Broker, "broker.session.timeout.ms", 9*time.Second)
	var out []scenarios.ScheduledFault
	add := func(at time.Duration, key string, f sim.Fault) {
		out = append(out, scenarios.ScheduledFault{At: at / time.Millisecond * time.Millisecond, Fault: f, Key: key})
	}
	cut := func(at, d time.Duration, node string) {
		groups := [][]string{{node}, {"role(broker)"}}
		if rng.IntN(3) == 0 {
			groups = [][]string{{node}, {leader}}
		}
		add(at, "partition", sim.Fault{Kind: sim.FaultPartition, Groups: groups, For: d})
	}
	// 1. The follower lags: the ISR shrinks within 1.5 lag timeouts.
	t0 := between(rng, time.Second, 4*time.Second)
	d1 := lag*3/2 + between(rng, 300*time.Millisecond, 3*time.Second)
	cut(t0, d1, follower)
	heal := t0 + d1
	// 2. The leader's ISR changes stop shortly before the follower is back.
	hold := heal - between(rng, 100*time.Millisecond, 1500*time.Millisecond)
	// 3. The disk replacement while they are held.
	down := between(rng, 300*time.Millisecond, 2500*time.Millisecond)
	// The follower is back within a socket timeout of the heal.
	socket := msOf(s.Cluster.Broker, "replica.socket.timeout.ms", 30*time.Second)
	stop := heal + socket + between(rng, 200*time.Millisecond, 1500*time.Millisecond)
	restart := stop + down
	release := restart + between(rng, 2*time.Second, 6*time.Second)
	if rng.IntN(4) == 0 && release-hold < session-time.Second {
		// The leader cut from the controllers (shorter than its session,
		// so it stays registered).
		add(hold, "partition", sim.Fault{Kind: sim.FaultPartition, Groups: [][]string{{leader}, {"role(controller)"}}, For: release - hold})
	} else {
		msgs := []string{"AlterPartition"}
		if rng.IntN(3) == 0 {
			msgs = append(msgs, []string{"Produce", "FetchResponse", "OffsetsForLeaderEpoch"}[rng.IntN(3)])
		}
		add(hold, "stall", sim.Fault{Kind: sim.FaultStall, Target: leader, Messages: msgs, For: release - hold})
	}
	add(stop, "shutdown", sim.Fault{Kind: sim.FaultShutdown, Target: follower, For: down})
	add(stop+down/2, "disk", sim.Fault{Kind: sim.FaultDisk, Target: follower, Disk: sim.DiskWipe})
	// 4. The follower comes back behind: cut from the brokers again until
	// after the request lands (or, in some seeds, left to copy).
	if rng.IntN(5) > 0 {
		cut(restart-between(rng, 0, down), release-restart+between(rng, 500*time.Millisecond, 8*time.Second), follower)
	}
	// 5. Sometimes the leader moves on afterwards.
	if rng.IntN(2) == 0 {
		k := []string{"shutdown", "shutdown", "kill", "crash"}[rng.IntN(4)]
		add(release+between(rng, 200*time.Millisecond, 3*time.Second), k,
			sim.Fault{Kind: sim.FaultKind(k), Target: leader, For: between(rng, 500*time.Millisecond, 10*time.Second)})
	}
	// A few unrelated data-plane faults around it.
	return withDataFaults(rng, s, out, 0)
}

// fitElections shapes a drawn cluster for the elections story: five voters
// (room for a minority of two on either side of a split) and a run long
// enough for several elections and the healing after them.
func fitElections(rng *rand.Rand, s *scenarios.Scenario) {
	s.Cluster.Controllers = 5
	s.Duration = 35*time.Second + time.Duration(rng.IntN(11))*time.Second
	for i := range s.Producers {
		s.Producers[i].Stop = s.Duration
	}
}

// drawElectionsStory: the controllers' network flaps while the quorum
// elects. The active controller is cut from the other controllers,
// together with another voter, for a few seconds; then each of the
// next two or three KRaft leaders the quorum elects is hit the moment it
// takes office (after-elections: the fault fires right after the election,
// before the new leader's first messages arrive): cut off from the other
// controllers, its links to some voters cut one way (its requests and
// answers to them lost, theirs to it delivered), its links slowed, or the
// process stopped. A schedule of times cannot aim at "the leader elected
// next": elections take a random election timeout or two, and a new leader's
// first fetches reach its voters within milliseconds. The faults last a few
// seconds each; one to three unrelated data-plane faults fall around them.
func drawElectionsStory(rng *rand.Rand, s *scenarios.Scenario) []scenarios.ScheduledFault {
	n := s.Cluster.Controllers
	ctl := func(i int) string { return fmt.Sprintf("controller-%d", i+1) }
	var out []scenarios.ScheduledFault
	add := func(at time.Duration, elections int, key string, f sim.Fault) {
		out = append(out, scenarios.ScheduledFault{At: at / time.Millisecond * time.Millisecond, AfterElections: elections, Fault: f, Key: key})
	}
	ms := func(d time.Duration) time.Duration { return d / time.Millisecond * time.Millisecond }
	// 1. The active controller cut off with another voter (drawn by name:
	// now and then the active controller itself, which is then alone).
	t0 := between(rng, 3*time.Second, 8*time.Second)
	side := []string{"active-controller", ctl(rng.IntN(n))}
	add(t0, 0, "partition", sim.Fault{Kind: sim.FaultPartition, Groups: [][]string{side, {"role(controller)"}}, For: between(rng, 3*time.Second, 8*time.Second)})
	// 2. The next leaders, each hit as it takes office.
	steps := 2 + rng.IntN(2)
	for k := 1; k <= steps; k++ {
		d := ms(between(rng, 4*time.Second, 15*time.Second))
		// The first leader is mostly cut off entirely, the later ones
		// mostly one way.
		x := rng.IntN(8)
		switch {
		case k == 1 && x < 7 || k > 1 && x == 6:
			add(t0, k, "partition", sim.Fault{Kind: sim.FaultPartition, Groups: [][]string{{"active-controller"}, {"role(controller)"}}, For: d})
		case k == 1 || x < 6:
			// One way: the new leader's messages to n-1 voters named at
			// random (itself among them, now and then, which leaves it
			// fewer) are lost; theirs reach it.
			names := make([]string, n-1)
			for i, j := range rng.Perm(n)[:n-1] {
				names[i] = ctl(j)
			}
			add(t0, k, "partition", sim.Fault{Kind: sim.FaultPartition, Groups: [][]string{{"active-controller"}, names}, OneWay: true, For: d})
		case rng.IntN(2) == 0:
			add(t0, k, "slow-network", sim.Fault{Kind: sim.FaultSlowNetwork, Target: "active-controller",
				Latency: ms(between(rng, 100*time.Millisecond, time.Second)), For: d})
		default:
			kind := []string{"shutdown", "kill", "crash"}[rng.IntN(3)]
			add(t0, k, kind, sim.Fault{Kind: sim.FaultKind(kind), Target: "active-controller", For: d})
		}
	}
	// A few unrelated data-plane faults around it.
	return withDataFaults(rng, s, out, 1)
}

// withDataFaults adds least to least+2 draws of data-plane swarm faults to
// a story's faults, at random times of the run, and puts them all in
// order, each before the fault phase ends and named by its place in the
// list.
func withDataFaults(rng *rand.Rand, s *scenarios.Scenario, out []scenarios.ScheduledFault, least int) []scenarios.ScheduledFault {
	pl := drawPlan(rng, s, "data")
	for range least + rng.IntN(3) {
		at := time.Duration(rng.Int64N(int64(s.Duration-time.Second))) / time.Millisecond * time.Millisecond
		out = append(out, drawFault(rng, pl, s, at)...)
	}
	slices.SortStableFunc(out, func(a, b scenarios.ScheduledFault) int { return int(a.At - b.At) })
	for i := range out {
		out[i].At = min(out[i].At, s.Duration-time.Second)
		out[i].Path = fmt.Sprintf("faults[%d]", i)
	}
	return out
}
