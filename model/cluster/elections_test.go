package cluster

import (
	"strings"
	"testing"
	"time"

	"kafkasim/sim"
)

// A fault armed with after-elections fires when the N-th KRaft leader
// elected after its arming takes office — at that instant, so that
// active-controller names the new leader before any of its messages
// arrives — and never if fewer elections happen.
func TestFaultsAfterElections(t *testing.T) {
	cfg := DefaultConfig(2)
	cfg.Controllers = 5
	c, err := Build(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w := c.World
	type election struct {
		at     time.Duration
		leader sim.NodeID
	}
	var elections []election
	var epoch int32
	w.SetAfterEvent(func() {
		if n, id := c.ActiveController(); n != nil && n.Raft().Epoch() > epoch {
			epoch = n.Raft().Epoch()
			elections = append(elections, election{w.Now(), id})
		}
	})
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	// At 5 s the active controller is cut off; the leaders elected after
	// that are cut off in turn, each the moment it takes office.
	isolate := sim.Fault{Kind: sim.FaultPartition, Groups: [][]string{{"active-controller"}, {"role(controller)"}}, For: 4 * time.Second}
	must(w.ScheduleFault(5*time.Second, isolate))
	must(c.ScheduleFaultAfterElections(5*time.Second, 1, isolate))
	must(c.ScheduleFaultAfterElections(5*time.Second, 2, isolate))
	must(c.ScheduleFaultAfterElections(5*time.Second, 50, sim.Fault{Kind: sim.FaultCrash, Target: "active-controller", For: time.Second}))
	if err := c.ScheduleFaultAfterElections(5*time.Second, 0, isolate); err == nil {
		t.Fatal("after 0 elections accepted")
	}
	w.Start()
	w.RunUntil(40 * time.Second)
	w.SetAfterEvent(nil)
	var after []election
	for _, e := range elections {
		if e.at > 5*time.Second {
			after = append(after, e)
		}
	}
	if len(after) < 2 {
		t.Fatalf("elections %v: want at least two after 5 s\n%s", elections, describe(c))
	}
	var fired []sim.FaultRecord
	for _, r := range w.FaultLog() {
		if !r.Undo && r.At > 5*time.Second {
			fired = append(fired, r)
		}
	}
	if len(fired) != 2 {
		t.Fatalf("faults fired after 5 s: %v; want the two armed for the first and second elections (and not the 50th)", fired)
	}
	for i, r := range fired {
		t.Logf("fault %d: %v %v %s", i+1, r.At, r.Nodes, r.Detail)
		name := w.Name(after[i].leader)
		if r.Fault.Kind != sim.FaultPartition || r.At != after[i].at || !strings.HasPrefix(r.Detail, "["+name+"] [") {
			t.Fatalf("fault %d fired at %v: %s; want the cut of %s at its election, %v", i+1, r.At, r.Detail, name, after[i].at)
		}
	}
}
