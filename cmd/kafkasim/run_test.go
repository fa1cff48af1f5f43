package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A bundled scenario runs by its name from any folder: the files are in the
// binary.
func TestRunBundledScenarioByName(t *testing.T) {
	wd, _ := os.Getwd()
	dir := t.TempDir()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	code, stdout, stderr := kafkasim(t, "run", "batch-compression", "--quiet", "--out", "out")
	if code != 0 || !strings.HasPrefix(stdout, "batch-compression seed 1: PASS") {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "out", "batch-compression", "seed-1", "summary.json")); err != nil {
		t.Fatalf("no run store: %v", err)
	}
	code, _, stderr = kafkasim(t, "run", "no-such-scenario", "--quiet", "--out", "out")
	if code != 2 || !strings.Contains(stderr, "no-such-scenario: no such file, and no bundled scenario of that name") {
		t.Fatalf("an unknown name: exit %d, %q", code, stderr)
	}
	// scenarios show prints one to start from, which loads as it is.
	code, stdout, _ = kafkasim(t, "scenarios", "show", "bugzoo/hw-truncation")
	if code != 0 || !strings.Contains(stdout, "bugs: [hw-truncation]") {
		t.Fatalf("scenarios show: exit %d %s", code, stdout)
	}
	os.WriteFile("mine.yaml", []byte(stdout), 0o644)
	if code, stdout, stderr := kafkasim(t, "scenarios", "validate", "mine.yaml"); code != 0 {
		t.Fatalf("what scenarios show printed does not validate: %s %s", stdout, stderr)
	}
	if code, _, stderr := kafkasim(t, "scenarios", "show", "nope"); code != 2 || !strings.Contains(stderr, "acks-all-safe") {
		t.Fatalf("scenarios show nope: exit %d, want 2 and the names: %q", code, stderr)
	}
}

// run without a scenario shows its usage, not only cobra's argument count.
func TestRunWithoutScenarioShowsUsage(t *testing.T) {
	code, _, stderr := kafkasim(t, "run")
	if code != 2 || !strings.Contains(stderr, "name a scenario") || !strings.Contains(stderr, "Usage:") || !strings.Contains(stderr, "--seeds") {
		t.Fatalf("exit %d: %q", code, stderr)
	}
}

// Several seeds and several files run one after the other, one line each,
// then a total; the exit code is the worst run's. A second run of the same
// seed says it replaced the first's store.
func TestRunSeveralSeedsAndFiles(t *testing.T) {
	out := t.TempDir()
	failing := filepath.Join(t.TempDir(), "failing.yaml")
	os.WriteFile(failing, []byte("name: failing\nduration: 5s\nsettle: 5s\ntopics: [{ name: t }]\nproducers: [{ name: p, topic: t, rate: 10/s }]\nexpect: { lost-acked-write: \">0\" }\n"), 0o644)
	code, stdout, stderr := kafkasim(t, "run", "batch-compression", failing, "--seeds", "1..2", "--quiet", "--out", out)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (two runs fail their expectation): %s %s", code, stdout, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	var runLines []string
	for _, l := range lines {
		if strings.Contains(l, " seed ") && !strings.HasPrefix(l, " ") {
			runLines = append(runLines, l)
		}
	}
	if len(runLines) != 4 || !strings.HasPrefix(runLines[0], "batch-compression seed 1: PASS") || !strings.HasPrefix(runLines[3], "failing seed 2: FAIL") {
		t.Fatalf("want one line per run:\n%s", stdout)
	}
	if last := lines[len(lines)-1]; last != "4 runs: 2 passed, 2 failed" {
		t.Fatalf("total line %q", last)
	}
	if !strings.Contains(stdout, "lost-acked-write: want >0, got 0") {
		t.Fatalf("a failed run's line does not say why:\n%s", stdout)
	}
	code, stdout, _ = kafkasim(t, "run", "batch-compression", "--seed", "2", "--quiet", "--out", out)
	if code != 0 || !strings.Contains(stdout, "replaced the earlier run of this seed") {
		t.Fatalf("a second run of seed 2 does not say it replaced the first: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = kafkasim(t, "run", "batch-compression", "--seeds", "3,4", "--quiet", "--json", "--out", out)
	var many struct {
		Runs []struct {
			Seed uint64 `json:"seed"`
		} `json:"runs"`
		Total struct {
			Runs, Passed int
		} `json:"total"`
	}
	if err := json.Unmarshal([]byte(stdout), &many); code != 0 || err != nil || len(many.Runs) != 2 || many.Runs[1].Seed != 4 || many.Total.Passed != 2 {
		t.Fatalf("--json of several runs: exit %d, %v\n%s", code, err, stdout)
	}
	for _, bad := range [][]string{{"--seeds", "5"}, {"--seeds", "3..1"}, {"--seeds", "1,1"}, {"--seeds", "1..2", "--seed", "3"}, {"--seeds", "0..100000000"}} {
		if code, _, stderr := kafkasim(t, append([]string{"run", "batch-compression", "--quiet", "--out", out}, bad...)...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", bad, code, stderr)
		}
	}
}

// A run that writes nothing checks no delivery guarantee: it says so on
// its first lines and in summary.json, and an expectation about writes
// cannot pass on nothing.
func TestRunThatWritesNothingSaysSo(t *testing.T) {
	dir := t.TempDir()
	minimal := filepath.Join(dir, "minimal.yaml")
	os.WriteFile(minimal, []byte("name: minimal\nduration: 5s\nsettle: 5s\n"), 0o644)
	code, stdout, stderr := kafkasim(t, "run", minimal, "--quiet", "--out", dir)
	if code != 0 || !strings.HasPrefix(stdout, "minimal seed 1: PASS (vacuous: nothing was written)\n  WARNING: nothing was written (the scenario has no producers), so no delivery guarantee was checked") {
		t.Fatalf("exit %d:\n%s%s", code, stdout, stderr)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "minimal", "seed-1", "summary.json"))
	var sum struct {
		Warnings []string `json:"warnings"`
	}
	if json.Unmarshal(raw, &sum); len(sum.Warnings) != 1 {
		t.Fatalf("summary.json has no warning: %s", raw)
	}
	for _, expect := range []string{"availability: 1", "lost-acked-write: 0", "duplicate: 0", "bytes-per-record: \"<100\""} {
		os.WriteFile(minimal, []byte("name: minimal\nduration: 5s\nsettle: 5s\nexpect: { "+expect+" }\n"), 0o644)
		code, stdout, _ := kafkasim(t, "run", minimal, "--quiet", "--out", dir)
		if code != 1 || !strings.Contains(stdout, "nothing to judge") {
			t.Errorf("expect %s passed on a run that wrote nothing: exit %d\n%s", expect, code, stdout)
		}
	}
}

// Ctrl-C stops a run, removes its staging folder and says so; the exit code
// is a shell's for SIGINT.
func TestRunInterruptedRemovesItsPartialStore(t *testing.T) {
	dir := t.TempDir()
	long := filepath.Join(dir, "long.yaml")
	os.WriteFile(long, []byte("name: long\nduration: 24h\ntopics: [{ name: t, partitions: 3 }]\nproducers: [{ name: p, topic: t, rate: 500/s }]\n"), 0o644)
	out := filepath.Join(dir, "out")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "KAFKASIM_CHILD_ARGS="+strings.Join([]string{"run", long, "--quiet", "--out", out}, "\x1f"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the staging folder exists: the run is going.
	for start := time.Now(); ; time.Sleep(20 * time.Millisecond) {
		if entries, _ := os.ReadDir(filepath.Join(out, "long")); len(entries) > 0 {
			break
		}
		if time.Since(start) > time.Minute {
			cmd.Process.Kill()
			t.Fatal("the run never started its store")
		}
	}
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != exitInterrupted {
		t.Fatalf("exit %v, want %d; stderr %s", err, exitInterrupted, stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted: long seed 1 stopped at simulated") || !strings.Contains(stderr.String(), "partial run store was removed") {
		t.Fatalf("stderr does not say it was interrupted: %q", stderr.String())
	}
	// The run was the scenario's first: not even its folder is left.
	if entries, err := os.ReadDir(filepath.Join(out, "long")); !os.IsNotExist(err) {
		t.Fatalf("left behind: %v (%v)", entries, err)
	}
}

func TestCutLongWords(t *testing.T) {
	long := "p-0:17" + strings.Repeat("x", 994)
	got := cutLongWords("e.g. orders-0@3 " + long + ": values [" + long + " p-1:2]")
	if len(got) > 160 || strings.Count(got, "…(+969 bytes)") != 2 || !strings.HasPrefix(got, "e.g. orders-0@3 p-0:17xxx") || !strings.HasSuffix(got, " p-1:2]") {
		t.Fatalf("%q", got)
	}
	if s := "short words stay: " + strings.Repeat("y", wordMax); cutLongWords(s) != s {
		t.Fatalf("cut a word of wordMax bytes")
	}
	// A cut never splits a UTF-8 character.
	if got := cutLongWords(strings.Repeat("é", 100)); !strings.HasPrefix(got, strings.Repeat("é", 16)+"…") {
		t.Fatalf("%q", got)
	}
}

// replay and describe report as JSON too; describe takes one topic, and
// names the topics there are when it is not one of them.
func TestReplayAndDescribeJSON(t *testing.T) {
	out := t.TempDir()
	if code, stdout, stderr := kafkasim(t, "run", "batch-compression", "--quiet", "--out", out); code != 0 {
		t.Fatalf("exit %d %s %s", code, stdout, stderr)
	}
	dir := filepath.Join(out, "batch-compression", "seed-1")
	code, stdout, stderr := kafkasim(t, "replay", dir, "--quiet", "--json")
	var rep struct {
		Reproduced bool `json:"reproduced"`
		Summary    struct {
			TraceHash string `json:"trace_hash"`
		} `json:"summary"`
		Stored string `json:"stored_trace_hash"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); code != 0 || err != nil || !rep.Reproduced || rep.Summary.TraceHash != rep.Stored {
		t.Fatalf("replay --json: exit %d %v\n%s%s", code, err, stdout, stderr)
	}
	code, stdout, _ = kafkasim(t, "describe", "topics", dir, "--json", "--topic", "events")
	var desc struct {
		Topics []struct {
			Topic      string            `json:"topic"`
			Configs    map[string]string `json:"configs"`
			Partitions []struct {
				Leader int32 `json:"leader"`
			} `json:"partitions"`
		} `json:"topics"`
	}
	if err := json.Unmarshal([]byte(stdout), &desc); code != 0 || err != nil || len(desc.Topics) != 1 || desc.Topics[0].Topic != "events" ||
		desc.Topics[0].Configs["min.insync.replicas"] == "" || len(desc.Topics[0].Partitions) == 0 {
		t.Fatalf("describe topics --json: exit %d %v\n%s", code, err, stdout)
	}
	code, stdout, _ = kafkasim(t, "describe", "topics", dir)
	if code != 0 || !strings.Contains(stdout, "TopicId: ") || !strings.Contains(stdout, "Configs: min.insync.replicas=") || !strings.Contains(stdout, "LastKnownElr: ") {
		t.Fatalf("describe topics: exit %d\n%s", code, stdout)
	}
	if code, _, stderr := kafkasim(t, "describe", "topics", dir, "--topic", "nope"); code != 2 || !strings.Contains(stderr, "its topics: events") {
		t.Fatalf("describe --topic nope: exit %d %q", code, stderr)
	}
	for _, kind := range []string{"groups", "transactions"} {
		code, stdout, _ := kafkasim(t, "describe", kind, dir, "--json")
		if code != 0 || strings.TrimSpace(stdout) != `{
  "`+kind+`": []
}` {
			t.Fatalf("describe %s --json: exit %d %q", kind, code, stdout)
		}
	}
}

// Shell completion offers bundled scenario names, bug switches and
// describe's kinds (cobra's __complete is what the shell scripts call).
func TestCompletion(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"__complete", "run", "acks-a"}, "acks-all-safe\n"},
		{[]string{"__complete", "run", "bugzoo/hw"}, "bugzoo/hw-truncation\n"},
		{[]string{"__complete", "scenarios", "show", "rack"}, "rack-power-loss\n"},
		{[]string{"__complete", "fuzz", "--bugs", "hw"}, "hw-truncation\n"},
		{[]string{"__complete", "fuzz", "--bugs", "hw-truncation,no-s"}, "hw-truncation,no-strict-min-isr\n"},
		{[]string{"__complete", "describe", ""}, "topics\ngroups\ntransactions\n"},
	} {
		code, stdout, stderr := kafkasim(t, c.args...)
		if code != 0 || !strings.Contains(stdout, c.want) {
			t.Errorf("%v: exit %d, want %q in:\n%s%s", c.args, code, c.want, stdout, stderr)
		}
	}
	if code, stdout, _ := kafkasim(t, "completion", "bash"); code != 0 || !strings.Contains(stdout, "__kafkasim") {
		t.Fatalf("completion bash: exit %d", code)
	}
}
