package runner

import (
	"strings"
	"testing"
	"time"

	"kafkasim/model/cluster"
	"kafkasim/scenarios"
)

func phasesScenario(t *testing.T) *scenarios.Scenario {
	t.Helper()
	y := "name: ph\nduration: 10s\nsettle: 10s\ncluster: { controllers: 1, brokers: 1 }\n" +
		"topics: [{ name: t, partitions: 1, replication.factor: 1 }]\n" +
		"producers: [{ name: p, count: 1, topic: t, rate: 10/s }]\n" +
		"consumers: [{ name: c, count: 1, topics: [t] }]\n"
	s, err := scenarios.Parse("ph.yaml", []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Options.Stop ends a run at the next simulated second, in whichever phase
// it is: the result is an interrupted crash, taken where the world stopped.
func TestStopEndsTheRunWhereItIs(t *testing.T) {
	for _, at := range []time.Duration{0, 4 * time.Second, 13 * time.Second} {
		stop := make(chan struct{})
		opts := Options{Stop: stop, Progress: func(now, _ time.Duration) {
			if now >= at {
				select {
				case <-stop:
				default:
					close(stop)
				}
			}
		}}
		if at == 0 {
			close(stop)
			opts.Progress = nil
		}
		res, err := Run(phasesScenario(t), opts)
		if err != nil {
			t.Fatal(err)
		}
		if res.Verdict != Crash || !res.Interrupted || res.CrashDetail != interruptedDetail || res.SimTime != at || res.Report != nil {
			t.Fatalf("stopped at %v: verdict %s, interrupted %v (%s), at %v, checked %v", at, res.Verdict, res.Interrupted, res.CrashDetail, res.SimTime, res.Report != nil)
		}
		if res.Events == 0 && at > 0 {
			t.Fatalf("stopped at %v: no events counted", at)
		}
	}
}

// A panic inside the model is a crash that says when it happened.
func TestPanicInTheModelIsACrash(t *testing.T) {
	x := newExecution(phasesScenario(t), Options{})
	x.built = func(c *cluster.Cluster) { c.World.At(3*time.Second, func() { panic("boom") }) }
	res, err := x.execute()
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != Crash || res.Interrupted || res.SimTime != 3*time.Second ||
		!strings.HasPrefix(res.CrashDetail, "panic at simulated 3s (event ") || !strings.Contains(res.CrashDetail, "): boom\n") {
		t.Fatalf("verdict %s at %v: %.200s", res.Verdict, res.SimTime, res.CrashDetail)
	}
}
