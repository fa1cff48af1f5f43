package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"kafkasim/scenarios"
)

// A store whose history and plots were written while the checks ran
// (Options.BeforeChecks: Store.Recorded) holds the same files, byte for
// byte, as one written after them, save for the wall-clock figures: for a
// run with a nonlinearizable partition (a report with porcupine's
// visualisation) and one with a consumer group (its own plot).
func TestStoreWrittenDuringTheChecksIsTheSame(t *testing.T) {
	for _, file := range []string{"../scenarios/acks1-leader-failover.yaml", "../scenarios/group-at-least-once-crash.yaml"} {
		s, err := scenarios.LoadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		dirs := make([]string, 2)
		for i, overlap := range []bool{false, true} {
			store, err := CreateStore(t.TempDir(), s.Name, s.Seed)
			if err != nil {
				t.Fatal(err)
			}
			opts := Options{Trace: store.Trace()}
			if overlap {
				opts.BeforeChecks = store.Recorded
			}
			res, err := Run(s, opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := store.Finish(res, "test"); err != nil {
				t.Fatal(err)
			}
			dirs[i] = store.Dir
		}
		names, err := filepath.Glob(filepath.Join(dirs[0], "*"))
		if err != nil || len(names) < 8 {
			t.Fatalf("%s: the store holds %d files (%v)", s.Name, len(names), err)
		}
		for _, n := range names {
			base := filepath.Base(n)
			a, errA := os.ReadFile(n)
			b, errB := os.ReadFile(filepath.Join(dirs[1], base))
			if errA != nil || errB != nil {
				t.Fatalf("%s %s: %v, %v", s.Name, base, errA, errB)
			}
			if !bytes.Equal(withoutWallClock(a), withoutWallClock(b)) {
				t.Errorf("%s: %s differs when written during the checks", s.Name, base)
			}
		}
	}
}

var (
	wallClockJSON = regexp.MustCompile(`"(wall_time_ns|events_per_second|sim_seconds_per_wall_second)": [0-9.e+]+`)
	wallClockHTML = regexp.MustCompile(`<dt>(Wall time|Events per second|Simulated s per wall s)</dt><dd>[^<]*</dd>`)
)

func withoutWallClock(b []byte) []byte {
	return wallClockHTML.ReplaceAll(wallClockJSON.ReplaceAll(b, nil), nil)
}
