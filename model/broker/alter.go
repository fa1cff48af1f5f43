package broker

import (
	"slices"
	"time"

	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// The AlterPartition manager: partition leaders' ISR changes go to the
// active controller one request at a time, batched; an item is retried until
// it is answered, and the answer is applied only if the partition is still in
// the state the change was proposed from.

type alterItem struct {
	tp   metadata.TopicPartition
	seq  uint64
	item proto.AlterPartitionItem
}

type alterTimer struct{ correlation uint64 }

type alterManager struct {
	rm       *replicaManager
	queue    []alterItem // waiting to be sent
	inflight []alterItem
	corr     uint64
	seq      uint64
}

const alterRequestTimeout = 5 * time.Second

// submit proposes isr for p (a leader), recording it as pending. A leader's
// leaderRecoveryState is RECOVERED from the moment it leads (Kafka's
// Partition.makeLeader), and every ISR change it asks for says so: the first
// one after an unclean election ends the controller's RECOVERING.
func (a *alterManager) submit(p *partition, isr []int32) {
	a.seq++
	epochs := make([]int64, len(isr))
	states := make([]proto.ReplicaState, len(isr))
	for i, r := range isr {
		epochs[i] = -1
		if r == a.rm.id() {
			epochs[i] = a.rm.n.life.epoch
		} else if f := p.follower(r); f != nil && f.epoch() != brokerEpochUnknown {
			epochs[i] = f.epoch() // unknown goes as -1, as Kafka's getOrElse(-1)
		}
		states[i] = proto.ReplicaState{BrokerID: r, BrokerEpoch: epochs[i]}
	}
	p.pending = &pendingISR{isr: slices.Clone(isr), epochs: epochs, seq: a.seq}
	a.queue = slices.DeleteFunc(a.queue, func(it alterItem) bool { return it.tp == p.tp })
	a.queue = append(a.queue, alterItem{tp: p.tp, seq: a.seq, item: proto.AlterPartitionItem{
		Topic: p.tp.Topic, Partition: p.tp.Partition, LeaderEpoch: p.leaderEpoch, PartitionEpoch: p.partitionEpoch,
		NewISR: states, Recovered: true}})
	a.send()
}

func (a *alterManager) send() {
	if len(a.inflight) > 0 || len(a.queue) == 0 {
		return
	}
	to := a.rm.n.life.controller
	if to == sim.NoNode {
		to = a.rm.n.raft.Leader()
	}
	if to == sim.NoNode || a.rm.n.life.epoch < 0 {
		a.corr++
		a.rm.n.env.After(100*time.Millisecond, alterTimer{correlation: a.corr})
		return
	}
	a.inflight, a.queue = a.queue, nil
	a.corr++
	req := &proto.AlterPartitionRequest{CorrelationID: a.corr, BrokerID: a.rm.id(), BrokerEpoch: a.rm.n.life.epoch}
	for _, it := range a.inflight {
		req.Partitions = append(req.Partitions, it.item)
	}
	a.rm.n.env.Send(to, req)
	a.rm.n.env.After(alterRequestTimeout, alterTimer{correlation: a.corr})
}

func (a *alterManager) timer(t alterTimer) {
	if t.correlation != a.corr {
		return
	}
	// No answer: resend what was in flight (still current items only).
	a.requeue(a.inflight)
	a.inflight = nil
	a.send()
}

// requeue puts items back unless a newer proposal for their partition exists.
func (a *alterManager) requeue(items []alterItem) {
	for _, it := range items {
		p := a.rm.parts.get(it.tp)
		if p == nil || p.pending == nil || p.pending.seq != it.seq || !p.isLeader {
			continue
		}
		if !slices.ContainsFunc(a.queue, func(q alterItem) bool { return q.tp == it.tp }) {
			a.queue = append(a.queue, it)
		}
	}
}

func (a *alterManager) handleResponse(from sim.NodeID, m *proto.AlterPartitionResponse) {
	if m.CorrelationID != a.corr || len(a.inflight) == 0 {
		return
	}
	items := a.inflight
	a.inflight = nil
	switch m.Error {
	case proto.None:
	case proto.NotController:
		a.rm.n.life.controller = m.ControllerHint
		a.requeue(items)
		a.rm.n.env.After(50*time.Millisecond, alterTimer{correlation: a.corr})
		return
	default: // STALE_BROKER_EPOCH and the like: retry later
		a.requeue(items)
		a.rm.n.env.After(time.Second, alterTimer{correlation: a.corr})
		return
	}
	for i, r := range m.Partitions {
		if i >= len(items) {
			break
		}
		it := items[i]
		p := a.rm.parts.get(it.tp)
		if p == nil || p.pending == nil || p.pending.seq != it.seq || !p.isLeader {
			continue // a leader change or a newer proposal overtook it
		}
		switch r.Error {
		case proto.None:
			if r.LeaderEpoch == p.leaderEpoch && r.PartitionEpoch >= p.partitionEpoch {
				p.committedISRChanged(r.ISR, r.PartitionEpoch)
			}
		case proto.OperationNotAttempted, proto.IneligibleReplica:
			p.pending = nil // back to the committed ISR
		case proto.UnknownTopicOrPartition, proto.FencedLeaderEpoch, proto.InvalidUpdateVersion,
			proto.InvalidRequest, proto.NewLeaderElected:
			// Wait for new metadata; it clears the pending state.
		default:
			a.requeue([]alterItem{it})
		}
	}
	a.send()
}
