package fuzz

import (
	"strings"
	"testing"

	"kafkasim/scenarios"
	"kafkasim/sim"
)

// The swarm's other axes are drawn too: partitions of every shape, fast
// fail-overs, disk replacements, faults that follow earlier ones; and a
// disk replacement's shutdown and wipe hit the same broker.
func TestGeneratorDrawsEveryShapeAndMotif(t *testing.T) {
	seen := map[string]bool{}
	for seed := uint64(1); seed <= 300; seed++ {
		s, err := Generate(seed, nil, nil)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if s.Cluster.Controllers == 5 {
			seen["5 controllers"] = true
		}
		switch policy := s.Topics[0].Config.Get("cleanup.policy"); {
		case strings.HasPrefix(policy, "compact"):
			seen["compaction"] = true
			for _, p := range s.Producers {
				if p.Keys == 0 {
					t.Errorf("seed %d: a producer without keys writes to a compacted topic", seed)
				}
			}
		case policy == "delete" && s.Topics[0].Config.Get("retention.ms") != s.Cluster.Broker.Get("log.retention.ms"):
			seen["retention"] = true
		}
		leaderStops := 0
		for i, f := range s.Faults {
			switch {
			case f.Fault.Kind == sim.FaultPartition && len(f.Fault.Groups[1]) == 1 && f.Fault.Groups[1][0] == "role(broker)":
				seen["from-brokers"] = true
			case f.Fault.Kind == sim.FaultPartition && len(f.Fault.Groups[1]) == 1 && f.Fault.Groups[1][0] == "role(controller)":
				seen["from-controllers"] = true
			case f.Fault.Kind == sim.FaultPartition && strings.HasPrefix(f.Fault.Groups[1][0], "controller-"):
				seen["quorum"] = true
			case f.Fault.Kind == sim.FaultDisk && f.Fault.Disk == sim.DiskWipe && f.Fault.For == 0:
				seen["disk replacement"] = true
				ok := false
				for _, g := range s.Faults[:i] {
					ok = ok || (g.Fault.Kind == sim.FaultShutdown && g.Fault.Target == f.Fault.Target && g.At <= f.At && f.At <= g.At+g.Fault.For)
				}
				if !ok {
					t.Errorf("seed %d: wipe of %s at %v outside a shutdown of it", seed, f.Fault.Target, f.At)
				}
			case strings.HasPrefix(f.Fault.Target, "leader(") && (f.Fault.Kind == sim.FaultShutdown || f.Fault.Kind == sim.FaultKill || f.Fault.Kind == sim.FaultCrash):
				leaderStops++
			}
			if f.Key == "add-partitions" {
				seen["add-partitions"] = true
			}
			if f.Fault.Kind == sim.FaultSlowNetwork && f.Fault.Latency > 500*1e6+10*1e6 {
				seen["slow links of seconds"] = true
			}
		}
		if leaderStops >= 2 {
			seen["fail-overs"] = true
		}
	}
	for _, k := range []string{"5 controllers", "from-brokers", "from-controllers", "quorum", "disk replacement", "fail-overs", "slow links of seconds",
		"compaction", "retention", "add-partitions"} {
		if !seen[k] {
			t.Errorf("300 seeds never drew %s", k)
		}
	}
}

// Around a base, the fuzzer's property is what a counterexample breaks: the
// base's own expectations (a teaching scenario's "poll-skip: >0") are not
// carried into the scenarios it draws.
func TestBaseExpectationsAreNotCarriedOver(t *testing.T) {
	base, err := scenarios.LoadFile("../scenarios/retention-slow-consumer.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(base.Expect) == 0 {
		t.Fatal("the base has no expectations to leave behind")
	}
	s, err := Generate(3, base, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range s.Expect {
		if e.Key != "violations" && e.Key != "converged" {
			t.Fatalf("drawn scenario expects %s %s from the base", e.Key, e.Cmp.Text)
		}
	}
}
