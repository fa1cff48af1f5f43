package runner

import (
	"os"
	"strings"
	"testing"

	"kafkasim/scenarios"
)

// Group billing's records on __consumer_offsets-9 are lost (both racks
// lose power before the flush policy wrote them; KIP-966 elects the last
// known leader). A KIP-848 member is answered GROUP_ID_NOT_FOUND and stops,
// as Kafka's consumer does: the run converges with the group not judged,
// and says so naming the loss. A classic member is answered
// UNKNOWN_MEMBER_ID and rejoins: its group comes back, and nothing goes
// unjudged.
func TestGroupWhoseRecordsWereLost(t *testing.T) {
	const file = "testdata/group-consumer-records-lost-member-stops.yaml"
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("consumer", func(t *testing.T) {
		t.Parallel()
		s, err := scenarios.Parse(file, data)
		if err != nil {
			t.Fatal(err)
		}
		res := run(t, s)
		if !res.Converged {
			t.Fatalf("not converged: %s", res.ConvergeDetail)
		}
		for _, want := range []string{"not judged: group billing", "__consumer_offsets-9 were lost (offsets 0..", "power-loss exposed by unclean-election", "b-0 stopped on GROUP_ID_NOT_FOUND"} {
			if !strings.Contains(res.ConvergeDetail, want) {
				t.Fatalf("converge detail %q does not say %q", res.ConvergeDetail, want)
			}
		}
	})
	t.Run("classic", func(t *testing.T) {
		t.Parallel()
		text := strings.ReplaceAll(string(data), "group.protocol: consumer", "group.protocol: classic")
		text = strings.ReplaceAll(text, "      group.remote.assignor: range\n", "")
		s, err := scenarios.Parse(file, []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		res := run(t, s)
		if !res.Converged || res.ConvergeDetail != "" {
			t.Fatalf("converged %v (%q): want the classic group back by itself, nothing unjudged", res.Converged, res.ConvergeDetail)
		}
		if res.Verdict != Pass {
			t.Fatalf("verdict %s\n%s", res.Verdict, explain(res))
		}
	})
}

// The loss rule's two other paths, each a fuzz seed: a member whose clock
// a fault set back (its join and stop are compared with the loss in
// virtual time), and a member that rejoined through a coordinator an
// unclean election had deposed (its join's write went as it committed).
// The run converges with the group not judged, and says why.
func TestGroupRecordsLostNotJudged(t *testing.T) {
	for _, c := range []struct {
		file string
		want []string
	}{
		{"testdata/group-consumer-clock-set-back-records-lost-not-judged.yaml",
			[]string{"not judged: group billing", "__consumer_offsets-9 were lost (offsets 0..", "b-0 stopped on GROUP_ID_NOT_FOUND"}},
		{"testdata/group-consumer-joined-through-deposed-coordinator-not-judged.yaml",
			[]string{"not judged: group billing", "__consumer_offsets-9 were lost (offsets 0..30, unclean-election",
				"b-1 joined since through a coordinator an unclean election had deposed", "b-0, b-1 stopped on GROUP_ID_NOT_FOUND"}},
	} {
		t.Run(c.file, func(t *testing.T) {
			t.Parallel()
			s, err := scenarios.LoadFile(c.file)
			if err != nil {
				t.Fatal(err)
			}
			res := run(t, s)
			if !res.Converged {
				t.Fatalf("not converged: %s", res.ConvergeDetail)
			}
			for _, want := range c.want {
				if !strings.Contains(res.ConvergeDetail, want) {
					t.Fatalf("converge detail %q does not say %q", res.ConvergeDetail, want)
				}
			}
		})
	}
}
