package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A campaign bounded by --time does not know its number of runs ahead: its
// progress counts wall time and the runs so far, never "31/31 runs".
func TestFuzzProgressByTime(t *testing.T) {
	var buf bytes.Buffer
	report, bar := fuzzProgress(&buf, false, 0, 20*time.Second)
	bar.lastLine = time.Time{}
	report(31, 1)
	line := buf.String()
	if !strings.HasPrefix(line, "fuzz: 0/20 s") || !strings.Contains(line, "31 runs, 1 failure") || strings.Contains(line, "31/31") {
		t.Fatalf("%q", line)
	}
	buf.Reset()
	report, bar = fuzzProgress(&buf, false, 40, 0)
	bar.lastLine = time.Time{}
	report(10, 2)
	if line := buf.String(); !strings.HasPrefix(line, "fuzz: 10/40 runs") || !strings.Contains(line, "2 failures") {
		t.Fatalf("%q", line)
	}
}

// The console describes each counterexample as its written file shows it
// (the header's failure), the shrunk file tells how to run it and nothing
// about a run folder it does not have; --json prints the campaign summary.
func TestFuzzConsoleMatchesTheWrittenFile(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := kafkasim(t, "fuzz", "--bugs", "hw-truncation", "--max-failures", "1", "--runs", "40", "--parallel", "1", "--quiet", "--out", out)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (the bug is found): %s %s", code, stdout, stderr)
	}
	var sum struct {
		Found []struct {
			File  string `json:"file"`
			Shown *struct {
				Detail string `json:"detail"`
			} `json:"shown"`
		} `json:"found"`
	}
	raw, _ := os.ReadFile(filepath.Join(out, "summary.json"))
	if err := json.Unmarshal(raw, &sum); err != nil || len(sum.Found) != 1 || sum.Found[0].Shown == nil {
		t.Fatalf("summary.json: %v %s", err, raw)
	}
	file, _ := os.ReadFile(sum.Found[0].File)
	header := strings.SplitN(string(file), "\n", 3)
	if !strings.HasSuffix(header[1], sum.Found[0].Shown.Detail) {
		t.Fatalf("the file's header %q does not name the failure it shows, %q", header[1], sum.Found[0].Shown.Detail)
	}
	if !strings.Contains(stdout, "violation — "+cutLongWords(sum.Found[0].Shown.Detail)+"\n") {
		t.Fatalf("the console does not name the failure the file shows (%q):\n%s", sum.Found[0].Shown.Detail, stdout)
	}
	if strings.Contains(string(file), "kafkasim replay") || !strings.Contains(string(file), "# Replay: kafkasim run "+sum.Found[0].File) {
		t.Fatalf("the shrunk file's header:\n%s", strings.Join(strings.SplitN(string(file), "\n", 6)[:5], "\n"))
	}
	code, stdout, _ = kafkasim(t, "fuzz", "--runs", "1", "--parallel", "1", "--quiet", "--json", "--out", t.TempDir())
	var again struct {
		Runs int `json:"runs"`
	}
	if err := json.Unmarshal([]byte(stdout), &again); code != 0 || err != nil || again.Runs != 1 {
		t.Fatalf("fuzz --json: exit %d %v\n%s", code, err, stdout)
	}
}
