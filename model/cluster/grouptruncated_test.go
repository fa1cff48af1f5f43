package cluster

import (
	"testing"

	"kafkasim/godview"
)

// A truncated position is excused only by a loss of that partition that
// took committed data at or above it.
func TestLossAtOrAbove(t *testing.T) {
	const p = "orders-0"
	loss := func(partition string, from, to int64) godview.Fact {
		return godview.Fact{Kind: godview.Loss, Partition: partition, From: from, To: to, At: 46, Cause: "power-loss", Producer: godview.NoProducer}
	}
	for _, c := range []struct {
		name     string
		facts    []godview.Fact
		offset   int64
		want     bool
		wantFrom int64
	}{
		{"lost from the position on", []godview.Fact{loss(p, 75, 180)}, 75, true, 75},
		{"lost from below the position, past it", []godview.Fact{loss(p, 70, 180)}, 75, true, 70},
		{"lost only below the position", []godview.Fact{loss(p, 10, 75)}, 75, false, 0},
		{"another partition's loss", []godview.Fact{loss("orders-1", 75, 180)}, 75, false, 0},
		{"a partition whose name extends it", []godview.Fact{loss(p+"0", 75, 180)}, 75, false, 0},
		{"an unclean election is not a loss", []godview.Fact{{Kind: godview.UncleanElection, Partition: p, At: 46, Producer: godview.NoProducer}}, 75, false, 0},
		{"the first loss that reaches the position", []godview.Fact{loss(p, 10, 20), loss(p, 75, 90), loss(p, 60, 100)}, 75, true, 75},
		{"no facts", nil, 75, false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, ok := lossAtOrAbove(c.facts, p, c.offset)
			if ok != c.want {
				t.Fatalf("lossAtOrAbove = %v (%+v), want %v", ok, f, c.want)
			}
			if ok && (f.From != c.wantFrom || f.Partition != p) {
				t.Fatalf("lossAtOrAbove gave %+v, want the loss from %d", f, c.wantFrom)
			}
		})
	}
}
