package runner

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"kafkasim/model/audit"
	"kafkasim/scenarios"
)

var groupInvariantNames = []string{audit.GroupGenerationSingleCoordinator, audit.GroupPartitionSingleOwner, audit.GroupCommitNotBelowOwner}

// groupInvariants is each group invariant's count in res; it fails the test
// unless the run lists all three.
func groupInvariants(t *testing.T, res *Result) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, inv := range res.Invariants {
		if slices.Contains(groupInvariantNames, inv.Name) {
			out[inv.Name] = inv.Count
		}
	}
	if len(out) != len(groupInvariantNames) {
		t.Fatalf("the run lists the group invariants %v, want %v", out, groupInvariantNames)
	}
	return out
}

// The bug zoo's group switches break the god view's invariant of what they
// break — grant-before-release grants a partition its owner still has,
// no-generation-fencing takes a zombie's commit below the new owner's — and
// with them off the same schedules break none.
func TestGroupBugsBreakTheirInvariant(t *testing.T) {
	all := bundled(t)
	for _, tc := range []struct{ scenario, invariant string }{
		{"bugzoo/grant-before-release.yaml", audit.GroupPartitionSingleOwner},
		{"bugzoo/no-generation-fencing.yaml", audit.GroupCommitNotBelowOwner},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			t.Parallel()
			s := all[tc.scenario]
			on := groupInvariants(t, run(t, s))
			if on[tc.invariant] == 0 {
				t.Fatalf("with the bug on, %s held: %v", tc.invariant, on)
			}
			off := *s
			off.Bugs = []string{}
			if got := groupInvariants(t, run(t, &off)); got[audit.GroupGenerationSingleCoordinator]+got[audit.GroupPartitionSingleOwner]+got[audit.GroupCommitNotBelowOwner] != 0 {
				t.Fatalf("with the bug off: %v", got)
			}
		})
	}
}

// Every bundled and regression consumer-group scenario holds every group
// invariant; a run without groups does not list them (its summary is what
// it always was).
func TestGroupScenariosHoldTheGroupInvariants(t *testing.T) {
	var group []*scenarios.Scenario
	for name, s := range bundled(t) {
		if strings.HasPrefix(name, "group-") {
			group = append(group, s)
		}
	}
	files, err := filepath.Glob("testdata/group*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		s, err := scenarios.LoadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		group = append(group, s)
	}
	if len(group) < 20 {
		t.Fatalf("only %d group scenarios", len(group))
	}
	for _, s := range group {
		t.Run(s.Name, func(t *testing.T) {
			t.Parallel()
			res := run(t, s)
			for name, n := range groupInvariants(t, res) {
				if n != 0 {
					t.Errorf("%s broke %d times: %s", name, n, detailOf(res, name))
				}
			}
		})
	}
	res := run(t, bundled(t)["acks-all-safe.yaml"])
	for _, inv := range res.Invariants {
		if slices.Contains(groupInvariantNames, inv.Name) {
			t.Fatalf("a run without groups lists %s", inv.Name)
		}
	}
}

func detailOf(res *Result, name string) string {
	for _, inv := range res.Invariants {
		if inv.Name == name {
			return inv.Detail
		}
	}
	return ""
}
