package sim

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

// sendPlan draws a random traffic pattern: at each step, one node sends to
// another, and some virtual time passes.
type sendStep struct {
	from, to int
	wait     time.Duration
}

func drawTraffic(t *rapid.T, n int) []sendStep {
	steps := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) sendStep {
		return sendStep{
			from: rapid.IntRange(0, n-1).Draw(t, "from"),
			to:   rapid.IntRange(0, n-1).Draw(t, "to"),
			wait: time.Duration(rapid.IntRange(0, 3000).Draw(t, "wait_us")) * time.Microsecond,
		}
	}), 1, 300).Draw(t, "traffic")
	return steps
}

func TestNetworkFIFOPerLinkWhenReorderingIsOff(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(2, 5).Draw(t, "nodes")
		net := NetworkOptions{Latency: Range{Min: 0, Max: time.Duration(rapid.IntRange(0, 20).Draw(t, "latency_ms_max")) * time.Millisecond}}
		w, probes := probeWorld(rapid.Uint64().Draw(t, "seed"), n, net)
		sent := 0
		for _, s := range drawTraffic(t, n) {
			probes[s.from].send(NodeID(s.to))
			sent++
			w.RunFor(s.wait)
		}
		w.RunFor(time.Second)
		got := 0
		for _, p := range probes {
			last := map[NodeID]int{}
			for _, d := range p.deliveries {
				want, ok := last[d.from]
				if !ok {
					want = -1
				}
				if d.n != want+1 {
					t.Fatalf("link %d->%d delivered #%d after #%d: FIFO broken or a message lost", d.from, p.env.ID(), d.n, want)
				}
				last[d.from] = d.n
				got++
			}
		}
		if got != sent {
			t.Fatalf("sent %d messages on a healthy network, delivered %d", sent, got)
		}
	})
}

func TestNetworkLatencyStaysInRange(t *testing.T) {
	w, probes := probeWorld(7, 2, NetworkOptions{Latency: Range{Min: 2 * time.Millisecond, Max: 4 * time.Millisecond}})
	w.AddLatency([]NodeID{0}, []NodeID{1}, 10*time.Millisecond)
	for range 200 {
		start := w.Now()
		probes[0].send(1)
		probes[1].send(0)
		w.RunFor(50 * time.Millisecond)
		d01 := probes[1].deliveries[len(probes[1].deliveries)-1].at - start
		d10 := probes[0].deliveries[len(probes[0].deliveries)-1].at - start
		if d01 < 12*time.Millisecond || d01 > 14*time.Millisecond {
			t.Fatalf("slowed link 0->1 took %v, want 12ms..14ms", d01)
		}
		if d10 < 2*time.Millisecond || d10 > 4*time.Millisecond {
			t.Fatalf("link 1->0 took %v, want 2ms..4ms", d10)
		}
	}
}

func TestNothingCrossesAPartition(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(2, 6).Draw(t, "nodes")
		w, probes := probeWorld(rapid.Uint64().Draw(t, "seed"), n, DefaultNetworkOptions())
		// Each node is in group 0, group 1, or no group (keeps every link).
		side := make([]int, n)
		var groups [2][]NodeID
		for i := range side {
			side[i] = rapid.IntRange(-1, 1).Draw(t, "side")
			if side[i] >= 0 {
				groups[side[i]] = append(groups[side[i]], NodeID(i))
			}
		}
		crosses := func(a, b int) bool { return side[a] >= 0 && side[b] >= 0 && side[a] != side[b] }
		// Some traffic before the cut is still in flight when it starts.
		traffic := drawTraffic(t, n)
		for _, s := range traffic[:len(traffic)/2] {
			probes[s.from].send(NodeID(s.to))
		}
		cutAt := w.Now()
		cut := w.Partition(groups[0], groups[1])
		for _, s := range traffic[len(traffic)/2:] {
			probes[s.from].send(NodeID(s.to))
			w.RunFor(s.wait)
		}
		w.RunFor(time.Second)
		for to, p := range probes {
			for _, d := range p.deliveries {
				if crosses(int(d.from), to) && d.at >= cutAt {
					t.Fatalf("message %d->%d crossed the partition at %v", d.from, to, d.at)
				}
			}
		}
		// After healing, traffic flows again between every pair.
		w.Heal(cut)
		before := make([]int, n)
		for i, p := range probes {
			before[i] = len(p.deliveries)
		}
		for a := range n {
			for b := range n {
				if a != b {
					probes[a].send(NodeID(b))
				}
			}
		}
		w.RunFor(time.Second)
		for i, p := range probes {
			if got := len(p.deliveries) - before[i]; got != n-1 {
				t.Fatalf("after heal node %d received %d messages, want %d", i, got, n-1)
			}
		}
	})
}

func TestOneWayPartition(t *testing.T) {
	w, probes := probeWorld(3, 3, DefaultNetworkOptions())
	w.CutOneWay([]NodeID{0}, []NodeID{1, 2})
	probes[0].send(1)
	probes[0].send(2)
	probes[1].send(0)
	probes[2].send(0)
	probes[1].send(2)
	w.RunFor(time.Second)
	if len(probes[0].deliveries) != 2 {
		t.Fatalf("node 0 should still hear both peers, got %d", len(probes[0].deliveries))
	}
	if len(probes[1].deliveries) != 0 || len(probes[2].deliveries) != 1 {
		t.Fatalf("node 0's messages must not arrive: node1=%v node2=%v", probes[1].deliveries, probes[2].deliveries)
	}
	if w.Connected(0, 1) || !w.Connected(1, 0) {
		t.Fatal("Connected disagrees with the one-way cut")
	}
}

func TestOverlappingPartitionsHealIndependently(t *testing.T) {
	w, probes := probeWorld(3, 2, DefaultNetworkOptions())
	a := w.Partition([]NodeID{0}, []NodeID{1})
	b := w.CutOneWay([]NodeID{0}, []NodeID{1})
	w.Heal(a)
	probes[0].send(1)
	probes[1].send(0)
	w.RunFor(time.Second)
	if len(probes[1].deliveries) != 0 || len(probes[0].deliveries) != 1 {
		t.Fatal("healing one cut must leave the other in force")
	}
	w.Heal(b)
	if w.Heal(b) {
		t.Fatal("healing twice should report false")
	}
	probes[0].send(1)
	w.RunFor(time.Second)
	if len(probes[1].deliveries) != 1 {
		t.Fatal("both cuts healed: the link should work")
	}
}

func TestDisconnectFailsInFlightMessagesBackToTheSender(t *testing.T) {
	w, probes := probeWorld(5, 2, NetworkOptions{Latency: Fixed(10 * time.Millisecond)})
	for range 3 {
		probes[0].send(1)
	}
	probes[1].send(0)
	w.RunFor(time.Millisecond)
	w.Disconnect(0, 1)
	w.RunFor(time.Second)
	if len(probes[1].deliveries) != 0 || len(probes[0].deliveries) != 0 {
		t.Fatal("messages in flight on a reset connection must not arrive")
	}
	if len(probes[0].notices) != 1 || len(probes[1].notices) != 1 {
		t.Fatalf("both ends are told of the reset: %d, %d notices", len(probes[0].notices), len(probes[1].notices))
	}
	unsent := probes[0].notices[0].Unsent
	if len(unsent) != 3 {
		t.Fatalf("node 0 lost 3 messages, told of %d", len(unsent))
	}
	for i, m := range unsent {
		if m.(*probeMsg).N != i {
			t.Fatalf("unsent messages out of order: %d at %d", m.(*probeMsg).N, i)
		}
	}
	if probes[0].notices[0].Peer != 1 || len(probes[1].notices[0].Unsent) != 1 {
		t.Fatal("notice names the wrong peer or loses node 1's message")
	}
	// A new connection works.
	probes[0].send(1)
	w.RunFor(time.Second)
	if len(probes[1].deliveries) != 1 {
		t.Fatal("a send after the reset opens a new connection")
	}
}

func TestProcessCrashResetsConnectionsButPowerLossDoesNot(t *testing.T) {
	w, probes := probeWorld(5, 3, DefaultNetworkOptions())
	probes[1].send(0)
	probes[2].send(0)
	w.RunFor(time.Second)
	probes[1].send(0) // in flight when node 0 dies
	w.Crash(0, false)
	w.RunFor(time.Second)
	if len(probes[1].notices) != 1 || len(probes[1].notices[0].Unsent) != 1 {
		t.Fatalf("a killed process's peers are told and get their lost message back: %+v", probes[1].notices)
	}
	if len(probes[2].notices) != 1 {
		t.Fatal("every peer with an open connection is told")
	}
	w.Restart(0)
	w.RunUntil(w.Now())
	probes[1].send(0)
	w.RunFor(time.Second)
	w.Crash(0, true)
	w.RunFor(time.Second)
	if len(probes[1].notices) != 1 {
		t.Fatal("a machine that lost power tells nobody")
	}
}

func TestMessageToARestartedNodeIsDropped(t *testing.T) {
	w, probes := probeWorld(5, 2, NetworkOptions{Latency: Fixed(10 * time.Millisecond)})
	probes[0].send(1)
	w.RunFor(time.Millisecond)
	w.Crash(1, true)
	w.Restart(1)
	w.RunFor(time.Second)
	if len(probes[1].deliveries) != 0 {
		t.Fatal("a message sent to the old process must not reach the new one")
	}
	if w.NetworkStats().DroppedDown != 1 {
		t.Fatalf("drop not counted: %+v", w.NetworkStats())
	}
}

func TestPausedNodeHandlesNothingUntilResumed(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w, probes := probeWorld(rapid.Uint64().Draw(t, "seed"), 3, DefaultNetworkOptions())
		timers := rapid.IntRange(0, 5).Draw(t, "timers")
		var cancelMe TimerID
		for i := range timers {
			id := probes[0].env.After(time.Duration(rapid.IntRange(0, 200).Draw(t, "timer_ms"))*time.Millisecond, i)
			if i == 0 {
				cancelMe = id
			}
		}
		w.Pause(0)
		msgs := rapid.IntRange(0, 20).Draw(t, "msgs")
		for range msgs {
			probes[1+rapid.IntRange(0, 1).Draw(t, "sender")].send(0)
			w.RunFor(time.Duration(rapid.IntRange(0, 20).Draw(t, "gap_ms")) * time.Millisecond)
		}
		pausedFor := time.Duration(rapid.IntRange(200, 2000).Draw(t, "pause_ms")) * time.Millisecond
		w.RunFor(pausedFor)
		if len(probes[0].deliveries) != 0 || len(probes[0].fired) != 0 {
			t.Fatalf("paused node handled %d messages and %d timers", len(probes[0].deliveries), len(probes[0].fired))
		}
		cancelled := 0
		if timers > 0 && rapid.Bool().Draw(t, "cancel_while_paused") {
			probes[0].env.Cancel(cancelMe)
			cancelled = 1
		}
		resumedAt := w.Now()
		w.Resume(0)
		w.RunFor(time.Second)
		if len(probes[0].deliveries) != msgs || len(probes[0].fired) != timers-cancelled {
			t.Fatalf("after resume: %d/%d messages, %d/%d timers", len(probes[0].deliveries), msgs, len(probes[0].fired), timers-cancelled)
		}
		for _, d := range probes[0].deliveries {
			if d.at < resumedAt {
				t.Fatalf("delivery at %v before resume at %v", d.at, resumedAt)
			}
		}
		last := map[NodeID]int{1: -1, 2: -1}
		for _, d := range probes[0].deliveries {
			if d.n != last[d.from]+1 {
				t.Fatalf("held messages from %d released out of order", d.from)
			}
			last[d.from] = d.n
		}
	})
}

func TestLossDuplicationReorderingKnobs(t *testing.T) {
	count := func(net NetworkOptions) (delivered int, inOrder bool) {
		w, probes := probeWorld(11, 2, net)
		for range 500 {
			probes[0].send(1)
		}
		w.RunFor(time.Second)
		inOrder = true
		for i, d := range probes[1].deliveries {
			if i > 0 && d.n < probes[1].deliveries[i-1].n {
				inOrder = false
			}
		}
		return len(probes[1].deliveries), inOrder
	}
	base := DefaultNetworkOptions()
	if n, ordered := count(base); n != 500 || !ordered {
		t.Fatalf("default network: %d delivered, in order %v", n, ordered)
	}
	lossy := base
	lossy.LossProbability = 0.5
	if n, _ := count(lossy); n < 150 || n > 350 {
		t.Fatalf("loss 0.5: %d of 500 delivered", n)
	}
	dup := base
	dup.DuplicateProbability = 1
	if n, _ := count(dup); n != 1000 {
		t.Fatalf("duplicate 1.0: %d delivered, want 1000", n)
	}
	reorder := base
	reorder.ReorderProbability = 0.5
	if n, ordered := count(reorder); n != 500 || ordered {
		t.Fatalf("reorder 0.5: %d delivered, in order %v", n, ordered)
	}
}

func TestNetworkOptionsValidate(t *testing.T) {
	bad := []NetworkOptions{
		{Latency: Range{Min: 5, Max: 1}},
		{Latency: Range{Min: -1, Max: 1}},
		{LossProbability: 1.5},
		{ReorderProbability: -0.1},
	}
	for _, o := range bad {
		if o.Validate() == nil {
			t.Errorf("%+v should be rejected", o)
		}
	}
	if err := DefaultNetworkOptions().Validate(); err != nil {
		t.Fatal(err)
	}
}

type pingNode struct {
	env  Env
	peer NodeID
	msg  Message
}

func (p *pingNode) Start(env Env)                  { p.env = env }
func (p *pingNode) Deliver(from NodeID, m Message) { p.env.Send(from, m) }
func (p *pingNode) Fire(Timer)                     {}

// BenchmarkNetworkMessages measures messages per second through the network:
// 64 messages bounce between two nodes (each delivery sends the next), with
// latency draws, FIFO bookkeeping and delivery checks on every one.
func BenchmarkNetworkMessages(b *testing.B) {
	opts := DefaultOptions(1)
	opts.Limits.StepsMax = ^uint64(0) >> 1
	w := NewWorld(opts)
	nodes := [2]*pingNode{{}, {}}
	w.AddNode(NodeSpec{Name: "a", New: func() Node { return nodes[0] }})
	w.AddNode(NodeSpec{Name: "b", New: func() Node { return nodes[1] }})
	w.Start()
	w.RunUntil(0)
	msg := &probeMsg{}
	for range 64 {
		nodes[0].env.Send(1, msg)
	}
	w.RunFor(time.Second)
	b.ReportAllocs()
	b.ResetTimer()
	start := w.NetworkStats().Delivered
	for w.NetworkStats().Delivered-start < uint64(b.N) {
		w.RunFor(10 * time.Millisecond)
	}
	b.StopTimer()
	b.ReportMetric(float64(w.NetworkStats().Delivered-start)/b.Elapsed().Seconds(), "msgs/s")
}

// A node tells its connections with a peer apart: a reset (a close, a
// crash, a disconnect) or the peer's restart makes a new one, even when
// nothing told the node (a power loss); traffic does not.
func TestConnectionChangesWithEveryResetAndRestart(t *testing.T) {
	w, probes := probeWorld(5, 3, NetworkOptions{Latency: Fixed(10 * time.Millisecond)})
	conn := func() uint64 { return probes[1].env.Connection(0) }
	first := conn()
	probes[0].send(1)
	probes[1].send(0)
	w.RunFor(time.Second)
	if conn() != first {
		t.Fatal("traffic changed the connection")
	}
	seen := map[uint64]string{first: "the first"}
	changed := func(how string) {
		t.Helper()
		c := conn()
		if before, ok := seen[c]; ok {
			t.Fatalf("after %s the connection is %s one again", how, before)
		}
		seen[c] = how
	}
	probes[0].env.CloseConnection(1)
	changed("a close by the peer")
	probes[0].send(1)
	w.RunFor(time.Second)
	w.Disconnect(0, 1)
	changed("a disconnect")
	probes[0].send(1)
	w.RunFor(time.Second)
	w.Crash(0, true) // a power loss: nobody is told
	w.Restart(0)
	w.RunUntil(w.Now())
	changed("the peer's restart")
}
