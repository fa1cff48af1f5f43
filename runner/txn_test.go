package runner

import (
	"encoding/json"
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
