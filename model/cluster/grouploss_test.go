package cluster

import (
	"testing"

	"kafkasim/godview"
)

// A member that stopped on GROUP_ID_NOT_FOUND is excused only by a loss of
// its group's partition that took every record the partition held (from
// offset 0), after the member last joined and no later than it stopped.
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
	}{
		{"the whole partition lost between join and stop", []godview.Fact{loss(p, 0, 11, 36)}, 1, 55, true, 36, 11},
		{"the stop at the loss itself", []godview.Fact{loss(p, 0, 11, 36)}, 1, 36, true, 36, 11},
		{"another partition's loss", []godview.Fact{loss("__consumer_offsets-10", 0, 11, 36)}, 1, 55, false, 0, 0},
		{"a partition whose name extends it", []godview.Fact{loss(p+"0", 0, 11, 36)}, 1, 55, false, 0, 0},
		{"only the tail lost: the group's first records survive", []godview.Fact{loss(p, 5, 11, 36)}, 1, 55, false, 0, 0},
		{"nothing lost", []godview.Fact{loss(p, 0, 0, 36)}, 1, 55, false, 0, 0},
		{"lost before the member joined: its group came after", []godview.Fact{loss(p, 0, 11, 36)}, 40, 55, false, 0, 0},
		{"lost at the join", []godview.Fact{loss(p, 0, 11, 36)}, 36, 55, false, 0, 0},
		{"lost after the member stopped", []godview.Fact{loss(p, 0, 11, 60)}, 1, 55, false, 0, 0},
		{"a member that never joined", []godview.Fact{loss(p, 0, 11, 36)}, -1, 55, false, 0, 0},
		{"an unclean election is not a loss", []godview.Fact{{Kind: godview.UncleanElection, Partition: p, At: 36, Producer: godview.NoProducer}}, 1, 55, false, 0, 0},
		{"the loss after the rejoin explains it", []godview.Fact{loss(p, 0, 5, 10), loss(p, 0, 20, 36)}, 20, 55, true, 36, 20},
		{"no facts", nil, 1, 55, false, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, ok := groupRecordsLost(c.facts, p, c.joined, c.stopped)
			if ok != c.want {
				t.Fatalf("groupRecordsLost = %v (%+v), want %v", ok, f, c.want)
			}
			if ok && (f.At != c.wantAt || f.To != c.wantTo || f.Partition != p) {
				t.Fatalf("groupRecordsLost gave %+v, want the loss at %d to %d", f, c.wantAt, c.wantTo)
			}
		})
	}
}
