package sim

// Connections that outlive a power loss.
//
// A machine that loses power sends nothing: each peer's kernel keeps its
// end of every connection it had with the machine (half-open) and learns
// otherwise only from the machine itself, once it is back. Linux retransmits
// an unacknowledged segment on a timer that starts at 200 ms (TCP_RTO_MIN:
// a LAN's round trip is far below it), doubles at each retransmission and
// stops doubling at 120 s (TCP_RTO_MAX); after 15 retransmissions
// (tcp_retries2) it gives up, 924.6 s after the segment was first lost. The
// first retransmission to reach the rebooted machine finds no socket there
// and is answered with a reset (RST): the peer's Kafka client sees the
// connection reset at once and fails the requests in flight on it
// (NetworkClient's disconnect handling), then reconnects.
//
// The model:
//   - At the power loss, each peer's link to the machine that had a
//     connection is marked stale (link.lost: the loss's number), and a
//     staleConn keeps what the peer lost on it.
//   - A message on a stale link that reaches the machine while it is down is
//     lost and kept (the first loss's time, then the messages in order, at
//     most staleMessagesMax). A message sent while messages are kept is kept
//     at once: TCP sends nothing new while it retransmits (its congestion
//     window is one segment after a retransmission timeout).
//   - When the machine boots, the first retransmission at or after the boot
//     on the backoff schedule from the first loss is armed (none after 15:
//     the peer gave up, and is told nothing; a Kafka client's request timeout
//     ended the connection long before). At that retransmission, if the
//     link is cut either way, the next one on the schedule is tried; if the
//     machine is down again, the next boot arms it again. Otherwise the
//     retransmission and then the reset cross the links (a latency draw
//     each, cuts as at the retransmission), and the sender gets
//     Disconnected listing the messages kept.
//   - A message on a stale link that reaches the machine once it is up again
//     (the sender had nothing unacknowledged at the power loss, or sent it
//     after) is answered with a reset at once, the same way.
//   - The reset is checked when it lands: it reaches the sender only if the
//     connection is still the same one. The connection ends, and the mark
//     with it, when the sender's process dies, when either end closes or
//     resets it (a Disconnect lists the kept messages as unsent), or when the
//     rebooted machine sends to the peer first: the simulator keeps one
//     connection per pair of nodes, so the pair is then the new process's
//     connection. What the peer had kept is then lost silently, as before
//     this model (its requests time out); a reset of the old connection
//     would otherwise fail requests sent on the new one. No reset reaches a
//     sender for a connection it has since closed.
// Not modelled: a connection opened while the machine is down (its SYN is
// lost, and the sender times out), keepalives, the RTO's dependence on the
// measured round trip.

import (
	"fmt"
	"slices"
	"time"
)

const (
	// rtoMin and rtoMax are Linux's bounds of the retransmission timeout.
	rtoMin = 200 * time.Millisecond
	rtoMax = 120 * time.Second
	// tcpRetries2 is how many times Linux retransmits before it gives up.
	tcpRetries2 = 15
	// staleMessagesMax bounds what one stale connection keeps: a Kafka
	// client has at most five requests in flight on a connection and a
	// metadata request or two beside them. Past it messages are lost
	// unlisted (the notice still fails every request in flight).
	staleMessagesMax = 64
)

// retransmitOffset is when the kth retransmission (from 1) is sent, after
// the first loss; the (tcpRetries2+1)th is when the sender gives up.
func retransmitOffset(k int) time.Duration {
	var off time.Duration
	rto := rtoMin
	for range min(k, tcpRetries2+1) {
		off += rto
		rto = min(2*rto, rtoMax)
	}
	return off
}

// staleConn is a connection from→to whose destination machine lost power
// while it was open.
type staleConn struct {
	from, to NodeID
	mark     uint32 // the power loss's number, as on the link
	fromInc  uint32 // the sender's incarnation: its process owns the connection
	since    time.Duration
	msgs     []Message // lost and kept, in order; since is the first's loss
	retry    int       // the retransmission armed (1..tcpRetries2)
	epoch    uint32    // bumped at each arming: older events are stale
	// resetting: a reset is on its way to the sender; everything it sends
	// until it lands is lost with the connection.
	resetting bool
}

// staleOf is from→to's stale connection, or nil.
func (net *network) staleOf(from, to NodeID) *staleConn {
	for _, s := range net.stale {
		if s.from == from && s.to == to {
			return s
		}
	}
	return nil
}

// markStale marks y→x, whose destination x lost power in loss mark.
func (net *network) markStale(y, x NodeID, mark uint32) {
	l := net.link(y, x)
	if l.lost != 0 {
		return // stale since an earlier power loss: its schedule runs on
	}
	l.lost = mark
	net.stale = append(net.stale, &staleConn{from: y, to: x, mark: mark, fromInc: net.w.nodes[y].incarnation})
}

// unmark ends from→to's stale connection and returns what it kept. A
// message still in flight on it is dropped on arrival (a new generation).
func (net *network) unmark(from, to NodeID) []Message {
	l := net.link(from, to)
	if l.lost == 0 {
		return nil
	}
	l.gen++
	return net.take(from, to)
}

// take clears from→to's mark and returns what its stale connection kept.
func (net *network) take(from, to NodeID) []Message {
	l := net.link(from, to)
	if l.lost == 0 {
		return nil
	}
	l.lost = 0
	var kept []Message
	net.stale = slices.DeleteFunc(net.stale, func(s *staleConn) bool {
		if s.from == from && s.to == to {
			kept = s.msgs
			return true
		}
		return false
	})
	return kept
}

// keep adds m to what s lost, within the bound.
func (s *staleConn) keep(m Message, now time.Duration) {
	if len(s.msgs) == 0 {
		s.since = now
	}
	if len(s.msgs) < staleMessagesMax {
		s.msgs = append(s.msgs, m)
	}
}

// sendStale keeps a message sent on a stale connection that is
// retransmitting (or being reset): it is not sent.
func (net *network) sendStale(from, to NodeID, m Message) bool {
	s := net.staleOf(from, to)
	if s == nil || len(s.msgs) == 0 {
		return false
	}
	s.keep(m, net.w.sched.now)
	net.stats.DroppedDisconnect++
	return true
}

// staleArrived handles a message on a stale link reaching its destination's
// machine: lost while it is down, answered with a reset once it is up.
func (net *network) staleArrived(e *Event) {
	net.stats.DroppedDown++
	s := net.staleOf(e.From, e.Node)
	if s == nil {
		return // a link is marked only with its connection kept: unreachable
	}
	s.keep(e.Payload.(Message), net.w.sched.now)
	if net.w.nodes[e.Node].machineDown || s.resetting {
		return
	}
	net.resetStale(s, 0)
}

// resetStale sends the destination's reset back to s's sender, after
// ahead (the retransmission's own crossing). Lost on a cut link: the
// sender retransmits on.
func (net *network) resetStale(s *staleConn, ahead time.Duration) {
	back := net.link(s.to, s.from)
	if back.cuts > 0 {
		net.armStale(s, s.retry+1)
		return
	}
	w := net.w
	delay := ahead + uniformDuration(&back.rng, net.opts.Latency.Min, net.opts.Latency.Max) + back.extraLatency
	s.resetting = true
	w.sched.schedule(&Event{At: w.sched.now + delay, Kind: EventNotify, Node: s.from, From: s.to,
		Incarnation: s.fromInc, Arg: uint64(s.mark), Payload: &Disconnected{Peer: s.to}})
}

// armStale schedules s's first retransmission from the kth on that is not
// in the past, or gives up after the last.
func (net *network) armStale(s *staleConn, k int) {
	now := net.w.sched.now
	k = max(k, 1)
	for k <= tcpRetries2 && s.since+retransmitOffset(k) < now {
		k++
	}
	if k > tcpRetries2 {
		net.unmark(s.from, s.to)
		return
	}
	s.retry = k
	s.epoch++
	net.w.sched.schedule(&Event{At: s.since + retransmitOffset(k), Kind: EventRetransmit, Node: s.from,
		From: s.to, Incarnation: s.fromInc, Arg: uint64(s.mark)<<32 | uint64(s.epoch)})
}

// booted arms the retransmissions of the stale connections to x, which
// has just booted, in the order they were marked.
func (net *network) booted(x NodeID) {
	for _, s := range slices.Clone(net.stale) { // arming may give one up
		if s.to == x && len(s.msgs) > 0 && !s.resetting {
			net.armStale(s, 1)
		}
	}
}

// retransmit fires a stale connection's retransmission, unless the
// connection ended or was re-armed since. It says what became of it.
func (net *network) retransmit(e *Event) (string, bool) {
	s := net.staleOf(e.Node, e.From)
	if s == nil || uint64(s.mark)<<32|uint64(s.epoch) != e.Arg || s.resetting {
		return "", false
	}
	w := net.w
	switch {
	case w.nodes[e.From].machineDown:
		return fmt.Sprintf("retransmission %d: lost (down)", s.retry), true // its boot arms the next
	case net.link(s.from, s.to).cuts > 0 || net.link(s.to, s.from).cuts > 0:
		net.armStale(s, s.retry+1)
		return fmt.Sprintf("retransmission %d: lost (cut)", s.retry), true
	}
	l := net.link(s.from, s.to)
	net.resetStale(s, uniformDuration(&l.rng, net.opts.Latency.Min, net.opts.Latency.Max)+l.extraLatency)
	return fmt.Sprintf("retransmission %d: reset", s.retry), true
}

// resetLands checks a stale connection's reset reaching its sender: the
// connection must be the same one. It fills the notice in and ends the
// connection.
func (net *network) resetLands(e *Event) bool {
	s := net.staleOf(e.Node, e.From)
	if s == nil || uint64(s.mark) != e.Arg || !s.resetting {
		return false
	}
	e.Payload.(*Disconnected).Unsent = net.unmark(s.from, s.to)
	return true
}
