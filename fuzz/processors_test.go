package fuzz

import (
	"slices"
	"strings"
	"testing"

	"kafkasim/scenarios"
)

// A share of the seeds draw a processor that reads the first topic and
// writes x-out, with faults only on its own nodes added; everything else
// the seed drew is as without it.
func TestGeneratorDrawsProcessors(t *testing.T) {
	n, eos, faulted := 0, 0, 0
	for seed := uint64(1); seed <= 200; seed++ {
		without, err := GenerateMix(seed, nil, nil, 30, 0)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		with, err := GenerateMix(seed, nil, nil, 30, 25)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		i := slices.IndexFunc(with.Consumers, func(c scenarios.Consumer) bool { return c.Processor != nil })
		if i < 0 {
			if a, b := resolved(t, without), resolved(t, with); a != b {
				t.Fatalf("seed %d drew no processor but changed:\n%s\n---\n%s", seed, a, b)
			}
			continue
		}
		n++
		x := with.Consumers[i]
		if x.Name != "x" || x.Group != "xg" || x.Processor.Output != processorOutput || x.Topics[0] != with.Topics[0].Name {
			t.Fatalf("seed %d: processor %+v", seed, x)
		}
		if x.Processor.ExactlyOnce {
			eos++
		}
		if len(with.Topics) != len(without.Topics)+1 || with.Topics[len(with.Topics)-1].Name != processorOutput {
			t.Fatalf("seed %d: topics %d, want %d and x-out", seed, len(with.Topics), len(without.Topics)+1)
		}
		if !slices.EqualFunc(with.Producers, without.Producers, func(a, b scenarios.Producer) bool { return a.Name == b.Name && a.Rate == b.Rate }) {
			t.Fatalf("seed %d: the producers changed", seed)
		}
		// Every fault of the seed without the processor is still there;
		// the others name the processor's nodes.
		var own []string
		for k := range x.Count {
			own = append(own, "x-"+string(rune('0'+k)), "txn-coordinator(x-"+string(rune('0'+k))+")")
		}
		own = append(own, "group-coordinator(xg)")
		extra := len(with.Faults) - len(without.Faults)
		for _, f := range with.Faults {
			if names(f.Fault, own) {
				extra--
			}
		}
		if extra != 0 {
			t.Fatalf("seed %d: %d faults added that do not name the processor", seed, extra)
		}
		if len(with.Faults) > len(without.Faults) {
			faulted++
		}
	}
	if n < 25 || n > 80 || eos == 0 || eos == n || faulted == 0 {
		t.Fatalf("200 seeds at 25%%: %d processors (want about 50), %d exactly-once, %d with faults on them", n, eos, faulted)
	}
}

func resolved(t *testing.T, s *scenarios.Scenario) string {
	t.Helper()
	data, err := s.Resolved()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(data))
}

// no-generation-fencing is found blind through the drawn processors: a
// zombie instance's offset commit (a TxnOffsetCommit when exactly-once)
// taken from a fenced generation, which the same seed with the bug off
// does not break.
func TestProcessorsFindNoGenerationFencingBlind(t *testing.T) {
	if testing.Short() {
		t.Skip("runs dozens of simulations")
	}
	// kafkasim fuzz --bugs no-generation-fencing --processors 100
	// --groups 0 finds it at seed 7.
	const bug = "no-generation-fencing"
	for seed := uint64(1); seed <= 30; seed++ {
		s, err := GenerateMix(seed, nil, []string{bug}, 0, 100)
		if err != nil {
			t.Fatal(err)
		}
		_, f := runOne(s)
		if f == nil || !slices.Contains(f.What, "zombie-commit") {
			continue
		}
		off, _ := GenerateMix(seed, nil, nil, 0, 100)
		if _, fo := runOne(off); fo != nil {
			t.Fatalf("%s: seed %d fails with the bug off too: %+v", bug, seed, fo)
		}
		t.Logf("%s: found at seed %d (exactly-once %v): %v", bug, seed, s.Consumers[len(s.Consumers)-1].Processor.ExactlyOnce, f.What)
		return
	}
	t.Fatalf("%s: seeds 1..30 found no zombie-commit", bug)
}
