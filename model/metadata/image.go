package metadata

import (
	"fmt"
	"maps"
	"slices"
)

// Broker is a broker's registration as the metadata log describes it.
type Broker struct {
	ID                   int32
	Epoch                int64
	IncarnationID        uint64
	Rack                 string
	Fenced               bool
	InControlledShutdown bool
	// RegisterOffset is the offset of the batch that registered it: the
	// broker is caught up once its metadata reaches it.
	RegisterOffset int64
}

// Active reports whether the broker may lead and join ISRs: registered,
// unfenced, not shutting down.
func (b *Broker) Active() bool { return !b.Fenced && !b.InControlledShutdown }

// Topic is a topic and its partitions.
type Topic struct {
	Name                  string
	ID                    int32
	MinInsyncReplicas     int
	UncleanLeaderElection bool
	Configs               map[string]string
	Partitions            []*Partition
	// MinISRInherited and UncleanInherited: the topic does not set
	// min.insync.replicas or unclean.leader.election.enable itself, so a
	// cluster-wide change of the broker default reaches it.
	MinISRInherited, UncleanInherited bool
}

// Partition is a partition's registration: assignment, leader, ISR, ELR and
// epochs.
type Partition struct {
	TopicPartition
	Replicas       []int32
	ISR            []int32
	ELR            []int32
	LastKnownELR   []int32
	Leader         int32
	LeaderEpoch    int32
	PartitionEpoch int32
	// Recovering is leaderRecoveryState RECOVERING: set by an unclean
	// election, cleared by the leader's first AlterPartition after it
	// (KIP-704), so it can outlast the epoch that set it.
	Recovering bool
	// ElectedUncleanly: the current leader epoch began with an unclean
	// election — its leader was in neither the ISR nor the ELR before.
	// Not a field of Kafka's PartitionRegistration: derived from the
	// change records in order, as anyone replaying the log could, for the
	// god view to know how the epoch began (Recovering cannot tell: a clean
	// re-election of a leader still recovering keeps it).
	ElectedUncleanly bool
	// ClearedWhileLeaderless are the replicas a ClearElrRecord (written
	// after a min.insync.replicas change while ELR is on) took out of the
	// ELR and the last known leader while the partition had no leader and
	// an empty ISR: nobody is left whom PartitionChangeBuilder may elect
	// but uncleanly. Not a field of Kafka's PartitionRegistration: derived
	// from the records in order, as ElectedUncleanly is, for the runner to
	// say why such a partition stays leaderless; nil again once it has a
	// leader or anyone eligible.
	ClearedWhileLeaderless []int32
	// RemovingReplicas and AddingReplicas are a reassignment in progress
	// (PartitionRegistration's removingReplicas, addingReplicas): Replicas
	// is then the target followed by the replicas being removed.
	RemovingReplicas []int32
	AddingReplicas   []int32
	// shared: the partition as its PartitionRecord made it, in every image
	// that applied the record (the records of a committed batch are
	// decoded once for all the brokers and controllers). Nobody changes
	// it, nor any of its lists: an image's first change makes the image
	// its own copy (own).
	// A big cluster's start made 3,000 partitions in each of its 33
	// images, 25 MB a run of big-cluster-3000.yaml.
	shared bool
}

// Clone copies a partition.
func (p *Partition) Clone() *Partition {
	c := *p
	c.shared = false
	c.Replicas = slices.Clone(p.Replicas)
	c.ISR = slices.Clone(p.ISR)
	c.ELR = slices.Clone(p.ELR)
	c.LastKnownELR = slices.Clone(p.LastKnownELR)
	c.ClearedWhileLeaderless = slices.Clone(p.ClearedWhileLeaderless)
	c.RemovingReplicas = slices.Clone(p.RemovingReplicas)
	c.AddingReplicas = slices.Clone(p.AddingReplicas)
	return &c
}

// String describes the partition as kafka-topics --describe does.
func (p *Partition) String() string {
	s := fmt.Sprintf("%s leader=%d leaderEpoch=%d partitionEpoch=%d replicas=%v isr=%v elr=%v lastKnownElr=%v",
		p.TopicPartition, p.Leader, p.LeaderEpoch, p.PartitionEpoch, p.Replicas, p.ISR, p.ELR, p.LastKnownELR)
	if p.Reassigning() {
		s += fmt.Sprintf(" addingReplicas=%v removingReplicas=%v", p.AddingReplicas, p.RemovingReplicas)
	}
	return s
}

// Reassigning reports whether a reassignment is in progress
// (PartitionReassignmentReplicas.isReassignmentInProgress).
func (p *Partition) Reassigning() bool {
	return len(p.AddingReplicas) > 0 || len(p.RemovingReplicas) > 0
}

// ImageObserver sees every change applied to an image; the audit implements it.
type ImageObserver interface {
	// PartitionChanged is called after a partition record is applied.
	PartitionChanged(im *Image, p *Partition)
	// BatchApplied is called after a whole batch is applied.
	BatchApplied(im *Image, offset int64)
}

// Image is the cluster's metadata as of an offset of the log.
type Image struct {
	// Offset is the next offset to apply: everything below is in the image.
	Offset  int64
	Brokers map[int32]*Broker
	Topics  map[string]*Topic
	// NextTopicID and NextProducerID allocate ids.
	NextTopicID    int32
	NextProducerID int64
	// ClusterConfigs are the dynamic cluster-wide broker defaults
	// (kafka-configs.sh --entity-default), BrokerConfigs each broker's own
	// dynamic configs: ConfigRecords of ResourceBroker.
	ClusterConfigs map[string]string
	BrokerConfigs  map[int32]map[string]string
	// Owner names the node holding this image, for observers.
	Owner    string
	Observer ImageObserver
}

// NewImage returns the empty image.
func NewImage(owner string, observer ImageObserver) *Image {
	return &Image{Brokers: map[int32]*Broker{}, Topics: map[string]*Topic{}, NextTopicID: 1, Owner: owner, Observer: observer}
}

// Clone deep-copies the image, without its observer: a copy is a working
// draft (the active controller's uncommitted view), not committed metadata.
func (im *Image) Clone() *Image {
	c := &Image{Offset: im.Offset, Brokers: make(map[int32]*Broker, len(im.Brokers)), Topics: make(map[string]*Topic, len(im.Topics)),
		NextTopicID: im.NextTopicID, NextProducerID: im.NextProducerID, Owner: im.Owner,
		ClusterConfigs: maps.Clone(im.ClusterConfigs)}
	if im.BrokerConfigs != nil {
		c.BrokerConfigs = make(map[int32]map[string]string, len(im.BrokerConfigs))
		for id, cfg := range im.BrokerConfigs { // kafkasim:orderless: fills a map
			c.BrokerConfigs[id] = maps.Clone(cfg)
		}
	}
	for id, b := range im.Brokers { // kafkasim:orderless: fills a map
		bc := *b
		c.Brokers[id] = &bc
	}
	for name, t := range im.Topics { // kafkasim:orderless: fills a map
		tc := *t
		tc.Partitions = make([]*Partition, len(t.Partitions))
		for i, p := range t.Partitions {
			tc.Partitions[i] = p.Clone()
		}
		c.Topics[name] = &tc
	}
	return c
}

// Partition finds a partition.
func (im *Image) Partition(tp TopicPartition) *Partition {
	t, ok := im.Topics[tp.Topic]
	if !ok || tp.Partition < 0 || int(tp.Partition) >= len(t.Partitions) {
		return nil
	}
	return t.Partitions[tp.Partition]
}

// BrokerIDs lists registered brokers in id order.
func (im *Image) BrokerIDs() []int32 { return slices.Sorted(maps.Keys(im.Brokers)) }

// TopicNames lists topics by name.
func (im *Image) TopicNames() []string { return slices.Sorted(maps.Keys(im.Topics)) }

// Partitions lists every partition, by topic then number.
func (im *Image) Partitions() []*Partition {
	var out []*Partition
	for _, n := range im.TopicNames() {
		out = append(out, im.Topics[n].Partitions...)
	}
	return out
}

// IsActive reports whether broker id is registered and active.
func (im *Image) IsActive(id int32) bool {
	b, ok := im.Brokers[id]
	return ok && b.Active()
}

// Apply applies the batch at offset. Batches must be applied in order.
func (im *Image) Apply(offset int64, batch Batch) error {
	if offset != im.Offset {
		return fmt.Errorf("metadata: applying offset %d to an image at %d", offset, im.Offset)
	}
	for _, r := range batch {
		if err := im.apply(offset, r); err != nil {
			return err
		}
	}
	im.Offset = offset + 1
	if im.Observer != nil {
		im.Observer.BatchApplied(im, offset)
	}
	return nil
}

// Skip advances past an entry that holds no records (a leader-change entry).
func (im *Image) Skip(offset int64) {
	if offset == im.Offset {
		im.Offset++
	}
}

func (im *Image) apply(offset int64, r Record) error {
	switch {
	case r.RegisterBroker != nil:
		rb := r.RegisterBroker
		im.Brokers[rb.BrokerID] = &Broker{ID: rb.BrokerID, Epoch: rb.BrokerEpoch, IncarnationID: rb.IncarnationID,
			Rack: rb.Rack, Fenced: rb.Fenced, RegisterOffset: offset}
	case r.BrokerChange != nil:
		bc := r.BrokerChange
		b, ok := im.Brokers[bc.BrokerID]
		if !ok || b.Epoch != bc.BrokerEpoch {
			return nil // a change for an older registration
		}
		switch bc.Fenced {
		case FenceFence:
			b.Fenced = true
			b.InControlledShutdown = false
		case FenceUnfence:
			b.Fenced = false
		}
		if bc.InControlledShutdown {
			b.InControlledShutdown = true
		}
	case r.UnregisterBroker != nil:
		delete(im.Brokers, r.UnregisterBroker.BrokerID)
	case r.Topic != nil:
		t := r.Topic
		im.Topics[t.Name] = &Topic{Name: t.Name, ID: t.ID, MinInsyncReplicas: t.MinInsyncReplicas,
			UncleanLeaderElection: t.UncleanLeaderElection, Configs: t.Configs,
			MinISRInherited: slices.Contains(t.Inherited, MinInsyncReplicasConfig), UncleanInherited: slices.Contains(t.Inherited, UncleanLeaderElectionConfig)}
		if t.ID >= im.NextTopicID {
			im.NextTopicID = t.ID + 1
		}
	case r.Partition != nil:
		pr := r.Partition
		t, ok := im.Topics[pr.Topic]
		if !ok || int(pr.Partition) != len(t.Partitions) {
			return fmt.Errorf("metadata: partition record %s-%d out of order", pr.Topic, pr.Partition)
		}
		p := pr.made
		if p == nil {
			p = newPartition(pr)
			p.shared = true
			pr.made = p
		}
		t.Partitions = append(t.Partitions, p)
		if im.Observer != nil {
			im.Observer.PartitionChanged(im, p)
		}
	case r.PartitionChange != nil:
		pc := r.PartitionChange
		p := im.Partition(TopicPartition{pc.Topic, pc.Partition})
		if p == nil {
			return fmt.Errorf("metadata: change of unknown partition %s-%d", pc.Topic, pc.Partition)
		}
		p = im.own(p)
		if pc.Leader != NoLeaderChange {
			p.ElectedUncleanly = pc.Leader != NoLeader && !slices.Contains(p.ISR, pc.Leader) && !slices.Contains(p.ELR, pc.Leader)
			p.Leader = pc.Leader
			p.LeaderEpoch++
		}
		if pc.ISR != nil {
			p.ISR = slices.Clone(*pc.ISR)
		}
		if pc.ELR != nil {
			p.ELR = slices.Clone(*pc.ELR)
		}
		if pc.LastKnownELR != nil {
			p.LastKnownELR = slices.Clone(*pc.LastKnownELR)
		}
		if pc.Recovering != nil {
			p.Recovering = *pc.Recovering
		}
		if pc.Replicas != nil {
			p.Replicas = slices.Clone(*pc.Replicas)
		}
		if pc.RemovingReplicas != nil {
			p.RemovingReplicas = slices.Clone(*pc.RemovingReplicas)
		}
		if pc.AddingReplicas != nil {
			p.AddingReplicas = slices.Clone(*pc.AddingReplicas)
		}
		p.PartitionEpoch++
		if p.Leader != NoLeader || len(p.ISR) > 0 || len(p.ELR) > 0 || len(p.LastKnownELR) > 0 {
			p.ClearedWhileLeaderless = nil
		}
		if im.Observer != nil {
			im.Observer.PartitionChanged(im, p)
		}
	case r.ProducerIDs != nil:
		im.NextProducerID = r.ProducerIDs.NextID + r.ProducerIDs.BlockSize
	case r.Config != nil:
		return im.applyConfig(offset, r.Config)
	case r.ClearElr != nil:
		im.clearElr(r.ClearElr.Topic)
	case r.NoOp != nil:
	}
	return nil
}

// own returns p, a partition of the image, as the image's own to change:
// a shared partition is copied into the image first.
func (im *Image) own(p *Partition) *Partition {
	if !p.shared {
		return p
	}
	// Its lists are shared too: an image replaces a list, never writes
	// into one (and each is capped to its length, so an append copies).
	c := *p
	c.shared = false
	im.Topics[p.Topic].Partitions[p.Partition] = &c
	return &c
}

// EffectiveMinISR is min(min.insync.replicas, replication factor).
func (t *Topic) EffectiveMinISR() int {
	if len(t.Partitions) == 0 {
		return t.MinInsyncReplicas
	}
	return min(t.MinInsyncReplicas, len(t.Partitions[0].Replicas))
}

// partitionWithRoom is a partition and room for its replica lists, which
// the lists of a partition record fill: one allocation where there were
// three (a big cluster's start creates every partition in each broker's
// and controller's image: 33 times 3,000 on 30 brokers).
type partitionWithRoom struct {
	p    Partition
	room [8]int32
}

// newPartition is the partition a PartitionRecord creates. Its lists are
// copies of the record's (which other images share), each capped to its
// length, so that an append copies it as it would slices.Clone's.
func newPartition(pr *PartitionRecord) *Partition {
	x := &partitionWithRoom{p: Partition{TopicPartition: TopicPartition{pr.Topic, pr.Partition},
		Leader: pr.Leader, LeaderEpoch: pr.LeaderEpoch, PartitionEpoch: pr.PartitionEpoch}}
	ids := x.room[:0]
	if n := len(pr.Replicas) + len(pr.ISR) + len(pr.ELR) + len(pr.LastKnownELR); n > len(x.room) {
		ids = make([]int32, 0, n)
	}
	clone := func(s []int32) []int32 {
		if s == nil {
			return nil // as slices.Clone
		}
		ids = append(ids, s...)
		return ids[len(ids)-len(s) : len(ids) : len(ids)]
	}
	x.p.Replicas, x.p.ISR, x.p.ELR, x.p.LastKnownELR = clone(pr.Replicas), clone(pr.ISR), clone(pr.ELR), clone(pr.LastKnownELR)
	return &x.p
}
