package runner

import (
	"os"
	"slices"
	"strings"
	"testing"

	"kafkasim/checker"
	"kafkasim/scenarios"
)

// verdictClasses is what a report concluded, as "type verdict" pairs.
func verdictClasses(r *checker.Report) []string {
	var out []string
	for _, a := range r.Anomalies {
		if c := a.Type + " " + a.Verdict; !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	slices.Sort(out)
	return out
}

// A real client and the simulator, under the same commit mode and the same
// kind of fault (a member dying halfway through a poll's records), give the
// same verdict classes: histories recorded from franz-go against kfake by
// tools/kfakerec (checker/testdata/README.md), checked with the
// configuration they ran under, against the bundled crash scenarios run by
// the simulator — with each group protocol.
func TestRealClientAndSimulatorGiveTheSameVerdictClasses(t *testing.T) {
	for _, tc := range []struct {
		protocol, commit, twin string
		want                   []string
	}{
		{"classic", "after-processing", "group-at-least-once-crash", []string{"reprocessed-record permitted"}},
		{"classic", "before-processing", "group-at-most-once-crash", []string{"skipped-record permitted"}},
		{"consumer", "after-processing", "group-at-least-once-crash", []string{"reprocessed-record permitted"}},
		{"consumer", "before-processing", "group-at-most-once-crash", []string{"skipped-record permitted"}},
	} {
		t.Run(tc.protocol+"/"+tc.commit, func(t *testing.T) {
			base := "../checker/testdata/kfakerec-group-" + tc.protocol + "-" + tc.commit + "-crash"
			recorded, err := scenarios.LoadFile(base + ".yaml")
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(base + ".jsonl.gz")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			real, err := checker.CheckReader(f, CheckerConfig(recorded, recorded.ScheduledFaultFacts()))
			if err != nil {
				t.Fatal(err)
			}

			data, err := os.ReadFile("../scenarios/" + tc.twin + ".yaml")
			if err != nil {
				t.Fatal(err)
			}
			text := string(data)
			if tc.protocol == "consumer" {
				// The classic protocol's member timeouts are refused with
				// KIP-848's: the coordinator's defaults apply.
				classic := "config: { auto.offset.reset: earliest, session.timeout.ms: 10000, heartbeat.interval.ms: 1000, max.poll.records: 100 }"
				if !strings.Contains(text, classic) {
					t.Fatalf("%s no longer configures its members as this test expects", tc.twin)
				}
				text = strings.Replace(text, classic, "config: { auto.offset.reset: earliest, group.protocol: consumer, max.poll.records: 100 }", 1)
			}
			twin, err := scenarios.Parse(tc.twin+".yaml", []byte(text))
			if err != nil {
				t.Fatal(err)
			}
			sim := run(t, twin)

			got, simulated := verdictClasses(real), verdictClasses(sim.Report)
			if !slices.Equal(got, tc.want) || !slices.Equal(simulated, tc.want) {
				t.Fatalf("verdict classes: franz-go %v, simulator %v, want %v for both\nrecorded:\n%s\nsimulated:\n%s",
					got, simulated, tc.want, real.Summary(), sim.Report.Summary())
			}
		})
	}
}
