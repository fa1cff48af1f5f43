package sim

import (
	"slices"
	"testing"
	"time"
)

func stallWorld(t *testing.T) (*World, []*probe) {
	t.Helper()
	w, probes := probeWorld(3, 3, NetworkOptions{Latency: Fixed(10 * time.Millisecond)})
	if err := w.ScheduleFault(time.Second, Fault{Kind: FaultStall, Target: "node-0", Messages: []string{"AlterPartition", "Fetch"}, For: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	w.RunUntil(2 * time.Second)
	return w, probes
}

// A stall holds what its target sends under the names it lists (and their
// qualified forms) until it heals, then sends it in order; everything else,
// including the same names sent by other nodes, goes on.
func TestStallHoldsTheChosenMessagesUntilItHeals(t *testing.T) {
	w, probes := stallWorld(t)
	send := func(from, to int, name string, n int) { probes[from].env.Send(NodeID(to), &namedMsg{Name: name, N: n}) }
	send(0, 1, "AlterPartition", 1)
	send(0, 1, "BrokerHeartbeat", 1)
	send(0, 1, "Fetch(replica)", 1)
	send(0, 1, "FetchResponse", 1)
	send(0, 1, "AlterPartition", 2)
	send(1, 0, "AlterPartition", 1)
	probes[0].send(2)
	w.RunUntil(3 * time.Second)
	if want := []string{"BrokerHeartbeat#1@2.01s", "FetchResponse#1@2.01s"}; !slices.Equal(probes[1].named, want) {
		t.Fatalf("during the stall node-1 got %v, want %v", probes[1].named, want)
	}
	if len(probes[0].named) != 1 || len(probes[2].deliveries) != 1 {
		t.Fatalf("traffic the stall does not name must flow: %v, %d", probes[0].named, len(probes[2].deliveries))
	}
	w.RunUntil(10 * time.Second)
	want := []string{"BrokerHeartbeat#1@2.01s", "FetchResponse#1@2.01s", "AlterPartition#1@6.01s", "Fetch(replica)#1@6.01s", "AlterPartition#2@6.01s"}
	if !slices.Equal(probes[1].named, want) {
		t.Fatalf("after the heal node-1 got %v, want %v", probes[1].named, want)
	}
	if st := w.NetworkStats(); st.Stalled != 3 {
		t.Fatalf("stats count %d stalled messages, want 3", st.Stalled)
	}
	// Healed: nothing is held any more.
	send(0, 1, "AlterPartition", 3)
	w.RunUntil(11 * time.Second)
	if got := probes[1].named[len(probes[1].named)-1]; got != "AlterPartition#3@10.01s" {
		t.Fatalf("after the heal a send went %s", got)
	}
}

// A held message dies with its connection (the reset lists it as unsent),
// with its sender's process, or when its destination restarts.
func TestStalledMessagesDieWithTheirConnectionOrProcess(t *testing.T) {
	t.Run("reset", func(t *testing.T) {
		w, probes := stallWorld(t)
		probes[0].env.Send(1, &namedMsg{Name: "AlterPartition", N: 1})
		w.Disconnect(0, 1)
		w.RunUntil(10 * time.Second)
		if len(probes[1].named) != 0 {
			t.Fatalf("a held message crossed a reset connection: %v", probes[1].named)
		}
		if len(probes[0].notices) != 1 || len(probes[0].notices[0].Unsent) != 1 || probes[0].notices[0].Unsent[0].(*namedMsg).N != 1 {
			t.Fatalf("the sender must be told it lost the held message: %+v", probes[0].notices)
		}
	})
	t.Run("sender crash", func(t *testing.T) {
		w, probes := stallWorld(t)
		probes[0].env.Send(1, &namedMsg{Name: "AlterPartition", N: 1})
		w.Crash(0, true) // a power loss resets no connection: the process takes it along
		w.RunUntil(3 * time.Second)
		w.Restart(0)
		w.RunUntil(10 * time.Second)
		if len(probes[1].named) != 0 {
			t.Fatalf("a message held by a dead process was sent: %v", probes[1].named)
		}
	})
	t.Run("destination restart", func(t *testing.T) {
		w, probes := stallWorld(t)
		probes[0].env.Send(1, &namedMsg{Name: "AlterPartition", N: 1})
		receiver := probes[1]
		w.Crash(1, true)
		w.RunUntil(3 * time.Second)
		w.Restart(1)
		w.RunUntil(10 * time.Second)
		if len(receiver.named) != 0 || len(probes[1].named) != 0 {
			t.Fatalf("a message for the process that died reached the new one: %v", probes[1].named)
		}
	})
}

func TestStallNeedsMessageNames(t *testing.T) {
	if err := (Fault{Kind: FaultStall, Target: "node-0"}).Validate(); err == nil {
		t.Fatal("a stall without message names validated")
	}
}

// The heal before the liveness phase ends every stall, one without a
// duration too: what they held is sent on, and nothing is held after it.
func TestHealAllEndsEveryStall(t *testing.T) {
	w, probes := probeWorld(3, 3, NetworkOptions{Latency: Fixed(10 * time.Millisecond)})
	if err := w.ScheduleFault(time.Second, Fault{Kind: FaultStall, Target: "node-0", Messages: []string{"AlterPartition"}}); err != nil {
		t.Fatal(err)
	}
	if err := w.ScheduleFault(time.Second, Fault{Kind: FaultStall, Target: "node-1", Messages: []string{"Vote"}, For: time.Hour}); err != nil {
		t.Fatal(err)
	}
	w.RunUntil(2 * time.Second)
	probes[0].env.Send(2, &namedMsg{Name: "AlterPartition", N: 1})
	probes[1].env.Send(2, &namedMsg{Name: "Vote", N: 1})
	w.RunUntil(3 * time.Second)
	if len(probes[2].named) != 0 {
		t.Fatalf("the stalls let %v through", probes[2].named)
	}
	w.HealAll()
	w.RunUntil(4 * time.Second)
	want := []string{"AlterPartition#1@3.01s", "Vote#1@3.01s"}
	if !slices.Equal(probes[2].named, want) {
		t.Fatalf("after the heal node-2 got %v, want %v", probes[2].named, want)
	}
	probes[0].env.Send(2, &namedMsg{Name: "AlterPartition", N: 2})
	w.RunUntil(5 * time.Second)
	if got := probes[2].named[len(probes[2].named)-1]; got != "AlterPartition#2@4.01s" {
		t.Fatalf("a send after the heal went %s", got)
	}
}

// A stall of stuck connections holds only the connections open when it
// began: a connection the sender opens after closing one passes, and what
// the closed one held arrives when the stall ends, after the newer traffic
// (the late request of a timed-out, retried call). A reset the sender did
// not make itself still takes it along.
func TestStuckConnectionsOutliveTheirSendersClose(t *testing.T) {
	run := func(t *testing.T, closeIt func(w *World, p []*probe)) (*World, []*probe) {
		w, probes := probeWorld(3, 3, NetworkOptions{Latency: Fixed(10 * time.Millisecond)})
		probes[0].env.Send(1, &namedMsg{Name: "Metadata", N: 0}) // opens the connection
		if err := w.ScheduleFault(time.Second, Fault{Kind: FaultStall, Target: "node-0", Messages: []string{"EndTxn"}, StuckConnections: true, For: 5 * time.Second}); err != nil {
			t.Fatal(err)
		}
		w.RunUntil(2 * time.Second)
		probes[0].env.Send(1, &namedMsg{Name: "EndTxn", N: 1})
		w.RunUntil(3 * time.Second)
		closeIt(w, probes)
		probes[0].env.Send(1, &namedMsg{Name: "EndTxn", N: 2}) // a new connection: not stuck
		w.RunUntil(10 * time.Second)
		return w, probes
	}
	t.Run("closed by its sender", func(t *testing.T) {
		_, probes := run(t, func(_ *World, p []*probe) { p[0].env.CloseConnection(1) })
		if want := []string{"Metadata#0@10ms", "EndTxn#2@3.01s", "EndTxn#1@6.01s"}; !slices.Equal(probes[1].named, want) {
			t.Fatalf("node-1 got %v, want %v", probes[1].named, want)
		}
	})
	t.Run("reset", func(t *testing.T) {
		_, probes := run(t, func(w *World, _ []*probe) { w.Disconnect(0, 1) })
		if want := []string{"Metadata#0@10ms", "EndTxn#2@3.01s"}; !slices.Equal(probes[1].named, want) {
			t.Fatalf("node-1 got %v, want %v", probes[1].named, want)
		}
	})
}
