package cluster

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"kafkasim/sim"
)

// The control plane under faults: god-view invariants must hold with every
// bug off, and after the faults stop the quorum and the brokers must heal
// within a bound.

type plannedFault struct {
	At    time.Duration
	Fault sim.Fault
}

func (p plannedFault) String() string { return fmt.Sprintf("{at %v: %s}", p.At, p.Fault) }

const (
	faultPhase = 40 * time.Second
	// livenessBound is how long after the heal the control plane must have
	// converged. A broker that restarted while its old session was still
	// valid waits out broker.session.timeout.ms (9 s) before it may
	// register again; elections take up to two election timeouts (2 s) per
	// round; registration and unfencing take a few heartbeats.
	livenessBound = 20 * time.Second
)

func drawSchedule(t *rapid.T, controllers, brokers int) []plannedFault {
	var targets []string
	for i := 1; i <= controllers; i++ {
		targets = append(targets, ControllerName(i))
	}
	for i := 1; i <= brokers; i++ {
		targets = append(targets, BrokerName(int32(i)))
	}
	targets = append(targets, "active-controller", "leader(orders-0)")
	n := rapid.IntRange(0, 8).Draw(t, "faults")
	out := make([]plannedFault, n)
	for i := range out {
		at := time.Duration(rapid.IntRange(2, int(faultPhase/time.Second)-1).Draw(t, "at_s")) * time.Second
		at += time.Duration(rapid.IntRange(0, 999).Draw(t, "at_ms")) * time.Millisecond
		dur := time.Duration(rapid.IntRange(100, 15000).Draw(t, "for_ms")) * time.Millisecond
		target := rapid.SampledFrom(targets).Draw(t, "target")
		var f sim.Fault
		switch rapid.IntRange(0, 6).Draw(t, "kind") {
		case 0:
			f = sim.Fault{Kind: sim.FaultCrash, Target: target, For: dur} // page cache lost
		case 1:
			f = sim.Fault{Kind: sim.FaultKill, Target: target, For: dur}
		case 2:
			f = sim.Fault{Kind: sim.FaultPause, Target: target, For: dur}
		case 3:
			f = sim.Fault{Kind: sim.FaultIsolate, Target: target, For: dur}
		case 4:
			other := rapid.SampledFrom(targets).Draw(t, "other")
			f = sim.Fault{Kind: sim.FaultPartition, Groups: [][]string{{target}, {other}}, OneWay: true, For: dur}
		case 5:
			var side []string
			for _, x := range targets[:controllers+brokers] {
				if rapid.Bool().Draw(t, "side") {
					side = append(side, x)
				}
			}
			if len(side) == 0 {
				side = []string{target}
			}
			f = sim.Fault{Kind: sim.FaultPartition, Groups: [][]string{side, {"rest"}}, For: dur}
		case 6:
			f = sim.Fault{Kind: sim.FaultShutdown, Target: target, For: dur}
		}
		out[i] = plannedFault{At: at, Fault: f}
	}
	return out
}

type controlPlaneRun struct {
	c         *Cluster
	converged bool
	why       string
	stop      sim.RunResult
}

func runControlPlane(seed uint64, controllers, brokers int, schedule []plannedFault, bugs []string) (controlPlaneRun, error) {
	return runControlPlaneWith(seed, controllers, brokers, schedule, bugs, 0)
}

func runControlPlaneWith(seed uint64, controllers, brokers int, schedule []plannedFault, bugs []string, fetchMaxBatches int) (controlPlaneRun, error) {
	cfg := DefaultConfig(seed)
	cfg.Quorum.FetchMaxBatches = fetchMaxBatches
	cfg.Controllers, cfg.Brokers = controllers, brokers
	cfg.Racks = []string{"a", "b", "c"}
	rf := min(3, brokers)
	cfg.Topics = []TopicSpec{{Name: "orders", Partitions: 3, ReplicationFactor: rf, MinInsyncReplicas: min(2, rf)}}
	cfg.Bugs = bugs
	c, err := Build(cfg)
	if err != nil {
		return controlPlaneRun{}, err
	}
	for _, p := range schedule {
		if err := c.World.ScheduleFault(p.At, p.Fault); err != nil {
			return controlPlaneRun{}, err
		}
	}
	c.World.Start()
	r := c.World.RunUntil(faultPhase)
	run := controlPlaneRun{c: c, stop: r}
	if r.Livelocked() {
		return run, nil
	}
	c.World.HealAll()
	run.stop = c.World.RunFor(livenessBound)
	run.converged, run.why = c.ControlPlaneConverged()
	return run, nil
}

func TestControlPlaneInvariantsAndLivenessUnderFaults(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		controllers := rapid.SampledFrom([]int{1, 3, 5}).Draw(t, "controllers")
		brokers := rapid.IntRange(1, 5).Draw(t, "brokers")
		seed := rapid.Uint64().Draw(t, "seed")
		schedule := drawSchedule(t, controllers, brokers)
		run, err := runControlPlane(seed, controllers, brokers, schedule, nil)
		if err != nil {
			t.Fatal(err)
		}
		if run.stop.Livelocked() {
			t.Fatalf("run stopped: %s", run.stop.Detail)
		}
		if v := run.c.Audit.Violations(); len(v) > 0 {
			t.Fatalf("invariant broke with every bug off: %v\nschedule %v\n%s", v[0], schedule, describe(run.c))
		}
		if !run.converged {
			t.Fatalf("not converged %v after the heal: %s\nschedule %v\n%s", livenessBound, run.why, schedule, describe(run.c))
		}
	})
}

func TestControlPlaneFaultsActuallyFire(t *testing.T) {
	// A schedule that hits the quorum leader, a partition leader and a
	// minority: each fault must act (not be skipped), and the invariants
	// must have been exercised (elections happened).
	schedule := []plannedFault{
		{At: 5 * time.Second, Fault: sim.Fault{Kind: sim.FaultCrash, Target: "active-controller", For: 3 * time.Second}},
		{At: 12 * time.Second, Fault: sim.Fault{Kind: sim.FaultCrash, Target: "leader(orders-0)", For: 12 * time.Second}},
		{At: 20 * time.Second, Fault: sim.Fault{Kind: sim.FaultIsolate, Target: "active-controller", For: 6 * time.Second}},
	}
	run, err := runControlPlane(7, 3, 3, schedule, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range run.c.World.FaultLog() {
		if r.Skipped != "" {
			t.Errorf("fault %s skipped: %s", r.Fault, r.Skipped)
		}
	}
	if active, _ := run.c.ActiveController(); active == nil || active.Raft().Epoch() < 3 {
		t.Fatalf("two leader failures should have forced at least two elections:\n%s", describe(run.c))
	}
	if !run.converged {
		t.Fatalf("not converged: %s\n%s", run.why, describe(run.c))
	}
	im := run.c.Metadata()
	if p := im.Partitions()[0]; p.LeaderEpoch == 0 {
		t.Fatalf("crashing orders-0's leader must have moved its leadership: %s", p)
	}
}

func formatSchedule(s []plannedFault) string {
	parts := make([]string, len(s))
	for i, p := range s {
		parts[i] = p.String()
	}
	return strings.Join(parts, " ")
}
