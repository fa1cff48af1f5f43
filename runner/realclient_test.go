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

// checkRecorded checks the history base.jsonl.gz, recorded by tools/kfakerec,
// against the configuration it was recorded under (base.yaml).
func checkRecorded(t *testing.T, base string) *checker.Report {
	t.Helper()
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
	return real
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
			real := checkRecorded(t, base)

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

// The same for transactions: franz-go's transactional producers against
// kfake (checker/testdata/kfakerec-txn.jsonl.gz: commits, a quarter
// aborted, a read_committed and a read_uncommitted reader) and the
// simulator running the configuration they were recorded under, for longer.
// Both show the aborted records read at read_uncommitted and transactions
// interleaving differently across partitions (G0), both permitted, and
// nothing else: no read_committed reader sees an aborted or open record.
func TestRealClientAndSimulatorGiveTheSameTransactionVerdictClasses(t *testing.T) {
	want := []string{"G0 permitted", "aborted-read permitted"}
	const base = "../checker/testdata/kfakerec-txn"
	real := checkRecorded(t, base)
	data, err := os.ReadFile(base + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "\nduration: 2s\n") {
		t.Fatal("kfakerec-txn.yaml no longer runs 2 s, as this test expects")
	}
	twin, err := scenarios.Parse("kfakerec-txn.yaml", []byte(strings.Replace(string(data), "\nduration: 2s\n", "\nduration: 20s\n", 1)))
	if err != nil {
		t.Fatal(err)
	}
	sim := run(t, twin)
	got, simulated := verdictClasses(real), verdictClasses(sim.Report)
	if !slices.Equal(got, want) || !slices.Equal(simulated, want) {
		t.Fatalf("verdict classes: franz-go %v, simulator %v, want %v for both\nrecorded:\n%s\nsimulated:\n%s",
			got, simulated, want, real.Summary(), sim.Report.Summary())
	}
	if sim.Report.Stats.TxnAborted == 0 || real.Stats.TxnAborted == 0 {
		t.Fatalf("aborted transactions: franz-go %d, simulator %d", real.Stats.TxnAborted, sim.Report.Stats.TxnAborted)
	}
}
