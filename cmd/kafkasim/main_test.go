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

func kafkasim(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestBadScenarioExitsTwoAndWritesNothing(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("name: bad\ntopics:\n  - name: t\n    replicaton.factor: 3\n"), 0o644)
	out := filepath.Join(dir, "runs")
	code, _, stderr := kafkasim(t, "run", bad, "--out", out)
	if code != 2 {
		t.Fatalf("exit %d, want 2; stderr %q", code, stderr)
	}
	if !strings.Contains(stderr, bad+":4:5: topics[0].replicaton.factor: unknown key") || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
		t.Fatalf("want one line naming file, line and key; got %q", stderr)
	}
	if strings.Contains(stderr, "goroutine") {
		t.Fatalf("a stack trace for a user error: %q", stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("the run store was created for a bad scenario: %v", err)
	}
	for _, args := range [][]string{{"run"}, {"run", bad, "--seed", "x"}, {"run", bad, "--nope"}, {"nope"}, {"run", filepath.Join(dir, "missing.yaml")}} {
		if code, _, stderr := kafkasim(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, stderr)
		}
	}
}

// The main job end to end on the smallest bundled scenario: the run store,
// --json, replay, check, describe.
func TestRunReplayCheckDescribe(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := kafkasim(t, "run", "../../scenarios/batch-compression.yaml", "--out", out, "--json", "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	var sum struct {
		Scenario     string `json:"scenario"`
		TraceHash    string `json:"trace_hash"`
		Events       uint64 `json:"events"`
		SimTimeNs    int64  `json:"sim_time_ns"`
		WallTimeNs   int64  `json:"wall_time_ns"`
		Expectations struct {
			OK bool `json:"ok"`
		} `json:"expectations"`
		Writes struct {
			Attempted int `json:"attempted"`
		} `json:"writes"`
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("--json is not summary.json: %v\n%s", err, stdout)
	}
	if sum.Scenario != "batch-compression" || len(sum.TraceHash) != 16 || sum.Events == 0 || sum.SimTimeNs == 0 || sum.WallTimeNs == 0 || !sum.Expectations.OK || sum.Writes.Attempted == 0 {
		t.Fatalf("summary: %+v", sum)
	}
	dir := filepath.Join(out, "batch-compression", "seed-1")
	for _, f := range []string{"scenario.yaml", "history.jsonl.gz", "trace.jsonl.gz", "summary.json", "report.html", "throughput.png", "throughput.svg"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("run store lacks %s: %v", f, err)
		}
	}
	if code, stdout, stderr := kafkasim(t, "replay", dir, "--quiet"); code != 0 || !strings.Contains(stdout, "reproduced, trace hash "+sum.TraceHash) {
		t.Fatalf("replay: exit %d %s %s", code, stdout, stderr)
	}
	// Reproduced, but its (edited) expectations fail: exit 1, as run says.
	scenario := filepath.Join(dir, "scenario.yaml")
	orig, _ := os.ReadFile(scenario)
	os.WriteFile(scenario, bytes.Replace(orig, []byte("  violations: 0\n"), []byte("  violations: \">0\"\n"), 1), 0o644)
	if code, stdout, stderr := kafkasim(t, "replay", dir, "--quiet"); code != 1 || !strings.Contains(stdout, "reproduced") {
		t.Fatalf("replay of a run that fails its expectations: exit %d, want 1 (%s %s)", code, stdout, stderr)
	}
	os.WriteFile(scenario, orig, 0o644)
	// A tampered hash is a determinism failure, exit 3.
	summary := filepath.Join(dir, "summary.json")
	data, _ := os.ReadFile(summary)
	os.WriteFile(summary, bytes.Replace(data, []byte(sum.TraceHash), []byte("0000000000000000"), 1), 0o644)
	if code, _, _ := kafkasim(t, "replay", dir, "--quiet"); code != 3 {
		t.Fatalf("replay of a run whose hash differs: exit %d, want 3", code)
	}
	if code, stdout, stderr := kafkasim(t, "check", filepath.Join(dir, "history.jsonl.gz"), "--config", filepath.Join(dir, "scenario.yaml")); code != 0 || !strings.Contains(stdout, "no violation") {
		t.Fatalf("check: exit %d %s %s", code, stdout, stderr)
	}
	if code, stdout, _ := kafkasim(t, "describe", "topics", dir); code != 0 || !strings.Contains(stdout, "Topic: events") || !strings.Contains(stdout, "Partition: 0") {
		t.Fatalf("describe topics: exit %d %s", code, stdout)
	}
}

func TestCheckRejectsAMalformedHistory(t *testing.T) {
	dir := t.TempDir()
	h := filepath.Join(dir, "h.jsonl")
	os.WriteFile(h, []byte(`{"index":0,"time":1,"process":"p-0","type":"invoke","f":"send","value":{"topic":"t","value":"a"}}`+"\n"+`{"index":1,"process":"p-0","f":"send"}`+"\n"), 0o644)
	code, _, stderr := kafkasim(t, "check", h)
	if code != 2 || !strings.Contains(stderr, h+":2: type: missing") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

// lostWriteHistory writes a history of one acknowledged acks=all write that
// final reads do not hold: one violation.
func lostWriteHistory(t *testing.T) string {
	h := filepath.Join(t.TempDir(), "h.jsonl")
	os.WriteFile(h, []byte(strings.Join([]string{
		`{"index":0,"time":1,"process":"p-0","type":"invoke","f":"send","value":{"topic":"t","value":"a"}}`,
		`{"index":1,"time":2,"process":"p-0","type":"ok","f":"send","value":{"topic":"t","partition":0,"offset":0,"value":"a"}}`,
		`{"index":2,"time":3,"process":"p-0","type":"invoke","f":"send","value":{"topic":"t","value":"b"}}`,
		`{"index":3,"time":4,"process":"p-0","type":"ok","f":"send","value":{"topic":"t","partition":0,"offset":1,"value":"b"}}`,
		`{"index":4,"time":5,"process":"c-0","type":"invoke","f":"poll","value":{"final":true}}`,
		`{"index":5,"time":6,"process":"c-0","type":"ok","f":"poll","value":{"final":true,"records":[{"topic":"t","partition":0,"offset":1,"value":"b"}]}}`,
	}, "\n")+"\n"), 0o644)
	return h
}

func TestCheckFailsOnAViolation(t *testing.T) {
	code, stdout, _ := kafkasim(t, "check", lostWriteHistory(t))
	if code != 1 || !strings.Contains(stdout, "lost-acked-write") || !strings.Contains(stdout, "FAIL: 1 violation") {
		t.Fatalf("exit %d, want 1: %s", code, stdout)
	}
}

// With a scenario whose expectations allow the violations found, check
// passes, and its last line says so rather than "no violation"; as run
// does, it lists how each expectation fared.
func TestCheckVerdictSaysWhatIsTrue(t *testing.T) {
	h := lostWriteHistory(t)
	scenario := func(expect string) string {
		f := filepath.Join(t.TempDir(), "s.yaml")
		os.WriteFile(f, []byte("name: s\ntopics:\n  - { name: t, partitions: 1, replication.factor: 3 }\n"+
			"producers:\n  - { name: p, topic: t, config: { acks: all } }\nexpect:\n"+expect), 0o644)
		return f
	}
	code, stdout, stderr := kafkasim(t, "check", h, "--config", scenario("  violations: 1\n"))
	if code != 0 || strings.Contains(stdout, "no violation") || !strings.Contains(stdout, "OK: expectations held (1 violation, as expected)") ||
		!strings.Contains(stdout, "expect: violations 1 (got 1) ok") {
		t.Fatalf("exit %d, want 0 and the violation owned up to:\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = kafkasim(t, "check", h, "--config", scenario("  availability: 1\n"))
	if code != 1 || !strings.Contains(stdout, "FAIL: violations: want 0, got 1") || strings.Contains(stdout, "OK") {
		t.Fatalf("exit %d, want 1 (violations: 0 unless the scenario says otherwise):\n%s%s", code, stdout, stderr)
	}
}

func TestScenariosValidateAndList(t *testing.T) {
	code, stdout, stderr := kafkasim(t, "scenarios", "validate")
	if code != 0 || !strings.Contains(stdout, "ok acks1-leader-failover\n") {
		t.Fatalf("validate: exit %d %s %s", code, stdout, stderr)
	}
	code, stdout, _ = kafkasim(t, "scenarios", "list")
	if code != 0 || !strings.Contains(stdout, "\nbugzoo/hw-truncation ") {
		t.Fatalf("list: exit %d %s", code, stdout)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x.yaml"), []byte("cluster: { brokers: 0 }\n"), 0o644)
	if code, _, stderr := kafkasim(t, "scenarios", "validate", dir); code != 2 || !strings.Contains(stderr, "x.yaml:1:") {
		t.Fatalf("validate a bad file: exit %d %s", code, stderr)
	}
}

// An output folder that cannot be written is bad input (exit 2), for every
// command that writes one.
func TestUnwritableOutIsBadInput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "afile")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, args := range [][]string{
		{"run", "../../scenarios/batch-compression.yaml", "--quiet", "--out", file},
		{"fuzz", "--runs", "1", "--quiet", "--out", file},
		{"sweep", "../../sweeps/durability-vs-availability.yaml", "--quiet", "--seeds", "1", "--out", file},
	} {
		if code, _, stderr := kafkasim(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, stderr)
		}
	}
}

// TestMain lets a test run kafkasim as a child process (to signal it): with
// KAFKASIM_CHILD_ARGS set, the test binary is kafkasim.
func TestMain(m *testing.M) {
	if args := os.Getenv("KAFKASIM_CHILD_ARGS"); args != "" {
		os.Exit(run(strings.Split(args, "\x1f"), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// A cancelled CI job or a stopped Kubernetes pod gets SIGTERM, not Ctrl-C:
// the campaign must stop as for Ctrl-C and keep what it did (summary.json
// says interrupted), not die with nothing written.
func TestFuzzStopsOnSIGTERMAndKeepsItsSummary(t *testing.T) {
	out := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "KAFKASIM_CHILD_ARGS="+strings.Join(
		[]string{"fuzz", "--time", "10m", "--parallel", "1", "--quiet", "--out", out}, "\x1f"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != 0 && code != 1 {
		t.Fatalf("exit %d after SIGTERM, want 0 or 1 (a campaign's result); stderr %s", code, stderr.String())
	}
	raw, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatalf("no campaign summary after SIGTERM: %v; stderr %s", err, stderr.String())
	}
	var sum struct {
		Interrupted bool `json:"interrupted"`
	}
	if err := json.Unmarshal(raw, &sum); err != nil || !sum.Interrupted {
		t.Fatalf("summary %s does not say the campaign was interrupted (%v)", raw, err)
	}
}

// check --config judges a history by what the scenario's faults may cost,
// as a run does by what they did: partitions added move keys (key-order is
// permitted), and a power loss with the default flush policy may lose a
// record readers saw. Without those faults, both stay violations.
func TestCheckConfigTakesTheScenarioFaults(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o644)
		return p
	}
	keyOrder := write("keyorder.jsonl", strings.Join([]string{
		`{"index":0,"time":1,"process":"p-0","type":"invoke","f":"send","value":{"topic":"t","key":"k","value":"p-0:1"}}`,
		`{"index":1,"time":2,"process":"p-0","type":"ok","f":"send","value":{"topic":"t","key":"k","value":"p-0:1","partition":0,"offset":0}}`,
		`{"index":2,"time":3,"process":"p-0","type":"invoke","f":"send","value":{"topic":"t","key":"k","value":"p-0:2"}}`,
		`{"index":3,"time":4,"process":"p-0","type":"ok","f":"send","value":{"topic":"t","key":"k","value":"p-0:2","partition":1,"offset":0}}`,
		`{"index":4,"time":5,"process":"c-0","type":"invoke","f":"poll","value":{}}`,
		`{"index":5,"time":6,"process":"c-0","type":"ok","f":"poll","value":{"records":[{"topic":"t","partition":1,"offset":0,"key":"k","value":"p-0:2"}]}}`,
		`{"index":6,"time":7,"process":"c-0","type":"invoke","f":"poll","value":{}}`,
		`{"index":7,"time":8,"process":"c-0","type":"ok","f":"poll","value":{"records":[{"topic":"t","partition":0,"offset":0,"key":"k","value":"p-0:1"}]}}`,
	}, "\n")+"\n")
	// p-0:1 was read, then power was lost and final reads do not hold it.
	lostRead := write("lostread.jsonl", strings.Join([]string{
		`{"index":0,"time":1,"process":"p-0","type":"invoke","f":"send","value":{"topic":"t","value":"p-0:1"}}`,
		`{"index":1,"time":2,"process":"p-0","type":"ok","f":"send","value":{"topic":"t","partition":0,"offset":0,"value":"p-0:1"}}`,
		`{"index":2,"time":3,"process":"c-0","type":"invoke","f":"poll","value":{}}`,
		`{"index":3,"time":4,"process":"c-0","type":"ok","f":"poll","value":{"records":[{"topic":"t","partition":0,"offset":0,"value":"p-0:1"}]}}`,
		`{"index":4,"time":5,"process":"f-0","type":"invoke","f":"poll","value":{"final":true}}`,
		`{"index":5,"time":6,"process":"f-0","type":"ok","f":"poll","value":{"final":true,"records":[]}}`,
	}, "\n")+"\n")
	scenario := func(name, faults string) string {
		return write(name, `name: `+name+`
duration: 10s
cluster: { brokers: 3 }
topics:
  - { name: t, partitions: 1, replication.factor: 3 }
producers:
  - { name: p, topic: t, keys: 1, config: { acks: all } }
consumers:
  - { name: c, topics: [t], config: { auto.offset.reset: earliest } }
  - { name: f, topics: [t], config: { auto.offset.reset: earliest } }
`+faults)
	}
	added := scenario("added", "faults:\n  - { at: 5s, add-partitions: { topic: t, count: 2 } }\n")
	powerLoss := scenario("powerloss", "faults:\n  - { at: 5s, power-loss: broker-1, restart-after: 1s }\n")
	calm := scenario("calm", "")
	for _, c := range []struct {
		history, config string
		code            int
		want            string
	}{
		{keyOrder, added, 0, "key-order              permitted"},
		{keyOrder, calm, 1, "key-order              violation"},
		{lostRead, powerLoss, 0, "lost-acked-write       permitted"},
		{lostRead, calm, 1, "lost-acked-write       violation"},
	} {
		code, stdout, stderr := kafkasim(t, "check", c.history, "--config", c.config)
		if code != c.code || !strings.Contains(stdout, c.want) {
			t.Errorf("check %s --config %s: exit %d (want %d), want %q in:\n%s%s",
				filepath.Base(c.history), filepath.Base(c.config), code, c.code, c.want, stdout, stderr)
		}
	}
}
