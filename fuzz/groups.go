package fuzz

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"kafkasim/model/cluster"
	"kafkasim/scenarios"
	"kafkasim/sim"
)

// Consumer groups in drawn scenarios: one or two groups of 1-4 members
// beside (or instead of) the assign-mode readers, each with a drawn
// protocol, assignors, commit mode, worker pool, side effects and timeouts,
// and faults aimed at the members, the group's coordinator and its
// external store. A stream of its own decides and draws all of it, so that
// a seed without groups draws exactly what it drew before groups existed.

// groupPercent is the share of seeds that get consumer groups in
// Generate; a campaign takes its own (Options.GroupPercent, the fuzz
// command's --groups). It is 0 while the groups' fuzz failures that remain
// are triaged (docs/fuzzing.md): a campaign draws groups when asked.
var groupPercent = 0

// groupStream seeds the groups' stream (the second word of its PCG).
const groupStream = 0x6a09e667f3bcc909

// drawConsumerProtocol: whether groups are drawn on the KIP-848 consumer
// protocol too (a third of them).
var drawConsumerProtocol = true

// groupNames are the groups a seed may get, with the consumer entry that
// holds each one's members (nodes b-0.., b-store).
var groupNames = []struct{ group, entry string }{{"billing", "b"}, {"ledger", "l"}}

// classicAssignors are the partition.assignment.strategy lists drawn:
// each assignor alone, and Kafka's default pair (eager range first).
var classicAssignors = []string{"range", "roundrobin", "sticky", "cooperative-sticky", "range,cooperative-sticky"}

// memberFaultKinds are the faults aimed at a group, swarm style: each on
// with probability 1/2 and a weight of 1-8 per seed.
var memberFaultKinds = []string{"member-stop", "member-pause", "member-partition", "member-clock", "coordinator", "store"}

// Processing must keep up with the producers: a member that cannot drain
// the backlog before the run ends leaves lag that is no bug. One member
// may own every partition, so each member's pool processes at least
// capacityMargin times the producers' total rate.
const capacityMargin = 3

// drawGroups adds one or two consumer groups to a drawn scenario.
func drawGroups(rng *rand.Rand, s *scenarios.Scenario) {
	n := 1
	if rng.IntN(10) < 3 {
		n = 2
	}
	if rng.IntN(3) == 0 {
		s.Consumers = nil // groups instead of the assign-mode readers
	}
	for _, g := range groupNames[:n] {
		total := 0.0
		for _, p := range s.Producers {
			r := p.Rate * float64(p.Count)
			if p.Transactions != nil {
				r *= float64(p.Transactions.RecordsMax) // Rate counts transactions
			}
			total += r
		}
		s.Consumers = append(s.Consumers, drawGroup(rng, s, g.group, g.entry, total))
	}
}

// drawGroup draws one group's members.
func drawGroup(rng *rand.Rand, s *scenarios.Scenario, group, entry string, rate float64) scenarios.Consumer {
	c := s.NewGroupConsumer(entry, group, 1+rng.IntN(4), []string{s.Topics[0].Name})
	cfg := &c.Config
	// Kafka's default, latest, in a quarter of the groups: a member that
	// falls behind retention jumps to the end past records still in the
	// log, a cost the checker excuses from the log start final reads saw.
	if latest := rng.IntN(4) == 0; !latest {
		set(cfg, "auto.offset.reset", "earliest")
	}
	consumer := drawConsumerProtocol && rng.IntN(3) == 0
	session := time.Duration(6+rng.IntN(40)) * time.Second
	if consumer {
		set(cfg, "group.protocol", "consumer")
		for _, k := range []string{"partition.assignment.strategy", "session.timeout.ms", "heartbeat.interval.ms"} {
			unset(cfg, k) // the classic protocol's: Kafka's client refuses them
		}
		set(cfg, "group.remote.assignor", []string{"uniform", "range"}[rng.IntN(2)])
		// The consumer protocol's session and heartbeat are the brokers'
		// (one pair for every group); their bounds come down with them.
		b := &s.Cluster.Broker
		if !b.Explicit["group.consumer.session.timeout.ms"] {
			session := time.Duration(10+rng.IntN(36)) * time.Second
			hb := heartbeatFor(rng, session)
			set(b, "group.consumer.min.session.timeout.ms", strconv.FormatInt(session.Milliseconds(), 10))
			set(b, "group.consumer.session.timeout.ms", strconv.FormatInt(session.Milliseconds(), 10))
			set(b, "group.consumer.min.heartbeat.interval.ms", strconv.FormatInt(hb.Milliseconds(), 10))
			set(b, "group.consumer.heartbeat.interval.ms", strconv.FormatInt(hb.Milliseconds(), 10))
		}
	} else {
		set(cfg, "partition.assignment.strategy", classicAssignors[rng.IntN(len(classicAssignors))])
		set(cfg, "session.timeout.ms", strconv.FormatInt(session.Milliseconds(), 10))
		// Below a third of the session, as Kafka advises, so that a lost
		// heartbeat or two does not expire the member.
		set(cfg, "heartbeat.interval.ms", strconv.FormatInt(heartbeatFor(rng, session).Milliseconds(), 10))
	}
	c.Static = rng.IntN(3) == 0
	c.Commit = scenarios.CommitModes[rng.IntN(len(scenarios.CommitModes))]
	set(cfg, "enable.auto.commit", strconv.FormatBool(c.Commit == scenarios.CommitAuto))
	if c.Commit == scenarios.CommitAuto && rng.IntN(2) == 0 {
		set(cfg, "auto.commit.interval.ms", "1000")
	}
	c.Workers = 1
	if rng.IntN(5) < 2 {
		c.Workers = 2 + rng.IntN(7)
	}
	c.SideEffects = []string{"", "", "plain", "idempotent"}[rng.IntN(4)]
	if c.SideEffects != "" {
		// The store makes each write durable before it answers, one
		// fsync after another: it applies a few hundred writes a second
		// at most, whatever the workers. The producers slow down to what
		// it keeps up with.
		storeRate := 1 / (s.Cluster.Disk.FsyncLatency.Max + s.Cluster.Disk.WriteLatency.Max).Seconds()
		if limit := storeRate / capacityMargin; rate > limit {
			for i := range s.Producers {
				s.Producers[i].Rate = math.Max(1, math.Floor(s.Producers[i].Rate*limit/rate))
			}
			rate = limit
		}
	}
	records := []int{500, 500, 10, 50, 100}[rng.IntN(5)]
	if records != 500 {
		set(cfg, "max.poll.records", strconv.Itoa(records))
	}
	// Processing time: a mean the pool keeps up with, spread around it.
	// A record with a side effect also waits for the store's answer, a
	// round trip; enough workers overlap those waits.
	trip := 2 * s.Cluster.Network.Latency.Max
	if c.SideEffects != "" {
		c.Workers = max(c.Workers, int(capacityMargin*rate*(trip+time.Millisecond).Seconds())+1)
	}
	meanMax := time.Duration(float64(time.Second) * float64(c.Workers) / (capacityMargin * max(rate, 1)))
	if c.SideEffects != "" {
		meanMax -= trip
	}
	mean := time.Duration(float64(min(max(meanMax, 10*time.Microsecond), 20*time.Millisecond)) * (0.1 + 0.9*rng.Float64()))
	spread := []float64{0, 0.5, 0.9}[rng.IntN(3)]
	c.Processing = sim.Range{Min: micros(time.Duration(float64(mean) * (1 - spread))), Max: micros(time.Duration(float64(mean) * (1 + spread)))}
	c.Processing.Min = max(c.Processing.Min, time.Microsecond)
	c.Processing.Max = max(c.Processing.Max, c.Processing.Min)
	if rng.IntN(4) == 0 && c.SideEffects == "" {
		// A poll interval a few times the slowest full poll: processing
		// alone never exceeds it (every full poll would, in a rebalance
		// storm, which never converges), but a member slowed by a fault
		// does (its store cut off, its clock jumped): it leaves the
		// group and rejoins.
		batch := time.Duration(records) * c.Processing.Max / time.Duration(c.Workers)
		interval := max(batch*time.Duration(20+rng.IntN(21))/10, time.Second)
		set(cfg, "max.poll.interval.ms", strconv.FormatInt(interval.Milliseconds(), 10))
	}
	// Kafka's consumer sees new partitions of its topics at its next
	// metadata refresh (metadata.max.age.ms, 5 minutes by default): the
	// group rebalances onto partitions an operator added within the run.
	set(cfg, "metadata.max.age.ms", strconv.Itoa([]int{5000, 10000, 30000}[rng.IntN(3)]))
	return c
}

// heartbeatFor draws a heartbeat interval below a third of session, to the
// 100 ms.
func heartbeatFor(rng *rand.Rand, session time.Duration) time.Duration {
	hb := session / time.Duration(4+rng.IntN(7)) / (100 * time.Millisecond) * (100 * time.Millisecond)
	return max(hb, 500*time.Millisecond)
}

// unset removes a key from a config.
func unset(c *scenarios.Config, key string) {
	c.Keys = slices.DeleteFunc(c.Keys, func(k string) bool { return k == key })
	delete(c.Values, key)
	delete(c.Explicit, key)
}

func micros(d time.Duration) time.Duration { return d / time.Microsecond * time.Microsecond }

// sessionOf is the session timeout of a group member entry.
func sessionOf(s *scenarios.Scenario, c scenarios.Consumer) time.Duration {
	if c.Config.Get("group.protocol") == "consumer" {
		return msOf(s.Cluster.Broker, "group.consumer.session.timeout.ms", 45*time.Second)
	}
	return msOf(c.Config, "session.timeout.ms", 45*time.Second)
}

// withMemberFaults adds faults aimed at the scenario's groups (0-5, swarm
// style) to the drawn schedule, and puts it in order of time.
func withMemberFaults(rng *rand.Rand, s *scenarios.Scenario, faults []scenarios.ScheduledFault) []scenarios.ScheduledFault {
	var members []scenarios.Consumer
	for _, c := range s.Consumers {
		if c.Group != "" && c.Count > 0 {
			members = append(members, c)
		}
	}
	if len(members) == 0 {
		return faults
	}
	kinds, weights := swarm(rng, memberFaultKinds)
	if len(kinds) == 0 {
		kinds, weights = []string{"member-pause"}, []int{1}
	}
	out := slices.Clone(faults)
	for range rng.IntN(6) {
		c := members[rng.IntN(len(members))]
		at := time.Duration(rng.Int64N(int64(s.Duration-time.Second))) / time.Millisecond * time.Millisecond
		if f, ok := drawMemberFault(rng, s, c, kinds[pick(rng, weights)]); ok {
			f.At = at
			out = append(out, f)
		}
	}
	slices.SortStableFunc(out, func(a, b scenarios.ScheduledFault) int { return int(a.At - b.At) })
	for i := range out {
		out[i].Path = fmt.Sprintf("faults[%d]", i)
	}
	return out
}

// drawMemberFault draws one fault of a kind aimed at one group member
// entry: a member stopped and restarted, paused (past its session timeout
// half the time: a zombie when it resumes), cut from the brokers or from
// its coordinator, its clock jumped; the group's coordinator stopped; the
// group's external store cut off.
func drawMemberFault(rng *rand.Rand, s *scenarios.Scenario, c scenarios.Consumer, kind string) (scenarios.ScheduledFault, bool) {
	member := cluster.ClientName(c.Name, rng.IntN(c.Count))
	coordinator := "group-coordinator(" + c.Group + ")"
	session := sessionOf(s, c)
	f := sim.Fault{Target: member}
	down := between(rng, 500*time.Millisecond, 15*time.Second)
	switch kind {
	case "member-stop":
		k := []string{"crash", "kill", "shutdown"}[rng.IntN(3)]
		f.Kind, f.For = sim.FaultKind(k), down
		if c.Static && k != "shutdown" && c.Config.Get("group.protocol") == "consumer" {
			// A static KIP-848 member that did not leave and comes back
			// within its session is refused (UNRELEASED_INSTANCE_ID, fatal
			// for Kafka 4's consumer): it restarts once its session ended.
			f.For = session + between(rng, time.Second, 5*time.Second)
		}
		return scenarios.ScheduledFault{Fault: f, Key: k}, true
	case "member-pause":
		f.Kind, f.For = sim.FaultPause, between(rng, 200*time.Millisecond, session)
		if rng.IntN(2) == 0 {
			f.For = session + between(rng, time.Second, 10*time.Second) // a zombie
		}
		return scenarios.ScheduledFault{Fault: f, Key: "pause"}, true
	case "member-partition":
		f.Kind, f.Target, f.For = sim.FaultPartition, "", between(rng, 200*time.Millisecond, session*3/2)
		f.Groups = [][]string{{member}, {"role(broker)"}}
		if rng.IntN(2) == 0 {
			f.Groups[1] = []string{coordinator}
		}
		f.OneWay = rng.IntN(4) == 0
		return scenarios.ScheduledFault{Fault: f, Key: "partition"}, true
	case "member-clock":
		f.Kind, f.For = sim.FaultClock, down
		f.ClockJump = time.Duration(rng.IntN(20000)-10000) * time.Millisecond
		f.DriftPPM = int64(rng.IntN(2000) - 500)
		return scenarios.ScheduledFault{Fault: f, Key: "clock"}, true
	case "coordinator":
		k := []string{"crash", "kill", "shutdown"}[rng.IntN(3)]
		f.Kind, f.Target, f.For = sim.FaultKind(k), coordinator, down
		return scenarios.ScheduledFault{Fault: f, Key: k}, true
	case "store":
		if c.SideEffects == "" {
			return scenarios.ScheduledFault{}, false
		}
		f.Kind, f.Target, f.For = sim.FaultPartition, "", down
		f.Groups = [][]string{{cluster.StoreName(c.Name)}, {"rest"}}
		return scenarios.ScheduledFault{Fault: f, Key: "partition"}, true
	}
	return scenarios.ScheduledFault{}, false
}

// groupNodes are the node names and selectors that belong to consumer
// entry c: its members, its store and (when no other entry is in its
// group) its coordinator selector.
func groupNodes(s *scenarios.Scenario, c scenarios.Consumer) []string {
	out := []string{cluster.StoreName(c.Name)}
	for i := range c.Count {
		out = append(out, cluster.ClientName(c.Name, i))
	}
	shared := false
	for _, o := range s.Consumers {
		shared = shared || (o.Name != c.Name && o.Group == c.Group)
	}
	if c.Group != "" && !shared {
		out = append(out, "group-coordinator("+c.Group+")")
	}
	return out
}

// names reports whether a fault names one of the nodes or selectors.
func names(f sim.Fault, nodes []string) bool {
	if slices.Contains(nodes, f.Target) {
		return true
	}
	for _, g := range f.Groups {
		for _, x := range g {
			if slices.Contains(nodes, x) {
				return true
			}
		}
	}
	return false
}

// withoutFaultsOn drops the faults that name any of nodes.
func withoutFaultsOn(faults []scenarios.ScheduledFault, nodes []string) []scenarios.ScheduledFault {
	var out []scenarios.ScheduledFault
	for _, f := range faults {
		if !names(f.Fault, nodes) {
			out = append(out, f)
		}
	}
	return out
}

// shrinkGroups simplifies the consumer entries, each step kept only if the
// scenario still fails the same way (try): an entry dropped with the faults
// aimed at its nodes, fewer members (faults on the members gone dropped),
// one worker, no side effects (the store's faults dropped), dynamic
// membership, Kafka's poll interval. The commit mode stays: it decides
// what the checker calls a violation. A liveness failure keeps its
// workers: fewer would make a member too slow to catch up, a liveness
// failure of another cause that the shrinker could not tell apart.
func shrinkGroups(cur *scenarios.Scenario, want *Failure, try func(*scenarios.Scenario) bool) (*scenarios.Scenario, bool) {
	progress := false
	step := func(c *scenarios.Scenario) {
		if try(c) {
			cur, progress = c, true
		}
	}
	if len(cur.Consumers) > 1 {
		for i := 0; i < len(cur.Consumers); i++ {
			c := clone(cur)
			c.Faults = withoutFaultsOn(c.Faults, groupNodes(cur, cur.Consumers[i]))
			c.Consumers = slices.Delete(c.Consumers, i, i+1)
			if try(c) {
				cur, progress = c, true
				i--
			}
		}
	}
	for i := range cur.Consumers {
		m := cur.Consumers[i]
		if m.Group == "" {
			continue
		}
		if m.Count > 1 {
			for n := 1; n < m.Count; n++ {
				c := clone(cur)
				var gone []string
				for k := n; k < m.Count; k++ {
					gone = append(gone, cluster.ClientName(m.Name, k))
				}
				c.Faults = withoutFaultsOn(c.Faults, gone)
				c.Consumers[i].Count = n
				if try(c) {
					cur, progress = c, true
					break
				}
			}
		}
		if cur.Consumers[i].Workers > 1 && want.Kind != "liveness" {
			c := clone(cur)
			c.Consumers[i].Workers = 1
			step(c)
		}
		if cur.Consumers[i].SideEffects != "" {
			c := clone(cur)
			c.Faults = withoutFaultsOn(c.Faults, []string{cluster.StoreName(m.Name)})
			c.Consumers[i].SideEffects = ""
			step(c)
		}
		if cur.Consumers[i].Static {
			c := clone(cur)
			c.Consumers[i].Static = false
			step(c)
		}
		if cur.Consumers[i].Config.Get("max.poll.interval.ms") != "300000" {
			c := clone(cur)
			c.Consumers[i].Config = cloneConfig(c.Consumers[i].Config)
			c.Consumers[i].Config.Set("max.poll.interval.ms", "300000")
			step(c)
		}
	}
	return cur, progress
}

// cloneConfig copies a config, so that a candidate's change does not reach
// the scenario it was cloned from.
func cloneConfig(c scenarios.Config) scenarios.Config {
	out := c
	out.Keys = slices.Clone(c.Keys)
	out.Values = maps.Clone(c.Values)
	out.Explicit = maps.Clone(c.Explicit)
	return out
}
