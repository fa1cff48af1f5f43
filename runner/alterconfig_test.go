package runner

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"kafkasim/checker"
	"kafkasim/history"
	"kafkasim/scenarios"
	"kafkasim/sim"
)

// noteSink keeps the trace's notes of some kinds.
type noteSink struct {
	kinds []string
	notes []sim.TraceRecord
}

func (s *noteSink) Record(r sim.TraceRecord) {
	for _, k := range s.kinds {
		if r.Kind == k {
			s.notes = append(s.notes, r)
		}
	}
}

func (s *noteSink) find(kind, prefix string) (sim.TraceRecord, bool) {
	for _, r := range s.notes {
		if r.Kind == kind && strings.HasPrefix(r.Detail, prefix) {
			return r, true
		}
	}
	return sim.TraceRecord{}, false
}

// Turning unclean.leader.election.enable on for a leaderless partition
// elects nothing at once: the controller's periodic pass does, 5 minutes
// after it became active, and the loss that costs is permitted as the
// config the election found allows it. Without the alter-config the
// partition waits for its last leader and nothing is lost.
func TestAlterConfigUncleanWaitsForThePeriodicElection(t *testing.T) {
	s, err := scenarios.LoadFile("testdata/alter-config-unclean-periodic-election.yaml")
	if err != nil {
		t.Fatal(err)
	}
	sink := &noteSink{kinds: []string{"admin", "controller"}}
	res := runWith(t, s, Options{Trace: sink})
	answer, ok := sink.find("admin", "alter-config topic orders unclean.leader.election.enable=true: NONE")
	if !ok || answer.At < 22*time.Second || answer.At > 23*time.Second {
		t.Fatalf("want the alter-config accepted at about 22 s, got %v %v", answer, ok)
	}
	election, ok := sink.find("controller", "unclean leader election")
	if !ok || election.At < 299*time.Second || election.At > 301*time.Second {
		t.Fatalf("want the periodic unclean election at about 300 s, got %v %v", election, ok)
	}
	if len(res.Losses) == 0 || lostAcked(res) == 0 {
		t.Fatalf("no loss\n%s", explain(res))
	}
	for _, l := range res.Losses {
		if l.Cause != "unclean-election" || l.At < int64(election.At) {
			t.Fatalf("loss %+v, want an unclean election's after %v", l, election.At)
		}
	}
	for _, a := range res.Report.Anomalies {
		if a.Type == checker.LostAckedWrite && (a.Verdict != checker.Permitted || !strings.Contains(a.Because, "unclean.leader.election.enable=true")) {
			t.Fatalf("lost-acked-write %s because %q, want permitted by unclean.leader.election.enable=true", a.Verdict, a.Because)
		}
	}

	losesNothingWithout(t, s, "alter-config")
}

// min-isr-lowered-during-outage: the leader applies a lowered
// min.insync.replicas at once — no send is acknowledged while the ISR is
// below min ISR 2, and sends are again soon after the alter-config — and
// the loss that follows the leader's power loss is permitted; without the
// alter-config the ELR keeps a clean leader and nothing is lost.
func TestLoweredMinISRTakesEffectAtOnce(t *testing.T) {
	s := bundled(t)["min-isr-lowered-during-outage.yaml"]
	sink := &noteSink{kinds: []string{"admin"}}
	res := runWith(t, s, Options{Trace: sink})
	answer, ok := sink.find("admin", "alter-config topic orders min.insync.replicas=1: NONE")
	if !ok {
		t.Fatalf("the alter-config was not accepted: %v", sink.notes)
	}
	var between, after int
	for _, op := range res.History.Ops() {
		if op.F != history.FSend || op.Type != history.OK {
			continue
		}
		switch at := time.Duration(op.Time); {
		case at > 16*time.Second && at < answer.At-50*time.Millisecond:
			between++
		case at > answer.At && at < answer.At+2*time.Second:
			after++
		}
	}
	if between != 0 || after == 0 {
		t.Fatalf("acknowledged sends: %d with the ISR below min ISR 2 (want 0), %d in the 2 s after min ISR 1 (want some)", between, after)
	}
	if lostAcked(res) == 0 || len(res.Violations) > 0 {
		t.Fatalf("want acknowledged writes lost and no violation\n%s", explain(res))
	}
	for _, a := range res.Report.Anomalies {
		if a.Verdict != checker.Permitted {
			t.Fatalf("%s %s: %s", a.Type, a.Verdict, a.Because)
		}
	}

	losesNothingWithout(t, s, "alter-config")
}

// A topic's retention.ms altered at run time reaches its logs
// (UnifiedLog.updateConfig): the old segments are deleted at the next
// retention checks; without the alter-config the default 7 days keeps
// everything.
func TestAlterConfigRetentionReachesTheLogs(t *testing.T) {
	src := `name: alter-retention
duration: 40s
cluster: { brokers: 3, broker: { log.retention.check.interval.ms: 1000 } }
topics: [{ name: orders, partitions: 1, replication.factor: 3, config: { segment.bytes: 1048576 } }]
producers: [{ name: p, rate: 3000/s, config: { acks: all } }]
faults:
  - { at: 10s, alter-config: { topic: orders, config: { retention.ms: 5s } } }
`
	s, err := scenarios.Parse("alter-retention.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	logStart := func(res *Result) int64 {
		if len(res.Final) != 1 {
			t.Fatalf("final state %+v", res.Final)
		}
		return res.Final[0].LogStartOffset
	}
	res := run(t, s)
	if ls := logStart(res); ls == 0 || len(res.Violations) > 0 || res.Report.Violations > 0 {
		t.Fatalf("retention.ms 5 s: log start %d, want segments deleted\n%s", ls, explain(res))
	}
	without := *s
	without.Faults = nil
	if ls := logStart(run(t, &without)); ls != 0 {
		t.Fatalf("default retention: log start %d, want 0", ls)
	}
}

// A broker's own min.insync.replicas is refused while ELR is on, and the
// refusal is noted where admin answers go (the trace, kind admin); with ELR
// off it is accepted.
func TestAlterConfigBrokerMinISRRefusedWithELR(t *testing.T) {
	for _, elr := range []bool{true, false} {
		src := `name: broker-min-isr
duration: 5s
cluster: { brokers: 3, broker: { eligible.leader.replicas.enable: ` + strconv.FormatBool(elr) + ` } }
topics: [{ name: orders }]
producers: [{ name: p }]
faults:
  - { at: 2s, alter-config: { broker: 2, config: { min.insync.replicas: 1 } } }
`
		s, err := scenarios.Parse("b.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		sink := &noteSink{kinds: []string{"admin"}}
		runWith(t, s, Options{Trace: sink})
		want := "alter-config broker 2 min.insync.replicas=1: NONE"
		if elr {
			want = "alter-config broker 2 min.insync.replicas=1: INVALID_CONFIG (Broker-level min.insync.replicas cannot be altered while ELR is enabled.)"
		}
		if _, ok := sink.find("admin", want); !ok {
			t.Fatalf("ELR %v: want the note %q, got %v", elr, want, sink.notes)
		}
	}
}

// losesNothingWithout runs s without its faults of key (and without its
// expectations, which were for them) and fails if anything is lost: the
// loss a test saw was those faults' doing.
func losesNothingWithout(t *testing.T, s *scenarios.Scenario, key string) {
	t.Helper()
	without := *s
	without.Faults = nil
	for _, f := range s.Faults {
		if f.Key != key {
			without.Faults = append(without.Faults, f)
		}
	}
	without.Expect = nil
	res := run(t, &without)
	if len(res.Losses) != 0 || lostAcked(res) != 0 {
		t.Fatalf("without the %s faults: losses %v, %d lost acknowledged writes\n%s", key, res.Losses, lostAcked(res), explain(res))
	}
}
