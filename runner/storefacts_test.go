package runner

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"kafkasim/godview"
	"kafkasim/model/cluster"
	"kafkasim/scenarios"
)

// A checked run's store holds the facts its checker was given, every one in
// its order, read back the same: the god view's losses and unclean
// elections of a run that lost data to an unclean election, or its
// forgotten producer state.
func TestStoreKeepsTheFactsTheCheckerWasGiven(t *testing.T) {
	for _, c := range []struct {
		file string
		kind godview.Kind // a fact the run must have seen
	}{
		{"../scenarios/unclean-election-loss.yaml", godview.UncleanElection},
		{"testdata/idempotent-retry-of-a-producer-retention-and-restarts-forgot.yaml", godview.ForgottenProducer},
	} {
		s, err := scenarios.LoadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		out := t.TempDir()
		store, err := CreateStore(out, s.Name, s.Seed)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(s, Options{Trace: store.Trace(), KeepCluster: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Finish(res, "test"); err != nil {
			t.Fatal(err)
		}
		seen := res.Cluster.Facts()
		if !res.Happened.GodView() || res.Happened.Count(c.kind) == 0 || len(res.Happened.All()) != len(seen.All()) {
			t.Fatalf("%s: the result holds %d facts (god view %v, %d of %s), the cluster's god view %d",
				s.Name, len(res.Happened.All()), res.Happened.GodView(), res.Happened.Count(c.kind), c.kind, len(seen.All()))
		}
		f, err := os.Open(filepath.Join(store.Dir, godview.StoreFile))
		if err != nil {
			t.Fatal(err)
		}
		stored, err := godview.ReadJSONL(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !stored.GodView() || len(stored.All()) != len(seen.All()) {
			t.Fatalf("%s: stored %d facts (god view %v), want %d", s.Name, len(stored.All()), stored.GodView(), len(seen.All()))
		}
		for i, want := range seen.All() {
			if stored.All()[i] != want || res.Happened.All()[i] != want {
				t.Fatalf("%s: fact %d stored as %+v, in the result %+v, want %+v", s.Name, i, stored.All()[i], res.Happened.All()[i], want)
			}
		}
	}
}

// A run the simulator failed was not checked: its store has no facts file
// (its summary says what happened).
func TestStoreOfACrashHasNoFacts(t *testing.T) {
	s := phasesScenario(t)
	out := t.TempDir()
	store, err := CreateStore(out, s.Name, s.Seed)
	if err != nil {
		t.Fatal(err)
	}
	x := newExecution(s, Options{Trace: store.Trace()})
	x.built = func(c *cluster.Cluster) { c.World.At(3*time.Second, func() { panic("boom") }) }
	res, err := x.execute()
	if err != nil || res.Verdict != Crash {
		t.Fatalf("verdict %s, %v", res.Verdict, err)
	}
	if err := store.Finish(res, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(store.Dir, "summary.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(store.Dir, godview.StoreFile)); !os.IsNotExist(err) {
		t.Fatalf("a crashed run's store holds %s: %v", godview.StoreFile, err)
	}
}
