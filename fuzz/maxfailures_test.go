package fuzz

import "testing"

// A campaign told to stop at the first failure stops dispatching once one is
// found (producer-state-not-replicated is found within a few runs), and one
// without the bound keeps going.
func TestCampaignStopsAtMaxFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("runs dozens of simulations")
	}
	bugs := []string{"producer-state-not-replicated"}
	// One shrink run a failure: the bound is what is tested here (shrinking is
	// TestShrinkIsOneMinimal's), and shrinking took two thirds of the time.
	opts := Options{Runs: 60, Parallel: 1, SeedStart: 1, Bugs: bugs, ShrinkRuns: 1, MaxFailures: 1}
	opts.Out = t.TempDir()
	sum, err := Campaign(opts)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Failures != 1 || sum.Runs >= opts.Runs {
		t.Fatalf("with --max-failures 1: %d failures in %d runs, want 1 failure and fewer than %d runs", sum.Failures, sum.Runs, opts.Runs)
	}
	opts.MaxFailures, opts.Runs, opts.Out = 0, sum.Runs+5, t.TempDir()
	all, err := Campaign(opts)
	if err != nil {
		t.Fatal(err)
	}
	if all.Runs != opts.Runs {
		t.Fatalf("without the bound the campaign ran %d of %d runs", all.Runs, opts.Runs)
	}
}
