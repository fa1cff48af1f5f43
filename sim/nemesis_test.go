package sim

import (
	"slices"
	"testing"
	"time"
)

// nemesisLog runs one pause rule on node-0 of a probe world, its faults
// lasting down and starting every apart, until until (and the last one's
// undo), and returns the rule's fault records: when its faults started
// (starts) and were undone (undos), and every record (all).
func nemesisLog(t *testing.T, every, down time.Duration, until time.Duration) (starts, undos []time.Duration, all []FaultRecord) {
	t.Helper()
	w, _ := probeWorld(1, 3, DefaultNetworkOptions())
	rule := NemesisRule{Fault: Fault{Kind: FaultPause, Target: "node-0"}, Every: Range{Min: every, Max: every}, Down: Range{Min: down, Max: down}}
	if _, err := w.StartNemesis(NemesisOptions{Rules: []NemesisRule{rule}, Stop: until}); err != nil {
		t.Fatal(err)
	}
	w.RunUntil(until + down)
	for _, rec := range w.FaultLog() {
		if rec.Origin != "nemesis/0" {
			continue
		}
		all = append(all, rec)
		if rec.Undo {
			undos = append(undos, rec.At)
		} else {
			starts = append(starts, rec.At)
		}
	}
	return starts, undos, all
}

func seconds(xs ...float64) []time.Duration {
	out := make([]time.Duration, len(xs))
	for i, x := range xs {
		out[i] = time.Duration(x * float64(time.Second))
	}
	return out
}

// `every` is the time from one fault's start to the next one's, the first
// fault coming `every` after the fault phase starts; the fault's duration
// does not add to the period.
func TestNemesisEveryIsStartToStart(t *testing.T) {
	starts, undos, _ := nemesisLog(t, 10*time.Second, 3*time.Second, 45*time.Second)
	if want := seconds(10, 20, 30, 40); !slices.Equal(starts, want) {
		t.Errorf("every 10s down 3s: faults at %v, want %v", starts, want)
	}
	if want := seconds(13, 23, 33, 43); !slices.Equal(undos, want) {
		t.Errorf("every 10s down 3s: undone at %v, want %v", undos, want)
	}
}

// A rule never stacks its own faults: a fault longer than the gap delays the
// next one until it has ended.
func TestNemesisFaultsOfOneRuleDoNotOverlap(t *testing.T) {
	starts, undos, all := nemesisLog(t, 2*time.Second, 5*time.Second, 20*time.Second)
	if want := seconds(2, 7, 12, 17); !slices.Equal(starts, want) {
		t.Errorf("every 2s down 5s: faults at %v, want %v", starts, want)
	}
	if want := seconds(7, 12, 17, 22); !slices.Equal(undos, want) {
		t.Errorf("every 2s down 5s: undone at %v, want %v", undos, want)
	}
	// Where a fault and the next one's start fall on one instant, the undo
	// comes first: node-0 is never paused twice over.
	paused := false
	for _, rec := range all {
		if rec.Skipped != "" {
			t.Fatalf("a fault was skipped at %v: %s", rec.At, rec.Skipped)
		}
		if rec.Undo == !paused {
			t.Fatalf("at %v: undo %v while paused %v", rec.At, rec.Undo, paused)
		}
		paused = !rec.Undo
	}
}
