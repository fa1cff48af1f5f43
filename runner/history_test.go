package runner

import (
	"bytes"
	"kafkasim/reports"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"kafkasim/history"
	"kafkasim/scenarios"
)

// A client process that dies (killed, or its machine crashed) keeps the
// history in pairs (docs/history.md): every operation it had open completes info
// before a crash pair recorded at the time of the death, and its restart is
// a pair.
func TestClientDeathKeepsTheHistoryInPairs(t *testing.T) {
	s, err := scenarios.LoadFile("testdata/client-death-completes-open-operations.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, s)
	if res.Verdict != Pass {
		t.Fatalf("verdict %s\n%s", res.Verdict, explain(res))
	}
	deaths := map[string]time.Duration{"p-0": 5 * time.Second, "p-1": 7 * time.Second, "c-0": 8 * time.Second}
	type key struct{ process, f, value string }
	open := map[key][]int64{}
	crashes, restarts, infos := map[string]int{}, map[string]int{}, map[string]int{}
	for _, o := range res.History.Ops() {
		died, watched := deaths[o.Process]
		if !watched {
			continue
		}
		k := key{o.Process, o.F, ""}
		if o.F == history.FSend {
			k.value = o.Value.Value
		}
		switch {
		case o.F == history.FCrash || o.F == history.FRestart:
			at := died
			if o.F == history.FRestart {
				at += time.Second
				restarts[o.Process]++
			} else {
				crashes[o.Process]++
				if o.Type == history.Invoke {
					for k, ids := range open {
						if k.process == o.Process && len(ids) > 0 {
							t.Fatalf("%s crashed with %s %q (#%d) still open", o.Process, k.f, k.value, ids[0])
						}
					}
				}
			}
			if o.Time != int64(at) {
				t.Fatalf("%v at %v, want %v", o, time.Duration(o.Time), at)
			}
		case o.Type == history.Invoke:
			open[k] = append(open[k], o.Index)
		default:
			if len(open[k]) == 0 {
				t.Fatalf("%v completes nothing open", o)
			}
			open[k] = open[k][1:]
			if o.Type == history.Info && o.Time == int64(died) && o.Value.Error == "process died: "+map[string]string{"p-0": "killed", "p-1": "machine down", "c-0": "killed"}[o.Process] {
				infos[o.Process]++
			}
		}
	}
	for p := range deaths {
		if crashes[p] != 2 || restarts[p] != 2 {
			t.Errorf("%s: %d crash and %d restart operations, want a pair of each", p, crashes[p], restarts[p])
		}
	}
	if infos["p-0"] == 0 {
		t.Errorf("p-0 died cut off with sends pending, but none completed info at its death")
	}
}

// The report reads a run's history through the recorder (recordedHistory)
// instead of building every operation: each access gives what Ops holds.
func TestTheReportsHistoryIsTheRecordersOps(t *testing.T) {
	s, err := scenarios.LoadFile("testdata/client-death-completes-open-operations.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, s)
	ops := res.History.Ops()
	h := reports.RecorderHistory(res.History)
	if h.Len() != len(ops) || len(ops) == 0 {
		t.Fatalf("%d operations, Ops has %d", h.Len(), len(ops))
	}
	i, polledRecords := 0, 0
	h.Each(func(op *history.Op) {
		if !reflect.DeepEqual(*op, ops[i]) {
			t.Fatalf("Each gave operation %d as %+v, Ops %+v", i, *op, ops[i])
		}
		polledRecords += len(op.Value.Records)
		i++
	})
	i = 0
	h.EachHead(func(op *history.Op) {
		if op.Index != ops[i].Index || op.Process != ops[i].Process || op.F != ops[i].F || op.Type != ops[i].Type || op.Time != ops[i].Time {
			t.Fatalf("EachHead gave operation %d as %+v, Ops %+v", i, *op, ops[i])
		}
		i++
	})
	if i != len(ops) {
		t.Fatalf("EachHead gave %d operations of %d", i, len(ops))
	}
	for _, p := range []int{0, len(ops) / 2, len(ops) - 1} {
		if got := h.At(p); !reflect.DeepEqual(*got, ops[p]) {
			t.Fatalf("At(%d) = %+v, Ops %+v", p, *got, ops[p])
		}
		if hd := h.Head(p); hd.Index != ops[p].Index || hd.Process != ops[p].Process || hd.F != ops[p].F || hd.Type != ops[p].Type || hd.Value.Value != ops[p].Value.Value {
			t.Fatalf("Head(%d) = %+v, Ops %+v", p, *hd, ops[p])
		}
		if q, ok := h.Find(ops[p].Index); !ok || q != p {
			t.Fatalf("Find(%d) = %d, %v", ops[p].Index, q, ok)
		}
	}
	if _, ok := h.Find(int64(len(ops))); ok {
		t.Fatalf("Find past the end found an operation")
	}
	if polledRecords == 0 {
		t.Fatalf("no poll returned records: the test proves little")
	}
}

// The run store's history is gzip (told by its first bytes) and reads back
// as the operations the run recorded, line for line.
func TestStoredHistoryIsTheRunsCompressed(t *testing.T) {
	s, err := scenarios.LoadFile("testdata/client-death-completes-open-operations.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res := run(t, s)
	path := filepath.Join(t.TempDir(), history.StoreFile)
	if err := writeHistory(path, res.History); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil || !bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		t.Fatalf("not a gzip stream (%v)", err)
	}
	stored, err := history.ReadAll(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var want, got bytes.Buffer
	history.Write(&want, res.History.Ops())
	history.Write(&got, stored)
	if got.String() != want.String() || len(stored) == 0 {
		t.Fatalf("%d operations stored, %d recorded, or their lines differ", len(stored), res.History.Len())
	}
	if len(data)*4 > want.Len() {
		t.Fatalf("%d bytes of history stored in %d", want.Len(), len(data))
	}
}
