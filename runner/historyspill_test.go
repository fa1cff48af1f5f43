package runner

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"kafkasim/history"
	"kafkasim/scenarios"
)

// A run whose history spills to disk block after block (a budget of one
// byte, blocks of 64 operations) writes the same run store, byte for byte
// save for the wall-clock figures, as one keeping its history in memory,
// with the same trace hash: for runs with polls and broker crashes, a
// consumer group whose members crash, exactly-once processors through
// crashes (transactions), and a client process killed with operations
// open (Died reading spilled invocations back).
func TestSpilledHistoryWritesTheSameStore(t *testing.T) {
	files := []string{"../scenarios/acks1-leader-failover.yaml", "../scenarios/group-at-least-once-crash.yaml",
		"../scenarios/processors-exactly-once-crashes.yaml", "testdata/client-death-completes-open-operations.yaml"}
	for _, file := range files {
		s, err := scenarios.LoadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		dirs := make([]string, 2)
		var hashes [2]uint64
		var spilled int64
		for i, spill := range []bool{false, true} {
			store, err := CreateStore(t.TempDir(), s.Name, s.Seed)
			if err != nil {
				t.Fatal(err)
			}
			opts := Options{Trace: store.Trace(), BeforeChecks: store.Recorded}
			if spill {
				opts.HistorySpill = history.SpillConfig{Budget: 1, BlockOps: 64, Dir: store.SpillDir()}
			}
			res, err := Run(s, opts)
			if err != nil {
				t.Fatal(err)
			}
			if err := store.Finish(res, "test"); err != nil {
				t.Fatal(err)
			}
			if spill {
				spilled = res.History.Spilled()
				// Detached from its run, a history that spilled holds
				// nothing more in memory.
				if spilled != int64(res.History.Len()) {
					t.Fatalf("%s: %d of %d operations spilled", s.Name, spilled, res.History.Len())
				}
			}
			dirs[i], hashes[i] = store.Dir, res.TraceHash
		}
		if hashes[0] != hashes[1] {
			t.Fatalf("%s: trace hash %016x spilling, %016x not", s.Name, hashes[1], hashes[0])
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
				t.Errorf("%s: %s differs when the history spills", s.Name, base)
			}
		}
		if left, _ := filepath.Glob(filepath.Join(dirs[1], "kafkasim-history-*")); len(left) > 0 {
			t.Errorf("%s: the spill file was left in the store: %v", s.Name, left)
		}
		t.Logf("%s: %d operations spilled", s.Name, spilled)
	}
}
