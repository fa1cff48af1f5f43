package runner

import (
	"strings"
	"testing"

	"kafkasim/checker"
	"kafkasim/scenarios"
	"kafkasim/sim"
)

// electionSink keeps the controller's notes of preferred elections and the
// times leaders changed.
type electionSink struct{ preferred []sim.TraceRecord }

func (s *electionSink) Record(r sim.TraceRecord) {
	if r.Kind == "controller" && strings.HasPrefix(r.Detail, "preferred leader election") {
		s.preferred = append(s.preferred, r)
	}
}

func lostAcked(res *Result) int {
	for _, a := range res.Report.Anomalies {
		if a.Type == checker.LostAckedWrite {
			return a.Count
		}
	}
	return 0
}

// acks1-preferred-leader-election: with auto.leader.rebalance.enable the
// controller moves orders-0 back to its preferred replica about
// leader.imbalance.check.interval.seconds (10 s) after the controlled
// shutdown moved it away, and that move loses acks=1 writes on top of those
// the shutdown's move lost; switched off, the move never happens and only
// the shutdown's losses remain. Both are permitted by acks=1.
func TestPreferredLeaderElectionLosesAcks1Writes(t *testing.T) {
	s := bundled(t)["acks1-preferred-leader-election.yaml"]
	sink := &electionSink{}
	on := runWith(t, s, Options{Trace: sink})
	if len(sink.preferred) != 1 {
		t.Fatalf("want one preferred leader election, got %v", sink.preferred)
	}
	// The shutdown at 10 s moved leadership at once; the first check runs
	// an interval after the controller first saw the imbalance.
	if at := sink.preferred[0].At; at < 20e9 || at > 21e9 {
		t.Fatalf("preferred election at %v, want about 20 s (10 s + the 10 s interval)", at)
	}

	off := *s
	off.Cluster.Broker = cloneConfig(s.Cluster.Broker)
	off.Cluster.Broker.Set("auto.leader.rebalance.enable", "false")
	offSink := &electionSink{}
	offRes := runWith(t, &off, Options{Trace: offSink})
	if len(offSink.preferred) != 0 {
		t.Fatalf("auto.leader.rebalance.enable=false: preferred elections %v", offSink.preferred)
	}
	lostOn, lostOff := lostAcked(on), lostAcked(offRes)
	if lostOff == 0 || lostOn <= lostOff {
		t.Fatalf("lost acknowledged writes: %d with leader balancing, %d without; want more with it", lostOn, lostOff)
	}
	for _, res := range []*Result{on, offRes} {
		for _, a := range res.Report.Anomalies {
			if a.Type == checker.LostAckedWrite && (a.Verdict != checker.Permitted || !strings.HasPrefix(a.Because, "acks=1")) {
				t.Fatalf("lost-acked-write %s because %q, want permitted by acks=1", a.Verdict, a.Because)
			}
		}
		if len(res.Violations) > 0 {
			t.Fatalf("invariant violations: %v", res.Violations)
		}
	}
}

func cloneConfig(c scenarios.Config) scenarios.Config {
	out := scenarios.Config{Keys: append([]string(nil), c.Keys...), Values: map[string]string{}, Explicit: map[string]bool{}}
	for _, k := range c.Keys {
		out.Values[k] = c.Values[k]
		out.Explicit[k] = c.Explicit[k]
	}
	return out
}

// An operator's unclean election (elect-leaders type unclean) of a
// leaderless partition elects the live replica outside the ISR: the audit
// sees the election as unclean (the new leader is RECOVERING, as Kafka's
// PartitionChangeBuilder marks it) and the checker permits the loss as the
// operator's choice. Without the request the partition waits for its last
// leader, which holds everything, and nothing is lost.
func TestUncleanElectLeadersLossIsTheOperatorsChoice(t *testing.T) {
	s, err := scenarios.LoadFile("testdata/elect-leaders-unclean-loss.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, s)
	if len(res.Losses) == 0 {
		t.Fatalf("no loss seen\n%s", explain(res))
	}
	for _, l := range res.Losses {
		if l.Cause != "unclean-election" {
			t.Fatalf("loss %+v, want cause unclean-election", l)
		}
	}
	if n := lostAcked(res); n == 0 {
		t.Fatalf("no lost-acked-write\n%s", explain(res))
	}
	for _, a := range res.Report.Anomalies {
		if a.Type == checker.LostAckedWrite && (a.Verdict != checker.Permitted || !strings.Contains(a.Because, "an operator's unclean leader election")) {
			t.Fatalf("lost-acked-write %s because %q, want permitted as the operator's unclean election", a.Verdict, a.Because)
		}
	}

	losesNothingWithout(t, s, "elect-leaders")
}
