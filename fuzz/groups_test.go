package fuzz

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"kafkasim/model/cluster"
	"kafkasim/scenarios"
	"kafkasim/sim"
)

// A seed that draws no group draws exactly what it drew before groups
// existed: the groups' own stream decides, and nothing else moves.
func TestSeedsWithoutGroupsDrawAsBefore(t *testing.T) {
	defer func(p int) { groupPercent = p }(groupPercent)
	without, with := 0, 0
	for seed := uint64(1); seed <= 300; seed++ {
		groupPercent = 30
		a, err := Generate(seed, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		groupPercent = 0
		b, err := Generate(seed, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Groups()) > 0 {
			t.Fatalf("seed %d drew groups with groupPercent 0", seed)
		}
		ya, _ := a.Resolved()
		yb, _ := b.Resolved()
		if len(a.Groups()) == 0 {
			without++
			if !bytes.Equal(ya, yb) {
				t.Fatalf("seed %d draws no group, yet draws another scenario than without groups", seed)
			}
			continue
		}
		with++
		// A seed with groups keeps the rest of its draws: the cluster, the
		// producers (slowed down for a store only) and the swarm's faults.
		if a.Cluster.Brokers != b.Cluster.Brokers || a.Cluster.Controllers != b.Cluster.Controllers || len(a.Producers) != len(b.Producers) {
			t.Fatalf("seed %d: drawing groups changed the cluster or the producers", seed)
		}
		store := slices.ContainsFunc(a.Consumers, func(c scenarios.Consumer) bool { return c.SideEffects != "" })
		for i := range a.Producers {
			if r, was := a.Producers[i].Rate, b.Producers[i].Rate; r > was || (r < was && !store) {
				t.Fatalf("seed %d: producer %s writes %v/s, drawn %v/s without groups", seed, a.Producers[i].Name, r, was)
			}
		}
		for _, f := range b.Faults {
			if !slices.ContainsFunc(a.Faults, func(g scenarios.ScheduledFault) bool { return g.At == f.At && g.Key == f.Key }) {
				t.Fatalf("seed %d: drawing groups lost the fault %s at %v", seed, f.Key, f.At)
			}
		}
	}
	if with < 60 || with > 120 {
		t.Fatalf("%d of 300 seeds drew groups, want about 30%%", with)
	}
	t.Logf("%d seeds with groups, %d without", with, without)
}

// The groups drawn span the axes (members, assignors, commit modes,
// workers, side effects, static membership, short poll intervals) within
// Kafka's rules and the run's means, and their faults hit every part of
// a group.
func TestGeneratorDrawsGroups(t *testing.T) {
	seen := map[string]bool{}
	for seed := uint64(1); seed <= 400; seed++ {
		s, err := GenerateWithGroups(seed, nil, nil, 30)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if len(s.Groups()) == 0 {
			continue
		}
		seen[strings.Join(s.Groups(), "+")] = true
		rate := 0.0
		for _, p := range s.Producers {
			r := p.Rate * float64(p.Count)
			if p.Transactions != nil {
				r *= float64(p.Transactions.RecordsMax) // Rate counts transactions
			}
			rate += r
		}
		trip := 2 * s.Cluster.Network.Latency.Max
		for _, c := range s.Consumers {
			if c.Group == "" {
				seen["assign-mode readers beside"] = true
				continue
			}
			if c.Count < 1 || c.Count > 4 {
				t.Errorf("seed %d: %s has %d members", seed, c.Name, c.Count)
			}
			session, hb := msOf(c.Config, "session.timeout.ms", 0), msOf(c.Config, "heartbeat.interval.ms", 0)
			if c.Config.Get("group.protocol") == "consumer" {
				// The brokers' group.consumer.* keys, not the client's.
				seen["consumer protocol"] = true
				b := s.Cluster.Broker
				session, hb = msOf(b, "group.consumer.session.timeout.ms", 0), msOf(b, "group.consumer.heartbeat.interval.ms", 0)
			}
			if session < 6*time.Second || session > 45*time.Second || 3*hb >= session {
				t.Errorf("seed %d: %s: session %v, heartbeat %v", seed, c.Name, session, hb)
			}
			// Each member's pool keeps up with every producer at once.
			cost := (c.Processing.Min + c.Processing.Max) / 2
			if c.SideEffects != "" {
				cost += trip
			}
			if capacity := float64(c.Workers) / cost.Seconds(); capacity < capacityMargin*rate*0.99 {
				t.Errorf("seed %d: %s processes %.0f records/s, the producers write %.0f", seed, c.Name, capacity, rate)
			}
			if c.Config.Get("max.poll.interval.ms") != "300000" {
				seen["short poll interval"] = true
				slowest := c.Processing.Max
				if c.SideEffects != "" {
					slowest += trip
				}
				full := time.Duration(configInt(c.Config, "max.poll.records")) * slowest / time.Duration(c.Workers)
				if msOf(c.Config, "max.poll.interval.ms", 0) < 2*full {
					t.Errorf("seed %d: %s: a full poll takes up to %v, the poll interval is %s ms: a rebalance storm", seed, c.Name, full, c.Config.Get("max.poll.interval.ms"))
				}
			}
			seen["commit "+c.Commit] = true
			seen["assignors "+strings.ReplaceAll(c.Config.Get("partition.assignment.strategy"), " ", "")] = true
			seen["side effects "+c.SideEffects] = true
			if c.Static {
				seen["static"] = true
			}
			if c.Workers > 1 {
				seen["workers"] = true
			}
			seen["members "+string(rune('0'+c.Count))] = true
		}
		for _, f := range s.Faults {
			for _, c := range s.Consumers {
				if c.Group == "" {
					continue
				}
				switch {
				case f.Fault.Target == "group-coordinator("+c.Group+")":
					seen["coordinator "+string(f.Fault.Kind)] = true
				case f.Fault.Kind == sim.FaultPartition && f.Fault.Groups[0][0] == cluster.StoreName(c.Name):
					seen["store cut off"] = true
					if c.SideEffects == "" {
						t.Errorf("seed %d: %s's store cut off, but it has no side effects", seed, c.Name)
					}
				case f.Fault.Kind == sim.FaultPartition && strings.HasPrefix(f.Fault.Groups[0][0], c.Name+"-"):
					seen["member cut from "+f.Fault.Groups[1][0]] = true
				case f.Fault.Kind == sim.FaultPause && strings.HasPrefix(f.Fault.Target, c.Name+"-") && f.Fault.For > msOf(c.Config, "session.timeout.ms", 0):
					seen["zombie"] = true
				case strings.HasPrefix(f.Fault.Target, c.Name+"-") && f.Fault.For > 0:
					seen["member "+string(f.Fault.Kind)] = true
				}
			}
		}
	}
	want := []string{"billing", "billing+ledger", "assign-mode readers beside", "commit auto", "commit before-processing", "commit after-processing",
		"side effects ", "side effects plain", "side effects idempotent", "static", "workers", "short poll interval", "members 1", "members 4",
		"coordinator crash", "coordinator kill", "coordinator shutdown", "store cut off", "member cut from role(broker)", "member cut from group-coordinator(billing)",
		"zombie", "member pause", "member crash", "member kill", "member shutdown", "member clock"}
	for _, a := range classicAssignors {
		want = append(want, "assignors "+a)
	}
	for _, k := range want {
		if !seen[k] {
			t.Errorf("400 seeds never drew %q", k)
		}
	}
}

// With the consumer protocol switched on, its groups are valid scenarios,
// and a static member that crashes comes back only after its session
// ended (Kafka 4's consumer treats UNRELEASED_INSTANCE_ID as fatal).
func TestGeneratorDrawsConsumerProtocolGroups(t *testing.T) {
	defer func(d bool) { drawConsumerProtocol = d }(drawConsumerProtocol)
	drawConsumerProtocol = true
	consumer := 0
	for seed := uint64(1); seed <= 300; seed++ {
		s, err := GenerateWithGroups(seed, nil, nil, 30)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for _, c := range s.Consumers {
			if c.Config.Get("group.protocol") != "consumer" {
				continue
			}
			consumer++
			session := sessionOf(s, c)
			for _, f := range s.Faults {
				if !c.Static || !strings.HasPrefix(f.Fault.Target, c.Name+"-") {
					continue
				}
				if (f.Fault.Kind == sim.FaultCrash || f.Fault.Kind == sim.FaultKill) && f.Fault.For <= session {
					t.Errorf("seed %d: static %s restarts %v after a %s, within its session %v", seed, f.Fault.Target, f.Fault.For, f.Fault.Kind, session)
				}
			}
		}
	}
	if consumer == 0 {
		t.Fatal("300 seeds drew no consumer-protocol group")
	}
}

func configInt(c scenarios.Config, key string) int64 {
	return msOf(c, key, 0).Milliseconds()
}

// Shrinking takes a group failure down to the group, the member and the
// fault it needs: the other entries go with the faults aimed at them, the
// members beyond the one at fault, the workers, side effects and static
// membership; the commit mode stays. The judge here fails a scenario while
// b-0 of group billing is paused past its session, as a zombie commit
// needs.
func TestShrinkSimplifiesGroups(t *testing.T) {
	var s *scenarios.Scenario
	for seed := uint64(1); s == nil; seed++ {
		d, err := GenerateWithGroups(seed, nil, nil, 30)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Groups()) == 2 && len(d.Consumers) == 3 {
			s = d
		}
	}
	b := &s.Consumers[1]
	b.Count, b.Workers, b.SideEffects, b.Static = 3, 4, "plain", true
	s.Faults = append(s.Faults,
		scenarios.ScheduledFault{At: 5 * time.Second, Fault: sim.Fault{Kind: sim.FaultPause, Target: "b-0", For: time.Minute}, Key: "pause"},
		scenarios.ScheduledFault{At: 6 * time.Second, Fault: sim.Fault{Kind: sim.FaultCrash, Target: "b-2", For: time.Second}, Key: "crash"},
		scenarios.ScheduledFault{At: 7 * time.Second, Fault: sim.Fault{Kind: sim.FaultPartition, Groups: [][]string{{"b-store"}, {"rest"}}, For: time.Second}, Key: "partition"},
		scenarios.ScheduledFault{At: 8 * time.Second, Fault: sim.Fault{Kind: sim.FaultCrash, Target: "group-coordinator(ledger)", For: time.Second}, Key: "crash"})
	s, err := scenarios.Normalize(s)
	if err != nil {
		t.Fatal(err)
	}
	commit := s.Consumers[1].Commit
	want := &Failure{Kind: "violation", What: []string{"zombie-commit"}}
	judge := func(c *scenarios.Scenario) *Failure {
		for _, m := range c.Consumers {
			if m.Group != "billing" {
				continue
			}
			for _, f := range c.Faults {
				if f.Fault.Kind == sim.FaultPause && f.Fault.Target == m.Name+"-0" && f.Fault.For > sessionOf(c, m) {
					return want
				}
			}
		}
		return nil
	}
	small, runs := Shrink(s, want, 500, nil, judge)
	if len(small.Consumers) != 1 || small.Consumers[0].Group != "billing" {
		t.Fatalf("kept consumers %v", small.Consumers)
	}
	m := small.Consumers[0]
	if m.Count != 1 || m.Workers != 1 || m.SideEffects != "" || m.Static || m.Commit != commit {
		t.Fatalf("kept %d members, %d workers, side effects %q, static %v, commit %s (drawn %s)", m.Count, m.Workers, m.SideEffects, m.Static, m.Commit, commit)
	}
	if len(small.Faults) != 1 || small.Faults[0].Fault.Target != "b-0" {
		t.Fatalf("kept faults %v", small.Faults)
	}
	t.Logf("shrunk in %d runs", runs)
}

// The group bugs are found blind: with no-generation-fencing switched on,
// the generator's seeds (which do not know the bug is on) reach a zombie
// commit within a few dozen runs, and the same seed with the bug off does
// not break the guarantee.
func TestGroupBugsFoundBlind(t *testing.T) {
	if testing.Short() {
		t.Skip("runs dozens of simulations")
	}
	for _, bug := range []struct {
		name  string
		start uint64
		what  []string
	}{
		// kafkasim fuzz --groups 30 --bugs no-generation-fencing
		// --seed-start 3001 finds it at seed 3127 (earlier seeds find it
		// too, but also fail with the bug off: issue 25's open triage).
		{"no-generation-fencing", 3001, []string{"zombie-commit", "nonmonotonic-commit"}},
		// kafkasim fuzz --groups 30 --bugs grant-before-release
		// --seed-start 5001: a consumer-protocol group's member commits a
		// partition another member was already processing.
		{"grant-before-release", 5001, []string{"double-owner"}},
	} {
		found := uint64(0)
		for seed := bug.start; seed < bug.start+150 && found == 0; seed++ {
			s, err := GenerateWithGroups(seed, nil, []string{bug.name}, 30)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Groups()) == 0 {
				continue
			}
			if _, f := runOne(s); f != nil && f.Kind == "violation" && slices.ContainsFunc(f.What, func(w string) bool { return slices.Contains(bug.what, w) }) {
				found = seed
			}
		}
		if found == 0 {
			t.Fatalf("%s: 150 seeds from %d found no %v", bug.name, bug.start, bug.what)
		}
		s, _ := GenerateWithGroups(found, nil, nil, 30)
		if _, f := runOne(s); f != nil && f.Kind == "violation" {
			t.Fatalf("%s: seed %d fails with the bug off too: %+v", bug.name, found, f)
		}
		t.Logf("%s: found at seed %d", bug.name, found)
	}
}
