package sim

import (
	"fmt"
	"testing"
	"time"
)

// The stale connections of a power loss, on a 10 ms network: node 0 is the
// peer, node 1 the machine that loses power.

const staleLatency = 10 * time.Millisecond

func staleWorld(t *testing.T) (*World, []*probe) {
	t.Helper()
	return probeWorld(11, 3, NetworkOptions{Latency: Fixed(staleLatency)})
}

// unsentNumbers lists a notice's unsent probe messages by number.
func unsentNumbers(d *Disconnected) []int {
	var out []int
	for _, m := range d.Unsent {
		out = append(out, m.(*probeMsg).N)
	}
	return out
}

func wantNotices(t *testing.T, p *probe, want ...string) {
	t.Helper()
	var got []string
	for i, d := range p.notices {
		got = append(got, fmt.Sprintf("peer %d at %v unsent %v", d.Peer, p.noticedAt[i], unsentNumbers(d)))
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("notices %v, want %v", got, want)
	}
}

func wantDelivered(t *testing.T, p *probe, from NodeID, want ...int) {
	t.Helper()
	var got []int
	for _, d := range p.deliveries {
		if d.from == from {
			got = append(got, d.n)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("delivered from node %d: %v, want %v", from, got, want)
	}
}

func TestRetransmissionScheduleIsLinuxs(t *testing.T) {
	want := []time.Duration{0, 200 * time.Millisecond, 600 * time.Millisecond, 1400 * time.Millisecond,
		3 * time.Second, 6200 * time.Millisecond, 12600 * time.Millisecond, 25400 * time.Millisecond,
		51 * time.Second, 102200 * time.Millisecond, 204600 * time.Millisecond, 324600 * time.Millisecond}
	for k, d := range want {
		if got := retransmitOffset(k); got != d {
			t.Fatalf("retransmission %d at %v, want %v", k, got, d)
		}
	}
	if got := retransmitOffset(tcpRetries2 + 1); got != 924600*time.Millisecond {
		t.Fatalf("gives up at %v, want 924.6s (tcp_retries2=15)", got)
	}
}

// A request in flight when the machine lost power, the machine back 5 s
// later: the retransmission at 6.2 s after the loss draws the reset, which
// lands a round trip later and lists what the peer lost, in order: the
// request, one sent while the machine was down, one sent after its boot
// (held behind the retransmission).
func TestPowerLossResetAtTheFirstRetransmissionAfterTheBoot(t *testing.T) {
	w, probes := staleWorld(t)
	probes[0].send(1) // #0: lost on arrival at 10ms
	w.RunFor(time.Millisecond)
	w.Crash(1, true)
	w.RunUntil(2 * time.Second)
	probes[0].send(1) // #1: the machine is down
	w.RunUntil(5 * time.Second)
	w.Restart(1)
	w.RunUntil(5500 * time.Millisecond)
	probes[0].send(1) // #2: behind the retransmission
	reset := staleLatency + retransmitOffset(5) + 2*staleLatency
	w.RunUntil(reset - 1)
	wantNotices(t, probes[0])
	w.RunUntil(reset)
	wantNotices(t, probes[0], fmt.Sprintf("peer 1 at %v unsent [0 1 2]", reset))
	wantDelivered(t, probes[1], 0)
	// The next send opens a new connection to the new process.
	probes[0].send(1)
	w.RunFor(time.Second)
	wantDelivered(t, probes[1], 0, 3)
	w.RunUntil(2000 * time.Second)
	if len(probes[0].notices) != 1 {
		t.Fatalf("one reset per connection: %d notices", len(probes[0].notices))
	}
}

// Nothing was in flight at the power loss: the peer's first send after the
// boot reaches the machine, whose kernel answers with a reset at once.
func TestFirstSendOnAStaleConnectionDrawsAReset(t *testing.T) {
	w, probes := rebootedIdle(t)
	w.RunUntil(6 * time.Second)
	probes[0].send(1)
	w.RunFor(time.Second)
	wantNotices(t, probes[0], fmt.Sprintf("peer 1 at %v unsent [1]", 6*time.Second+2*staleLatency))
	wantDelivered(t, probes[1], 0)
	probes[0].send(1)
	w.RunFor(time.Second)
	wantDelivered(t, probes[1], 0, 2)
}

// rebootedIdle opens a connection from 0 to 1 (its send delivered), and has
// 1 lose power at 1s with nothing in flight and boot again at 5s.
func rebootedIdle(t *testing.T) (*World, []*probe) {
	t.Helper()
	w, probes := staleWorld(t)
	probes[0].send(1)
	w.RunFor(time.Second)
	w.Crash(1, true)
	w.RunUntil(5 * time.Second)
	w.Restart(1)
	return w, probes
}

// lostRequest sends a request from 0 to 1 that is in flight when 1 loses
// power at 1ms.
func lostRequest(t *testing.T) (*World, []*probe) {
	t.Helper()
	w, probes := staleWorld(t)
	probes[0].send(1)
	w.RunFor(time.Millisecond)
	w.Crash(1, true)
	return w, probes
}

func TestNoResetForAConnectionTheSenderClosed(t *testing.T) {
	w, probes := lostRequest(t)
	w.RunUntil(2 * time.Second)
	probes[0].env.CloseConnection(1) // its request timed out
	w.RunUntil(5 * time.Second)
	w.Restart(1)
	w.RunUntil(6 * time.Second)
	probes[0].send(1)
	w.RunUntil(2000 * time.Second)
	wantNotices(t, probes[0])
	wantDelivered(t, probes[1], 0, 1)
}

// The sender closes the connection and sends on a new one while the reset
// of the old one is crossing back: the reset must not reach it (it would
// fail the new connection's requests).
func TestAResetInFlightDiesWithTheConnection(t *testing.T) {
	w, probes := lostRequest(t)
	w.RunUntil(5 * time.Second)
	w.Restart(1)
	retransmission := staleLatency + retransmitOffset(5)
	w.RunUntil(retransmission + staleLatency) // the reset is on its way back
	probes[0].env.CloseConnection(1)
	probes[0].send(1)
	w.RunUntil(2000 * time.Second)
	wantNotices(t, probes[0])
	wantDelivered(t, probes[1], 0, 1)
}

func TestNoResetForADeadSender(t *testing.T) {
	for _, powerLoss := range []bool{false, true} {
		t.Run(fmt.Sprintf("power loss %v", powerLoss), func(t *testing.T) {
			w, probes := lostRequest(t)
			w.RunUntil(2 * time.Second)
			w.Crash(0, powerLoss)
			w.Restart(0)
			w.RunUntil(5 * time.Second)
			w.Restart(1)
			w.RunUntil(2000 * time.Second)
			wantNotices(t, probes[0])
		})
	}
}

func TestNoResetWhileTheMachineStaysDown(t *testing.T) {
	w, probes := lostRequest(t)
	w.RunUntil(5 * time.Second)
	probes[0].send(1)
	w.RunUntil(3000 * time.Second)
	wantNotices(t, probes[0])
}

// A cut link loses the retransmission (or its reset): the next one on the
// schedule draws it.
func TestACutLinkLosesTheRetransmissionAndTheNextOneResets(t *testing.T) {
	for _, way := range []string{"to the machine", "back to the peer"} {
		t.Run(way, func(t *testing.T) {
			w, probes := lostRequest(t)
			w.RunUntil(5 * time.Second)
			w.Restart(1)
			w.RunUntil(6 * time.Second)
			var cut CutID
			if way == "to the machine" {
				cut = w.CutOneWay([]NodeID{0}, []NodeID{1})
			} else {
				cut = w.CutOneWay([]NodeID{1}, []NodeID{0})
			}
			w.RunUntil(7 * time.Second)
			w.Heal(cut)
			w.RunUntil(100 * time.Second)
			wantNotices(t, probes[0], fmt.Sprintf("peer 1 at %v unsent [0]", staleLatency+retransmitOffset(6)+2*staleLatency))
		})
	}
}

func TestNoResetAfterTheSenderGaveUp(t *testing.T) {
	giveUp := staleLatency + retransmitOffset(tcpRetries2+1)
	for _, c := range []struct {
		boot time.Duration
		want []string
	}{
		{800 * time.Second, []string{fmt.Sprintf("peer 1 at %v unsent [0]", staleLatency+retransmitOffset(15)+2*staleLatency)}},
		{giveUp - 10*time.Second, nil}, // after the last retransmission
		{giveUp + time.Millisecond, nil},
	} {
		t.Run(c.boot.String(), func(t *testing.T) {
			w, probes := lostRequest(t)
			w.RunUntil(c.boot)
			w.Restart(1)
			w.RunUntil(2000 * time.Second)
			wantNotices(t, probes[0], c.want...)
			if c.want == nil {
				// The connection is gone: a send opens a new one.
				probes[0].send(1)
				w.RunFor(time.Second)
				wantDelivered(t, probes[1], 0, 1)
				wantNotices(t, probes[0])
			}
		})
	}
}

// The rebooted machine sends to the peer first: the pair's connection is
// the new process's, and the peer's stale one ends unheard.
func TestTheRebootedMachineConnectingFirstEndsTheStaleConnection(t *testing.T) {
	w, probes := lostRequest(t)
	w.RunUntil(5 * time.Second)
	w.Restart(1)
	w.RunUntil(5500 * time.Millisecond)
	probes[1].send(0)
	w.RunUntil(6 * time.Second)
	probes[0].send(1)
	w.RunUntil(2000 * time.Second)
	wantNotices(t, probes[0])
	wantNotices(t, probes[1])
	wantDelivered(t, probes[0], 1, 0)
	wantDelivered(t, probes[1], 0, 1)
}

// The machine loses power again before the retransmission: the next boot
// arms the first retransmission after it.
func TestAMachineDownAgainWaitsForItsNextBoot(t *testing.T) {
	w, probes := lostRequest(t)
	w.RunUntil(5 * time.Second)
	w.Restart(1)
	w.RunUntil(6 * time.Second)
	w.Crash(1, true)
	w.RunUntil(20 * time.Second)
	wantNotices(t, probes[0])
	w.Restart(1)
	w.RunUntil(100 * time.Second)
	wantNotices(t, probes[0], fmt.Sprintf("peer 1 at %v unsent [0]", staleLatency+retransmitOffset(7)+2*staleLatency))
}

// A reset of a stale connection (a disconnect fault) tells its sender, with
// what it lost, and not the rebooted machine, which never had it.
func TestDisconnectOfAStaleConnectionTellsOnlyItsSender(t *testing.T) {
	w, probes := lostRequest(t)
	w.RunUntil(5 * time.Second)
	w.Restart(1)
	w.Disconnect(0, 1)
	w.RunUntil(2000 * time.Second)
	wantNotices(t, probes[0], fmt.Sprintf("peer 1 at %v unsent [0]", 5*time.Second))
	wantNotices(t, probes[1])
}

// Every peer with a connection has its own: each gets its reset, from its
// own retransmission schedule.
func TestEveryPeerGetsItsOwnReset(t *testing.T) {
	w, probes := staleWorld(t)
	probes[0].send(1)
	w.RunUntil(5 * time.Millisecond)
	probes[2].send(1)
	w.RunUntil(6 * time.Millisecond)
	w.Crash(1, true)
	w.RunUntil(3 * time.Second)
	w.Restart(1)
	w.RunUntil(100 * time.Second)
	// Lost at 10ms and 15ms; the first retransmissions after 3s are at 3.01s
	// and 3.015s.
	wantNotices(t, probes[0], fmt.Sprintf("peer 1 at %v unsent [0]", staleLatency+retransmitOffset(4)+2*staleLatency))
	wantNotices(t, probes[2], fmt.Sprintf("peer 1 at %v unsent [0]", 15*time.Millisecond+retransmitOffset(4)+2*staleLatency))
}

// The reset reaches a paused sender's kernel: the notice waits for the
// process and is handled when it resumes, even if the rebooted machine
// sends to it meanwhile (the old connection was already gone).
func TestAResetToAPausedSenderWaitsForItsResume(t *testing.T) {
	w, probes := lostRequest(t)
	w.RunUntil(5 * time.Second)
	w.Restart(1)
	w.Pause(0)
	reset := staleLatency + retransmitOffset(5) + 2*staleLatency
	w.RunUntil(reset + time.Second)
	probes[1].send(0)
	w.RunUntil(reset + 2*time.Second)
	wantNotices(t, probes[0])
	w.Resume(0)
	w.RunUntil(reset + 3*time.Second)
	wantNotices(t, probes[0], fmt.Sprintf("peer 1 at %v unsent [0]", reset+2*time.Second))
	wantDelivered(t, probes[0], 1, 0)
}

// The reset of a first send after the reboot is lost on a cut link back:
// the sender retransmits 200 ms after the loss, and that draws it.
func TestAFirstSendsLostResetIsDrawnAgainByTheRetransmission(t *testing.T) {
	w, probes := rebootedIdle(t)
	cut := w.CutOneWay([]NodeID{1}, []NodeID{0})
	w.RunUntil(6 * time.Second)
	probes[0].send(1) // reaches node 1 at 6.01s; its reset is lost
	w.RunUntil(6100 * time.Millisecond)
	w.Heal(cut)
	w.RunUntil(10 * time.Second)
	wantNotices(t, probes[0], fmt.Sprintf("peer 1 at %v unsent [1]", 6*time.Second+staleLatency+retransmitOffset(1)+2*staleLatency))
	wantDelivered(t, probes[1], 0)
}
