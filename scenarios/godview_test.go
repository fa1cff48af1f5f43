package scenarios

import (
	"testing"

	"kafkasim/godview"
)

// Without a god view, the checker knows only what the scenario's faults may
// do: every scheduled fault or nemesis rule that may lose page cache (the
// spec example's crash, power loss and disk wipe, and its nemesis's
// crashes; not its network partitions) and the topics it grows.
func TestScheduledFaultFacts(t *testing.T) {
	s, err := LoadFile("testdata/spec-example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	facts := s.ScheduledFaultFacts()
	if facts.GodView() {
		t.Fatal("a scenario's faults are no god view")
	}
	if n := facts.Count(godview.PowerLoss); n != 4 {
		t.Fatalf("%d power losses, want 4: %+v", n, facts.Of(godview.PowerLoss))
	}
	if added := facts.Of(godview.PartitionsAdded); len(added) != 1 || added[0].Topic != "orders" {
		t.Fatalf("partitions added %+v, want orders", added)
	}
	if n := facts.Count(godview.Loss); n != 0 {
		t.Fatalf("%d losses: a scenario cannot know them", n)
	}
}
