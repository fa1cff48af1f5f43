package fuzz

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"kafkasim/model/cluster"
	"kafkasim/scenarios"
	"kafkasim/sim"
)

// The generator is blind: which bugs are switched on changes nothing it
// draws but the bugs list itself.
func TestGeneratorIsBlindToBugs(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		a, err := Generate(seed, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		ya, _ := a.Resolved()
		for _, bug := range cluster.KnownBugs {
			b, err := Generate(seed, nil, []string{bug})
			if err != nil {
				t.Fatal(err)
			}
			b.Bugs = nil
			yb, _ := b.Resolved()
			if !bytes.Equal(ya, yb) {
				t.Fatalf("seed %d: switching %s on changed the scenario drawn", seed, bug)
			}
		}
	}
}

// The stories are drawn, and play their plots. The replacement: a follower
// of orders-0 falls behind, the leader's ISR changes are held from before
// the follower is back until after its disk was replaced and it restarted.
// The elections: five voters; the active controller is cut off with another
// voter, and the next two or three leaders are each hit as they take office.
func TestGeneratorTellsStories(t *testing.T) {
	told := map[string]int{}
	for seed := uint64(1); seed <= 400; seed++ {
		s, err := Generate(seed, nil, nil)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if s.Description == "Drawn by kafkasim fuzz, focus: replace." {
			told["replace"]++
			if !playsReplacement(s.Faults, s.Topics[0].Assignment[0]) {
				t.Errorf("seed %d: a replacement story without its plot: %v", seed, s.Faults)
			}
		}
		if s.Description == "Drawn by kafkasim fuzz, focus: elections." {
			told["elections"]++
			if s.Cluster.Controllers != 5 || !playsElections(s.Faults) {
				t.Errorf("seed %d: an elections story without its plot: %d controllers, %v", seed, s.Cluster.Controllers, s.Faults)
			}
		}
	}
	for _, story := range stories {
		if told[story] < 10 {
			t.Errorf("400 seeds told the %s story %d times", story, told[story])
		}
	}
}

// playsReplacement: some follower of orders-0 (not its preferred leader) is
// cut off, shut down, wiped while down and restarted, and the leader's
// AlterPartition requests (or its link to the controllers) are held from
// before the cut heals until after the restart.
func playsReplacement(faults []scenarios.ScheduledFault, replicas []int32) bool {
	for _, w := range faults {
		if w.Fault.Kind != sim.FaultDisk || w.Fault.Disk != sim.DiskWipe || w.Fault.For != 0 {
			continue
		}
		f := w.Fault.Target
		if !slices.ContainsFunc(replicas[1:], func(r int32) bool { return fmt.Sprintf("broker-%d", r) == f }) {
			continue
		}
		for _, st := range faults {
			if st.Fault.Kind != sim.FaultShutdown || st.Fault.Target != f || w.At < st.At || w.At > st.At+st.Fault.For {
				continue
			}
			for _, c := range faults {
				if c.Fault.Kind != sim.FaultPartition || len(c.Fault.Groups[0]) != 1 || c.Fault.Groups[0][0] != f || c.At+c.Fault.For > st.At {
					continue
				}
				for _, h := range faults {
					held := (h.Fault.Kind == sim.FaultStall && h.Fault.Target == "leader(orders-0)" && slices.Contains(h.Fault.Messages, "AlterPartition")) ||
						(h.Fault.Kind == sim.FaultPartition && h.Fault.Groups[0][0] == "leader(orders-0)" && h.Fault.Groups[1][0] == "role(controller)")
					if held && h.At <= c.At+c.Fault.For && st.At+st.Fault.For < h.At+h.Fault.For {
						return true
					}
				}
			}
		}
	}
	return false
}

// playsElections: at some time the active controller and another voter are
// cut from the controllers, and faults armed then wait for the first and the
// second election after it, each aimed at the new leader.
func playsElections(faults []scenarios.ScheduledFault) bool {
	for _, c := range faults {
		f := c.Fault
		if c.AfterElections != 0 || f.Kind != sim.FaultPartition || len(f.Groups[0]) != 2 || f.Groups[0][0] != "active-controller" ||
			f.Groups[1][0] != "role(controller)" {
			continue
		}
		armed := map[int]bool{}
		for _, g := range faults {
			aimed := g.Fault.Target == "active-controller" || g.Fault.Kind == sim.FaultPartition && g.Fault.Groups[0][0] == "active-controller"
			if g.AfterElections > 0 && g.At == c.At && aimed {
				armed[g.AfterElections] = true
			}
		}
		return armed[1] && armed[2]
	}
	return false
}
