package cluster

import (
	"testing"
	"time"

	"kafkasim/godview"
	"kafkasim/sim"
)

func TestLosesPageCache(t *testing.T) {
	for _, c := range []struct {
		f    sim.Fault
		want bool
	}{
		{sim.Fault{Kind: sim.FaultCrash}, true},
		{sim.Fault{Kind: sim.FaultPowerLoss}, true},
		{sim.Fault{Kind: sim.FaultDisk, Disk: sim.DiskTornWrite}, true},
		{sim.Fault{Kind: sim.FaultDisk, Disk: sim.DiskWipe}, true},
		{sim.Fault{Kind: sim.FaultDisk, Disk: sim.DiskCorrupt}, false},
		{sim.Fault{Kind: sim.FaultDisk, Disk: sim.DiskSlowFsync}, false},
		{sim.Fault{Kind: sim.FaultIsolate}, false},
		{sim.Fault{Kind: sim.FaultPause}, false},
		{sim.Fault{Kind: sim.FaultCustom, Custom: AddPartitions{Topic: "t", Count: 2}}, false},
	} {
		if got := LosesPageCache(c.f); got != c.want {
			t.Fatalf("LosesPageCache(%s %s) = %v, want %v", c.f.Kind, c.f.Disk, got, c.want)
		}
	}
}

// The facts of a run are the god view's: the faults that lost page cache
// (not their ends, not one that found no target, not the other kinds) and
// the partitions added, each when it happened.
func TestFactsOfARun(t *testing.T) {
	cfg := DefaultConfig(3)
	cfg.Topics = []TopicSpec{{Name: "t", Partitions: 1, ReplicationFactor: 3, MinInsyncReplicas: 2}}
	c, _ := settledCluster(t, cfg)
	w := c.World
	inject := func(f sim.Fault) {
		t.Helper()
		if err := w.InjectFault(f); err != nil {
			t.Fatal(err)
		}
	}
	crashAt := w.Now()
	inject(sim.Fault{Kind: sim.FaultCrash, Target: "broker-1", For: time.Second}) // its end is logged too
	inject(sim.Fault{Kind: sim.FaultIsolate, Target: "broker-2", For: time.Second})
	w.RunFor(5 * time.Second)
	powerAt := w.Now()
	inject(sim.Fault{Kind: sim.FaultPowerLoss, Target: "broker-3", For: time.Second})
	inject(sim.Fault{Kind: sim.FaultPowerLoss, Target: "broker-9", For: time.Second}) // no such broker: skipped
	w.RunFor(5 * time.Second)
	addedAt := w.Now()
	inject(sim.Fault{Kind: sim.FaultCustom, Custom: AddPartitions{Topic: "t", Count: 2}})
	w.RunFor(5 * time.Second)

	facts := c.Facts()
	if !facts.GodView() {
		t.Fatal("a run's facts come from the god view")
	}
	power := facts.Of(godview.PowerLoss)
	if len(power) != 2 || power[0].At != int64(crashAt) || power[1].At != int64(powerAt) {
		t.Fatalf("power losses %+v, want the crash at %v and the power loss at %v", power, crashAt, powerAt)
	}
	added := facts.Of(godview.PartitionsAdded)
	if len(added) != 1 || added[0].Topic != "t" || added[0].At != int64(addedAt) {
		t.Fatalf("partitions added %+v, want t at %v", added, addedAt)
	}
	for _, k := range []godview.Kind{godview.Loss, godview.UncleanElection, godview.HeldBack, godview.ForgottenBatch} {
		if n := facts.Count(k); n != 0 {
			t.Fatalf("%d facts of kind %s in a run that lost nothing: %+v", n, k, facts.Of(k))
		}
	}
}
