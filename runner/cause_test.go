package runner

import (
	"strings"
	"testing"

	"kafkasim/checker"
	"kafkasim/model/audit"
)

// A loss is explained by its root cause. rack-power-loss and
// min-isr-1-last-replica lose acknowledged writes because every in-sync
// replica lost power before they reached disk; Kafka then elects the last
// known leader (KIP-966), which only exposes the loss. unclean-election-loss
// loses them because an unclean election passes over the in-sync replica
// that still holds them.
func TestLossesAreExplainedByTheirRootCause(t *testing.T) {
	all := bundled(t)
	for _, c := range []struct {
		scenario, cause, exposedBy, because string
	}{
		{"rack-power-loss.yaml", audit.CausePowerLoss, audit.CauseUncleanElection,
			"every in-sync replica holding them lost power before they reached disk; with no ISR or ELR member left, Kafka then elected the last known leader"},
		{"min-isr-1-last-replica.yaml", audit.CausePowerLoss, audit.CauseUncleanElection,
			"every in-sync replica holding them lost power before they reached disk"},
		{"unclean-election-loss.yaml", audit.CauseUncleanElection, "",
			"unclean.leader.election.enable=true let a replica that lacked committed data lead"},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			t.Parallel()
			res := run(t, all[c.scenario])
			if len(res.Losses) == 0 {
				t.Fatalf("no loss seen\n%s", explain(res))
			}
			for _, l := range res.Losses {
				if l.Cause != c.cause || l.ExposedBy != c.exposedBy {
					t.Fatalf("loss %+v, want cause %s exposed by %q", l, c.cause, c.exposedBy)
				}
			}
			found := false
			for _, a := range res.Report.Anomalies {
				if a.Type != checker.LostAckedWrite {
					continue
				}
				found = true
				if a.Verdict != checker.Permitted || !strings.Contains(a.Because, c.because) {
					t.Fatalf("lost-acked-write %s because %q, want permitted because %q", a.Verdict, a.Because, c.because)
				}
			}
			if !found {
				t.Fatalf("no lost-acked-write\n%s", explain(res))
			}
		})
	}
}
