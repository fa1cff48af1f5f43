package sim

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func lastRecord(t *testing.T, w *World) FaultRecord {
	t.Helper()
	log := w.FaultLog()
	if len(log) == 0 {
		t.Fatal("fault log is empty")
	}
	return log[len(log)-1]
}

func TestEveryFaultKindActs(t *testing.T) {
	type check func(t *testing.T, w *World, probes []*probe)
	down := func(id NodeID) check {
		return func(t *testing.T, w *World, _ []*probe) {
			if w.State(id) != Down {
				t.Fatalf("node %d is %v, want down", id, w.State(id))
			}
		}
	}
	cases := []struct {
		fault Fault
		setup func(w *World)
		check check
	}{
		{Fault{Kind: FaultCrash, Target: "node-1"}, nil, down(1)},
		{Fault{Kind: FaultKill, Target: "node-1"}, nil, down(1)},
		{Fault{Kind: FaultPowerLoss, Target: "rack(r1)"}, nil, func(t *testing.T, w *World, _ []*probe) {
			if w.State(1) != Down || w.State(3) != Down || w.State(0) != Running {
				t.Fatal("power-loss rack(r1) takes down node-1 and node-3 only")
			}
		}},
		{Fault{Kind: FaultShutdown, Target: "node-2"}, nil, down(2)},
		{Fault{Kind: FaultRestart, Target: "node-2"}, func(w *World) { w.Crash(2, true) }, func(t *testing.T, w *World, _ []*probe) {
			if w.State(2) != Running || w.ProcessStats(2).Boots != 2 {
				t.Fatal("restart boots a down node")
			}
		}},
		{Fault{Kind: FaultPause, Target: "node-0"}, nil, func(t *testing.T, w *World, _ []*probe) {
			if w.State(0) != Paused {
				t.Fatal("pause")
			}
		}},
		{Fault{Kind: FaultResume, Target: "node-0"}, func(w *World) { w.Pause(0) }, func(t *testing.T, w *World, _ []*probe) {
			if w.State(0) != Running {
				t.Fatal("resume")
			}
		}},
		{Fault{Kind: FaultPartition, Groups: [][]string{{"node-0"}, {"rest"}}}, nil, func(t *testing.T, w *World, _ []*probe) {
			if w.Connected(0, 1) || w.Connected(2, 0) || !w.Connected(1, 2) {
				t.Fatal("partition node-0 | rest")
			}
		}},
		{Fault{Kind: FaultPartition, Groups: [][]string{{"node-0"}, {"node-1"}}, OneWay: true}, nil, func(t *testing.T, w *World, _ []*probe) {
			if w.Connected(0, 1) || !w.Connected(1, 0) || !w.Connected(0, 2) {
				t.Fatal("one-way node-0 -/-> node-1 only")
			}
		}},
		{Fault{Kind: FaultIsolate, Target: "node-3"}, nil, func(t *testing.T, w *World, _ []*probe) {
			for i := range NodeID(3) {
				if w.Connected(3, i) || w.Connected(i, 3) {
					t.Fatal("isolate cuts every link of node-3")
				}
			}
		}},
		{Fault{Kind: FaultHeal}, func(w *World) { w.Partition([]NodeID{0}, []NodeID{1}) }, func(t *testing.T, w *World, _ []*probe) {
			if !w.Connected(0, 1) {
				t.Fatal("heal")
			}
		}},
		{Fault{Kind: FaultDisconnect, Target: "node-0", Peer: "node-1"}, nil, func(t *testing.T, w *World, probes []*probe) {
			w.RunFor(time.Millisecond)
			if len(probes[0].notices) != 1 || len(probes[1].notices) != 1 || len(probes[2].notices) != 0 {
				t.Fatal("disconnect node-0 from node-1 notifies exactly those two")
			}
		}},
		{Fault{Kind: FaultSlowNetwork, Target: "node-0", Latency: time.Second}, nil, func(t *testing.T, w *World, probes []*probe) {
			before := len(probes[0].deliveries)
			probes[1].send(0)
			w.RunFor(900 * time.Millisecond)
			if len(probes[0].deliveries) != before {
				t.Fatal("slow-network adds a second to node-0's links")
			}
			w.RunFor(200 * time.Millisecond)
			if len(probes[0].deliveries) != before+1 {
				t.Fatal("the slowed message arrives after the extra second")
			}
		}},
		{Fault{Kind: FaultClock, Target: "node-0", ClockJump: time.Hour}, nil, func(t *testing.T, w *World, probes []*probe) {
			if off := w.Clock(0).Offset(w.Now()); off != time.Hour {
				t.Fatalf("clock offset %v, want 1h", off)
			}
		}},
		{Fault{Kind: FaultDisk, Disk: DiskFull, Target: "node-0"}, nil, func(t *testing.T, w *World, _ []*probe) {
			if _, err := w.Disk(0).Append("f", []byte("x")); !errors.Is(err, ErrNoSpace) {
				t.Fatal("disk full")
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.fault.String(), func(t *testing.T) {
			w, probes := probeWorld(1, 4, DefaultNetworkOptions())
			for i := range probes {
				for j := range probes {
					if i != j {
						probes[i].send(NodeID(j)) // open every connection
					}
				}
			}
			w.RunFor(time.Second)
			if c.setup != nil {
				c.setup(w)
			}
			if err := w.InjectFault(c.fault); err != nil {
				t.Fatal(err)
			}
			if rec := lastRecord(t, w); rec.Skipped != "" {
				t.Fatalf("fault skipped: %s", rec.Skipped)
			}
			c.check(t, w, probes)
		})
	}
}

func TestFaultDurationUndoes(t *testing.T) {
	w, _ := probeWorld(1, 3, DefaultNetworkOptions())
	must := func(at time.Duration, f Fault) {
		if err := w.ScheduleFault(at, f); err != nil {
			t.Fatal(err)
		}
	}
	must(time.Second, Fault{Kind: FaultCrash, Target: "node-0", For: time.Second})
	must(time.Second, Fault{Kind: FaultPause, Target: "node-1", For: 2 * time.Second})
	must(time.Second, Fault{Kind: FaultIsolate, Target: "node-2", For: 3 * time.Second})
	w.RunUntil(1500 * time.Millisecond)
	if w.State(0) != Down || w.State(1) != Paused || w.Connected(2, 0) {
		t.Fatal("faults did not start")
	}
	w.RunUntil(2500 * time.Millisecond)
	if w.State(0) != Running {
		t.Fatal("crash for 1s: the node restarts at 2s")
	}
	w.RunUntil(3500 * time.Millisecond)
	if w.State(1) != Running {
		t.Fatal("pause for 2s: resumed at 3s")
	}
	w.RunUntil(4500 * time.Millisecond)
	if !w.Connected(2, 0) {
		t.Fatal("isolate for 3s: healed at 4s")
	}
	undos := 0
	for _, r := range w.FaultLog() {
		if r.Undo {
			undos++
		}
	}
	if undos != 3 {
		t.Fatalf("%d undos logged, want 3", undos)
	}
}

func TestRandomTargetPrefersEligibleNodes(t *testing.T) {
	w, _ := probeWorld(1, 4, DefaultNetworkOptions())
	w.Crash(0, true)
	w.Crash(1, true)
	w.Crash(2, true)
	for range 10 {
		if err := w.InjectFault(Fault{Kind: FaultRestart, Target: "random-probe"}); err != nil {
			t.Fatal(err)
		}
		rec := lastRecord(t, w)
		if rec.Skipped == "" && rec.Nodes[0] == "node-3" {
			t.Fatal("restart picked the node that is up while others were down")
		}
	}
}

func TestUnresolvableTargetIsSkippedNotFatal(t *testing.T) {
	w, _ := probeWorld(1, 2, DefaultNetworkOptions())
	w.SetResolver(resolverFunc(func(sel string) ([]NodeID, error) {
		if sel == "leader(t-0)" {
			return nil, nil // no leader right now
		}
		return nil, ErrUnknownSelector
	}))
	if err := w.InjectFault(Fault{Kind: FaultCrash, Target: "leader(t-0)"}); err != nil {
		t.Fatal(err)
	}
	if rec := lastRecord(t, w); !strings.Contains(rec.Skipped, "matches no node") {
		t.Fatalf("want a skipped record, got %+v", rec)
	}
	if err := w.InjectFault(Fault{Kind: FaultCrash, Target: "node-1"}); err != nil || w.State(1) != Down {
		t.Fatal("built-in selectors still work behind a model resolver")
	}
}

type resolverFunc func(string) ([]NodeID, error)

func (f resolverFunc) ResolveTarget(s string) ([]NodeID, error) { return f(s) }

func TestValidateSelector(t *testing.T) {
	w, _ := probeWorld(1, 2, DefaultNetworkOptions())
	for _, ok := range []string{"node-0", "all", "random", "random-probe", "rack(r0)", "role(probe)"} {
		if err := w.ValidateSelector(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, bad := range []string{"node-9", "rack(zz)", "random-broker", "leader(x-0)", ""} {
		if err := w.ValidateSelector(bad); err == nil {
			t.Errorf("%q should be rejected", bad)
		}
	}
}

func TestFaultValidate(t *testing.T) {
	bad := []Fault{
		{Kind: "explode", Target: "x"},
		{Kind: FaultCrash},
		{Kind: FaultCrash, Target: "x", For: -1},
		{Kind: FaultPartition, Groups: [][]string{{"a"}}},
		{Kind: FaultPartition, Groups: [][]string{{"a"}, {"b"}, {"c"}}, OneWay: true},
		{Kind: FaultSlowNetwork, Target: "x"},
		{Kind: FaultClock, Target: "x", DriftPPM: 5_000_000},
		{Kind: FaultDisk, Target: "x", Disk: "melt"},
	}
	for _, f := range bad {
		if f.Validate() == nil {
			t.Errorf("%+v should be rejected", f)
		}
	}
}

func TestCustomFaultGoesToTheModel(t *testing.T) {
	w, _ := probeWorld(1, 1, DefaultNetworkOptions())
	var got any
	w.SetCustomFaultHandler(func(f Fault) (string, error) { got = f.Custom; return "done", nil })
	if err := w.InjectFault(Fault{Kind: FaultCustom, Custom: "add-partitions orders 6"}); err != nil {
		t.Fatal(err)
	}
	if got != "add-partitions orders 6" || lastRecord(t, w).Detail != "done" {
		t.Fatal("custom fault not handed to the model")
	}
}

func TestHealAllRestoresEverything(t *testing.T) {
	w, probes := probeWorld(1, 4, DefaultNetworkOptions())
	w.Crash(0, true)
	w.Pause(1)
	w.Partition([]NodeID{2}, []NodeID{3})
	w.AddLatency([]NodeID{3}, []NodeID{2}, time.Hour)
	w.nodes[3].clock.SetDrift(w.Now(), 50_000)
	w.Disk(3).setFull(true)
	w.HealAll()
	if w.State(0) != Running || w.State(1) != Running || !w.Connected(2, 3) {
		t.Fatal("HealAll restarts, resumes and heals")
	}
	if w.Clock(3).DriftPPM() != 0 || w.Clock(3).Offset(w.Now()) != 0 {
		t.Fatal("HealAll resets clocks")
	}
	if _, err := w.Disk(3).Append("f", []byte("x")); err != nil {
		t.Fatal("HealAll frees disk space")
	}
	probes[3].send(2)
	w.RunFor(100 * time.Millisecond)
	if len(probes[2].deliveries) == 0 {
		t.Fatal("HealAll removes extra latency")
	}
	if err := w.ScheduleFault(w.Now()+time.Second, Fault{Kind: FaultCrash, Target: "node-2"}); err != nil {
		t.Fatal(err)
	}
	w.RunFor(2 * time.Second)
	if w.State(2) != Running {
		t.Fatal("after HealAll no scheduled fault fires")
	}
}

func TestCleanShutdownWaitsForTheNodeThenForcesAfterGrace(t *testing.T) {
	opts := DefaultOptions(1)
	opts.ShutdownGrace = 5 * time.Second
	w := NewWorld(opts)
	var s *stubbornNode
	w.AddNode(NodeSpec{Name: "n", New: func() Node { s = &stubbornNode{}; return s }})
	w.Start()
	w.RunUntil(0)
	w.Shutdown(0)
	if w.State(0) != Running || !s.asked {
		t.Fatal("a Stopper is asked to stop and keeps running until it exits")
	}
	w.RunFor(4 * time.Second)
	if w.State(0) != Running {
		t.Fatal("killed before the grace time")
	}
	w.RunFor(2 * time.Second)
	if w.State(0) != Down {
		t.Fatal("not killed after the grace time")
	}
}

type stubbornNode struct{ asked bool }

func (s *stubbornNode) Start(Env)               {}
func (s *stubbornNode) Deliver(NodeID, Message) {}
func (s *stubbornNode) Fire(Timer)              {}
func (s *stubbornNode) Stop()                   { s.asked = true }
