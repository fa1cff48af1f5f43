package runner

import (
	"strings"
	"testing"
)

// The regression scenarios of a partition Kafka leaves leaderless until an
// operator acts pass for that reason, not because a leader was elected:
// leaderless_partitions names the partition and the ClearElrRecord that
// took its last clean candidate, and the liveness is not judged.
func TestLeaderlessPartitionsAreNotJudged(t *testing.T) {
	for _, tc := range []struct {
		file string
		want string
	}{
		{"testdata/clear-elr-of-a-leaderless-partition-after-unclean-restarts.yaml",
			"orders-0 has no replica Kafka may elect: its ISR, ELR and last known leader are empty (a min.insync.replicas change's ClearElrRecord took broker-2 out of the last two"},
		{"testdata/clear-elr-of-a-leaderless-partition-after-clean-shutdowns.yaml",
			"orders-0 has no replica Kafka may elect: its ISR, ELR and last known leader are empty (a min.insync.replicas change's ClearElrRecord took broker-4 out of the last two"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			res := runConverged(t, tc.file)
			if !strings.HasPrefix(res.ConvergeDetail, "not judged: a partition has no replica Kafka may elect") {
				t.Fatalf("converged for another reason: %s", res.ConvergeDetail)
			}
			if len(res.Leaderless) != 1 || !strings.Contains(res.Leaderless[0], tc.want) {
				t.Fatalf("leaderless partitions %q, want one with %q", res.Leaderless, tc.want)
			}
			if n := res.ViolationCount(); n != 0 {
				t.Fatalf("%d violations:\n%s", n, explain(res))
			}
		})
	}
}
