package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"kafkasim/scenarios"
)

// The README and docs/ show what commands print. Each such sample sits
// under a marker naming the command,
//
//	<!-- sample-output: kafkasim run scenarios/acks1-leader-failover.yaml -->
//	```text
//	...what it prints...
//	```
//
// and TestDocSamples runs every marked command (in a scratch folder that
// sees the repository's scenarios/, sweeps/ and docs/, as a user's checkout
// would: docs/examples/ holds the files the docs' samples read)
// and fails when the sample differs from what it prints, save for wall-clock
// figures. `go test ./cmd/kafkasim -run TestDocSamples -update-docs`
// rewrites the samples.
var updateDocs = flag.Bool("update-docs", false, "rewrite the command output samples in README.md and docs/*.md")

var sampleMarker = regexp.MustCompile("(?m)^<!-- sample-output: kafkasim ([^>]*?) -->\n```text\n((?s:.*?))```\n")

// wallClock matches what differs between two runs of one command: wall
// times and the rates computed from them.
var wallClock = regexp.MustCompile(`in [0-9.]+(ns|µs|ms|s|m[0-9.]+s)( \([0-9]+ events/s, [0-9.]+ simulated s per wall s\))?|[0-9.]+ runs/s, [0-9.]+ per core, [0-9.]+ per CPU-second|first after [0-9.]+(ms|s)`)

// progressLine matches a plain progress line (a slow machine prints them).
var progressLine = regexp.MustCompile(`(?m)^[^\n]*: [0-9]+/[0-9]+ (sim-s|runs|s)(, [^\n]*)?\n`)

func TestDocSamples(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	docs, _ := filepath.Glob(filepath.Join(repo, "docs", "*.md"))
	files := append([]string{filepath.Join(repo, "README.md")}, docs...)
	found := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		changed := false
		out := sampleMarker.ReplaceAllFunc(data, func(block []byte) []byte {
			m := sampleMarker.FindSubmatch(block)
			command, want := string(m[1]), string(m[2])
			found++
			got := sampleOutput(t, repo, strings.Fields(command))
			if normalizeSample(got) == normalizeSample(want) {
				return block
			}
			if *updateDocs {
				changed = true
				return []byte("<!-- sample-output: kafkasim " + command + " -->\n```text\n" + got + "```\n")
			}
			t.Errorf("%s: the sample of `kafkasim %s` is stale; run `go test ./cmd/kafkasim -run TestDocSamples -update-docs`.\nIt prints:\n%s\nThe sample says:\n%s",
				filepath.Base(file), command, got, want)
			return block
		})
		if changed {
			if err := os.WriteFile(file, out, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if found == 0 {
		t.Fatal("no sample-output marker in README.md or docs/: the README's example output is no longer checked")
	}
}

// sampleOutput runs kafkasim with args in a scratch folder holding links to
// the repository's scenarios/, sweeps/ and docs/, and returns what it printed
// (stdout and stderr in one stream, as a terminal shows them).
func sampleOutput(t *testing.T, repo string, args []string) string {
	t.Helper()
	wd, _ := os.Getwd()
	dir := t.TempDir()
	for _, d := range []string{"scenarios", "sweeps", "docs"} {
		if err := os.Symlink(filepath.Join(repo, d), filepath.Join(dir, d)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	var out bytes.Buffer
	run(args, &out, &out)
	return progressLine.ReplaceAllString(out.String(), "")
}

func normalizeSample(s string) string {
	return wallClock.ReplaceAllString(s, "in <wall time>")
}

func TestNormalizeSample(t *testing.T) {
	a := "  trace hash dd6aa56138300f3b: 267514 events, 1m32s simulated in 397ms (674630 events/s, 232.0 simulated s per wall s)\n"
	b := "  trace hash dd6aa56138300f3b: 267514 events, 1m32s simulated in 1.2s (224630 events/s, 77.3 simulated s per wall s)\n"
	if normalizeSample(a) != normalizeSample(b) {
		t.Fatalf("%q\n%q", normalizeSample(a), normalizeSample(b))
	}
	c := strings.Replace(a, "267514 events", "265745 events", 1)
	if normalizeSample(a) == normalizeSample(c) {
		t.Fatal("a different event count compares equal")
	}
	if got := progressLine.ReplaceAllString("x seed 1: 12/90 sim-s, 3.0 sim-s/s, about 26s left\nkept\n", ""); got != "kept\n" {
		t.Fatalf("%q", got)
	}
}

var scenarioMarker = regexp.MustCompile("(?m)^<!-- scenario -->\n```yaml\n((?s:.*?))```\n")

// Every scenario the README and docs/ show whole (marked <!-- scenario -->)
// loads as written: an example that the loader refuses teaches nothing.
func TestDocScenariosLoad(t *testing.T) {
	repo, _ := filepath.Abs("../..")
	docs, _ := filepath.Glob(filepath.Join(repo, "docs", "*.md"))
	found := 0
	for _, file := range append([]string{filepath.Join(repo, "README.md")}, docs...) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range scenarioMarker.FindAllSubmatch(data, -1) {
			found++
			name := fmt.Sprintf("%s (scenario %d)", filepath.Base(file), i+1)
			if _, err := scenarios.Parse(name, m[1]); err != nil {
				t.Errorf("%v", err)
			}
		}
	}
	if found == 0 {
		t.Fatal("no <!-- scenario --> example in README.md or docs/")
	}
}
