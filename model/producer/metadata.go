package producer

import (
	"maps"
	"slices"

	"kafkasim/model/proto"
	"kafkasim/model/record"
	"kafkasim/sim"
)

// Metadata (the topic's partition leaders) and the idempotent producer's id.

type partitionInfo struct {
	leader      int32
	leaderEpoch int32
	// known: the leader is a broker the metadata listed (the sender's
	// check, made once per metadata rather than per look).
	known bool
}

func (p *Client) refreshMetadata() {
	if p.metaCorr != 0 || len(p.cfg.Brokers) == 0 {
		return
	}
	target := p.cfg.Brokers[p.bootstrap%len(p.cfg.Brokers)]
	ids := p.brokerIDs()
	if len(ids) > 0 {
		target = p.brokers[ids[p.bootstrap%len(ids)]]
	}
	p.bootstrap++
	p.corr++
	p.metaCorr = p.corr
	p.metaTo, p.metaSent = target, true
	// A producer with no topic (a consumer's transactional producer, which
	// only commits offsets) asks for no topic's metadata, as Kafka's
	// ProducerMetadata does with no topic in use: the answer lists the
	// brokers (an empty list, not nil: nil asks for every topic).
	topics := []string{}
	if p.cfg.Topic != "" {
		topics = []string{p.cfg.Topic}
	}
	p.env.Send(target, &proto.MetadataRequest{CorrelationID: p.corr, Topics: topics})
	p.env.After(p.cfg.RequestTimeout/10, newTimer(timerMetadata, p.corr))
}

func (p *Client) handleMetadata(m *proto.MetadataResponse) {
	if m.CorrelationID != p.metaCorr {
		return
	}
	p.metaCorr = 0
	want := 1
	if p.cfg.Topic == "" {
		want = 0
	}
	if len(m.Topics) != want || want == 1 && m.Topics[0].Error != proto.None || len(m.Brokers) == 0 {
		p.metaValid = false
		p.corr++
		p.metaCorr = p.corr
		p.metaSent = false
		p.env.After(p.cfg.RetryBackoff, newTimer(timerMetadata, p.corr))
		return
	}
	p.brokers = map[int32]sim.NodeID{}
	for _, b := range m.Brokers {
		p.brokers[b.ID] = b.Node
	}
	var mparts []proto.MetadataPartition
	if want == 1 {
		mparts = m.Topics[0].Partitions
	}
	parts := p.spareParts[:0]
	if cap(parts) >= len(mparts) {
		parts = parts[:len(mparts)]
		clear(parts)
	} else {
		parts = make([]partitionInfo, len(mparts))
	}
	for _, mp := range mparts {
		if int(mp.Partition) < len(parts) {
			parts[mp.Partition] = partitionInfo{leader: mp.Leader, leaderEpoch: mp.LeaderEpoch}
		}
	}
	// Metadata can be stale: never go back to an older leader epoch.
	for i := range parts {
		if i < len(p.parts) && parts[i].leaderEpoch < p.parts[i].leaderEpoch {
			parts[i] = p.parts[i]
		}
	}
	// Whether each leader is listed, by a table of the small broker ids
	// rather than a map lookup per partition (3,000 of them an answer).
	var listedIDs [256]bool
	for id := range p.brokers { // kafkasim:orderless: fills a table
		if id >= 0 && int(id) < len(listedIDs) {
			listedIDs[id] = true
		}
	}
	for i := range parts {
		leader := parts[i].leader
		var listed bool
		if leader >= 0 && int(leader) < len(listedIDs) {
			listed = listedIDs[leader]
		} else {
			_, listed = p.brokers[leader]
		}
		parts[i].known = leader >= 0 && listed
	}
	p.parts, p.spareParts = parts, p.parts
	p.looks.lookAtAll()
	p.metaValid = true
	p.partitionPending()
	if p.cfg.EnableIdempotence && p.pid == record.NoProducer && p.pidCorr == 0 && !p.Transactional() {
		p.initProducerID()
	}
	p.wakeSender(0)
}

func (p *Client) initProducerID() {
	ids := p.brokerIDs()
	if len(ids) == 0 {
		p.refreshMetadata()
		return
	}
	p.corr++
	p.pidCorr = p.corr
	// Round the brokers by the requests this process sent.
	p.pidTo, p.pidSent = p.brokers[ids[int(p.corr-p.corrBase)%len(ids)]], true
	p.env.Send(p.pidTo, &proto.InitProducerIDRequest{CorrelationID: p.corr})
	p.env.After(p.cfg.RequestTimeout/10, newTimer(timerInitPID, p.corr))
}

func (p *Client) handleInitPID(m *proto.InitProducerIDResponse) {
	if m.CorrelationID != p.pidCorr {
		return
	}
	if m.Error != proto.None {
		return // the timer retries
	}
	p.pidCorr = 0
	p.pid, p.epoch = m.ProducerID, m.ProducerEpoch
	p.wakeSender(0)
}

func (p *Client) brokerIDs() []int32 { return slices.Sorted(maps.Keys(p.brokers)) }
