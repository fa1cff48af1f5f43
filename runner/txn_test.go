package runner

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"kafkasim/reports"
	"kafkasim/scenarios"
)

// A transactional run: its aborted transactions' sends are counted apart
// (summary.json's writes.aborted), not as failed writes nor against
// availability; final-state.json holds each transactional id as its
// coordinator held it and each partition's last stable offset; the fenced
// zombie of txn-zombie-fenced is not probed, and the run says why.
func TestTransactionalRunStore(t *testing.T) {
	s, err := scenarios.LoadFile("../scenarios/txn-aborted-read-uncommitted.yaml")
	if err != nil {
		t.Fatal(err)
	}
	store, err := CreateStore(t.TempDir(), s.Name, s.Seed)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(s, Options{Trace: store.Trace()})
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Finish(res, "test"); err != nil {
		t.Fatal(err)
	}
	sum := res.Summary("test")
	w := sum.Writes
	if w.Aborted == 0 || w.Failed != 0 || w.Availability != 1 || w.Acked+w.Aborted+w.Indeterminate != w.Attempted {
		t.Fatalf("writes %+v: want the aborted transactions' sends apart", w)
	}
	data, err := os.ReadFile(filepath.Join(store.Dir, "final-state.json"))
	if err != nil {
		t.Fatal(err)
	}
	fs, err := reports.ReadFinalState(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs.Transactions) != 1 || fs.Transactions[0].TransactionalID != "pay-0" || fs.Transactions[0].Coordinator < 1 {
		t.Fatalf("final-state transactions %+v", fs.Transactions)
	}
	for _, p := range fs.Partitions {
		if p.Topic == "payments" && (p.LSO == nil || *p.LSO != p.HW) {
			t.Fatalf("%s-%d: LSO %v, HW %d: no transaction is open at the end", p.Topic, p.Partition, p.LSO, p.HW)
		}
	}

	s, err = scenarios.LoadFile("../scenarios/txn-zombie-fenced.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, err = Run(s, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Converged || !strings.Contains(res.ConvergeDetail, "z-0 not probed: fenced, transactional.id pay-0") {
		t.Fatalf("converged %v: %s", res.Converged, res.ConvergeDetail)
	}
	js, _ := json.Marshal(sum)
	if !strings.Contains(string(js), `"aborted":`) {
		t.Fatalf("summary.json lacks writes.aborted: %s", js)
	}
}

// The twins txn-aborted-read-committed and txn-aborted-read-uncommitted
// tell themselves apart by their expectations: each passes as written and
// fails with its reader at the other twin's isolation level, on
// aborted-read(r) (the runner's final reads, read_uncommitted in both, make
// the plain aborted-read count the same in both).
func TestAbortedReadTwinsTellThemselvesApart(t *testing.T) {
	all := bundled(t)
	for _, tc := range []struct{ file, other string }{
		{"txn-aborted-read-committed.yaml", "read_uncommitted"},
		{"txn-aborted-read-uncommitted.yaml", "read_committed"},
	} {
		file, other := tc.file, tc.other
		t.Run(file, func(t *testing.T) {
			s := all[file]
			if s == nil || len(s.Consumers) != 1 || s.Consumers[0].Name != "r" {
				t.Fatalf("%s is not bundled with its one reader r", file)
			}
			if res := run(t, s); res.Verdict != Pass {
				t.Fatalf("as written: %s", explain(res))
			}
			swapped := *s
			c := s.Consumers[0]
			cfg := c.Config
			cfg.Values = map[string]string{}
			maps.Copy(cfg.Values, c.Config.Values)
			cfg.Values["isolation.level"] = other
			c.Config = cfg
			swapped.Consumers = []scenarios.Consumer{c}
			res := run(t, &swapped)
			if res.Verdict != Fail {
				t.Fatalf("with r at %s: verdict %s, want %s", other, res.Verdict, Fail)
			}
			for _, e := range res.Expectations {
				if e.OK != (e.Key != "aborted-read(r)") {
					t.Fatalf("with r at %s: expectation %s ok=%v (got %s); want only aborted-read(r) to fail", other, e.Key, e.OK, e.Got)
				}
			}
		})
	}
}
