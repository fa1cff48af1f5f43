package cluster

import (
	"os"
	"testing"
	"time"

	"pgregory.net/rapid"

	"kafkasim/model/proto"
	"kafkasim/sim"
)

func TestHuntBug(t *testing.T) {
	bug := os.Getenv("HUNT_BUG")
	if bug == "" {
		t.Skip("set HUNT_BUG")
	}
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(3, 12).Draw(t, "faults")
		var sched []plannedFault
		targets := []string{"leader(orders-0)", "broker-1", "broker-2", "broker-3", "active-controller"}
		for range n {
			at := time.Duration(rapid.IntRange(3000, 39000).Draw(t, "at_ms")) * time.Millisecond
			dur := time.Duration(rapid.IntRange(50, 12000).Draw(t, "for_ms")) * time.Millisecond
			tg := rapid.SampledFrom(targets).Draw(t, "target")
			kinds := []sim.FaultKind{sim.FaultCrash, sim.FaultKill, sim.FaultIsolate, sim.FaultPause, sim.FaultShutdown}
			k := rapid.SampledFrom(kinds).Draw(t, "kind")
			sched = append(sched, plannedFault{At: at, Fault: sim.Fault{Kind: k, Target: tg, For: dur}})
			if rapid.Bool().Draw(t, "disk") && tg != "active-controller" {
				sched = append(sched, plannedFault{At: at, Fault: sim.Fault{Kind: sim.FaultDisk, Disk: sim.DiskWipe, Target: tg, For: dur}})
			}
		}
		wl := workload{seed: rapid.Uint64().Draw(t, "seed"), brokers: 3,
			topic: TopicSpec{Name: "orders", Partitions: 1, ReplicationFactor: 3, MinInsyncReplicas: rapid.IntRange(1, 2).Draw(t, "minisr")},
			acks:  proto.AcksAll, idempotence: true, producers: 2, rate: 200, keys: 5, readers: 2, bugs: []string{bug},
			unclean: rapid.Bool().Draw(t, "unclean"), elrOff: rapid.Bool().Draw(t, "elroff"), schedule: sched}
		run, err := wl.run()
		if err != nil {
			t.Fatal(err)
		}
		if run.report.Violations > 0 || len(run.c.Audit.Violations()) > 0 {
			t.Fatalf("FOUND: %s\n%v\nschedule %s unclean %v elroff %v", run.report.Summary(), run.c.Audit.Violations(), formatSchedule(sched), wl.unclean, wl.elrOff)
		}
	})
}
