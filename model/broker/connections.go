package broker

import (
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// One request per connection at a time, as Kafka's socket server serves
// them: its processor mutes a channel once it has read a request, and
// unmutes it once that request's answer is sent (or, for a request that gets
// none, an acks=0 produce, once it is handled: KafkaApis's noop response).
// What the client pipelines behind it (max.in.flight.requests.per.connection)
// waits unread, in order. So a produce that waits for the ISR (acks=all) or a
// fetch that waits for data (fetch.max.wait.ms) holds back the connection's
// next produce, fetch, metadata or offsets request, and one connection's
// answers come back in the order of its requests: an idempotent producer
// never sees a batch acknowledged before an earlier one of the same
// connection.
//
// A connection is the link from one process of the peer in one generation
// (sim.Env's Connection): a reset, or the peer's restart, ends it. What it
// had not read is lost with it, and an answer to a request read on it is
// not sent: Kafka drops a response whose channel has closed. A request of a
// closed connection that is still being served (a produce waiting for the
// ISR) runs on, as in Kafka's purgatory. Keeping a request unread past its
// delivery is safe with reusable messages: a sender reuses a request only
// once it is answered, which an unread one is not.
//
// The group coordinator's requests are not here: a Kafka consumer talks to
// its coordinator over a connection of their own (see the coordinator's
// DisconnectHandler).

// channelBit marks, in the connection token the handlers carry ("on"), the
// connection of a peer's second channel; the rest is the link generation.
const channelBit = 1 << 63

// clientCorrelation is a client request's correlation id.
func clientCorrelation(m sim.Message) uint64 {
	switch m := m.(type) {
	case *proto.ProduceRequest:
		return m.CorrelationID
	case *proto.FetchRequest:
		return m.CorrelationID
	case *proto.ListOffsetsRequest:
		return m.CorrelationID
	case *proto.OffsetsForLeaderEpochRequest:
		return m.CorrelationID
	case *proto.MetadataRequest:
		return m.CorrelationID
	case *proto.InitProducerIDRequest:
		return m.CorrelationID
	}
	return 0
}

// connection is what the broker keeps of a peer's current connection.
type connection struct {
	ch      uint8
	gen     uint64        // the link generation it is
	busy    bool          // a request is read, its answer not yet sent
	reading bool          // its unread requests are being served (readUnread)
	unread  []sim.Message // arrived while busy, oldest first
}

// unreadRequestsMax bounds what a connection may pipeline behind the request
// being served. A Kafka client keeps at most five requests in flight on a
// connection (max.in.flight.requests.per.connection) and a metadata request
// or two beside them; a peer that sends more is misbehaving, and the broker
// closes its connection.
const unreadRequestsMax = 64

// connTable holds a connection per peer, indexed by its node id (ids
// are small and dense; a negative one, which no node has, in a map).
type connTable struct {
	byID  []*connection
	other map[sim.NodeID]*connection
}

func (t *connTable) get(id sim.NodeID) *connection {
	if id >= 0 && int(id) < len(t.byID) {
		return t.byID[id]
	}
	return t.other[id] // nil when none (and when other is nil)
}

func (t *connTable) put(id sim.NodeID, c *connection) {
	if id < 0 {
		if t.other == nil {
			t.other = map[sim.NodeID]*connection{}
		}
		t.other[id] = c
		return
	}
	for int(id) >= len(t.byID) {
		t.byID = append(t.byID, nil)
	}
	t.byID[id] = c
}

// connectionOf is the broker's state of from's current connection, made
// afresh when the connection was reset since.
func (rm *replicaManager) connectionOf(from sim.NodeID, ch uint8) *connection {
	gen := rm.n.env.Connection(from)
	conns := &rm.conns[ch&1]
	c := conns.get(from)
	if c == nil {
		c = &connection{gen: gen, ch: ch}
		conns.put(from, c)
	}
	if c.gen != gen {
		// The connection was reset: what it had not read went with it.
		clear(c.unread)
		c.gen, c.busy, c.reading, c.unread = gen, false, false, c.unread[:0]
	}
	return c
}

// read takes a client request off a connection: served now, or kept unread
// behind the one being served.
func (rm *replicaManager) read(from sim.NodeID, m sim.Message) {
	c := rm.connectionOf(from, proto.ChannelOf(clientCorrelation(m)))
	if c.busy || len(c.unread) > 0 {
		if len(c.unread) >= unreadRequestsMax {
			rm.n.env.CloseConnection(from)
			return
		}
		c.unread = append(c.unread, m)
		return
	}
	rm.serve(from, c, m)
}

// serve hands a request to its handler; the connection stays muted until the
// handler answers it (answer, answerDurably) or says it needs no answer
// (unmute).
func (rm *replicaManager) serve(from sim.NodeID, c *connection, m sim.Message) {
	c.busy = true
	on := c.gen
	if c.ch != 0 {
		on |= channelBit
	}
	switch m := m.(type) {
	case *proto.ProduceRequest:
		rm.handleProduce(from, on, m)
	case *proto.FetchRequest:
		rm.handleFetch(from, on, m, rm.now()+m.MaxWait)
	case *proto.ListOffsetsRequest:
		rm.handleListOffsets(from, on, m)
	case *proto.OffsetsForLeaderEpochRequest:
		rm.handleOffsetsForLeaderEpoch(from, on, m)
	case *proto.MetadataRequest:
		rm.handleMetadata(from, on, m)
	case *proto.InitProducerIDRequest:
		rm.handleInitProducerID(from, on, m)
	default:
		panic("broker: no handler for a request read off a client connection")
	}
}

// answer sends the answer to a request read on connection on of to, and
// reads the connection's next request. The answer is not sent if that
// connection has closed since.
func (rm *replicaManager) answer(to sim.NodeID, on uint64, m sim.Message) {
	if rm.n.env.Connection(to) == on&^channelBit {
		rm.n.env.Send(to, m)
	}
	rm.unmute(to, on)
}

// answerDurably is answer once every fsync issued so far has completed: the
// answer reports appends that must be durable first (flush.messages).
func (rm *replicaManager) answerDurably(to sim.NodeID, on uint64, m sim.Message) {
	if !rm.gate.Pending() {
		rm.answer(to, on, m)
		return
	}
	rm.gate.Then(func() { rm.answer(to, on, m) })
}

// unmute ends the request being served on connection on of from. What the
// connection sent behind it is read in an event of its own (the socket
// server's next poll), never from inside the handler that answered: that
// handler may be walking a partition's waiting writes.
func (rm *replicaManager) unmute(from sim.NodeID, on uint64) {
	c := rm.conns[on>>63].get(from)
	if c == nil || c.gen != on&^channelBit || !c.busy {
		return // the connection has gone; a newer one keeps its own state
	}
	c.busy = false
	if len(c.unread) > 0 && !c.reading {
		c.reading = true
		rm.n.env.After(0, readUnread{peer: from, on: on})
	}
}

// readUnread is the timer that serves a connection's unread requests.
type readUnread struct {
	peer sim.NodeID
	on   uint64
}

// readUnread serves a connection's unread requests, in order, until one of
// them waits.
func (rm *replicaManager) readUnread(t readUnread) {
	c := rm.conns[t.on>>63].get(t.peer)
	if c == nil || c.gen != t.on&^channelBit {
		return
	}
	for !c.busy && len(c.unread) > 0 {
		if rm.stopped || rm.n.env.Connection(t.peer) != t.on&^channelBit {
			// Requests are no longer processed (see deliver), or the
			// connection closed: what waited unread goes with it.
			if rm.stopped {
				rm.n.env.CloseConnection(t.peer)
			}
			clear(c.unread)
			c.unread = c.unread[:0]
			break
		}
		m := c.unread[0]
		n := copy(c.unread, c.unread[1:])
		c.unread[n] = nil
		c.unread = c.unread[:n]
		rm.serve(t.peer, c, m)
	}
	c.reading = false
}
