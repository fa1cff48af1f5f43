package reports

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite reports/testdata/groups/*.golden")

func readGroupsFixture(t *testing.T) FinalState {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "groups", "final-state.json"))
	if err != nil {
		t.Fatal(err)
	}
	fs, err := ReadFinalState(data)
	if err != nil {
		t.Fatal(err)
	}
	return fs
}

// The fixture holds a stable classic group (one member owns nothing, one
// is static, one partition has no leader and nothing committed), a
// consumer-protocol group that is reconciling (a member one epoch behind
// its target, committed partitions nobody owns), an empty group with a
// commit, and a dead one. Each view is compared with a golden file, stdout
// and stderr interleaved as a terminal shows them, checked by hand against
// ConsumerGroupCommand's format strings.
func TestDescribeGroupsGolden(t *testing.T) {
	fs := readGroupsFixture(t)
	for _, c := range []struct {
		name    string
		view    GroupsView
		verbose bool
	}{
		{"offsets", GroupOffsets, false},
		{"offsets-verbose", GroupOffsets, true},
		{"members", GroupMembers, false},
		{"members-verbose", GroupMembers, true},
		{"state", GroupStates, false},
		{"state-verbose", GroupStates, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := DescribeGroups(&buf, &buf, fs, nil, c.view, c.verbose); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "groups", c.name+".golden")
			if *updateGolden {
				os.WriteFile(path, buf.Bytes(), 0o644)
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if buf.String() != string(want) {
				t.Errorf("describe groups (%s):\n got:\n%s\nwant:\n%s", c.name, buf.String(), want)
			}
		})
	}
}

// Kafka's messages go to stderr, the tables to stdout; --group picks
// groups in the order given.
func TestDescribeGroupsStreamsAndSelection(t *testing.T) {
	fs := readGroupsFixture(t)
	var out, errw bytes.Buffer
	if err := DescribeGroups(&out, &errw, fs, []string{"ledger", "archive"}, GroupStates, false); err != nil {
		t.Fatal(err)
	}
	if got := errw.String(); got != "\nWarning: Consumer group 'ledger' is rebalancing.\n\nConsumer group 'archive' has no active members.\n" {
		t.Errorf("stderr %q", got)
	}
	lines := strings.Split(out.String(), "\n")
	if len(lines) != 9 || !strings.HasPrefix(lines[1], "Group: ledger\t") || !strings.HasPrefix(lines[3], "ledger ") ||
		!strings.HasPrefix(lines[5], "Group: archive\t") || !strings.HasPrefix(lines[7], "archive ") {
		t.Errorf("stdout:\n%s", out.String())
	}
	out.Reset()
	DescribeGroups(&out, &errw, fs, []string{"nope"}, GroupOffsets, false)
	if out.String() != "\nError: Consumer group 'nope' does not exist.\n" {
		t.Errorf("unknown group: %q", out.String())
	}
}

func TestDescribeGroupsJSON(t *testing.T) {
	d := DescribeGroupsJSON(readGroupsFixture(t), []string{"billing", "ledger"})
	if len(d) != 2 {
		t.Fatalf("%d groups", len(d))
	}
	b := d[0]
	if b.Group != "billing" || b.Protocol != "classic" || b.Generation != 7 || b.GroupEpoch != -1 || b.Leader != "c-0-5d2e" ||
		b.Coordinator != 2 || b.Assignor != "range" || len(b.Members) != 3 || b.Members[0].ConsumerID != "c-0-5d2e" ||
		strings.Join(b.Members[0].Assignment, ",") != "orders-0,orders-1" || b.Members[0].Host != "/c-0" ||
		b.Members[2].GroupInstanceID != "c-2" || len(b.Members[2].Assignment) != 0 || b.Members[2].Assignment == nil {
		raw, _ := json.Marshal(b)
		t.Fatalf("billing: %s", raw)
	}
	if len(b.Offsets) != 3 || *b.Offsets[0].Lag != 3 || b.Offsets[2].LogEndOffset != -1 || b.Offsets[2].Lag != nil || b.Offsets[2].CurrentOffset != -1 {
		raw, _ := json.Marshal(b.Offsets)
		t.Fatalf("billing offsets: %s", raw)
	}
	l := d[1]
	if l.GroupEpoch != 12 || l.AssignmentEpoch != 12 || l.Generation != -1 || l.Members[1].MemberEpoch != 11 ||
		strings.Join(l.Members[1].TargetAssignment, ",") != "orders-0,orders-1" || len(l.Offsets) != 4 ||
		l.Offsets[2].ConsumerID != "" || *l.Offsets[2].Lag != 90 || l.Offsets[3].Topic != "payments" {
		raw, _ := json.Marshal(l)
		t.Fatalf("ledger: %s", raw)
	}
	raw, _ := json.Marshal(DescribeGroupsJSON(FinalState{}, nil))
	if string(raw) != "[]" {
		t.Fatalf("no groups: %s", raw)
	}
}

// A final-state.json written before groups were recorded reads with none;
// a malformed groups section is refused naming the key.
func TestReadFinalStateGroups(t *testing.T) {
	fs, err := ReadFinalState([]byte(`{"topics":[],"partitions":[]}`))
	if err != nil || fs.Groups != nil {
		t.Fatalf("%+v %v", fs, err)
	}
	for _, c := range []struct{ json, want string }{
		{`{"groups":[{"group_id":"g","protocol":"classic","state":"Stable","generation":"x"}]}`, "GroupState.groups.generation"},
		{`{"groups":[{"group_id":"","protocol":"classic","state":"Stable"}]}`, "groups[0].group_id: missing"},
		{`{"groups":[{"group_id":"g","protocol":"classic","state":"Stable"},{"group_id":"g","protocol":"classic","state":"Stable"}]}`, `groups[1].group_id: "g" appears twice`},
		{`{"groups":[{"group_id":"g","protocol":"eager","state":"Stable"}]}`, `groups[0].protocol: "eager" is not a group protocol (classic, consumer)`},
		{`{"groups":[{"group_id":"g","protocol":"consumer","state":"PreparingRebalance"}]}`, `groups[0].state: "PreparingRebalance" is not a state of a consumer group`},
		{`{"groups":[{"group_id":"g","protocol":"classic","state":"Reconciling"}]}`, `groups[0].state: "Reconciling" is not a state of a classic group`},
		{`{"groups":[{"group_id":"g","protocol":"classic","state":"Stable","members":[{"member_id":""}]}]}`, "groups[0].members[0].member_id: missing"},
		{`{"groups":[{"group_id":"g","protocol":"consumer","state":"Stable","members":[{"member_id":"m","assignment":[{"topic":"t","partition":0}],"target_assignment":[{"topic":"t","partition":-1}]}]}]}`, "groups[0].members[0].target_assignment[0]: not a partition"},
		{`{"groups":[{"group_id":"g","protocol":"classic","state":"Stable","offsets":[{"topic":"t","partition":0,"offset":-2}]}]}`, "groups[0].offsets[0].offset: -2 is negative"},
	} {
		_, err := ReadFinalState([]byte(c.json))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.json, err, c.want)
		}
	}
	// Written back, a final state keeps its groups; without groups the
	// file has no groups key (runs without groups write what they wrote).
	fs = readGroupsFixture(t)
	data, _ := json.Marshal(fs)
	again, err := ReadFinalState(data)
	if err != nil || len(again.Groups) != 4 || again.Groups[1].Members[0].TargetAssignment[1].Partition != 0 {
		t.Fatalf("round trip: %v", err)
	}
	if data, _ := json.Marshal(testFinalState()); bytes.Contains(data, []byte("groups")) {
		t.Fatalf("a final state without groups wrote %s", data)
	}
}

func TestAssignmentString(t *testing.T) {
	for _, c := range []struct {
		tps  []TopicPartition
		want string
	}{
		{nil, "-"},
		{[]TopicPartition{{"b", 2}, {"a", 10}, {"b", 0}, {"a", 9}}, "a:9,10;b:0,2"},
		{[]TopicPartition{{"orders", 0}}, "orders:0"},
	} {
		if got := assignmentString(c.tps); got != c.want {
			t.Errorf("assignmentString(%v) = %q, want %q", c.tps, got, c.want)
		}
	}
}
