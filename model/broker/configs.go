package broker

import (
	"strconv"

	"kafkasim/model/metadata"
)

// Dynamic configs reach a broker through the metadata log, as Kafka's
// DynamicConfigPublisher hands a ConfigRecord to the broker's config
// handlers: a topic's to LogManager.updateTopicConfig (its logs' configs are
// rebuilt), a broker's to the defaults its topics inherit. A leader applies
// a new min.insync.replicas to the next acks=all produce at once.

// configChanged applies a ConfigRecord to the partitions it reaches.
func (rm *replicaManager) configChanged(rec *metadata.ConfigRecord) {
	im := rm.image()
	if rec.ResourceType == metadata.ResourceBroker && rec.ResourceName != "" && rec.ResourceName != strconv.Itoa(int(rm.id())) {
		return // another broker's own config
	}
	for _, tp := range rm.order {
		if rec.ResourceType == metadata.ResourceTopic && tp.Topic != rec.ResourceName {
			continue
		}
		p := rm.parts.get(tp)
		t := im.Topics[tp.Topic]
		if p == nil || t == nil {
			continue
		}
		p.minISR = im.MinISRAt(t, rm.id())
		if rec.ResourceType == metadata.ResourceTopic && p.log != nil {
			p.log.UpdateConfig(rm.logConfig(tp.Topic))
		}
	}
}

// elrCleared re-applies the registrations a ClearElrRecord changed: their
// partition epochs moved, so an AlterPartition built on the old one is moot.
func (rm *replicaManager) elrCleared(topic string) {
	im := rm.image()
	for _, tp := range append([]metadata.TopicPartition(nil), rm.order...) {
		if topic != "" && tp.Topic != topic {
			continue
		}
		p := rm.parts.get(tp)
		if reg := im.Partition(tp); p != nil && reg != nil && reg.PartitionEpoch != p.partitionEpoch {
			rm.apply(reg)
		}
	}
}
