package broker

import (
	"fmt"
	"time"

	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// What a coordinator serves besides its partitions: the requests meant for
// it and its timers. Kafka's KafkaApis hands JoinGroup, SyncGroup,
// Heartbeat, OffsetCommit, OffsetFetch and ConsumerGroupHeartbeat to the
// group coordinator, InitProducerId, AddPartitionsToTxn and EndTxn to the
// transaction coordinator, FindCoordinator to the one its key type names,
// each with a callback that sends the answer; the coordinators' runtimes
// keep their own timers (session, rebalance and transaction timeouts,
// marker retries). Here the broker's Deliver asks its coordinators, in
// configuration order, whether a message is theirs, and its Fire hands a
// coordinator's timer back to the coordinator that set it.

// RequestHandler is a Coordinator that serves requests (or reads the
// answers to its own requests to other brokers).
type RequestHandler interface {
	// Handles reports whether m is for this coordinator, from m alone: its
	// type, a FindCoordinator's key type. The first coordinator that
	// handles m gets it. What the broker's own parts need is never offered
	// (brokersOwn): a connection reset (a coordinator's requests time out
	// instead), the answers to the broker's own requests, and the requests
	// the replica manager serves but InitProducerId.
	Handles(m sim.Message) bool
	// HandleRequest hands the coordinator m from from. It answers with
	// InternalTopics.Send, at once or in a later event (once an append is
	// committed, once a rebalance ends), and itself answers
	// NOT_COORDINATOR for a key whose partition this broker does not lead,
	// as Kafka's coordinator runtime does. A broker shutting down cleanly
	// hands it nothing more.
	HandleRequest(from sim.NodeID, m sim.Message)
}

// DisconnectHandler is a Coordinator that holds requests a client
// connection sent while an earlier one of it is served (Kafka's muted
// channel): a connection reset drops them, as it drops what the broker's
// socket had not read yet.
type DisconnectHandler interface {
	// OnDisconnected: the connections with peer were reset.
	OnDisconnected(peer sim.NodeID)
}

// TimerHandler is a Coordinator that sets timers (InternalTopics.After).
type TimerHandler interface {
	// OnTimer hands back a timer the coordinator set.
	OnTimer(t sim.Timer)
}

// CoordinatorRequest is a request that only a coordinator serves. A broker
// where no coordinator handles it answers NotCoordinator(), as a Kafka
// broker that is not the coordinator does; while shutting down cleanly it
// closes the connection instead, as for every request (the socket server
// has stopped processing them).
type CoordinatorRequest interface {
	sim.Message
	// NotCoordinator is the request's answer with NOT_COORDINATOR
	// (FindCoordinator's, which any broker answers, with
	// COORDINATOR_NOT_AVAILABLE).
	NotCoordinator() sim.Message
}

// Send sends m to a node: a coordinator's answer or its own request. It
// goes at once, not behind the log flushes in flight: a coordinator
// reports as done what its appends' done callbacks told it was committed,
// which the high watermark passed only once flushed as the flush policy
// asks.
func (t *InternalTopics) Send(to sim.NodeID, m sim.Message) { t.rm.n.env.Send(to, m) }

// Now is the broker's clock.
func (t *InternalTopics) Now() time.Duration { return t.rm.now() }

// After hands timer back to the coordinator's OnTimer after d of the
// broker's clock, unless cancelled first or the broker stops first: a
// crash drops every timer (the coordinator goes with the process), and
// from the last step of a clean shutdown on, the broker hands its
// coordinators nothing more. Drop the timers of a partition at OnResign
// with Cancel. timer shows in the trace through its String method, or
// as fmt prints it (a value, then: a pointer would print differently
// from run to run).
func (t *InternalTopics) After(d time.Duration, timer sim.Timer) sim.TimerID {
	return t.rm.n.env.After(d, coordinatorTimer{h: t.h, t: timer})
}

// Cancel stops a timer set with After; cancelling one that fired is a
// no-op.
func (t *InternalTopics) Cancel(id sim.TimerID) { t.rm.n.env.Cancel(id) }

// Partitions is the partition count of the coordinator's topic in this
// broker's metadata (0: no such topic yet), for the coordinator's
// partitionFor(key).
func (t *InternalTopics) Partitions() int {
	if topic, ok := t.rm.image().Topics[t.h.topic]; ok {
		return len(topic.Partitions)
	}
	return 0
}

// Leader is the leader of a partition of the coordinator's topic and its
// node, as this broker's metadata has them (possibly stale, as Kafka's
// metadata cache): where a FindCoordinator answer sends the client. ok is
// false when the partition has no leader that is registered and unfenced
// (Kafka's getCoordinator answers COORDINATOR_NOT_AVAILABLE then).
func (t *InternalTopics) Leader(partition int32) (broker int32, node sim.NodeID, ok bool) {
	im := t.rm.image()
	p := im.Partition(metadata.TopicPartition{Topic: t.h.topic, Partition: partition})
	if p == nil || p.Leader < 0 {
		return -1, sim.NoNode, false
	}
	b, registered := im.Brokers[p.Leader]
	node, listed := t.rm.n.cfg.Nodes[p.Leader]
	if !registered || b.Fenced || !listed {
		return -1, sim.NoNode, false
	}
	return p.Leader, node, true
}

// coordinatorTimer is a coordinator's timer, naming the coordinator.
type coordinatorTimer struct {
	h *hostedCoordinator
	t sim.Timer
}

// String is how the trace shows the timer: the coordinator's topic, then
// the coordinator's timer.
func (t coordinatorTimer) String() string {
	inner := ""
	if s, ok := t.t.(fmt.Stringer); ok {
		inner = s.String()
	} else {
		inner = fmt.Sprintf("%T %+v", t.t, t.t)
	}
	return "broker.coordinatorTimer {" + t.h.topic + ": " + inner + "}"
}

// toCoordinator hands m to the first coordinator that handles it; it
// reports whether one did. It comes before the replica manager's own
// handlers: a transaction coordinator serves InitProducerId.
func (rm *replicaManager) toCoordinator(from sim.NodeID, m sim.Message) bool {
	if r, ok := m.(*proto.AddPartitionsToTxnResponse); ok && rm.txnVerify.answered(from, r) {
		return true // the answer to a produce's verification (txnverify.go), not the coordinators'
	}
	if len(rm.coordinators) == 0 {
		return false
	}
	if r, ok := m.(*proto.CreateTopicsResponse); ok && rm.topicCreated(r) {
		return true
	}
	return rm.routeToCoordinator(from, m)
}

func (rm *replicaManager) routeToCoordinator(from sim.NodeID, m sim.Message) bool {
	if rm.stopped || brokersOwn(m) {
		return false
	}
	for _, h := range rm.coordinators {
		if h.requests != nil && h.requests.Handles(m) {
			h.requests.HandleRequest(from, m)
			return true
		}
	}
	return false
}

// coordinatorsDisconnected tells the coordinators that hold requests that
// the connections with peer were reset.
func (rm *replicaManager) coordinatorsDisconnected(peer sim.NodeID) {
	for _, h := range rm.coordinators {
		if d, ok := h.c.(DisconnectHandler); ok {
			d.OnDisconnected(peer)
		}
	}
}

// brokersOwn reports whether m is for the broker's own parts, whatever a
// coordinator's Handles says: one taken by a coordinator would stall
// replication (a follower's fetch answer, AlterPartition's), fence the
// broker (its registration's and heartbeats' answers) or leave a client
// unanswered. InitProducerId is not: Kafka's transaction coordinator serves
// it, and the replica manager only when no coordinator does.
func brokersOwn(m sim.Message) bool {
	switch m.(type) {
	case *sim.Disconnected, *proto.FetchResponse, *proto.AlterPartitionResponse,
		*proto.BrokerRegistrationResponse, *proto.BrokerHeartbeatResponse,
		*proto.ProduceRequest, *proto.FetchRequest, *proto.ListOffsetsRequest,
		*proto.OffsetsForLeaderEpochRequest, *proto.MetadataRequest, *proto.WriteTxnMarkersRequest:
		return true
	}
	return false
}

// notCoordinator answers a request for a coordinator this broker does not
// run (see CoordinatorRequest); it reports whether m was one.
func (rm *replicaManager) notCoordinator(from sim.NodeID, m sim.Message) bool {
	r, ok := m.(CoordinatorRequest)
	if !ok {
		return false
	}
	if rm.stopped {
		rm.n.env.CloseConnection(from)
		return true
	}
	rm.n.env.Send(from, r.NotCoordinator())
	return true
}

// fireCoordinatorTimer hands t back to the coordinator that set it.
func (rm *replicaManager) fireCoordinatorTimer(t coordinatorTimer) {
	if rm.stopped {
		return
	}
	if t.h.timers == nil {
		panic("broker: a coordinator on " + t.h.topic + " set a timer but is no TimerHandler")
	}
	t.h.timers.OnTimer(t.t)
}
