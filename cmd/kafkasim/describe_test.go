package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// groupsFixture is a final state with four consumer groups (reports'
// testdata), the folder describe groups reads.
const groupsFixture = "../../reports/testdata/groups"

func TestDescribeGroups(t *testing.T) {
	golden, err := os.ReadFile(filepath.Join(groupsFixture, "members-verbose.golden"))
	if err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := kafkasim(t, "describe", "groups", groupsFixture, "--members", "--verbose")
	// The golden file interleaves the two streams as a terminal shows
	// them; stdout alone is it without Kafka's messages.
	want := strings.NewReplacer("\nConsumer group 'archive' has no active members.\n", "", "\nWarning: Consumer group 'ledger' is rebalancing.\n", "").Replace(string(golden))
	if code != 0 || stdout != want {
		t.Fatalf("exit %d\n got:\n%s\nwant:\n%s", code, stdout, want)
	}
	if stderr != "\nConsumer group 'archive' has no active members.\n\nWarning: Consumer group 'ledger' is rebalancing.\n" {
		t.Fatalf("stderr %q", stderr)
	}
	code, stdout, _ = kafkasim(t, "describe", "groups", groupsFixture, "--group", "billing", "--offsets")
	if code != 0 || !strings.HasPrefix(stdout, "\nGroup: billing\tProtocol: classic\tState: Stable\tGeneration: 7\t") || strings.Contains(stdout, "ledger") ||
		!strings.Contains(stdout, "billing         orders          0          812             815             3               c-0-5d2e        /c-0            c-0\n") {
		t.Fatalf("--group billing: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = kafkasim(t, "describe", "groups", groupsFixture, "--json", "--group", "ledger")
	var desc struct {
		Groups []struct {
			Group    string `json:"group"`
			State    string `json:"state"`
			Protocol string `json:"protocol"`
			Offsets  []struct {
				Lag *int64 `json:"lag"`
			} `json:"offsets"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(stdout), &desc); code != 0 || err != nil || len(desc.Groups) != 1 || desc.Groups[0].State != "Reconciling" ||
		desc.Groups[0].Protocol != "consumer" || len(desc.Groups[0].Offsets) != 4 || desc.Groups[0].Offsets[0].Lag != nil {
		t.Fatalf("--json: exit %d %v\n%s", code, err, stdout)
	}
}

// Flags that do not go together, an unknown group and a malformed final
// state are bad input: exit 2, one line.
func TestDescribeGroupsRefuses(t *testing.T) {
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "final-state.json"), []byte(`{"partitions":[],"groups":[{"group_id":"g","protocol":"classic","state":"Rebalancing"}]}`), 0o644)
	empty := t.TempDir()
	os.WriteFile(filepath.Join(empty, "final-state.json"), []byte(`{"topics":[],"partitions":[]}`), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"groups", groupsFixture, "--state", "--members"}, "at most one of --state, --members and --offsets"},
		{[]string{"groups", groupsFixture, "--json", "--members"}, "--json prints every view"},
		{[]string{"groups", groupsFixture, "--topic", "orders"}, "--topic is for describe topics"},
		{[]string{"topics", groupsFixture, "--group", "billing"}, "are for describe groups"},
		{[]string{"topics", groupsFixture, "--verbose"}, "are for describe groups"},
		{[]string{"transactions", groupsFixture, "--members"}, "are for describe groups"},
		{[]string{"groups", groupsFixture, "--group", "nope"}, "Consumer group 'nope' does not exist in " + groupsFixture + " (its groups: archive, billing, gone, ledger)"},
		{[]string{"groups", empty, "--group", "nope"}, "(the run has no consumer groups)"},
		{[]string{"groups", bad}, filepath.Join(bad, "final-state.json") + `: groups[0].state: "Rebalancing" is not a state of a classic group`},
		{[]string{"groups", t.TempDir()}, "not a run folder with a final state"},
	} {
		code, stdout, stderr := kafkasim(t, append([]string{"describe"}, c.args...)...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("describe %v: exit %d, stdout %q, stderr %q; want exit 2 and %q", c.args, code, stdout, stderr, c.want)
		}
	}
	if code, stdout, _ := kafkasim(t, "describe", "groups", empty); code != 0 || stdout != "No consumer groups in this run.\n" {
		t.Errorf("a run without groups: exit %d %q", code, stdout)
	}
}
