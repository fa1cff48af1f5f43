package group

import (
	"strconv"

	"kafkasim/model/proto"
	"kafkasim/sim"
)

// A consumer-protocol member's heartbeats reach the coordinator one at a
// time, in the order it sent them. Kafka's SocketServer mutes a connection
// once it has read a request from it and unmutes it only when that
// request's answer is sent (Processor: ChannelMuteEvent.REQUEST_RECEIVED,
// then RESPONSE_SENT and tryUnmuteChannel), so a request pipelined behind
// one whose answer the coordinator holds until its write is committed
// (CoordinatorRuntime's deferred response) is not read before that answer
// goes out. The consumer sends every coordinator request on one connection
// (CoordinatorRequestManager's coordinator node). Without this, a member
// whose poll timer expired while a heartbeat waited on a stalled commit
// would have its leave and rejoin served first: the coordinator would give
// the partitions of the still-unanswered assignment to another member while
// the held answer, granting them, was yet to reach the member that left.
//
// Only ConsumerGroupHeartbeat is held so: the other group requests are
// served as they come (docs/model.md, Simplifications). A connection is a
// client process's: its incarnation is in its correlation ids
// (proto.CorrelationBase), so a restarted process's heartbeats never wait
// behind its previous process's.

// clientConn names a client process's connection to this broker.
type clientConn struct {
	from        sim.NodeID
	incarnation uint64
}

func connOf(from sim.NodeID, correlationID uint64) clientConn {
	return clientConn{from: from, incarnation: correlationID >> 32}
}

// heldHeartbeats is a connection's heartbeat being served (its answer not
// sent yet) and those read after it, waiting.
type heldHeartbeats struct {
	serving uint64 // the correlation id of the heartbeat being served
	waiting []*proto.ConsumerGroupHeartbeatRequest
	resumed bool // a connTimer is set to serve the next one
}

// connTimer serves a muted connection's next heartbeat once the previous
// one's answer is sent.
type connTimer struct {
	From        sim.NodeID
	Incarnation uint64
}

// String is how the trace shows the timer.
func (t connTimer) String() string {
	return "group.conn {from:" + strconv.Itoa(int(t.From)) + " incarnation:" + strconv.FormatUint(t.Incarnation, 10) + "}"
}

// heartbeatArrived serves a ConsumerGroupHeartbeat, or holds it while an
// earlier one of its connection is unanswered.
func (c *coordinator) heartbeatArrived(from sim.NodeID, m *proto.ConsumerGroupHeartbeatRequest) {
	k := connOf(from, m.CorrelationID)
	if h, busy := c.conns[k]; busy {
		h.waiting = append(h.waiting, m)
		return
	}
	if c.conns == nil {
		c.conns = map[clientConn]*heldHeartbeats{}
	}
	c.conns[k] = &heldHeartbeats{serving: m.CorrelationID}
	c.serve(from, m)
}

// send is the coordinator's Send: a heartbeat's answer unmutes its
// connection.
func (c *coordinator) send(to sim.NodeID, m sim.Message) {
	c.t.Send(to, m)
	r, ok := m.(*proto.ConsumerGroupHeartbeatResponse)
	if !ok {
		return
	}
	k := connOf(to, r.CorrelationID)
	h, ok := c.conns[k]
	if !ok || h.resumed || h.serving != r.CorrelationID {
		return
	}
	if len(h.waiting) == 0 {
		delete(c.conns, k)
		return
	}
	// The next heartbeat is read in a later event: the answer may be sent
	// from within a write's completion, which serving another write there
	// would re-enter.
	h.resumed = true
	c.t.After(0, connTimer{From: k.from, Incarnation: k.incarnation})
}

// resume serves the next heartbeat held on a connection.
func (c *coordinator) resume(t connTimer) {
	k := clientConn{from: t.From, incarnation: t.Incarnation}
	h, ok := c.conns[k]
	if !ok {
		return
	}
	next := h.waiting[0]
	h.waiting = h.waiting[1:]
	h.serving, h.resumed = next.CorrelationID, false
	c.serve(k.from, next)
}

// OnDisconnected implements broker.DisconnectHandler: a reset connection's
// held heartbeats were never read; an answer still to come to the one
// being served unmutes nothing.
func (c *coordinator) OnDisconnected(peer sim.NodeID) {
	for k := range c.conns { // kafkasim:orderless: deleting commutes
		if k.from == peer {
			delete(c.conns, k)
		}
	}
}
