package runner

import (
	"strings"
	"testing"

	"kafkasim/scenarios"
)

// A group whose every member ended on UNRELEASED_INSTANCE_ID cannot heal:
// the run passes on the rest, and its converge detail says the group was
// judged without the member and why, naming it.
func TestGroupOfEndedStaticMembersIsNotJudged(t *testing.T) {
	s, err := scenarios.LoadFile("testdata/group-static-member-fenced-by-its-own-join-not-judged.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, s)
	if !res.Converged || !strings.Contains(res.ConvergeDetail, "judged without a member Kafka would stop too: b-0 stopped on UNRELEASED_INSTANCE_ID") {
		t.Fatalf("converged %v, detail %q: want the group not judged, by name and cause", res.Converged, res.ConvergeDetail)
	}
}

// Members whose FindCoordinator a killed broker refused look again after
// retry.backoff.ms, as Kafka's do, and the group settles: it is judged, and
// healed.
func TestFindCoordinatorRefusedGroupSettles(t *testing.T) {
	res := runConverged(t, "testdata/group-member-find-coordinator-refused-by-a-killed-broker-retried-after-backoff.yaml")
	if strings.Contains(res.ConvergeDetail, "not judged") {
		t.Fatalf("converge detail %q: want group xg judged, and healed", res.ConvergeDetail)
	}
}

// The processors of a group Kafka rebalances for ever keep writing their
// output: its latest writes, still replicating, are not waited for, and
// the run says so with the group's reason.
func TestRebalancingForEverProcessorsOutputNotWaitedFor(t *testing.T) {
	res := runConverged(t, "testdata/processor-group-rebalancing-for-ever-output-not-waited-for-not-judged.yaml")
	expectDetail(t, res,
		"not judged: group xg is PreparingRebalance: group xg's rebalance timeout is 2.066s",
		"its stream processors keep writing x-out-1 (",
	)
}
