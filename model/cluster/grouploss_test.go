package cluster

import (
	"testing"

	"kafkasim/godview"
	"kafkasim/model/audit"
)

// A member that stopped on GROUP_ID_NOT_FOUND is excused only by a loss of
// its group's partition that took every record the partition held (from
// offset 0), after the member last joined and no later than it stopped —
// or, when it joined after such a loss, by every write of its group
// committed since the loss (to its stop) having been a deposed
// coordinator's, its join's among them. The member joined when its join's
// write committed, which may be long before it read the answer.
func TestGroupRecordsLost(t *testing.T) {
	const p = "__consumer_offsets-9"
	loss := func(partition string, from, to, at int64) godview.Fact {
		return godview.Fact{Kind: godview.Loss, Partition: partition, From: from, To: to, At: at, Cause: "power-loss", Producer: godview.NoProducer}
	}
	for _, c := range []struct {
		name            string
		facts           []godview.Fact
		joined, stopped int64
		want            bool
		wantAt, wantTo  int64
		writes          []audit.GenerationWrite
		wantDeposed     bool
	}{
		{"the whole partition lost between join and stop", []godview.Fact{loss(p, 0, 11, 36)}, 1, 55, true, 36, 11, nil, false},
		{"the stop at the loss itself", []godview.Fact{loss(p, 0, 11, 36)}, 1, 36, true, 36, 11, nil, false},
		{"another partition's loss", []godview.Fact{loss("__consumer_offsets-10", 0, 11, 36)}, 1, 55, false, 0, 0, nil, false},
		{"a partition whose name extends it", []godview.Fact{loss(p+"0", 0, 11, 36)}, 1, 55, false, 0, 0, nil, false},
		{"only the tail lost: the group's first records survive", []godview.Fact{loss(p, 5, 11, 36)}, 1, 55, false, 0, 0, nil, false},
		{"nothing lost", []godview.Fact{loss(p, 0, 0, 36)}, 1, 55, false, 0, 0, nil, false},
		{"lost before the member joined: its group came after", []godview.Fact{loss(p, 0, 11, 36)}, 40, 55, false, 0, 0, nil, false},
		{"lost at the join", []godview.Fact{loss(p, 0, 11, 36)}, 36, 55, false, 0, 0, nil, false},
		{"lost after the member stopped", []godview.Fact{loss(p, 0, 11, 60)}, 1, 55, false, 0, 0, nil, false},
		{"a member that never joined", []godview.Fact{loss(p, 0, 11, 36)}, -1, 55, false, 0, 0, nil, false},
		{"an unclean election is not a loss", []godview.Fact{{Kind: godview.UncleanElection, Partition: p, At: 36, Producer: godview.NoProducer}}, 1, 55, false, 0, 0, nil, false},
		{"the loss after the rejoin explains it", []godview.Fact{loss(p, 0, 5, 10), loss(p, 0, 20, 36)}, 20, 55, true, 36, 20, nil, false},
		{"no facts", nil, 1, 55, false, 0, 0, nil, false},
		{"joined after the loss through a deposed coordinator", []godview.Fact{loss(p, 0, 22, 35)}, 37, 40, true, 35, 22, []audit.GenerationWrite{dep(36)}, true},
		{"joined after the loss, the group written again by a coordinator not deposed", []godview.Fact{loss(p, 0, 22, 35)}, 37, 40, false, 0, 0, []audit.GenerationWrite{dep(36), kept(38)}, false},
		{"joined after the loss where a coordinator not deposed wrote the group first", []godview.Fact{loss(p, 0, 22, 35)}, 37, 40, false, 0, 0, []audit.GenerationWrite{kept(36), dep(36)}, false},
		{"a write after the stop is no part of it", []godview.Fact{loss(p, 0, 22, 35)}, 37, 40, true, 35, 22, []audit.GenerationWrite{dep(36), kept(45)}, true},
		{"deposed writes only after the join: its own was not one", []godview.Fact{loss(p, 0, 22, 35)}, 37, 40, false, 0, 0, []audit.GenerationWrite{dep(38)}, false},
		{"a deposed write before the loss is the loss's", []godview.Fact{loss(p, 0, 22, 35)}, 37, 40, false, 0, 0, []audit.GenerationWrite{dep(34), kept(36)}, false},
		{"a join committed before the loss, its answer read after it (a paused member)", []godview.Fact{loss(p, 0, 11, 19)}, 26, 27, true, 19, 11, []audit.GenerationWrite{kept(3)}, false},
		{"the join's answer read after the loss, a later write after the loss too", []godview.Fact{loss(p, 0, 11, 19)}, 26, 27, false, 0, 0, []audit.GenerationWrite{kept(3), kept(20)}, false},
		{"only the tail lost before a deposed join", []godview.Fact{loss(p, 5, 22, 35)}, 37, 40, false, 0, 0, []audit.GenerationWrite{dep(36)}, false},
		{"the latest loss before the join bounds the writes", []godview.Fact{loss(p, 0, 5, 10), loss(p, 0, 22, 35)}, 37, 40, true, 35, 22, []audit.GenerationWrite{kept(20), dep(36)}, true},
		{"a loss after the join explains it first", []godview.Fact{loss(p, 0, 22, 35), loss(p, 0, 9, 38)}, 37, 40, true, 38, 9, []audit.GenerationWrite{dep(36)}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, deposed, ok := groupRecordsLost(c.facts, c.writes, p, c.joined, c.stopped)
			if ok != c.want || deposed != c.wantDeposed {
				t.Fatalf("groupRecordsLost = %v, deposed %v (%+v), want %v, deposed %v", ok, deposed, f, c.want, c.wantDeposed)
			}
			if ok && (f.At != c.wantAt || f.To != c.wantTo || f.Partition != p) {
				t.Fatalf("groupRecordsLost gave %+v, want the loss at %d to %d", f, c.wantAt, c.wantTo)
			}
		})
	}
}

func dep(at int64) audit.GenerationWrite  { return audit.GenerationWrite{At: at, Deposed: true} }
func kept(at int64) audit.GenerationWrite { return audit.GenerationWrite{At: at} }
