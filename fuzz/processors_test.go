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
