package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// check judges only what it understands: an operation the format does not
// name, a line that is not an operation, or a history of no operations is
// bad input (exit 2, file:line), never a pass.
func TestCheckRejectsWhatItCannotJudge(t *testing.T) {
	dir := t.TempDir()
	send := `{"index":0,"time":1,"process":"p-0","type":"invoke","f":"send","value":{"topic":"t","value":"a"}}` + "\n"
	for _, c := range []struct {
		name, body, want string
	}{
		{"produce", `{"index":0,"time":1,"process":"p-0","type":"invoke","f":"produce","value":{"topic":"t","value":"a"}}` + "\n",
			`:1: f: "produce" is not an operation of the history format (send, poll, commit, fetch-committed, assign, revoke, txn-begin, txn-commit, txn-abort, side-effect, process, crash, restart)`},
		{"empty", "", ": no operations"},
		{"blank", "\n  \n\n", ": no operations"},
		{"null", send + "null\n", ":2: not an operation: a line holds one JSON object, not null"},
		{"list", "[]\n", ":1: not an operation: a line holds one JSON object, not a list"},
		{"notype", `{"index":0,"process":"p-0","f":"poll","value":{}}` + "\n", ":1: type: missing"},
		{"badtype", `{"index":0,"process":"p-0","type":"done","f":"poll","value":{}}` + "\n", `:1: type: "done" is not invoke, ok, fail or info`},
		{"nof", `{"index":0,"process":"p-0","type":"invoke","value":{}}` + "\n", ":1: f: missing"},
		{"noprocess", `{"index":0,"type":"invoke","f":"poll","value":{}}` + "\n", ":1: process: missing"},
	} {
		h := filepath.Join(dir, c.name+".jsonl")
		os.WriteFile(h, []byte(c.body), 0o644)
		code, stdout, stderr := kafkasim(t, "check", h)
		if code != 2 || stderr != "kafkasim: "+h+c.want+"\n" || strings.Contains(stdout, "OK") {
			t.Errorf("%s: exit %d, stderr %q, want 2 and %q", c.name, code, stderr, h+c.want)
		}
	}
	// Fields the format does not name are a recorder's own: ignored.
	h := filepath.Join(dir, "own.jsonl")
	os.WriteFile(h, []byte(`{"index":0,"time":1,"process":"c-0","type":"invoke","f":"poll","value":{"mode":"assign"},"host":"x"}`+"\n"+
		`{"index":1,"time":2,"process":"c-0","type":"ok","f":"poll","value":{"mode":"assign","records":[],"errors":["x"]}}`+"\n"), 0o644)
	if code, stdout, stderr := kafkasim(t, "check", h); code != 0 || !strings.Contains(stdout, "OK: no violation") {
		t.Fatalf("unknown fields: exit %d %s %s", code, stdout, stderr)
	}
}

func gzipFile(t *testing.T, path string, data []byte) {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write(data)
	w.Close()
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// withStdin runs f with the process's stdin reading data.
func withStdin(t *testing.T, data []byte, f func()) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "stdin")
	os.WriteFile(p, data, 0o644)
	in, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	old := os.Stdin
	os.Stdin = in
	defer func() { os.Stdin = old }()
	f()
}

// A history is read compressed or plain, told by its first bytes whatever
// it is called, from a file or from stdin; a damaged stream is bad input.
func TestCheckReadsCompressedHistories(t *testing.T) {
	plain := lostWriteHistory(t)
	text, _ := os.ReadFile(plain)
	dir := t.TempDir()
	gz := filepath.Join(dir, "h.jsonl.gz")
	gzipFile(t, gz, text)
	misnamed := filepath.Join(dir, "h.jsonl")
	gzipFile(t, misnamed, text)
	for _, h := range []string{plain, gz, misnamed} {
		code, stdout, stderr := kafkasim(t, "check", h)
		if code != 1 || !strings.Contains(stdout, h+": 6 operations") || !strings.Contains(stdout, "FAIL: 1 violation") {
			t.Errorf("check %s: exit %d, want 1 and the violation: %s%s", filepath.Base(h), code, stdout, stderr)
		}
	}
	zipped, _ := os.ReadFile(gz)
	for name, in := range map[string][]byte{"plain": text, "compressed": zipped} {
		withStdin(t, in, func() {
			code, stdout, stderr := kafkasim(t, "check", "-")
			if code != 1 || !strings.Contains(stdout, "-: 6 operations") {
				t.Errorf("check - (%s): exit %d, want 1: %s%s", name, code, stdout, stderr)
			}
		})
	}
	cut := filepath.Join(dir, "cut.jsonl.gz")
	os.WriteFile(cut, zipped[:len(zipped)-12], 0o644)
	if code, _, stderr := kafkasim(t, "check", cut); code != 2 || !strings.Contains(stderr, cut+":6: gzip: the stream is cut short") {
		t.Fatalf("a stream cut short: exit %d, want 2: %s", code, stderr)
	}
}

// check RUN_DIR takes the run's history and its scenario (as --config
// would); --config overrides the scenario; a folder without a history, or
// a run's folder without its scenario, is bad input naming what is missing.
func TestCheckRunDir(t *testing.T) {
	out := t.TempDir()
	if code, stdout, stderr := kafkasim(t, "run", "../../scenarios/batch-compression.yaml", "--out", out, "--quiet"); code != 0 {
		t.Fatalf("run: exit %d: %s %s", code, stdout, stderr)
	}
	dir := filepath.Join(out, "batch-compression", "seed-1")
	hist := filepath.Join(dir, "history.jsonl.gz")
	if data, err := os.ReadFile(hist); err != nil || !bytes.HasPrefix(data, []byte{0x1f, 0x8b}) {
		t.Fatalf("the run store's history is not gzip: %v", err)
	}
	code, stdout, stderr := kafkasim(t, "check", dir)
	if code != 0 || !strings.Contains(stdout, hist+": ") || !strings.Contains(stdout, "OK: no violation; expectations held") {
		t.Fatalf("check RUN_DIR: exit %d, want 0 with the scenario's expectations: %s%s", code, stdout, stderr)
	}
	// An explicit --config wins over the folder's scenario.
	strict := filepath.Join(t.TempDir(), "strict.yaml")
	os.WriteFile(strict, []byte("name: strict\ntopics:\n  - { name: events, partitions: 1, replication.factor: 3 }\nexpect:\n  attempted: 0\n"), 0o644)
	if code, stdout, _ := kafkasim(t, "check", dir, "--config", strict); code != 1 || !strings.Contains(stdout, "FAIL: attempted: want 0") {
		t.Fatalf("check RUN_DIR --config: exit %d, want 1 by the given scenario: %s", code, stdout)
	}
	// A run store from before histories were compressed.
	old := t.TempDir()
	text := gunzip(t, hist)
	os.WriteFile(filepath.Join(old, "history.jsonl"), text, 0o644)
	scenario, _ := os.ReadFile(filepath.Join(dir, "scenario.yaml"))
	os.WriteFile(filepath.Join(old, "scenario.yaml"), scenario, 0o644)
	if code, stdout, stderr := kafkasim(t, "check", old); code != 0 || !strings.Contains(stdout, "expectations held") {
		t.Fatalf("check of a store with history.jsonl: exit %d %s%s", code, stdout, stderr)
	}
	os.Remove(filepath.Join(old, "scenario.yaml"))
	if code, _, stderr := kafkasim(t, "check", old); code != 2 || !strings.Contains(stderr, old+": a run's folder lacks scenario.yaml") {
		t.Fatalf("a run's folder without its scenario: exit %d: %s", code, stderr)
	}
	if code, _, stderr := kafkasim(t, "check", old, "--config", filepath.Join(dir, "scenario.yaml")); code != 0 {
		t.Fatalf("... with --config: exit %d: %s", code, stderr)
	}
	empty := t.TempDir()
	if code, _, stderr := kafkasim(t, "check", empty); code != 2 || !strings.Contains(stderr, empty+": a folder, but no history.jsonl.gz (nor history.jsonl) in it") {
		t.Fatalf("a folder without a history: exit %d: %s", code, stderr)
	}
}

func gunzip(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := b.ReadFrom(r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// check RUN_DIR counts what the run's god view recorded broken (from its
// summary.json), as run does: a bug-zoo run whose violations are broken
// invariants passes its expectations under check as it did under run, and
// an expectation on writes of a history that wrote nothing cannot pass.
func TestCheckRunDirCountsTheRunsInvariants(t *testing.T) {
	out := t.TempDir()
	if code, stdout, stderr := kafkasim(t, "run", "bugzoo/kraft-commit-prior-epoch", "--quiet", "--out", out); code != 0 {
		t.Fatalf("run: exit %d %s %s", code, stdout, stderr)
	}
	dir := filepath.Join(out, "kraft-commit-prior-epoch", "seed-1")
	code, stdout, stderr := kafkasim(t, "check", dir)
	if code != 0 || !strings.Contains(stdout, "invariants >0 (got ") || !strings.Contains(stdout, "invariants broken") {
		t.Fatalf("check RUN_DIR: exit %d, want 0 (the run passed):\n%s%s", code, stdout, stderr)
	}
	// The history alone cannot show the invariants: with the scenario but
	// not the folder, the bug-zoo expectation fails.
	code, stdout, _ = kafkasim(t, "check", filepath.Join(dir, "history.jsonl.gz"), "--config", filepath.Join(dir, "scenario.yaml"))
	if code != 1 || !strings.Contains(stdout, "violations: want >0, got 0") {
		t.Fatalf("check HISTORY --config: exit %d, want 1:\n%s", code, stdout)
	}
}
