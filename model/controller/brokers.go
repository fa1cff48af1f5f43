package controller

import (
	"fmt"
	"slices"

	"kafkasim/model/metadata"
	"kafkasim/model/proto"
	"kafkasim/sim"
)

// Broker lifecycle on the active controller: registration with a broker
// epoch, heartbeats, fencing when a session expires, unfencing once caught
// up, controlled shutdown, and KIP-966's unclean-restart detection.

func (n *Node) handleRegistration(from sim.NodeID, m *proto.BrokerRegistrationRequest) {
	reply := &proto.BrokerRegistrationResponse{CorrelationID: m.CorrelationID}
	existing := n.draft.Brokers[m.BrokerID]
	if existing != nil && existing.IncarnationID == m.IncarnationID {
		// A retry of a registration that already went through.
		reply.BrokerEpoch = existing.Epoch
		n.decide(nil, from, reply, nil)
		return
	}
	if existing != nil && !existing.Fenced && !existing.InControlledShutdown && n.sessionValid(m.BrokerID) {
		reply.Error = proto.DuplicateBrokerRegistration
		n.gate.Send(from, reply)
		return
	}
	var batch metadata.Batch
	if existing != nil {
		clean := m.PreviousBrokerEpoch == existing.Epoch
		if !clean {
			n.env.Note("controller", fmt.Sprintf("broker %d restarted uncleanly (previous epoch %d, registered %d)",
				m.BrokerID, m.PreviousBrokerEpoch, existing.Epoch))
		}
		batch = append(batch, n.brokerLeavesISRs(m.BrokerID, !clean && n.cfg.ELREnabled)...)
	}
	epoch := n.nextOffset()
	batch = append(batch, metadata.Record{RegisterBroker: &metadata.RegisterBroker{
		BrokerID: m.BrokerID, BrokerEpoch: epoch, IncarnationID: m.IncarnationID, Rack: m.Rack, Fenced: true}})
	reply.BrokerEpoch = epoch
	n.sessions[m.BrokerID] = &session{lastContact: n.env.Now(), metadataOffset: -1}
	n.decide(batch, from, reply, nil)
}

// brokerLeavesISRs writes the partition changes for a broker that went away:
// out of every ISR it is in (leadership moves), and, after an unclean
// restart, out of every ELR too.
func (n *Node) brokerLeavesISRs(id int32, unclean bool) metadata.Batch {
	var batch metadata.Batch
	for _, p := range n.draft.Partitions() {
		inISR := slices.Contains(p.ISR, id)
		inELR := slices.Contains(p.ELR, id)
		if !inISR && !(unclean && inELR) {
			continue
		}
		b := n.changeBuilder(p, func(r int32) bool { return r != id && n.draft.IsActive(r) })
		b.TargetISR = withoutID(p.ISR, id)
		if unclean {
			b.UncleanShutdown = []int32{id}
		}
		if rec, _ := b.Build(); rec != nil {
			batch = append(batch, metadata.Record{PartitionChange: rec})
		}
	}
	return batch
}

func (n *Node) changeBuilder(p *metadata.Partition, acceptable func(int32) bool) *metadata.ChangeBuilder {
	t := n.draft.Topics[p.Topic]
	election := metadata.ElectionOnline
	if t.UncleanLeaderElection {
		election = metadata.ElectionUnclean
	}
	return metadata.NewChangeBuilder(p, acceptable, n.cfg.ELREnabled, election, t.EffectiveMinISR())
}

func withoutID(xs []int32, id int32) []int32 {
	out := []int32{}
	for _, x := range xs {
		if x != id {
			out = append(out, x)
		}
	}
	return out
}

func (n *Node) sessionValid(id int32) bool {
	s, ok := n.sessions[id]
	return ok && s.lastContact+n.cfg.SessionTimeout >= n.env.Now()
}

func (n *Node) leadsAny(id int32) bool {
	for _, p := range n.draft.Partitions() {
		if p.Leader == id {
			return true
		}
	}
	return false
}

// lowestActiveOffset is the lowest metadata offset any active broker reported.
func (n *Node) lowestActiveOffset() int64 {
	lowest := int64(1 << 62)
	for _, id := range n.draft.BrokerIDs() {
		if b := n.draft.Brokers[id]; b.Active() {
			if s, ok := n.sessions[id]; ok {
				lowest = min(lowest, s.metadataOffset)
			}
		}
	}
	return lowest
}

func (n *Node) handleHeartbeat(from sim.NodeID, m *proto.BrokerHeartbeatRequest) {
	reply := &proto.BrokerHeartbeatResponse{CorrelationID: m.CorrelationID}
	b := n.draft.Brokers[m.BrokerID]
	if b == nil || b.Epoch != m.BrokerEpoch {
		reply.Error = proto.StaleBrokerEpoch
		n.gate.Send(from, reply)
		return
	}
	s := n.sessions[m.BrokerID]
	if s == nil {
		s = &session{}
		n.sessions[m.BrokerID] = s
	}
	s.lastContact = n.env.Now()
	s.metadataOffset = m.CurrentMetadataOffset
	caughtUp := m.CurrentMetadataOffset >= b.RegisterOffset
	reply.IsCaughtUp = caughtUp

	var batch metadata.Batch
	shutdownNow := false
	switch {
	case b.Fenced:
		switch {
		case m.WantShutDown:
			shutdownNow = true
		case !m.WantFence && caughtUp:
			batch = n.unfence(b)
		}
	case b.InControlledShutdown:
		if !n.leadsAny(b.ID) && s.shutdownOffset <= n.lowestActiveOffset() {
			shutdownNow = true
			batch = n.fence(b)
		}
	default: // unfenced
		switch {
		case m.WantFence && m.WantShutDown:
			shutdownNow = true
			batch = n.fence(b)
		case m.WantFence:
			batch = n.fence(b)
		case m.WantShutDown && n.leadsAny(b.ID):
			batch = n.enterControlledShutdown(b)
			s.shutdownOffset = n.nextOffset() // where that batch lands; brokers report the last offset they applied
		case m.WantShutDown:
			shutdownNow = true
			batch = n.fence(b)
		}
	}
	n.decide(batch, from, reply, func() {
		reply.IsFenced = n.draft.Brokers[m.BrokerID].Fenced
		reply.ShouldShutDown = shutdownNow
	})
}

// fence writes a broker's fencing: out of every ISR (leadership moves), then
// the registration change. Fencing does not remove it from any ELR.
func (n *Node) fence(b *metadata.Broker) metadata.Batch {
	batch := n.brokerLeavesISRs(b.ID, false)
	return append(batch, metadata.Record{BrokerChange: &metadata.BrokerChange{
		BrokerID: b.ID, BrokerEpoch: b.Epoch, Fenced: metadata.FenceFence}})
}

// unfence writes a broker's unfencing, and elects leaders for the leaderless
// partitions it can now lead (an ISR or ELR member coming back).
func (n *Node) unfence(b *metadata.Broker) metadata.Batch {
	batch := metadata.Batch{{BrokerChange: &metadata.BrokerChange{BrokerID: b.ID, BrokerEpoch: b.Epoch, Fenced: metadata.FenceUnfence}}}
	for _, p := range n.draft.Partitions() {
		if p.Leader != metadata.NoLeader || !slices.Contains(p.Replicas, b.ID) {
			continue
		}
		builder := n.changeBuilder(p, func(r int32) bool { return r == b.ID || n.draft.IsActive(r) })
		if rec, _ := builder.Build(); rec != nil {
			batch = append(batch, metadata.Record{PartitionChange: rec})
		}
	}
	return batch
}

// enterControlledShutdown moves leadership and ISR membership away from a
// broker that asked to shut down.
func (n *Node) enterControlledShutdown(b *metadata.Broker) metadata.Batch {
	batch := metadata.Batch{{BrokerChange: &metadata.BrokerChange{BrokerID: b.ID, BrokerEpoch: b.Epoch, InControlledShutdown: true}}}
	return append(batch, n.brokerLeavesISRs(b.ID, false)...)
}

// fenceOneStaleBroker fences the first broker whose session expired. One per
// check, as Kafka does, so each fencing is visible before the next.
func (n *Node) fenceOneStaleBroker() {
	for _, id := range n.draft.BrokerIDs() {
		b := n.draft.Brokers[id]
		if b.Fenced || n.sessionValid(id) {
			continue
		}
		n.env.Note("controller", fmt.Sprintf("broker %d session expired: fencing", id))
		n.propose(n.fence(b))
		return
	}
}
