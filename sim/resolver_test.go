package sim

import (
	"strings"
	"testing"
)

// A target the world does not know is answered with what a target may be
// here: its nodes' names (runs of numbered names shortened), and every
// selector form of the world's table with this world's instances.
func TestUnknownTargetListsTheWorldsForms(t *testing.T) {
	w, _ := probeWorld(1, 4, DefaultNetworkOptions())
	err := w.ValidateSelector("nod-1")
	if err == nil {
		t.Fatal("nod-1 accepted")
	}
	want := `target "nod-1": no node has that name, and it is not a selector; a target is node-0..node-3, rack(r0), rack(r1), role(probe), random-probe, random, all`
	if err.Error() != want {
		t.Fatalf("got  %s\nwant %s", err, want)
	}
	for _, form := range SelectorForms() {
		if form == NodeNameForm {
			continue
		}
		prefix, _, _ := strings.Cut(form, "R")
		if !strings.Contains(err.Error(), prefix) {
			t.Errorf("the message lacks the form %s", form)
		}
	}
	// A known form that names no node lists the ones that do.
	for sel, want := range map[string]string{
		"rack(r9)":     "target rack(r9) names no node of this cluster (here: rack(r0), rack(r1))",
		"role(broker)": "target role(broker) names no node of this cluster (here: role(probe))",
		"random-x":     "target random-x names no node of this cluster (here: random-probe)",
	} {
		if err := w.ValidateSelector(sel); err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %s", sel, err, want)
		}
	}
	for _, sel := range []string{"node-2", "rack(r1)", "role(probe)", "random-probe", "random", "all"} {
		if err := w.ValidateSelector(sel); err != nil {
			t.Errorf("%s: %v", sel, err)
		}
	}
}

// Names are shortened only where they count up one by one.
func TestNodeNameRuns(t *testing.T) {
	w := NewWorld(DefaultOptions(Seed(1)))
	for _, name := range []string{"controller-1", "controller-2", "broker-1", "broker-2", "broker-3", "admin", "p-0", "p-2", "c-0", "c-01", "x9"} {
		w.AddNode(NodeSpec{Name: name, Role: "r", New: func() Node { return &probe{} }})
	}
	got := strings.Join(nodeNameRuns(w), ", ")
	want := "controller-1..controller-2, broker-1..broker-3, admin, p-0, p-2, c-0, c-01, x9"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
