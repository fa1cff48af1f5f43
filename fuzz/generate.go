// Package fuzz searches for fault schedules and configurations that break a
// guarantee: it draws whole scenarios from seeds (swarm style: per seed,
// some fault kinds are off and the rest get very different rates), runs
// them, and shrinks every failure to a small scenario file that `kafkasim
// run` replays to the same failure.
package fuzz

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"kafkasim/model/cluster"
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
	// oneBatchFetchRateMax bounds the records per second of all producers
	// together when followers fetch one batch at a time.
	oneBatchFetchRateMax = 60
)

// faultKinds the generator draws from; swarm testing switches some off per
// seed.
var faultKinds = []string{"crash", "kill", "shutdown", "pause", "partition", "isolate", "power-loss", "disconnect", "slow-network", "stall", "clock", "disk", "add-partitions"}

// stallMessages are the APIs a stall holds, by focus: any, the data
// plane's (replication, produce, ISR changes, broker liveness), or the
// quorum's.
var stallMessages = map[string][]string{
	// The transactions' APIs are left out too: seeds drew their stalls
	// from the others before transactions existed.
	"": withoutGroupAPIs(withoutNames(withoutNames(cluster.MessageNames, cluster.TxnMessageNames...), "ElectLeaders", "ElectLeadersResponse",
		"IncrementalAlterConfigs", "IncrementalAlterConfigsResponse",
		"AlterPartitionReassignments", "AlterPartitionReassignmentsResponse")),
	"data": {"AlterPartition", "AlterPartitionResponse", "Fetch(replica)", "FetchResponse", "Produce", "ProduceResponse",
		"OffsetsForLeaderEpoch", "OffsetsForLeaderEpochResponse", "BrokerHeartbeat", "BrokerRegistration", "Fetch(metadata)"},
	"quorum": {"Vote", "VoteResponse", "BeginQuorumEpoch", "BeginQuorumEpochResponse", "EndQuorumEpoch",
		"Fetch(metadata)", "FetchResponse(metadata)"},
}

// groupAPIs are the messages of consumer groups and their stores: a stall
// drawn for a scenario without groups holds none of them (it would hold
// nothing), and seeds drew their stalls from the other APIs before groups
// existed.
var groupAPIs = []string{"ConsumerGroupHeartbeat", "ConsumerGroupHeartbeatResponse", "FindCoordinator",
	"FindCoordinatorResponse", "Heartbeat", "HeartbeatResponse", "JoinGroup", "JoinGroupResponse", "LeaveGroup",
	"LeaveGroupResponse", "OffsetCommit", "OffsetCommitResponse", "OffsetFetch", "OffsetFetchResponse", "StoreApply",
	"StoreApplyResponse", "SyncGroup", "SyncGroupResponse"}

// withoutNames drops names from a message list: ElectLeaders and
// IncrementalAlterConfigs and AlterPartitionReassignments came after the
// seeds drew their stalls, and only the admin faults that send them do
// (elect-leaders, alter-config, reassign), which the generator draws from
// streams of their own.
func withoutNames(names []string, drop ...string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(drop, n) {
			out = append(out, n)
		}
	}
	return out
}

func withoutGroupAPIs(names []string) []string {
	var out []string
	for _, n := range names {
		if !slices.Contains(groupAPIs, n) {
			out = append(out, n)
		}
	}
	return out
}

// Generate draws a scenario from a seed. With a base, the cluster, topics
// and clients are the base's and only the seed and the fault schedule are
// drawn; bugs are switched on as given.
func Generate(seed uint64, base *scenarios.Scenario, bugs []string) (*scenarios.Scenario, error) {
	return GenerateWithGroups(seed, base, bugs, groupPercent)
}

// GenerateWithGroups is Generate with consumer groups drawn for
// groupPercent of the seeds (0..100; Generate's share is groupPercent).
func GenerateWithGroups(seed uint64, base *scenarios.Scenario, bugs []string, groupPercent int) (*scenarios.Scenario, error) {
	return GenerateMix(seed, base, bugs, groupPercent, processorPercent)
}

// GenerateMix is GenerateWithGroups with a stream processor (and faults on
// it) drawn for processorPercent of the seeds too.
func GenerateMix(seed uint64, base *scenarios.Scenario, bugs []string, groupPercent, processorPercent int) (*scenarios.Scenario, error) {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	// The seed's focus: faults anywhere, or mostly on the data plane
	// (partition leaders and their followers), or on the quorum.
	focus := []string{"", "", "", "data", "data", "quorum"}[rng.IntN(6)]
	// Some seeds play a whole fault story instead (see stories). A stream
	// of its own decides which, so that the other seeds draw exactly what
	// they drew before the stories existed.
	if story := drawStory(rand.New(rand.NewPCG(seed, 0x2545f4914f6cdd1d))); story != "" {
		focus = story
	}
	// Consumer groups too come from a stream of their own (see groups).
	grng := rand.New(rand.NewPCG(seed, groupStream))
	var s *scenarios.Scenario
	var trng *rand.Rand
	if base != nil {
		c := *base
		c.Faults = nil
		// The fuzzer's property (no violation, the cluster heals) is what a
		// counterexample breaks: the base's own expectations (a teaching
		// scenario's "poll-skip: >0") are not carried over.
		c.Expect = nil
		c.Name = base.Name + "-fuzz-" + strconv.FormatUint(seed, 10)
		s = &c
	} else {
		s = drawCluster(rng, seed, focus)
		switch focus {
		case "replace":
			fitReplace(rng, s)
		case "elections":
			fitElections(rng, s)
		}
		// Transactions come from a stream of their own (see
		// transactions), before the groups, which keep up with them.
		trng = rand.New(rand.NewPCG(seed, txnStream))
		drawTxnClients(trng, s)
		if grng.IntN(100) < groupPercent {
			drawGroups(grng, s)
		}
	}
	// Around a base too small for the story, the seed keeps a focus.
	if focus == "replace" && (len(s.Topics) == 0 || s.Cluster.Brokers < 2 || s.Topics[0].ReplicationFactor < 2) {
		focus = "data"
	}
	if focus == "elections" && s.Cluster.Controllers < 3 {
		focus = "quorum"
	}
	s.Seed = seed
	if base == nil {
		s.Description = "Drawn by kafkasim fuzz, focus: " + map[string]string{"": "faults anywhere"}[focus] + focus + "."
	}
	s.Bugs = append([]string{}, bugs...)
	switch focus {
	case "replace":
		s.Faults = drawReplaceStory(rng, s)
	case "elections":
		s.Faults = drawElectionsStory(rng, s)
	default:
		s.Faults = drawFaults(rng, s, focus)
	}
	// Before the member faults: a seed's elections do not depend on
	// whether it drew groups.
	s.Faults = withAlterConfigs(rand.New(rand.NewPCG(seed, alterConfigStream)), s, s.Faults)
	// Reassignments first: taking a seed's elections away leaves its
	// reassignments as they were.
	s.Faults = withReassignments(rand.New(rand.NewPCG(seed, reassignStream)), s, s.Faults)
	s.Faults = withElections(rand.New(rand.NewPCG(seed, electionStream)), s, s.Faults, base == nil)
	if len(s.Groups()) > 0 {
		s.Faults = withMemberFaults(grng, s, s.Faults)
	}
	if trng != nil {
		// Last: a seed with transactions draws every other fault as before.
		s.Faults = withTxnFaults(trng, s, s.Faults)
	}
	if base == nil {
		// After everything else: see processors.
		withProcessor(rand.New(rand.NewPCG(seed, processorStream)), s, processorPercent)
	}
	return scenarios.Normalize(s)
}

func drawCluster(rng *rand.Rand, seed uint64, focus string) *scenarios.Scenario {
	s := scenarios.New("fuzz-" + strconv.FormatUint(seed, 10))
	s.Duration = durationMin + time.Duration(rng.Int64N(int64(durationMax-durationMin)))/time.Second*time.Second
	s.Settle = 40 * time.Second
	s.Cluster.Controllers = []int{1, 3, 3, 5}[rng.IntN(4)]
	if focus == "quorum" {
		// Faults at the quorum: five voters (room for minorities of two)
		// more often than three.
		s.Cluster.Controllers = []int{3, 5, 5}[rng.IntN(3)]
	}
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
	oneBatchFetch := rng.IntN(6) == 0
	if oneBatchFetch {
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
	// Now and then the log forgets: retention deletes old segments, or
	// the cleaner compacts them (or both). Segments must roll for either to
	// act within a run: the smallest segments Kafka allows, values padded
	// to a kilobyte, and the cleaner and retention checked every second.
	policy := []string{"", "", "", "", "", "", "delete", "compact", "compact,delete"}[rng.IntN(9)]
	if policy != "" {
		set(&t.Config, "cleanup.policy", policy)
		set(&t.Config, "segment.bytes", strconv.Itoa(1<<20))
		if policy != "compact" {
			set(&t.Config, "retention.ms", strconv.Itoa(5000+1000*rng.IntN(16)))
		}
		set(b, "log.retention.check.interval.ms", "1000")
	}
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
		if policy != "" {
			// A kilobyte a record rolls a 1 MiB segment every few seconds
			// at these rates; a compacted topic refuses records without a
			// key.
			p.Payload = strings.Repeat("x", 1000)
			if strings.HasPrefix(policy, "compact") && p.Keys == 0 {
				p.Keys = 1 + rng.IntN(30)
			}
		}
		s.Producers = append(s.Producers, p)
	}
	if oneBatchFetch {
		// A follower fetching one batch per round trip copies a hundred or
		// two batches a second: the producers must not write faster than
		// that (each record may be its own batch), or the followers never
		// catch up and no write with acks=all is possible after the heal.
		total := 0.0
		for _, p := range s.Producers {
			total += p.Rate * float64(p.Count)
		}
		for i := range s.Producers {
			if total > oneBatchFetchRateMax {
				s.Producers[i].Rate = math.Floor(s.Producers[i].Rate * oneBatchFetchRateMax / total)
			}
		}
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
// Besides the kinds, the seed switches on and weighs other axes of the
// schedule (see plan): which nodes faults aim at, which shapes partitions
// take, how long faults last, how slow a slow network is, and whether faults
// come one by one or in bursts.
func drawFaults(rng *rand.Rand, s *scenarios.Scenario, focus string) []scenarios.ScheduledFault {
	pl := drawPlan(rng, s, focus)
	n := rng.IntN(faultsMax + 1)
	if pl.focus != "" {
		n = faultsMax/2 + rng.IntN(faultsMax/2+1)
	}
	var out, last []scenarios.ScheduledFault
	for len(out) < n {
		var group []scenarios.ScheduledFault
		switch {
		case last != nil && rng.IntN(100) < pl.repeat:
			// The same fault again on the same selector, soon after: a
			// second fail-over of whatever leads now, a second disk
			// replacement.
			shift := time.Duration(300+rng.IntN(pl.gapMax)) * time.Millisecond
			for _, f := range last {
				f.At += shift
				group = append(group, f)
			}
		case len(out) > 0 && rng.IntN(100) < pl.follow:
			// A fault inside or right after an earlier one: a fail-over
			// while replication is cut, a disk replaced while the leader
			// cannot reach the controllers, a second quorum split while
			// a voter is slow.
			a := out[len(out)-1-rng.IntN(min(len(out), 3))]
			at := a.At + time.Duration(rng.Int64N(int64(a.Fault.For+time.Duration(pl.gapMax)*time.Millisecond)))/time.Millisecond*time.Millisecond
			group = drawFault(rng, pl, s, at)
			if t := nodeOf(a.Fault); t != "" && rng.IntN(2) == 0 {
				// Faults cluster on a failing machine: this one hits
				// the same node.
				group = retarget(group, t)
			}
		default:
			at := time.Duration(rng.Int64N(int64(s.Duration-time.Second))) / time.Millisecond * time.Millisecond
			group = drawFault(rng, pl, s, at)
		}
		last = group
		for _, f := range group {
			if len(out) < n {
				f.At = min(f.At, s.Duration-time.Second)
				f.Path = fmt.Sprintf("faults[%d]", len(out))
				out = append(out, f)
			}
		}
	}
	return out
}

// nodeOf is the selector a fault hits: its target, or a partition's first
// group when that is one selector.
func nodeOf(f sim.Fault) string {
	if f.Kind == sim.FaultPartition {
		if len(f.Groups[0]) == 1 && f.Groups[0][0] != "rest" && !strings.HasPrefix(f.Groups[0][0], "role(") {
			return f.Groups[0][0]
		}
		return ""
	}
	return f.Target
}

// retarget aims a drawn fault group at t instead; a partition cuts t off
// in the shape drawn.
func retarget(group []scenarios.ScheduledFault, t string) []scenarios.ScheduledFault {
	if len(group) > 1 && !strings.HasPrefix(t, "broker-") {
		return group // a disk replacement stays on its broker
	}
	for i := range group {
		f := &group[i].Fault
		switch {
		case f.Kind == sim.FaultCustom:
			// An admin operation has no node to aim at.
		case f.Kind == sim.FaultPartition:
			if len(f.Groups[0]) == 1 && !strings.HasPrefix(f.Groups[0][0], "controller-") {
				f.Groups = [][]string{{t}, f.Groups[1]}
			}
		case strings.HasPrefix(f.Target, "rack("):
		case f.Kind == sim.FaultDisk:
			// Disk faults stay on brokers, and a replacement's two faults
			// on one broker by name.
			if strings.HasPrefix(t, "broker-") {
				f.Target = t
			}
		default:
			f.Target = t
		}
	}
	return group
}

// plan is a seed's choice on every axis of the schedule.
type plan struct {
	// focus is "" (faults anywhere), "data" (partition leaders and their
	// followers: fast fail-overs, replication cut off, disks replaced) or
	// "quorum" (the controllers: the quorum split, slow voters).
	focus          string
	kinds          []string
	weights        []int
	targets        targetSet
	shapes         []string
	shapeWeights   []int
	downMax        int // ms
	latencyMax     int // ms
	follow, repeat int // percent
	gapMax         int // ms
	oneWayPercent  int
}

func drawPlan(rng *rand.Rand, s *scenarios.Scenario, focus string) plan {
	pl := plan{focus: focus}
	if focus == "" {
		// Faults anywhere: every selector equally likely, partitions cut
		// one node from the rest, faults at independent times.
		pl.kinds, pl.weights = swarm(rng, faultKinds)
		if len(pl.kinds) == 0 {
			pl.kinds, pl.weights = []string{"crash"}, []int{1}
		}
		pl.targets = targetSet{classes: [][]string{targetsOf(s)}, weights: []int{1}}
		pl.shapes, pl.shapeWeights = []string{"isolate"}, []int{1}
		pl.downMax, pl.latencyMax, pl.gapMax, pl.oneWayPercent = 15000, 500, 1000, 33
		return pl
	}
	pl.kinds, pl.weights = swarm(rng, append(slices.Clone(faultKinds), "failovers"))
	pl.shapes, pl.shapeWeights = swarm(rng, partitionShapes)
	pl.targets = drawTargets(rng, s, pl.focus)
	// How long faults last: up to 15 s, or (in some seeds) short blips.
	pl.downMax = []int{15000, 15000, 4000}[rng.IntN(3)]
	// How slow a slow network is: a congested LAN, or (in some seeds) a
	// link that takes seconds.
	pl.latencyMax = []int{500, 500, 3000}[rng.IntN(3)]
	// The chance that a fault falls inside (or right after) one of the
	// last faults, and that it repeats the last fault.
	pl.follow = []int{0, 0, 40, 70}[rng.IntN(4)]
	pl.repeat = []int{0, 0, 15, 30}[rng.IntN(4)]
	pl.gapMax = []int{1000, 3000}[rng.IntN(2)]
	pl.oneWayPercent = 33
	switch pl.focus {
	case "data":
		pl.kinds, pl.weights = focusKinds(rng, pl.kinds, pl.weights, "shutdown", "partition", "disk", "crash", "kill", "failovers", "stall")
		pl.shapes, pl.shapeWeights = focusKinds(rng, pl.shapes, pl.shapeWeights, "from-brokers", "from-controllers")
		pl.shapeWeights[slices.Index(pl.shapes, "from-brokers")] += 8
		pl.follow = []int{40, 70}[rng.IntN(2)]
		pl.repeat = []int{15, 30}[rng.IntN(2)]
	case "quorum":
		pl.kinds, pl.weights = focusKinds(rng, pl.kinds, pl.weights, "partition", "slow-network", "shutdown", "crash", "stall")
		pl.shapes, pl.shapeWeights = []string{"quorum", "from-controllers"}, []int{3, 1}
		pl.latencyMax = []int{1000, 3000}[rng.IntN(2)]
		pl.downMax = []int{4000, 15000}[rng.IntN(2)]
		pl.follow = []int{40, 70}[rng.IntN(2)]
	}
	if len(pl.kinds) == 0 {
		pl.kinds, pl.weights = []string{"crash"}, []int{1}
	}
	if len(pl.shapes) == 0 {
		pl.shapes, pl.shapeWeights = []string{"isolate"}, []int{1}
	}
	return pl
}

// focusKinds keeps the options drawn and makes sure each of the focus
// options is on, with a heavy weight.
func focusKinds(rng *rand.Rand, on []string, weights []int, focus ...string) ([]string, []int) {
	on, weights = slices.Clone(on), slices.Clone(weights)
	for _, k := range focus {
		w := 4 + rng.IntN(8)
		if i := slices.Index(on, k); i >= 0 {
			weights[i] = w
		} else {
			on, weights = append(on, k), append(weights, w)
		}
	}
	return on, weights
}

// drawFault draws one fault of the plan at at (a disk replacement is two:
// a clean shutdown and the wipe while the broker is down).
func drawFault(rng *rand.Rand, pl plan, s *scenarios.Scenario, at time.Duration) []scenarios.ScheduledFault {
	kind := pl.kinds[pick(rng, pl.weights)]
	if kind == "failovers" {
		// Fast fail-overs: the leader of a partition stops, and whichever
		// replica leads next stops too, soon after.
		k := []string{"shutdown", "shutdown", "kill", "crash"}[rng.IntN(4)]
		target := "random-broker"
		if len(s.Topics) > 0 {
			target = "leader(" + s.Topics[0].Name + "-0)"
		}
		var out []scenarios.ScheduledFault
		for range 2 + rng.IntN(2) {
			f := sim.Fault{Kind: sim.FaultKind(k), Target: target, For: time.Duration(100+rng.IntN(pl.downMax)) * time.Millisecond}
			out = append(out, scenarios.ScheduledFault{At: at, Fault: f, Key: k})
			// A shutdown moves leadership at once, a crash after the
			// broker session times out (9 s).
			at += time.Duration(500+rng.IntN(10000)) * time.Millisecond
		}
		return out
	}
	if kind == "add-partitions" {
		// An operator grows the topic (keys move to other partitions). A
		// count not above the topic's by then is refused and logged.
		t := s.Topics[0]
		op := cluster.AddPartitions{Topic: t.Name, Count: t.Partitions + 1 + rng.IntN(2)}
		return []scenarios.ScheduledFault{{At: at, Fault: sim.Fault{Kind: sim.FaultCustom, Custom: op}, Key: "add-partitions"}}
	}
	f := sim.Fault{Target: pl.targets.draw(rng)}
	down := time.Duration(100+rng.IntN(pl.downMax)) * time.Millisecond
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
		f.Groups = drawShape(rng, pl.shapes[pick(rng, pl.shapeWeights)], s, pl.targets)
		if rng.IntN(100) < pl.oneWayPercent {
			f.OneWay = true
		}
	case "isolate":
		f.Kind, f.For = sim.FaultIsolate, down
	case "disconnect":
		f.Kind = sim.FaultDisconnect
	case "slow-network":
		f.Kind, f.For, f.Latency = sim.FaultSlowNetwork, down, time.Duration(10+rng.IntN(pl.latencyMax))*time.Millisecond
	case "stall":
		// One or two APIs the target holds back (a blocked channel,
		// a request queue not drained) while the rest of its traffic
		// flows.
		pool := stallMessages[pl.focus]
		f.Kind, f.For = sim.FaultStall, down
		for range 1 + rng.IntN(2) {
			if m := pool[rng.IntN(len(pool))]; !slices.Contains(f.Messages, m) {
				f.Messages = append(f.Messages, m)
			}
		}
	case "disk":
		// Brokers only: a controller whose disk is replaced refuses to
		// start until it is formatted again, as in Kafka.
		f.Target = pl.targets.drawBroker(rng, s)
		f.Kind, f.For = sim.FaultDisk, down
		switch rng.IntN(4) {
		case 0:
			// A disk replacement: a clean shutdown, a new empty disk,
			// a restart after down.
			if !strings.HasPrefix(f.Target, "broker-") {
				// The wipe must hit the broker that was shut down,
				// not whichever leads by then.
				f.Target = fmt.Sprintf("broker-%d", 1+rng.IntN(s.Cluster.Brokers))
			}
			sd := sim.Fault{Kind: sim.FaultShutdown, Target: f.Target, For: down}
			f.Disk, f.For = sim.DiskWipe, 0
			return []scenarios.ScheduledFault{{At: at, Fault: sd, Key: "shutdown"},
				{At: at + down/2/time.Millisecond*time.Millisecond, Fault: f, Key: "disk"}}
		case 1:
			// The machine loses power and comes back with an empty disk.
			f.Disk = sim.DiskWipe
		case 2:
			f.Disk = sim.DiskTornWrite
		default:
			f.Disk, f.For = sim.DiskCorrupt, 0
		}
	case "clock":
		f.Kind, f.For = sim.FaultClock, down
		f.ClockJump = time.Duration(rng.IntN(20000)-10000) * time.Millisecond
		f.DriftPPM = int64(rng.IntN(2000) - 500)
	}
	return []scenarios.ScheduledFault{{At: at, Fault: f, Key: kind}}
}

// swarm switches each option on with probability 1/2 and gives those on a
// weight of 1 to 8.
func swarm(rng *rand.Rand, options []string) ([]string, []int) {
	var on []string
	var weights []int
	for _, o := range options {
		if rng.IntN(2) == 0 {
			on = append(on, o)
			weights = append(weights, 1+rng.IntN(8))
		}
	}
	return on, weights
}

// pick draws an index with the given weights.
func pick(rng *rand.Rand, weights []int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	x := rng.IntN(total)
	k := 0
	for x >= weights[k] {
		x -= weights[k]
		k++
	}
	return k
}

// partitionShapes are the forms a drawn partition takes: "isolate" cuts one
// node from every other node; "from-brokers" cuts a node from the brokers
// only (a replication network down: it still reaches the controllers and the
// clients); "from-controllers" cuts a node from the controller quorum only
// (brokers stay registered until their session times out); "quorum" splits
// the controllers in two, brokers and clients untouched.
var partitionShapes = []string{"isolate", "from-brokers", "from-controllers", "quorum"}

func drawShape(rng *rand.Rand, shape string, s *scenarios.Scenario, targets targetSet) [][]string {
	switch shape {
	case "from-brokers":
		return [][]string{{targets.draw(rng)}, {"role(broker)"}}
	case "from-controllers":
		return [][]string{{targets.draw(rng)}, {"role(controller)"}}
	case "quorum":
		if s.Cluster.Controllers < 2 {
			break
		}
		names := make([]string, s.Cluster.Controllers)
		for i := range names {
			names[i] = fmt.Sprintf("controller-%d", i+1)
		}
		rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
		half := 1 + rng.IntN(len(names)-1)
		return [][]string{names[:half], names[half:]}
	}
	return [][]string{{targets.draw(rng)}, {"rest"}}
}

// targetSet is the selectors faults aim at, in classes with per-seed weights.
type targetSet struct {
	classes [][]string
	weights []int
}

func (t targetSet) draw(rng *rand.Rand) string {
	c := t.classes[pick(rng, t.weights)]
	return c[rng.IntN(len(c))]
}

// drawTargets weighs the classes of targets for a focused seed: the
// partition leader, the active controller, any broker, any controller. The
// data plane's faults aim at leaders and brokers, the quorum's mostly at
// controllers.
func drawTargets(rng *rand.Rand, s *scenarios.Scenario, focus string) targetSet {
	all := targetsOf(s)
	var leaders, brokers, controllers []string
	for _, x := range all {
		switch {
		case x == "active-controller":
		case strings.HasPrefix(x, "leader("):
			leaders = append(leaders, x)
		case x == "random-broker" || strings.HasPrefix(x, "broker-"):
			brokers = append(brokers, x)
		default:
			controllers = append(controllers, x)
		}
	}
	w := [4]int{1 + rng.IntN(4), 1 + rng.IntN(4), 1 + rng.IntN(4), 1 + rng.IntN(4)}
	switch {
	case focus == "data":
		w[1], w[3] = 0, 0
		w[0] += 2
	case focus == "quorum":
		w[0], w[2] = 0, 1
		w[1] += 2
		w[3] += 4
	}
	var t targetSet
	for i, class := range [][]string{leaders, {"active-controller"}, brokers, controllers} {
		if len(class) > 0 && w[i] > 0 {
			t.classes = append(t.classes, class)
			t.weights = append(t.weights, w[i])
		}
	}
	if len(t.classes) == 0 {
		return targetSet{classes: [][]string{all}, weights: []int{1}}
	}
	return t
}

// drawBroker draws a broker target: a broker selector of the set if it has
// one, else any broker by name.
func (t targetSet) drawBroker(rng *rand.Rand, s *scenarios.Scenario) string {
	if x := t.draw(rng); strings.HasPrefix(x, "broker-") || strings.HasPrefix(x, "leader(") {
		return x
	}
	return fmt.Sprintf("broker-%d", 1+rng.IntN(s.Cluster.Brokers))
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
