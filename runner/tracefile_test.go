package runner

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"kafkasim/sim"
)

// The trace file is read by any gzip reader and every line is JSON with the
// record's fields, whatever bytes the names and details hold.
func TestTraceFileLinesAreJSONThatTheStandardGzipReaderReads(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.jsonl.gz")
	tf, err := CreateTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []sim.TraceRecord{
		{Step: 1, At: 0, Kind: "boot", Node: "broker-1", Detail: "incarnation 1"},
		{Step: 2, At: 5 * time.Millisecond, Kind: "deliver", Node: `odd "name"\`, From: "brøker\t\x012", Detail: "Produce\nline\x01 \"quoted\""},
		{Step: 3, At: time.Second, Kind: "fault"},
	}
	for _, r := range want {
		tf.Record(r)
	}
	if err := tf.Close(0xabc, 3); err != nil {
		t.Fatal(err)
	}
	got := readTrace(t, path)
	if len(got) != len(want)+1 {
		t.Fatalf("%d lines, want %d records and the hash line", len(got), len(want))
	}
	for i, r := range want {
		g := got[i]
		if g.Step != r.Step || g.AtNs != int64(r.At) || g.Kind != r.Kind || g.Node != r.Node || g.From != r.From || g.Detail != r.Detail {
			t.Errorf("line %d = %+v, want %+v", i+1, g, r)
		}
	}
	if got[len(want)].Hash != "0000000000000abc" {
		t.Errorf("last line %+v, want the trace hash", got[len(want)])
	}
}

// Records spanning many chunks come back whole and in order (the
// compressor works on its own goroutine).
func TestTraceFileKeepsOrderAcrossChunks(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trace.jsonl.gz")
	tf, err := CreateTrace(path)
	if err != nil {
		t.Fatal(err)
	}
	const n = 60_000                               // several times traceChunks chunks
	long := strings.Repeat("x", 3*traceChunkBytes) // a record larger than a chunk
	for i := range n {
		detail := "Produce acks=-1 orders-3(1 records, producer 5 epoch 0 seq 17)"
		if i == n/2 {
			detail = long
		}
		if i%2 == 0 {
			tf.RecordDetail(sim.TraceRecord{Step: uint64(i + 1), At: time.Duration(i), Kind: "deliver", Node: "broker-1", From: "p-0"}, []byte(detail))
		} else {
			tf.Record(sim.TraceRecord{Step: uint64(i + 1), At: time.Duration(i), Kind: "deliver", Node: "broker-1", From: "p-0", Detail: detail})
		}
	}
	if err := tf.Close(7, n); err != nil {
		t.Fatal(err)
	}
	lines := readTrace(t, path)
	if len(lines) != n+1 {
		t.Fatalf("%d lines, want %d", len(lines), n+1)
	}
	for i, l := range lines[:n] {
		if l.Step != uint64(i+1) {
			t.Fatalf("line %d holds step %d", i+1, l.Step)
		}
	}
	if l := lines[n/2]; l.Detail != long {
		t.Fatalf("line %d's long detail came back %d bytes long", n/2+1, len(l.Detail))
	}
	if l := lines[n]; l.Hash != "0000000000000007" {
		t.Fatalf("last line %+v", l)
	}
}

// traceLine is a line of the trace file, as a JSON reader sees it.
type traceLine struct {
	Step   uint64 `json:"step"`
	AtNs   int64  `json:"at_ns"`
	Kind   string `json:"kind"`
	Node   string `json:"node"`
	From   string `json:"from"`
	Detail string `json:"detail"`
	Hash   string `json:"trace_hash"`
}

// readTrace reads a trace file back with the standard library's gzip and
// JSON readers; every line must be JSON.
func readTrace(t *testing.T, path string) []traceLine {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(gz)
	sc.Buffer(nil, 4*traceChunkBytes)
	var lines []traceLine
	for sc.Scan() {
		var l traceLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatalf("line %d is not JSON: %v: %.200s", len(lines)+1, err, sc.Bytes())
		}
		lines = append(lines, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return lines
}
