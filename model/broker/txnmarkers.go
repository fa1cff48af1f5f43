package broker

import (
	"time"

	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// WriteTxnMarkers on a partition leader (KafkaApis.handleWriteTxnMarkersRequest):
// the transaction coordinator has the leaders of a transaction's partitions
// append its commit or abort marker, as the coordinator (origin
// COORDINATOR, acks all, internal topics allowed), and answers once every
// marker is committed or failed. A partition of __consumer_offsets takes
// its marker too; its group coordinator then learns the transaction ended
// (TxnMarkerListener), before the answer goes.
//
// The request is served as it arrives, not through the client connection's
// one-request-at-a-time reading (connections.go): Kafka's
// TransactionMarkerChannelManager talks to each broker over a connection of
// its own, which carries nothing else, while the simulated network has one
// link per pair of nodes, which the replica fetchers' parked fetches would
// hold.

// TransactionStateTopic is Kafka's internal topic of transactions: its
// partition for a transactional id (kafkahash.CoordinatorPartition) is led
// by that id's transaction coordinator.
const TransactionStateTopic = "__transaction_state"

// markerRequestTimeout bounds how long a marker waits for the high
// watermark (handleWriteTxnMarkersRequest's appendRecords takes
// request.timeout.ms, 30 s).
const markerRequestTimeout = 30 * time.Second

// pendingMarkers is a WriteTxnMarkers request waiting for its markers to be
// committed.
type pendingMarkers struct {
	rm    *replicaManager
	from  sim.NodeID
	resp  proto.WriteTxnMarkersResponse
	parts []markerPart
	timer sim.TimerID
	open  int
	done  bool
	// dispatching: the markers are being handed out; the last one done
	// meanwhile does not finish the request.
	dispatching bool
}

// markerPart is one partition's marker: where the answer's error goes.
type markerPart struct {
	p       *partition
	marker  int // index in resp.Markers
	part    int // index in its Partitions
	offset  int64
	waiting bool
}

type markersTimeout struct{ w *pendingMarkers }

// String is how the trace shows the timer (fmt would print the pointer).
func (t markersTimeout) String() string { return "broker.markersTimeout" }

func (rm *replicaManager) handleWriteTxnMarkers(from sim.NodeID, m *proto.WriteTxnMarkersRequest) {
	w := &pendingMarkers{rm: rm, from: from}
	w.resp.CorrelationID = m.CorrelationID
	w.resp.Markers = make([]proto.TxnMarkerResult, len(m.Markers))
	w.dispatching = true
	for mi, mk := range m.Markers {
		res := &w.resp.Markers[mi]
		res.ProducerID = mk.ProducerID
		res.Partitions = make([]proto.TxnPartitionResult, len(mk.Partitions))
		for pi, tp := range mk.Partitions {
			res.Partitions[pi] = proto.TxnPartitionResult{TopicPartition: tp, Error: proto.RequestTimedOut} // until committed
			mtp := metadata.TopicPartition{Topic: tp.Topic, Partition: tp.Partition}
			w.open++
			if rm.completeMarker(mtp, mk, func(err proto.ErrorCode) { w.completed(mi, pi, err) }) {
				continue
			}
			p := rm.parts.get(mtp)
			base, err := rm.appendMarker(mtp, p, mk, proto.AcksAll)
			if err != proto.None {
				res.Partitions[pi].Error = err
				w.open--
				continue
			}
			w.parts = append(w.parts, markerPart{p: p, marker: mi, part: pi, offset: base, waiting: true})
		}
	}
	w.dispatching = false
	if w.open == 0 {
		w.finish()
		return
	}
	w.timer = rm.n.env.After(markerRequestTimeout, markersTimeout{w: w})
	for i := range w.parts {
		w.parts[i].p.waiting = append(w.parts[i].p.waiting, w)
	}
	w.recheck()
}

// appendMarker appends one partition's marker as its leader: the checks a
// produce's append makes (leadership, min ISR for acks all), then the
// producer state's (ProducerAppendInfo.appendEndTxnMarker); it returns the
// marker's offset.
func (rm *replicaManager) appendMarker(tp metadata.TopicPartition, p *partition, mk proto.TxnMarker, acks int16) (int64, proto.ErrorCode) {
	if rm.stopped || p == nil || !p.isLeader || p.log == nil {
		if rm.image().Partition(tp) == nil {
			return -1, proto.UnknownTopicOrPartition
		}
		return -1, proto.NotLeaderOrFollower
	}
	if acks == proto.AcksAll && len(p.isr) < p.effectiveMinISR() {
		return -1, proto.NotEnoughReplicas
	}
	if err := p.log.CheckMarker(mk.ProducerID, mk.ProducerEpoch, mk.CoordinatorEpoch, mk.NoEpochBump); err != proto.None {
		return -1, err
	}
	b := record.NewControl(mk.ProducerID, mk.ProducerEpoch, mk.Committed, mk.CoordinatorEpoch, rm.now().Milliseconds())
	base, _, err := rm.appendStamped(tp, p, b)
	return base, err
}

// waitsOn implements commitWaiter.
func (w *pendingMarkers) waitsOn(p *partition) bool {
	if w.done {
		return false
	}
	for _, part := range w.parts {
		if part.p == p && part.waiting {
			return true
		}
	}
	return false
}

// completed: a coordinator that writes its partition's marker itself
// (TxnCompleter) is done with it.
func (w *pendingMarkers) completed(marker, part int, err proto.ErrorCode) {
	if w.done {
		return
	}
	w.resp.Markers[marker].Partitions[part].Error = err
	w.open--
	if w.open == 0 && !w.dispatching {
		w.finish()
	}
}

// recheck implements commitWaiter.
func (w *pendingMarkers) recheck() {
	if w.done {
		return
	}
	for i := range w.parts {
		part := &w.parts[i]
		if !part.waiting {
			continue
		}
		if done, err := part.p.writeOutcome(part.offset+1, proto.AcksAll); done {
			part.waiting = false
			w.resp.Markers[part.marker].Partitions[part.part].Error = err
			w.open--
		}
	}
	if w.open == 0 {
		w.finish()
	}
}

// unlisted implements commitWaiter.
func (w *pendingMarkers) unlisted() {}

func (w *pendingMarkers) timedOut() {
	if !w.done {
		w.finish() // the markers still open answer REQUEST_TIMED_OUT
	}
}

// finish queues the answer: it goes, after the listeners are told, in an
// event of its own (tellAppends).
func (w *pendingMarkers) finish() {
	w.done = true
	rm := w.rm
	rm.n.env.Cancel(w.timer)
	rm.finishedMarkers = append(rm.finishedMarkers, w)
	if !rm.tellScheduled {
		rm.tellScheduled = true
		rm.n.env.After(0, appendsFinished{})
	}
}

// tell answers the coordinator that asked.
func (w *pendingMarkers) tell() {
	rm := w.rm
	w.parts = nil
	resp := &w.resp
	if !rm.gate.Pending() {
		rm.n.env.Send(w.from, resp)
		return
	}
	rm.gate.Then(func() { rm.n.env.Send(w.from, resp) })
}
