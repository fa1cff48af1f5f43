package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// A recorder around a real cluster numbers its operations its own way and
// stamps them with the wall clock: indexes need not start at 0 nor be dense
// (a recorder that drops its own bookkeeping lines, or numbers by a global
// counter, leaves gaps), and times are nanoseconds since 1970. The checks
// must judge such a history as they judge the same operations numbered 0, 1,
// 2 … at simulated times: the same anomalies, counts, verdicts and exit
// code, with evidence that names the same operations by the recorder's own
// numbers.
func TestCheckJudgesAForeignRecordersIndexesAndClock(t *testing.T) {
	const (
		indexScale = 3_000_000_019 // sparse: gaps wider than 32 bits between operations
		indexBase  = 1 << 33       // past 32 bits
		clockBase  = 1_764_800_000_000_000_000
	)
	sparse := func(i int64) int64 { return i*indexScale + indexBase }
	shifted := func(i int64) int64 { return i + indexBase }
	same := func(i int64) int64 { return i }
	variants := []struct {
		name  string
		index func(int64) int64
		clock bool
	}{{"sparse", sparse, false}, {"shifted", shifted, false}, {"wall-clock", same, true}, {"sparse-wall-clock", sparse, true}}
	histories := []struct{ file, config string }{
		{"../../docs/examples/example.jsonl", ""},
		{"../../docs/examples/groups.jsonl", "../../docs/examples/groups.yaml"},
		{"../../docs/examples/lost.jsonl", ""},
		{"../../checker/testdata/kfakerec-group-classic.jsonl", ""},
		{"../../checker/testdata/kfakerec-group-consumer.jsonl", ""},
		{"../../checker/testdata/kfakerec-group-classic-before-processing-crash.jsonl.gz", "../../checker/testdata/kfakerec-group-classic-before-processing-crash.yaml"},
		{"../../checker/testdata/kfakerec-group-consumer-after-processing-crash.jsonl.gz", "../../checker/testdata/kfakerec-group-consumer-after-processing-crash.yaml"},
		{"../../checker/testdata/kfakerec-txn.jsonl.gz", "../../checker/testdata/kfakerec-txn.yaml"},
	}
	dir := t.TempDir()
	judged := map[string]bool{} // exit codes seen: the corpus must hold failures and passes
	for _, h := range histories {
		lines := historyLines(t, h.file)
		type stamp struct{ index, time int64 }
		recorded := make([]stamp, len(lines))
		for i, op := range lines {
			recorded[i] = stamp{int64(op["index"].(float64)), int64(op["time"].(float64))}
		}
		args := func(file string) []string {
			a := []string{"check", file, "--json"}
			if h.config != "" {
				a = append(a, "--config", h.config)
			}
			return a
		}
		code, out, stderr := kafkasim(t, args(h.file)...)
		if code == 2 {
			t.Fatalf("%s: %s", h.file, stderr)
		}
		judged[map[int]string{0: "pass", 1: "fail"}[code]] = true
		for _, v := range variants {
			index := v.index
			var b bytes.Buffer
			for i, op := range lines {
				op["index"], op["time"] = index(recorded[i].index), recorded[i].time
				if v.clock {
					op["time"] = recorded[i].time + clockBase
				}
				line, err := json.Marshal(op)
				if err != nil {
					t.Fatal(err)
				}
				b.Write(append(line, '\n'))
			}
			foreign := filepath.Join(dir, v.name+"-"+strings.TrimSuffix(filepath.Base(h.file), ".gz"))
			if err := os.WriteFile(foreign, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			gotCode, gotOut, gotErr := kafkasim(t, args(foreign)...)
			if gotCode != code {
				t.Errorf("%s, %s: exit %d, the history as recorded %d (%s)", h.file, v.name, gotCode, code, gotErr)
				continue
			}
			want := judgement(t, h.file, out, index)
			if got := judgement(t, foreign, gotOut, nil); !reflect.DeepEqual(got, want) {
				t.Errorf("%s, %s indexes and clock: judged\n%v\nthe history as recorded:\n%v", h.file, v.name, got, want)
			}
		}
	}
	if !judged["pass"] || !judged["fail"] {
		t.Fatalf("the corpus must hold histories that pass and that fail: %v", judged)
	}
}

// historyLines reads a history (plain or gzip) as generic JSON objects; the
// numbers stay float64, exact for the corpus's indexes and times.
func historyLines(t *testing.T, file string) []map[string]any {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.HasPrefix(raw, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		var plain bytes.Buffer
		if _, err := plain.ReadFrom(zr); err != nil {
			t.Fatal(err)
		}
		raw = plain.Bytes()
	}
	var ops []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var op map[string]any
		if err := json.Unmarshal(sc.Bytes(), &op); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if at, ok := op["time"].(float64); !ok || at >= 1<<53 {
			t.Fatalf("%s: the corpus's times must be simulated nanoseconds, exact as float64", file)
		}
		ops = append(ops, op)
	}
	return ops
}

// judgement is what check --json decided, the evidence's operations
// renumbered by index (nil: as they are). Texts that print an index or a
// time are left out: the operations they name are compared.
func judgement(t *testing.T, file, out string, index func(int64) int64) []string {
	t.Helper()
	var r struct {
		Stats      map[string]any   `json:"stats"`
		Violations int              `json:"violations"`
		Invariants int              `json:"invariants_violated"`
		Basis      string           `json:"basis"`
		OK         bool             `json:"ok"`
		Failures   []any            `json:"failures"`
		Anomalies  []checkedAnomaly `json:"anomalies"`
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%s: %v: %s", file, err, out)
	}
	j := []string{jsonText(r.Stats), jsonText([]any{r.Violations, r.Invariants, r.Basis, r.OK, len(r.Failures)})}
	for _, a := range r.Anomalies {
		e := a.Example
		ops := e.Ops
		if index != nil {
			ops = nil
			for _, i := range e.Ops {
				ops = append(ops, index(i))
			}
		}
		j = append(j, jsonText([]any{a.Type, a.Verdict, a.Count, a.Because, e.Partition, e.Offset, e.Value, e.Process, ops}))
	}
	return j
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
