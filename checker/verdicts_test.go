package checker

import (
	"flag"
	"os"
	"strings"
	"testing"

	"kafkasim/godview"
	"kafkasim/history"
)

var update = flag.Bool("update", false, "rewrite VERDICTS.md from the verdict table")

// VERDICTS.md is the verdict table, rendered.
func TestVerdictsMarkdown(t *testing.T) {
	want := VerdictsMarkdown()
	if *update {
		if err := os.WriteFile("VERDICTS.md", []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile("VERDICTS.md")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("VERDICTS.md is out of date: go test ./checker -run TestVerdictsMarkdown -update")
	}
}

func TestEveryAnomalyHasAVerdict(t *testing.T) {
	for _, typ := range AnomalyTypes {
		if typ == IntPollSkip || typ == IntNonmonotonicPoll {
			continue
		}
		var last *Rule
		for i := range VerdictRules {
			if VerdictRules[i].Anomaly == typ {
				last = &VerdictRules[i]
			}
		}
		if last == nil || last.If != nil || last.When != "" {
			t.Errorf("%s: the table needs rules ending in an unconditional one", typ)
		}
	}
	for _, r := range VerdictRules {
		if r.Verdict != Violation && r.Verdict != Permitted || r.Because == "" || (r.If != nil) != (r.When != "") {
			t.Errorf("%s: malformed rule %+v", r.Anomaly, r)
		}
	}
}

func TestVerdictsFollowTheConfiguration(t *testing.T) {
	// The table decides by the facts, in order.
	cases := []struct {
		typ     string
		f       Facts
		verdict string
		why     string
	}{
		{LostAckedWrite, Facts{Acks: "all", MinInsyncReplicas: 2}, Violation, "min.insync.replicas=2"},
		{LostAckedWrite, Facts{Acks: "1"}, Permitted, "acks=1"},
		{LostAckedWrite, Facts{Acks: "1", ReadByPoll: true}, Violation, "committed"},
		{LostAckedWrite, Facts{Acks: "all", Loss: &DataLoss{Cause: "power-loss"}}, Permitted, "page cache"},
		{LostAckedWrite, Facts{Acks: "all", Loss: &DataLoss{Cause: "power-loss"}, FlushEveryMessage: true}, Violation, "flush.messages=1"},
		{LostAckedWrite, Facts{Acks: "1", Loss: &DataLoss{Cause: "power-loss"}, FlushEveryMessage: true, ReadByPoll: true}, Violation, "flush.messages=1"},
		{LostAckedWrite, Facts{Acks: "0", Loss: &DataLoss{Cause: "power-loss"}, FlushEveryMessage: true, ReadByPoll: true}, Violation, "before it is acknowledged or read"},
		{LostAckedWrite, Facts{Acks: "0", Loss: &DataLoss{Cause: "unclean-election"}, FlushEveryMessage: true, ReadByPoll: true}, Permitted, "last known leader"},
		// A power loss that took every in-sync copy is the cause, whatever
		// election exposed it; the reason adds the election.
		{LostAckedWrite, Facts{Acks: "all", Loss: &DataLoss{Cause: "power-loss", ExposedBy: "unclean-election"}, ELR: true}, Permitted, "lost power before they reached disk; with no ISR or ELR member left, Kafka then elected the last known leader"},
		{LostAckedWrite, Facts{Acks: "all", Loss: &DataLoss{Cause: "power-loss", ExposedBy: "unclean-election"}, Unclean: true}, Permitted, "lost power before they reached disk; with no in-sync copy left, the controller then elected a replica outside the ISR"},
		{LostAckedWrite, Facts{Acks: "all", Loss: &DataLoss{Cause: "power-loss", ExposedBy: "unclean-election"}, Unclean: true, FlushEveryMessage: true}, Violation, "a power loss must not lose it; with no in-sync copy left"},
		{LostAckedWrite, Facts{Acks: "all", Loss: &DataLoss{Cause: "disk-wipe", ExposedBy: "unclean-election"}}, Permitted, "wiped"},
		{LostAckedWrite, Facts{Acks: "0", FlushEveryMessage: true, ReadByPoll: true, GodView: true}, Violation, "committed"},
		// Without the god view a power loss may have taken any record, read
		// or not, unless every acknowledged write was flushed first.
		{LostAckedWrite, Facts{Acks: "all", MinInsyncReplicas: 2, ReadByPoll: true, PowerLosses: 1}, Permitted, "power was lost"},
		{LostAckedWrite, Facts{Acks: "all", MinInsyncReplicas: 2, ReadByPoll: true, PowerLosses: 1, FlushEveryMessage: true}, Violation, "committed"},
		{LostAckedWrite, Facts{Acks: "all", MinInsyncReplicas: 2, ReadByPoll: true, PowerLosses: 1, GodView: true}, Violation, "committed"},
		{LostAckedWrite, Facts{Acks: "all", MinInsyncReplicas: 2, ReadByPoll: true}, Violation, "committed"},
		{InconsistentOffsets, Facts{ReadValues: 2, PowerLosses: 1}, Permitted, "power was lost"},
		{InconsistentOffsets, Facts{ReadValues: 2, PowerLosses: 1, FlushEveryMessage: true}, Violation, "committed data changed"},
		{InconsistentOffsets, Facts{ReadValues: 2, PowerLosses: 1, GodView: true}, Violation, "committed data changed"},
		{AbortedRead, Facts{Isolation: "read_uncommitted"}, Permitted, "read_uncommitted"},
		{AbortedRead, Facts{Isolation: readCommitted}, Violation, "read_committed"},
		{AbortedRead, Facts{Isolation: "read_uncommitted", FailedSend: true}, Violation, "definitely failed"},
		{NonmonotonicCommit, Facts{CommitMode: "after-processing"}, Permitted, "at-least-once"},
		{NonmonotonicCommit, Facts{CommitMode: "before-processing"}, Violation, "at-most-once"},
		{ReprocessedRecord, Facts{CommitMode: "before-processing"}, Violation, "no record is processed twice"},
		{ReprocessedRecord, Facts{CommitMode: "before-processing", LostThenResurrected: true}, Permitted, "later unclean election"},
		{ReprocessedRecord, Facts{CommitMode: "transactional", CommittedAttempts: 2, LostThenResurrected: true}, Permitted, "later unclean election"},
		{ReprocessedRecord, Facts{CommitMode: "transactional", CommittedAttempts: 2}, Violation, "exactly-once"},
		{Duplicate, Facts{Idempotence: true, GodView: true}, Violation, "written once"},
		{Duplicate, Facts{Idempotence: true, GodView: true, Forgotten: true}, Permitted, "OUT_OF_ORDER_SEQUENCE_NUMBER"},
		{Duplicate, Facts{Idempotence: true, GodView: true, Forgotten: true, SentTwice: true}, Violation, "unique"},
		{Duplicate, Facts{Idempotence: true, GodView: true, ForgottenProducer: true}, Permitted, "any sequence"},
		{Duplicate, Facts{Idempotence: true, GodView: true, ForgottenProducer: true, SentTwice: true}, Violation, "unique"},
		{Duplicate, Facts{Idempotence: true, GodView: true, Resurrected: true}, Permitted, "never-committed"},
		{Duplicate, Facts{Idempotence: true, GodView: true, Resurrected: true, SentTwice: true}, Violation, "unique"},
		{G0, Facts{}, Permitted, "not isolated"},
		{G0, Facts{Impossible: true}, Violation, "real-time"},
		{IntPollSkip, Facts{InFinalReads: true}, Violation, "still in the log"},
		{Nonlinearizable, Facts{Acks: "all", Related: Permitted, RelatedType: Duplicate, RelatedWhy: "idempotence off"}, Permitted, "follows from duplicate"},
		{Nonlinearizable, Facts{Acks: "1"}, Permitted, "acks=1"},
		{Nonlinearizable, Facts{Acks: "all", Bugs: []string{"hw-truncation"}}, Violation, "hw-truncation"},
	}
	for _, c := range cases {
		v, why := decide(c.typ, &c.f)
		if v != c.verdict || !strings.Contains(why, c.why) || strings.Contains(why, thenPlaceholder) {
			t.Errorf("%s %+v: %s %q, want %s (%q)", c.typ, c.f, v, why, c.verdict, c.why)
		}
	}
}

func TestReportSaysWhatItAssumed(t *testing.T) {
	h := &hb{}
	h.send("p-0", "a", 0, 0, history.OK)
	h.poll("c-0", true, rec{0, 0, "a"})
	r := Check(h.ops, Config{})
	all := strings.Join(r.Assumed, "\n")
	for _, want := range []string{"producers p-0", "acks=all", "consumers c-0", "topics t", "no god view"} {
		if !strings.Contains(all, want) {
			t.Fatalf("assumed %q, want a mention of %q", all, want)
		}
	}
	full := strict
	full.Consumers = []ConsumerGuarantees{{Prefix: "c", Isolation: readCommitted}}
	full.Happened = godview.Seen()
	if r := Check(h.ops, full); len(r.Assumed) != 0 {
		t.Fatalf("a configuration that covers the history assumes nothing: %q", r.Assumed)
	}
}
