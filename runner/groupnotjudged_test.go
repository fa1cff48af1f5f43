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
